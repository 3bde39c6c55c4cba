//! The domain. Every rule lives here; REST handlers, console server fns and the CLI
//! call these services and nothing else. Each module owns one error enum; the http
//! layer maps them to status codes and stable `code`s in one place.

pub mod accounts;
pub mod applications;
pub mod boleto;
pub mod br_code;
pub mod charges;
pub mod clock;
pub mod companies;
pub mod console;
pub mod customers;
pub mod demo;
pub mod directory;
pub mod disputes;
pub mod events;
pub mod features;
pub mod files;
pub mod idempotency;
pub mod kyc;
pub mod ledger;
pub mod payment_book;
pub mod pix_key;
pub mod pix_keys;
pub mod plugins;
pub mod qr_codes;
pub mod refunds;
pub mod sandbox;
pub mod scopes;
pub mod signing;
pub mod statement;
pub mod subscriptions;
pub mod tax_id;
pub mod users;
pub mod webhooks;
pub mod withdraw_keys;
pub mod withdrawals;

use crate::store::{Store, StoreError};

/// One invalid field of a request: which field and what is wrong with it. The http
/// layer turns `problem` into a translated message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub problem: Problem,
}

/// What is wrong with a field; a closed list so that every message can be translated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    Required,
    TooLong { max: usize },
    Invalid,
    UnknownValue,
    NotAllowedForType,
}

impl FieldError {
    pub fn new(field: impl Into<String>, problem: Problem) -> Self {
        Self {
            field: field.into(),
            problem,
        }
    }
}

/// Collects field errors so that one answer lists every invalid field at once.
#[derive(Default, Debug)]
pub struct Validation(Vec<FieldError>);

impl Validation {
    pub fn add(&mut self, field: impl Into<String>, problem: Problem) {
        self.0.push(FieldError::new(field, problem));
    }

    /// A required, trimmed text of at most `max` characters.
    pub fn text(&mut self, field: &str, value: Option<&str>, max: usize) -> String {
        let value = value.map(str::trim).unwrap_or_default();
        if value.is_empty() {
            self.add(field, Problem::Required);
        } else if value.chars().count() > max {
            self.add(field, Problem::TooLong { max });
        }
        value.to_owned()
    }

    /// A required `correlationID`.
    pub fn correlation_id(&mut self, value: Option<&str>) -> Option<CorrelationId> {
        match value {
            None => {
                self.add("correlationID", Problem::Required);
                None
            }
            Some(c) => CorrelationId::parse("correlationID", c)
                .map_err(|e| self.add(e.field, e.problem))
                .ok(),
        }
    }

    pub fn finish(self) -> Result<(), Vec<FieldError>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }
}

/// All services over one store; cheap to clone.
#[derive(Clone, Debug)]
pub struct Services {
    pub store: Store,
    pub clock: clock::SharedClock,
    pub companies: companies::Companies,
    pub users: users::Users,
    pub applications: applications::Applications,
    pub accounts: accounts::Accounts,
    pub pix_keys: pix_keys::PixKeys,
    pub directory: directory::Directory,
    pub withdraw_keys: withdraw_keys::WithdrawKeys,
    pub customers: customers::Customers,
    pub charges: charges::Charges,
    pub qr_codes: qr_codes::QrCodes,
    pub withdrawals: withdrawals::Withdrawals,
    pub refunds: refunds::Refunds,
    pub statement: statement::Statement,
    pub sandbox: sandbox::Sandbox,
    pub webhooks: webhooks::Webhooks,
    pub plugins: plugins::Plugins,
    pub files: files::Files,
    pub disputes: disputes::Disputes,
    pub kyc: kyc::Kyc,
    pub subscriptions: subscriptions::Subscriptions,
}

/// Settings the services take from the configuration.
#[derive(Clone, Debug)]
pub struct Options {
    pub allow_private_networks: bool,
    pub webhook_timeout: std::time::Duration,
    pub plugin_limits: cofre_plugin_host::Limits,
    pub files: files::FileOptions,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            allow_private_networks: true,
            webhook_timeout: std::time::Duration::from_secs(5),
            plugin_limits: cofre_plugin_host::Limits::default(),
            files: files::FileOptions::in_memory(),
        }
    }
}

impl Services {
    pub fn new(store: Store) -> Self {
        Self::with_clock(store, std::sync::Arc::new(clock::SystemClock))
    }

