//! Applications (AppIDs): the credential of every `/api/v1` call.
//!
//! An AppID is `base64(clientId:clientSecret)`. Only a SHA-256 of the secret is stored
//! (the secret is 256 random bits, so a slow hash adds nothing), which is why the AppID
//! and the secret are shown once, at creation or rotation, and never again.

use std::net::IpAddr;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ipnet::IpNet;
use rand::RngCore;
use sha2::{Digest, Sha256};
use tracing::instrument;

use super::companies::Company;
use super::features::Feature;
use super::scopes::{self, Scope};
use super::{FieldError, Problem, Validation};
use crate::store::{self, Store, StoreError, applications::ApplicationRow};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApplicationType {
    /// Bound to the company's main account; creates accounts and other applications.
    Master,
    /// Bound to one account; reads and moves that account only.
    Api,
}

impl ApplicationType {
    pub fn as_str(self) -> &'static str {
        match self {
            ApplicationType::Master => "MASTER",
            ApplicationType::Api => "API",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "MASTER" => Some(ApplicationType::Master),
            "API" => Some(ApplicationType::Api),
            _ => None,
        }
    }
}

/// Why a request's credential or permissions are refused, in the order CONTRACT.md
/// checks them.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("missing AppID")]
    Missing,
    #[error("invalid AppID")]
    Invalid,
    #[error("application is not active")]
    Inactive,
    #[error("caller address is not in the application's allow-list")]
    IpNotAllowed,
    #[error("only a MASTER application may do this")]
    MasterRequired,
    #[error("the application lacks scope {0}")]
    ScopeMissing(&'static str),
    #[error("the company lacks feature {0}")]
    FeatureDisabled(Feature),
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum ApplicationError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("account not found")]
    AccountNotFound,
    #[error("application not found")]
    NotFound,
    #[error("company not found")]
    CompanyNotFound,
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for ApplicationError {
    fn from(err: StoreError) -> Self {
        ApplicationError::Store(err)
    }
}

/// The authenticated application behind a request.
#[derive(Clone, Debug)]
pub struct Caller {
    pub application_id: String,
    pub client_id: String,
    pub company_id: String,
    pub account_id: String,
    pub kind: ApplicationType,
    /// `None`: every scope of the application's type.
    pub scopes: Option<Vec<String>>,
    pub allowed_ips: Vec<IpNet>,
}

impl Caller {
    pub fn is_master(&self) -> bool {
        self.kind == ApplicationType::Master
    }

    pub fn has_scope(&self, scope: &Scope) -> bool {
        match &self.scopes {
            None => !scope.master_only || self.is_master(),
            Some(granted) => granted.iter().any(|s| s == scope.name),
        }
    }

    pub fn require_master(&self) -> Result<(), AuthError> {
        if self.is_master() {
            Ok(())
        } else {
            Err(AuthError::MasterRequired)
        }
    }

    pub fn require_scope(&self, scope: &Scope) -> Result<(), AuthError> {
        if self.has_scope(scope) {
            Ok(())
        } else {
            Err(AuthError::ScopeMissing(scope.name))
        }
    }

    /// An empty allow-list admits every address.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), AuthError> {
        let ip = match ip {
            IpAddr::V6(v6) => v6
                .to_ipv4_mapped()
                .map(IpAddr::V4)
                .unwrap_or(IpAddr::V6(v6)),
            v4 => v4,
        };
        if self.allowed_ips.is_empty() || self.allowed_ips.iter().any(|net| net.contains(&ip)) {
            Ok(())
        } else {
            Err(AuthError::IpNotAllowed)
        }
    }
}

/// What a new application asks for. `account_id` is ignored for MASTER applications,
/// which are always bound to the main account.
#[derive(Clone, Debug, Default)]
pub struct NewApplication {
    pub name: Option<String>,
    pub kind: Option<String>,
    pub account_id: Option<String>,
    pub scopes: Vec<String>,
    pub allowed_ips: Vec<String>,
}

/// An application as listed: never with its secret.
#[derive(Clone, Debug)]
pub struct Application {
    pub id: String,
    pub name: String,
    pub kind: ApplicationType,
    pub is_active: bool,
    pub client_id: String,
    pub company_id: String,
    pub account_id: String,
    pub scopes: Vec<String>,
    pub allowed_ips: Vec<String>,
    pub created_at: i64,
}

