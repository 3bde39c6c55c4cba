//! The console's rules: who a signed-in user is and what they may do, the campaign
//! wizard and dashboard, and the audit trail of changes made in the console.
//!
//! A console action reaches the same services as the REST API, through a [`Caller`]
//! that stands for the company's MASTER application: the user's permission is checked
//! here first, so a signed-in user can never act for another company.

use std::collections::HashMap;

use tracing::instrument;

use super::Services;
use super::accounts::{Account, AccountError};
use super::applications::{
    ApplicationError, ApplicationType, Caller, IssuedApplication, NewApplication,
};
use super::clock::BRT_OFFSET_MS;
use super::companies::CompanyError;
use super::disputes::{Dispute, Resolution};
use super::features::Feature;
use super::kyc::{Decision, Onboarding};
use super::ledger::Kind;
use super::pix_key::{PixKey, PixKeyType};
use super::pix_keys::{PixKeyServiceError, PixKeyView};
use super::subscriptions::{InstalmentView, Subscription, SubscriptionError};
use super::users::{API_PLUGINS, Role, User, UserError};
use super::withdraw_keys::WithdrawKeyError;
use super::{FieldError, Page, Problem, Validation};
use crate::store::{self, StoreError, audit::AuditRow, ledger::TransactionRow};

/// Why the console refused, or what the service behind it answered.
#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    #[error("not signed in")]
    NotSignedIn,
    /// The user lacks a role or permission; names it.
    #[error("permission {0} missing")]
    PermissionMissing(&'static str),
    #[error("the main account is not a campaign")]
    MainAccountNotACampaign,
    #[error("account not found")]
    AccountNotFound,
    #[error("company not found")]
    CompanyNotFound,
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error(transparent)]
    User(#[from] UserError),
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error(transparent)]
    Application(#[from] ApplicationError),
    #[error(transparent)]
    PixKey(#[from] PixKeyServiceError),
    #[error(transparent)]
    WithdrawKey(#[from] WithdrawKeyError),
    #[error(transparent)]
    Company(#[from] CompanyError),
    #[error(transparent)]
    Dispute(#[from] super::disputes::DisputeError),
    #[error(transparent)]
    Kyc(#[from] super::kyc::KycError),
    #[error(transparent)]
    Subscription(#[from] SubscriptionError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A signed-in console user.
#[derive(Clone, Debug)]
pub struct Actor {
    pub user: User,
}

impl Actor {
    /// The user's company; support users have none.
    pub fn company_id(&self) -> Result<&str, ConsoleError> {
        self.user
            .company_id
            .as_deref()
            .ok_or(ConsoleError::PermissionMissing("COMPANY_USER"))
    }

    /// The API/Plugins section: applications, plugins, webhooks, campaign and
    /// subscription changes.
    pub fn require_api_plugins(&self) -> Result<&str, ConsoleError> {
        let company = self.company_id()?;
        if self.user.permissions.iter().any(|p| p == API_PLUGINS) {
            Ok(company)
        } else {
            Err(ConsoleError::PermissionMissing(API_PLUGINS))
        }
    }

    /// The Users page: the company's ADMIN.
    pub fn require_admin(&self) -> Result<&str, ConsoleError> {
        let company = self.company_id()?;
        if self.user.role == Role::Admin {
            Ok(company)
        } else {
            Err(ConsoleError::PermissionMissing("ADMIN"))
        }
    }

    pub fn require_support(&self) -> Result<(), ConsoleError> {
        if self.user.role == Role::Support {
            Ok(())
        } else {
            Err(ConsoleError::PermissionMissing("SUPPORT"))
        }
    }
}

/// One account of the company as the campaigns dashboard shows it.
#[derive(Clone, Debug)]
pub struct CampaignSummary {
    pub account: Account,
    pub pix_keys: Vec<(String, String)>,
    pub transactions: Vec<TransactionRow>,
    /// `(day start in ms, money in, money out)`, oldest first, one per day.
    pub flows: Vec<(i64, i64, i64)>,
}

/// What the wizard was asked for.
#[derive(Clone, Debug, Default)]
pub struct NewCampaign {
    pub name: String,
    pub key_type: String,
    pub key: String,
    pub withdraw_key: String,
}

/// What the wizard made.
#[derive(Clone, Debug)]
pub struct CreatedCampaign {
    pub account_id: String,
    pub application: IssuedApplication,
    pub pix_key: PixKeyView,
    pub withdraw_key: Option<(String, String)>,
}

/// A dispute on support's queue, with its company's name.
#[derive(Clone, Debug)]
pub struct QueuedDispute {
    pub dispute: Dispute,
    pub company: String,
    /// A signed download link (path and query) for each evidence file, by file id, so
    /// that support can open the files in the browser.
    pub file_links: Vec<(String, String)>,
}

/// A KYC onboarding on support's queue, with its company's name.
#[derive(Clone, Debug)]
pub struct QueuedOnboarding {
    pub onboarding: Onboarding,
    pub company: String,
}

/// How many subscriptions the Subscriptions page lists, newest first.
pub const SUBSCRIPTIONS_SHOWN: i64 = 100;
/// How many instalments of a subscription the page shows, from the first.
pub const INSTALMENTS_SHOWN: i64 = 12;

/// The Subscriptions page's data.
#[derive(Clone, Debug)]
pub struct CompanySubscriptions {
    /// Newest first, up to [`SUBSCRIPTIONS_SHOWN`].
    pub subscriptions: Vec<Subscription>,
    /// Today in Brasília.
    pub today: time::Date,
}

/// How many disputes and onboardings the support page lists, newest first.
pub const SUPPORT_QUEUE: i64 = 100;

/// Days the dashboard's chart covers.
pub const FLOW_DAYS: i64 = 14;
const DAY_MS: i64 = 86_400_000;

/// The console's view of the services; see the module documentation.
pub struct Console<'a>(pub &'a Services);

impl Services {
    pub fn console(&self) -> Console<'_> {
        Console(self)
    }
}

impl Console<'_> {
    /// The user behind a session; `NotSignedIn` if the user no longer exists.
    pub async fn actor(&self, user_id: &str) -> Result<Actor, ConsoleError> {
        match self.0.users.get(user_id).await {
            Ok(user) => Ok(Actor { user }),
            Err(UserError::NotFound) => Err(ConsoleError::NotSignedIn),
            Err(e) => Err(e.into()),
        }
    }

    /// The company's MASTER power, bound to its main account, with every scope.
    pub async fn caller(&self, company_id: &str) -> Result<Caller, ConsoleError> {
        let main = store::accounts::main_of(self.0.store.pool(), company_id).await?;
        Ok(Caller {
            application_id: "console".into(),
            client_id: "console".into(),
            company_id: company_id.to_owned(),
            account_id: main.id,
            kind: ApplicationType::Master,
            scopes: None,
            allowed_ips: vec![],
        })
    }

    /// Every account of the company with its keys, last transactions and daily flows.
    pub async fn campaigns(&self, actor: &Actor) -> Result<Vec<CampaignSummary>, ConsoleError> {
        let company_id = actor.company_id()?;
        let caller = self.caller(company_id).await?;
        let pool = self.0.store.pool();
        let today = (self.0.clock.now_millis() - BRT_OFFSET_MS).div_euclid(DAY_MS);
        let first_day = today - (FLOW_DAYS - 1);
        let since = first_day * DAY_MS + BRT_OFFSET_MS;
        let mut summaries = Vec::new();
        let mut skip = 0;
        loop {
            let page = Page {
                skip,
                limit: Page::MAX_LIMIT,
            };
            let (accounts, info) = self.0.accounts.list(&caller, page).await?;
            for account in accounts {
                let pix_keys = store::pix_keys::list_for_account(pool, &account.id)
                    .await?
                    .into_iter()
                    .map(|k| (k.key, k.kind))
                    .collect();
                let transactions =
                    store::ledger::list_for_account(pool, &account.id, 0, i64::MAX, 0, 5).await?;
                let mut flows: Vec<(i64, i64, i64)> = (first_day..=today)
                    .map(|d| (d * DAY_MS + BRT_OFFSET_MS, 0, 0))
                    .collect();
                for (day, kind, total) in
                    store::ledger::daily_sums(pool, &account.id, since, BRT_OFFSET_MS).await?
                {
                    let Some(slot) = usize::try_from(day - first_day)
                        .ok()
                        .and_then(|i| flows.get_mut(i))
                    else {
                        continue;
                    };
                    match Kind::parse(&kind).map(Kind::sign) {
                        Some(1) => slot.1 += total,
                        Some(-1) => slot.2 += total,
                        _ => {}
                    }
                }
                summaries.push(CampaignSummary {
                    account,
                    pix_keys,
                    transactions,
                    flows,
                });
            }
            skip += Page::MAX_LIMIT;
            if skip >= info.total_count {
                break;
            }
        }
        Ok(summaries)
    }

    /// The seed's campaign flow in one go: an account, an API application bound to it,
    /// a Pix key registered with that application and, if given, the withdraw key.
    /// Every input is checked, and the withdraw key looked up, before anything is made.
    #[instrument(name = "service.console.new_campaign", skip_all)]
    pub async fn new_campaign(
        &self,
        actor: &Actor,
        new: NewCampaign,
    ) -> Result<CreatedCampaign, ConsoleError> {
        let company_id = actor.require_api_plugins()?.to_owned();
        let caller = self.caller(&company_id).await?;
        let mut v = Validation::default();
        v.text("name", Some(&new.name), 100);
        let key_type = match PixKeyType::parse(new.key_type.trim()) {
            Some(kind) if kind != PixKeyType::Cpf => Some(kind),
            Some(_) => {
                v.add("keyType", Problem::NotAllowedForType);
                None
            }
            None => {
                v.add("keyType", Problem::UnknownValue);
                None
            }
        };
        if let Some(kind) = key_type.filter(|k| *k != PixKeyType::Evp) {
            match PixKey::parse(kind, new.key.trim()) {
                Ok(key) => {
                    if store::pix_keys::find(self.0.store.pool(), key.as_str())
                        .await?
                        .is_some()
                        || store::directory::find(self.0.store.pool(), key.as_str())
                            .await?
                            .is_some()
                    {
                        return Err(PixKeyServiceError::AlreadyExists.into());
                    }
                }
                Err(_) if new.key.trim().is_empty() => v.add("key", Problem::Required),
                Err(_) => v.add("key", Problem::Invalid),
            }
        }
        v.finish().map_err(ConsoleError::Validation)?;
        let withdraw = match new.withdraw_key.trim() {
            "" => None,
            value => Some(
                self.0
                    .withdraw_keys
                    .check_for_console(&caller, value)
                    .await?,
            ),
        };

        let account = self.0.accounts.create(&caller, None).await?;
        let company = self.0.companies.get(&company_id).await?;
        let application = self
            .0
            .applications
            .create(
                &company,
                NewApplication {
                    name: Some(new.name.trim().to_owned()),
                    kind: Some(ApplicationType::Api.as_str().to_owned()),
                    account_id: Some(account.id.clone()),
                    ..Default::default()
                },
            )
            .await?;
        let campaign_caller = Caller {
            application_id: application.application.id.clone(),
            client_id: application.application.client_id.clone(),
            company_id: company_id.clone(),
            account_id: account.id.clone(),
            kind: ApplicationType::Api,
            scopes: None,
            allowed_ips: vec![],
        };
        let kind = key_type.expect("validated above");
        let pix_key = match self
            .0
            .pix_keys
            .create(&campaign_caller, Some(kind.as_str()), Some(new.key.trim()))
            .await
        {
            Ok(key) => key,
            Err(err) => {
                // Checked above, so only a race or a company rule gets here: the new
                // application must not stay usable for an account without its key.
                self.0
                    .applications
                    .set_active(&company_id, &application.application.id, false)
                    .await?;
                return Err(err.into());
            }
        };
        let withdraw_key = match withdraw {
            Some(checked) => {
                let (key, kind) = checked.key();
                let shown = (key.to_owned(), kind.to_owned());
                self.0.withdraw_keys.save(&account.id, checked).await?;
                Some(shown)
            }
            None => None,
        };
        tracing::info!(account_id = %account.id, "campaign created in the console");
        Ok(CreatedCampaign {
            account_id: account.id,
            application,
            pix_key,
            withdraw_key,
        })
    }

    /// Ends a campaign: deletes every Pix key of the account, so nobody can pay it.
    /// The main account is not a campaign and is refused.
    #[instrument(name = "service.console.end_campaign", skip(self, actor))]
    pub async fn end_campaign(
        &self,
        actor: &Actor,
        account_id: &str,
    ) -> Result<usize, ConsoleError> {
        let company_id = actor.require_api_plugins()?;
        let account = match store::accounts::get(self.0.store.pool(), account_id).await {
            Ok(a) if a.company_id == company_id => a,
            Ok(_) | Err(StoreError::NotFound) => return Err(ConsoleError::AccountNotFound),
            Err(e) => return Err(e.into()),
        };
        if account.is_default {
            return Err(ConsoleError::MainAccountNotACampaign);
        }
        let mut caller = self.caller(company_id).await?;
        caller.account_id = account.id.clone();
        caller.kind = ApplicationType::Api;
        let keys = store::pix_keys::list_for_account(self.0.store.pool(), &account.id).await?;
        for key in &keys {
            match self.0.pix_keys.delete(&caller, &key.key).await {
                Ok(()) | Err(PixKeyServiceError::NotFound) => {}
                Err(e) => return Err(e.into()),
            }
        }
        tracing::info!(account_id = %account.id, keys = keys.len(), "campaign ended");
        Ok(keys.len())
    }

    /// The company's newest subscriptions (every company user may read them), with
    /// today's date in Brasília for the payment book's month and year.
    pub async fn subscriptions(&self, actor: &Actor) -> Result<CompanySubscriptions, ConsoleError> {
        let caller = self.caller(actor.company_id()?).await?;
        let page = Page {
            skip: 0,
            limit: SUBSCRIPTIONS_SHOWN,
        };
        let (subscriptions, _) = self.0.subscriptions.list(&caller, page).await?;
        let today = super::clock::brasilia_date(self.0.clock.now_millis());
        Ok(CompanySubscriptions {
            subscriptions,
            today,
        })
    }

    /// The first instalments of one of the company's subscriptions, with the charges
    /// issued for them, and how many the schedule has up to the end of next year.
    pub async fn subscription_instalments(
        &self,
        actor: &Actor,
        subscription_id: &str,
    ) -> Result<(Vec<InstalmentView>, i64), ConsoleError> {
        let caller = self.caller(actor.company_id()?).await?;
        let page = Page {
            skip: 0,
            limit: INSTALMENTS_SHOWN,
        };
        let (_, instalments, info) = self
            .0
            .subscriptions
            .instalments(&caller, subscription_id, page)
            .await?;
        Ok((instalments, info.total_count))
    }

    /// Cancels one of the company's subscriptions: a change, so API_PLUGINS.
    #[instrument(name = "service.console.cancel_subscription", skip(self, actor))]
    pub async fn cancel_subscription(
        &self,
        actor: &Actor,
        subscription_id: &str,
    ) -> Result<Subscription, ConsoleError> {
        let caller = self.caller(actor.require_api_plugins()?).await?;
        let subscription = self
            .0
            .subscriptions
            .cancel(&caller, subscription_id)
            .await?;
        tracing::info!(subscription = %subscription.row.id, "subscription canceled in the console");
        Ok(subscription)
    }

    /// The payment book (PDF) of one of the company's subscriptions up to `month`/
    /// `year`. It issues the charges of every instalment up to then (charges that stay
    /// payable even if the subscription is canceled later), so it is a change and
    /// needs API_PLUGINS, like cancelling.
    #[instrument(name = "service.console.payment_book", skip(self, actor))]
    pub async fn payment_book(
        &self,
        actor: &Actor,
        subscription_id: &str,
        month: Option<i64>,
        year: Option<i64>,
    ) -> Result<Vec<u8>, ConsoleError> {
        let caller = self.caller(actor.require_api_plugins()?).await?;
        Ok(self
            .0
            .subscriptions
            .payment_book(&caller, subscription_id, month, year)
            .await?)
    }

    /// Adds a user to the admin's company (audited).
    pub async fn create_user(
        &self,
        actor: &Actor,
        email: &str,
        password: &str,
        role: &str,
        api_plugins: bool,
    ) -> Result<User, ConsoleError> {
        let company_id = actor.require_admin()?.to_owned();
        let user = self
            .0
            .users
            .create(&company_id, email, password, role, api_plugins)
            .await?;
        self.audit(
            actor,
            Some(&company_id),
            "USER_CREATED",
            &user.email,
            &format!("role={} api_plugins={api_plugins}", user.role.as_str()),
        )
        .await?;
        Ok(user)
    }

    /// Grants or revokes API_PLUGINS for a user of the admin's company (audited). An
    /// admin cannot take it from themselves, so a company always keeps someone in.
    pub async fn set_api_plugins(
        &self,
        actor: &Actor,
        user_id: &str,
        granted: bool,
    ) -> Result<User, ConsoleError> {
        let company_id = actor.require_admin()?.to_owned();
        if user_id == actor.user.id && !granted {
            return Err(ConsoleError::Validation(vec![FieldError::new(
                "user",
                Problem::Invalid,
            )]));
        }
        let user = self
            .0
            .users
            .set_permission(&company_id, user_id, API_PLUGINS, granted)
            .await?;
        self.audit(
            actor,
            Some(&company_id),
            if granted {
                "PERMISSION_GRANTED"
            } else {
                "PERMISSION_REVOKED"
            },
            &user.email,
            API_PLUGINS,
        )
        .await?;
        Ok(user)
    }

    /// Support switches a company feature (audited).
    pub async fn set_feature(
        &self,
        actor: &Actor,
        company_id: &str,
        feature: &str,
        enabled: bool,
    ) -> Result<(), ConsoleError> {
        actor.require_support()?;
        let feature = feature.parse::<Feature>().map_err(|_| {
            ConsoleError::Validation(vec![FieldError::new("feature", Problem::UnknownValue)])
        })?;
        match self.0.companies.get(company_id).await {
            Ok(_) => {}
            Err(CompanyError::NotFound) => return Err(ConsoleError::CompanyNotFound),
            Err(e) => return Err(e.into()),
        }
        self.0
            .companies
            .set_feature(company_id, feature, enabled)
            .await?;
        self.audit(
            actor,
            Some(company_id),
            if enabled {
                "FEATURE_ENABLED"
            } else {
                "FEATURE_DISABLED"
            },
            feature.as_str(),
            "",
        )
        .await
    }

    /// Support switches an account's withdraw key API (audited).
    pub async fn set_withdraw_key_api(
        &self,
        actor: &Actor,
        account_id: &str,
        enabled: bool,
    ) -> Result<(), ConsoleError> {
        actor.require_support()?;
        let account = match store::accounts::get(self.0.store.pool(), account_id).await {
            Ok(a) => a,
            Err(StoreError::NotFound) => return Err(ConsoleError::AccountNotFound),
            Err(e) => return Err(e.into()),
        };
        self.0
            .companies
            .set_withdraw_key_api(&account.id, enabled)
            .await?;
        self.audit(
            actor,
            Some(&account.company_id),
            if enabled {
                "WITHDRAW_KEY_API_ENABLED"
            } else {
                "WITHDRAW_KEY_API_DISABLED"
            },
            &account.id,
            "",
        )
        .await
    }

    /// Support's dispute queue: every company's newest disputes, whatever their status.
    pub async fn support_disputes(
        &self,
        actor: &Actor,
    ) -> Result<Vec<QueuedDispute>, ConsoleError> {
        actor.require_support()?;
        let names = self.company_names().await?;
        let disputes = self.0.disputes.list_all(None, SUPPORT_QUEUE).await?;
        let mut queue = Vec::with_capacity(disputes.len());
        for dispute in disputes {
            let company = names
                .get(&dispute.row.company_id)
                .cloned()
                .unwrap_or_default();
            queue.push(self.queued(dispute, company).await?);
        }
        Ok(queue)
    }

    async fn queued(
        &self,
        dispute: Dispute,
        company: String,
    ) -> Result<QueuedDispute, ConsoleError> {
        let mut file_links = Vec::new();
        for file_id in dispute.evidence.iter().filter_map(|e| e.file_id.as_deref()) {
            let link = self
                .0
                .files
                .signed_path(file_id)
                .await
                .map_err(super::disputes::DisputeError::from)?;
            file_links.push((file_id.to_owned(), link));
        }
        Ok(QueuedDispute {
            dispute,
            company,
            file_links,
        })
    }

    /// Support ends a dispute IN_REVIEW (`ACCEPT`, `REJECT` or `CANCEL`), acting through
    /// its company's MASTER power (audited).
    #[instrument(name = "service.console.resolve_dispute", skip(self, actor, note))]
    pub async fn resolve_dispute(
        &self,
        actor: &Actor,
        dispute_id: &str,
        resolution: &str,
        note: Option<&str>,
    ) -> Result<QueuedDispute, ConsoleError> {
        actor.require_support()?;
        let (resolution, action) = match resolution.trim() {
            "ACCEPT" => (Resolution::Accept, "DISPUTE_ACCEPT"),
            "REJECT" => (Resolution::Reject, "DISPUTE_REJECT"),
            "CANCEL" => (Resolution::Cancel, "DISPUTE_CANCEL"),
            _ => {
                return Err(ConsoleError::Validation(vec![FieldError::new(
                    "decision",
                    Problem::UnknownValue,
                )]));
            }
        };
        let found = self.0.disputes.find_any(dispute_id).await?;
        let company_id = found.row.company_id;
        let caller = self.caller(&company_id).await?;
        let dispute = self
            .0
            .disputes
            .resolve(&caller, &found.row.id, resolution, note)
            .await?;
        self.audit(
            actor,
            Some(&company_id),
            action,
            &dispute.row.id,
            dispute.row.resolution_note.as_deref().unwrap_or_default(),
        )
        .await?;
        let company = self.company_name(&company_id).await?;
        self.queued(dispute, company).await
    }

    /// Support opens a dispute on a Pix the company received (its id or endToEndId),
    /// as the central bank would: the value is blocked (audited).
    #[instrument(name = "service.console.open_dispute", skip(self, actor, reason))]
    pub async fn open_dispute(
        &self,
        actor: &Actor,
        company_id: &str,
        transaction_id: &str,
        reason: Option<&str>,
    ) -> Result<QueuedDispute, ConsoleError> {
        actor.require_support()?;
        let company = self.company_name(company_id).await?;
        if transaction_id.trim().is_empty() {
            return Err(ConsoleError::Validation(vec![FieldError::new(
                "transaction",
                Problem::Required,
            )]));
        }
        let caller = self.caller(company_id).await?;
        let (dispute, _block) = self
            .0
            .disputes
            .open(&caller, transaction_id, reason, "SUPPORT")
            .await?;
        self.audit(
            actor,
            Some(company_id),
            "DISPUTE_OPEN",
            &dispute.row.id,
            &format!("{} {}", dispute.pix.end_to_end_id, dispute.row.reason),
        )
        .await?;
        self.queued(dispute, company).await
    }

    /// Support's KYC queue: every company's onboardings, last changed first.
    pub async fn support_kyc(&self, actor: &Actor) -> Result<Vec<QueuedOnboarding>, ConsoleError> {
        actor.require_support()?;
        let names = self.company_names().await?;
        let onboardings = self.0.kyc.list_all(None, SUPPORT_QUEUE).await?;
        Ok(onboardings
            .into_iter()
            .map(|onboarding| QueuedOnboarding {
                company: names
                    .get(&onboarding.row.company_id)
                    .cloned()
                    .unwrap_or_default(),
                onboarding,
            })
            .collect())
    }

    /// Support's decision on an onboarding IN_REVIEW (`APPROVE`, `REJECT` or
    /// `REQUEST_DOCUMENTS`; the last two need a note), signed with the support user's
    /// email (audited).
    #[instrument(name = "service.console.review_kyc", skip(self, actor, note))]
    pub async fn review_kyc(
        &self,
        actor: &Actor,
        onboarding_id: &str,
        decision: &str,
        note: Option<&str>,
    ) -> Result<QueuedOnboarding, ConsoleError> {
        actor.require_support()?;
        let (decision, action) = match decision.trim() {
            "APPROVE" => (Decision::Approve, "KYC_APPROVE"),
            "REJECT" => (Decision::Reject, "KYC_REJECT"),
            "REQUEST_DOCUMENTS" => (Decision::RequestDocuments, "KYC_REQUEST_DOCUMENTS"),
            _ => {
                return Err(ConsoleError::Validation(vec![FieldError::new(
                    "decision",
                    Problem::UnknownValue,
                )]));
            }
        };
        let onboarding = self
            .0
            .kyc
            .review(onboarding_id, decision, note, &actor.user.email)
            .await?;
        let company_id = onboarding.row.company_id.clone();
        self.audit(
            actor,
            Some(&company_id),
            action,
            &onboarding.row.id,
            onboarding.row.review_note.as_deref().unwrap_or_default(),
        )
        .await?;
        Ok(QueuedOnboarding {
            company: self.company_name(&company_id).await?,
            onboarding,
        })
    }

    async fn company_names(&self) -> Result<HashMap<String, String>, ConsoleError> {
        Ok(store::companies::list_all(self.0.store.pool())
            .await?
            .into_iter()
            .map(|c| (c.id, c.name))
            .collect())
    }

    async fn company_name(&self, company_id: &str) -> Result<String, ConsoleError> {
        match self.0.companies.get(company_id).await {
            Ok(company) => Ok(company.name),
            Err(CompanyError::NotFound) => Err(ConsoleError::CompanyNotFound),
            Err(e) => Err(e.into()),
        }
    }

    /// The newest 100 entries of the trail (support only).
    pub async fn audit_trail(&self, actor: &Actor) -> Result<Vec<AuditRow>, ConsoleError> {
        actor.require_support()?;
        Ok(store::audit::list(self.0.store.pool(), None, 100).await?)
    }

    async fn audit(
        &self,
        actor: &Actor,
        company_id: Option<&str>,
        action: &str,
        target: &str,
        detail: &str,
    ) -> Result<(), ConsoleError> {
        let row = AuditRow {
            id: store::new_id("aud"),
            actor_id: actor.user.id.clone(),
            actor_email: actor.user.email.clone(),
            company_id: company_id.map(str::to_owned),
            action: action.to_owned(),
            target: target.to_owned(),
            detail: detail.to_owned(),
            at: self.0.clock.now_millis(),
        };
        let mut tx = self.0.store.begin().await?;
        store::audit::insert(&mut tx, &row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(action, target, "audited console change");
        Ok(())
    }
}