    /// Services reading time from `clock` (tests move a manual clock).
    pub fn with_clock(store: Store, clock: clock::SharedClock) -> Self {
        Self::with_options(store, clock, Options::default())
    }

    pub fn with_options(store: Store, clock: clock::SharedClock, options: Options) -> Self {
        let accounts = accounts::Accounts::new(store.clone(), clock.clone());
        let directory = directory::Directory::new(store.clone(), clock.clone());
        let customers = customers::Customers::new(store.clone(), clock.clone());
        let plugins = plugins::Plugins::new(store.clone(), clock.clone(), options.plugin_limits);
        let charges = charges::Charges::new(
            store.clone(),
            clock.clone(),
            customers.clone(),
            plugins.clone(),
        );
        Self {
            qr_codes: qr_codes::QrCodes::new(store.clone(), clock.clone()),
            withdrawals: withdrawals::Withdrawals::new(
                store.clone(),
                clock.clone(),
                accounts.clone(),
                plugins.clone(),
            ),
            refunds: refunds::Refunds::new(store.clone(), clock.clone()),
            statement: statement::Statement::new(store.clone()),
            sandbox: sandbox::Sandbox::new(store.clone(), clock.clone()),
            files: files::Files::new(store.clone(), clock.clone(), options.files.clone()),
            disputes: disputes::Disputes::new(store.clone(), clock.clone()),
            kyc: kyc::Kyc::new(store.clone(), clock.clone()),
            subscriptions: subscriptions::Subscriptions::new(
                store.clone(),
                clock.clone(),
                charges.clone(),
                customers.clone(),
            ),
            charges,
            plugins: plugins.clone(),
            webhooks: webhooks::Webhooks::new(
                store.clone(),
                clock.clone(),
                options.allow_private_networks,
                options.webhook_timeout,
                plugins.clone(),
            ),
            customers,
            companies: companies::Companies::new(store.clone()),
            users: users::Users::new(store.clone()),
            applications: applications::Applications::new(store.clone()),
            pix_keys: pix_keys::PixKeys::new(
                store.clone(),
                clock.clone(),
                accounts.clone(),
                plugins.clone(),
            ),
            withdraw_keys: withdraw_keys::WithdrawKeys::new(
                store.clone(),
                clock.clone(),
                accounts.clone(),
                directory.clone(),
            ),
            accounts,
            directory,
            clock,
            store,
        }
    }
}

/// `?skip=&limit=` of a list: limit 10 by default, at most 100.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    pub skip: i64,
    pub limit: i64,
}

impl Default for Page {
    fn default() -> Self {
        Self { skip: 0, limit: 10 }
    }
}

impl Page {
    pub const MAX_LIMIT: i64 = 100;

    pub fn parse(skip: Option<i64>, limit: Option<i64>) -> Result<Self, Vec<FieldError>> {
        let mut v = Validation::default();
        let skip = skip.unwrap_or(0);
        let limit = limit.unwrap_or(10);
        if skip < 0 {
            v.add("skip", Problem::Invalid);
        }
        if !(1..=Self::MAX_LIMIT).contains(&limit) {
            v.add("limit", Problem::Invalid);
        }
        v.finish()?;
        Ok(Self { skip, limit })
    }

    pub fn info(&self, total_count: i64) -> PageInfo {
        PageInfo {
            skip: self.skip,
            limit: self.limit,
            total_count,
            has_previous_page: self.skip > 0,
            has_next_page: self.skip + self.limit < total_count,
        }
    }
}

/// `pageInfo` beside every list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageInfo {
    pub skip: i64,
    pub limit: i64,
    pub total_count: i64,
    pub has_previous_page: bool,
    pub has_next_page: bool,
}

/// A client-generated correlationID: 1 to 100 printable characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorrelationId(String);

impl CorrelationId {
    pub fn parse(field: &str, value: &str) -> Result<Self, FieldError> {
        let value = value.trim();
        if value.is_empty() {
            Err(FieldError::new(field, Problem::Required))
        } else if value.chars().count() > 100 {
            Err(FieldError::new(field, Problem::TooLong { max: 100 }))
        } else if value.chars().any(char::is_control) {
            Err(FieldError::new(field, Problem::Invalid))
        } else {
            Ok(Self(value.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Database failures that no caller can fix; every service error has this variant.
#[derive(Debug, thiserror::Error)]
#[error("storage failure: {0}")]
pub struct Unexpected(#[from] pub StoreError);