/// An application with the credentials that are shown this one time.
#[derive(Clone, Debug)]
pub struct IssuedApplication {
    pub application: Application,
    pub client_secret: String,
    pub app_id: String,
}

#[derive(Clone, Debug)]
pub struct Applications {
    store: Store,
}

fn hash_secret(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("Client_Secret_{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// Known scopes, each once; master-only scopes refused for API applications.
fn check_scopes(
    v: &mut Validation,
    kind: Option<ApplicationType>,
    names: &[String],
) -> Vec<String> {
    let mut granted = Vec::new();
    for (i, name) in names.iter().enumerate() {
        match scopes::find(name.trim()) {
            None => v.add(format!("application.scopes[{i}]"), Problem::UnknownValue),
            Some(s) if s.master_only && kind == Some(ApplicationType::Api) => v.add(
                format!("application.scopes[{i}]"),
                Problem::NotAllowedForType,
            ),
            Some(s) if !granted.contains(&s.name.to_owned()) => granted.push(s.name.to_owned()),
            Some(_) => {}
        }
    }
    granted
}

/// Addresses or CIDR networks, normalised.
fn check_allowed_ips(v: &mut Validation, ips: &[String]) -> Vec<String> {
    let mut nets = Vec::new();
    for (i, ip) in ips.iter().enumerate() {
        match parse_ip_net(ip) {
            Some(net) => nets.push(net.to_string()),
            None => v.add(format!("application.allowedIps[{i}]"), Problem::Invalid),
        }
    }
    nets
}

/// The AppID for a pair of client credentials.
pub fn app_id(client_id: &str, client_secret: &str) -> String {
    STANDARD.encode(format!("{client_id}:{client_secret}"))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn parse_json_list(text: &str, what: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|_| StoreError::Corrupt(what.to_owned()))
}

fn application(row: ApplicationRow) -> Result<Application, StoreError> {
    Ok(Application {
        kind: ApplicationType::parse(&row.kind)
            .ok_or_else(|| StoreError::Corrupt(format!("type of application {}", row.id)))?,
        scopes: parse_json_list(&row.scopes, "application scopes")?,
        allowed_ips: parse_json_list(&row.allowed_ips, "application allowed ips")?,
        id: row.id,
        name: row.name,
        is_active: row.is_active,
        client_id: row.client_id,
        company_id: row.company_id,
        account_id: row.account_id,
        created_at: row.created_at,
    })
}

/// A CIDR, or a bare address meaning just that address.
pub fn parse_ip_net(s: &str) -> Option<IpNet> {
    let s = s.trim();
    s.parse::<IpNet>()
        .ok()
        .or_else(|| s.parse::<IpAddr>().ok().map(IpNet::from))
}

impl Applications {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Resolves the bare `Authorization` value into the calling application. A `Bearer `
    /// prefix, bad base64, an unknown client or a wrong secret are all `Invalid`.
    #[instrument(name = "service.applications.authenticate", skip_all)]
    pub async fn authenticate(&self, authorization: Option<&str>) -> Result<Caller, AuthError> {
        let value = authorization
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .ok_or(AuthError::Missing)?;
        let decoded = STANDARD.decode(value).map_err(|_| AuthError::Invalid)?;
        let decoded = String::from_utf8(decoded).map_err(|_| AuthError::Invalid)?;
        let (client_id, secret) = decoded.split_once(':').ok_or(AuthError::Invalid)?;
        let row = store::applications::find_by_client_id(self.store.pool(), client_id)
            .await?
            .ok_or(AuthError::Invalid)?;
        if !constant_time_eq(hash_secret(secret).as_bytes(), row.secret_hash.as_bytes()) {
            return Err(AuthError::Invalid);
        }
        if !row.is_active {
            return Err(AuthError::Inactive);
        }
        let app = application(row)?;
        let allowed_ips = app
            .allowed_ips
            .iter()
            .filter_map(|s| parse_ip_net(s))
            .collect();
        Ok(Caller {
            application_id: app.id,
            client_id: app.client_id,
            company_id: app.company_id,
            account_id: app.account_id,
            kind: app.kind,
            scopes: if app.scopes.is_empty() {
                None
            } else {
                Some(app.scopes)
            },
            allowed_ips,
        })
    }

    /// Creates an application of `company`. MASTER applications are bound to the main
    /// account; API applications to `account_id` (default: the main account), which
    /// must belong to the same company. Every invalid field is reported at once.
    #[instrument(name = "service.applications.create", skip_all, fields(company_id = %company.id))]
    pub async fn create(
        &self,
        company: &Company,
        new: NewApplication,
    ) -> Result<IssuedApplication, ApplicationError> {
        let mut v = Validation::default();
        let name = v.text("application.name", new.name.as_deref(), 100);
        let kind = match new.kind.as_deref().map(str::trim) {
            None | Some("") => {
                v.add("application.type", Problem::Required);
                None
            }
            Some(k) => {
                let kind = ApplicationType::parse(k);
                if kind.is_none() {
                    v.add("application.type", Problem::UnknownValue);
                }
                kind
            }
        };
        let granted = check_scopes(&mut v, kind, &new.scopes);
        let ips = check_allowed_ips(&mut v, &new.allowed_ips);
        v.finish().map_err(ApplicationError::Validation)?;
        let kind = kind.expect("validated above");

        let mut tx = self.store.begin().await?;
        let account = match (kind, new.account_id.as_deref().map(str::trim)) {
            (ApplicationType::Master, _) | (ApplicationType::Api, None | Some("")) => {
                store::accounts::main_of(&mut *tx, &company.id).await?
            }
            (ApplicationType::Api, Some(id)) => match store::accounts::get(&mut *tx, id).await {
                Ok(acc) if acc.company_id == company.id => acc,
                Ok(_) | Err(StoreError::NotFound) => return Err(ApplicationError::AccountNotFound),
                Err(e) => return Err(e.into()),
            },
        };
        let client_id = format!("Client_Id_{}", uuid::Uuid::new_v4());
        let secret = new_secret();
        let now = store::now_millis();
        let row = ApplicationRow {
            id: store::new_id("app"),
            company_id: company.id.clone(),
            account_id: account.id,
            name,
            kind: kind.as_str().to_owned(),
            client_id: client_id.clone(),
            secret_hash: hash_secret(&secret),
            is_active: true,
            scopes: serde_json::to_string(&granted).expect("strings serialise"),
            allowed_ips: serde_json::to_string(&ips).expect("strings serialise"),
            created_at: now,
            updated_at: now,
        };
        store::applications::insert(&mut tx, &row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(application_id = %row.id, kind = kind.as_str(), "application created");
        Ok(IssuedApplication {
            app_id: app_id(&client_id, &secret),
            client_secret: secret,
            application: application(row)?,
        })
    }

    /// Replaces the secret of the company's application with this `clientId`. The old
    /// AppID stops working with the commit; the new one is returned only here.
    #[instrument(name = "service.applications.rotate_secret", skip(self))]
    pub async fn rotate_secret(
        &self,
        company_id: &str,
        client_id: &str,
    ) -> Result<IssuedApplication, ApplicationError> {
        let mut tx = self.store.begin().await?;
        let row = store::applications::find_by_client_id(&mut *tx, client_id.trim())
            .await?
            .filter(|row| row.company_id == company_id)
            .ok_or(ApplicationError::NotFound)?;
        let secret = new_secret();
        store::applications::set_secret_hash(
            &mut tx,
            &row.id,
            &hash_secret(&secret),
            store::now_millis(),
        )
        .await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(application_id = %row.id, "application secret rotated");
        Ok(IssuedApplication {
            app_id: app_id(&row.client_id, &secret),
            client_secret: secret,
            application: application(row)?,
        })
    }

    /// Replaces the scopes and the IP allow-list of an application of the company.
    /// The next request with its AppID sees the change.
    #[instrument(
        name = "service.applications.set_access",
        skip(self, scopes, allowed_ips)
    )]
    pub async fn set_access(
        &self,
        company_id: &str,
        id: &str,
        scopes: &[String],
        allowed_ips: &[String],
    ) -> Result<Application, ApplicationError> {
        let mut tx = self.store.begin().await?;
        let row = match store::applications::get(&mut *tx, id).await {
            Ok(row) if row.company_id == company_id => row,
            Ok(_) | Err(StoreError::NotFound) => return Err(ApplicationError::NotFound),
            Err(e) => return Err(e.into()),
        };
        let mut v = Validation::default();
        let granted = check_scopes(&mut v, ApplicationType::parse(&row.kind), scopes);
        let ips = check_allowed_ips(&mut v, allowed_ips);
        v.finish().map_err(ApplicationError::Validation)?;
        let scopes = serde_json::to_string(&granted).expect("strings serialise");
        let allowed_ips = serde_json::to_string(&ips).expect("strings serialise");
        let now = store::now_millis();
        store::applications::set_access(&mut tx, id, &scopes, &allowed_ips, now).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(application_id = %id, "application access changed");
        application(ApplicationRow {
            scopes,
            allowed_ips,
            updated_at: now,
            ..row
        })
        .map_err(Into::into)
    }

    pub async fn list(&self, company_id: &str) -> Result<Vec<Application>, ApplicationError> {
        let rows = store::applications::list_for_company(self.store.pool(), company_id).await?;
        Ok(rows
            .into_iter()
            .map(application)
            .collect::<Result<_, _>>()?)
    }

    /// Activates or deactivates an application of the company; an inactive one gets 401.
    pub async fn set_active(
        &self,
        company_id: &str,
        id: &str,
        active: bool,
    ) -> Result<(), ApplicationError> {
        let mut tx = self.store.begin().await?;
        match store::applications::get(&mut *tx, id).await {
            Ok(row) if row.company_id == company_id => {}
            Ok(_) | Err(StoreError::NotFound) => return Err(ApplicationError::NotFound),
            Err(e) => return Err(e.into()),
        }
        store::applications::set_active(&mut tx, id, active, store::now_millis()).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(kind: ApplicationType, scopes: Option<Vec<&str>>, ips: &[&str]) -> Caller {
        Caller {
            application_id: "app_x".into(),
            client_id: "c".into(),
            company_id: "cmp_x".into(),
            account_id: "acc_x".into(),
            kind,
            scopes: scopes.map(|s| s.into_iter().map(String::from).collect()),
            allowed_ips: ips.iter().map(|s| parse_ip_net(s).unwrap()).collect(),
        }
    }

    #[test]
    fn empty_scopes_mean_every_scope_of_the_type() {
        let api = caller(ApplicationType::Api, None, &[]);
        assert!(api.has_scope(&scopes::PIX_KEY_WITHDRAW_POST));
        assert!(!api.has_scope(&scopes::APPLICATION_ROTATE_POST));
        let master = caller(ApplicationType::Master, None, &[]);
        assert!(master.has_scope(&scopes::APPLICATION_ROTATE_POST));
    }

    #[test]
    fn set_scopes_mean_exactly_those() {
        let api = caller(ApplicationType::Api, Some(vec!["FILE_POST"]), &[]);
        assert!(api.has_scope(&scopes::FILE_POST));
        assert!(!api.has_scope(&scopes::PIX_KEY_WITHDRAW_POST));
    }

    #[test]
    fn allow_list_accepts_cidrs_bare_addresses_and_v4_mapped_v6() {
        let c = caller(ApplicationType::Api, None, &["10.0.0.0/8", "192.168.1.7"]);
        assert!(c.check_ip("10.2.3.4".parse().unwrap()).is_ok());
        assert!(c.check_ip("192.168.1.7".parse().unwrap()).is_ok());
        assert!(c.check_ip("::ffff:10.1.1.1".parse().unwrap()).is_ok());
        assert!(matches!(
            c.check_ip("127.0.0.1".parse().unwrap()),
            Err(AuthError::IpNotAllowed)
        ));
        let open = caller(ApplicationType::Api, None, &[]);
        assert!(open.check_ip("203.0.113.9".parse().unwrap()).is_ok());
    }

    #[test]
    fn app_id_is_base64_of_client_id_and_secret() {
        assert_eq!(app_id("a", "b"), "YTpi");
    }
}
