//! What the console needs from the server, as plain data. The server crate implements
//! [`ConsoleBackend`] over its services and provides it to every server fn by context;
//! every method takes the signed-in user's id and the server decides what that user
//! may see or change.

use serde::{Deserialize, Serialize};

/// The signed-in user and their company, as the console shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleUser {
    pub id: String,
    pub email: String,
    /// `ADMIN`, `MEMBER` (company users) or `SUPPORT` (platform).
    pub role: String,
    pub permissions: Vec<String>,
    pub company: Option<ConsoleCompany>,
}

impl ConsoleUser {
    /// The API/Plugins section (applications, plugins, webhooks).
    pub fn api_plugins(&self) -> bool {
        self.company.is_some() && self.permissions.iter().any(|p| p == "API_PLUGINS")
    }

    pub fn is_admin(&self) -> bool {
        self.company.is_some() && self.role == "ADMIN"
    }

    pub fn is_support(&self) -> bool {
        self.role == "SUPPORT"
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleCompany {
    pub id: String,
    pub name: String,
    /// Formatted with punctuation.
    pub tax_id: String,
    pub features: Vec<String>,
    pub main_account_id: String,
}

/// A field the server refused, with a message in the console's language.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldMessage {
    pub field: String,
    pub message: String,
}

/// Why a console action failed. `Refused` carries the same stable code and translated
/// message as the REST API's answer for the same mistake.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum ConsoleError {
    #[error("{message}")]
    Refused {
        status: u16,
        code: String,
        message: String,
        fields: Vec<FieldMessage>,
    },
    /// The request did not reach the server function (network, encoding).
    #[error("{0}")]
    Transport(String),
}

impl ConsoleError {
    pub fn code(&self) -> &str {
        match self {
            ConsoleError::Refused { code, .. } => code,
            ConsoleError::Transport(_) => "TRANSPORT",
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            ConsoleError::Refused { status, .. } => *status,
            ConsoleError::Transport(_) => 500,
        }
    }

    /// The message for one field, if the server named it.
    pub fn field(&self, name: &str) -> Option<String> {
        match self {
            ConsoleError::Refused { fields, .. } => fields
                .iter()
                .find(|f| f.field == name || f.field.ends_with(&format!(".{name}")))
                .map(|f| f.message.clone()),
            ConsoleError::Transport(_) => None,
        }
    }
}

impl leptos::server_fn::error::FromServerFnError for ConsoleError {
    type Encoder = leptos::server_fn::codec::JsonEncoding;

    fn from_server_fn_error(value: leptos::server_fn::error::ServerFnErrorErr) -> Self {
        ConsoleError::Transport(value.to_string())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserView {
    pub id: String,
    pub email: String,
    pub role: String,
    pub api_plugins: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplicationView {
    pub id: String,
    pub name: String,
    /// `MASTER` or `API`.
    pub kind: String,
    pub is_active: bool,
    pub client_id: String,
    pub account_id: String,
    /// Empty: every scope of its type (full access).
    pub scopes: Vec<String>,
    pub allowed_ips: Vec<String>,
}

/// An application with the credentials shown this one time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuedApplication {
    pub application: ApplicationView,
    pub app_id: String,
    pub client_secret: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeView {
    pub name: String,
    pub description: String,
    pub master_only: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeGroupView {
    pub resource: String,
    pub scopes: Vec<ScopeView>,
}

/// The API/Plugins page: applications, the accounts they may be bound to, the scopes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplicationsPage {
    pub applications: Vec<ApplicationView>,
    pub accounts: Vec<String>,
    pub main_account_id: String,
    pub scope_groups: Vec<ScopeGroupView>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindingView {
    pub hook: String,
    /// Empty: every account.
    pub accounts: Vec<String>,
    /// `key=value` pairs.
    pub config: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginView {
    pub id: String,
    pub name: String,
    pub version: String,
    pub interface: String,
    pub sha256: String,
    pub bindings: Vec<BindingView>,
}

/// The Plugins page: the company's plugins and the hooks they can serve.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginsPage {
    pub plugins: Vec<PluginView>,
    pub hooks: Vec<String>,
    pub accounts: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvocationView {
    pub hook: String,
    pub decision: String,
    pub code: Option<String>,
    pub duration_us: i64,
    pub error: Option<String>,
    /// RFC 3339.
    pub at: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionView {
    pub kind: String,
    /// Centavos; negative when money left the account.
    pub value: i64,
    pub end_to_end_id: String,
    pub at: String,
}

/// Money in and out of an account on one day (Brasília time), in centavos.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DayFlow {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub money_in: i64,
    pub money_out: i64,
}

/// One account (campaign) of the company, as the dashboard shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CampaignView {
    pub account_id: String,
    pub is_default: bool,
    pub total: i64,
    pub blocked: i64,
    pub available: i64,
    /// `(key, type)`.
    pub pix_keys: Vec<(String, String)>,
    pub withdraw_key: Option<(String, String)>,
    pub withdraw_key_api_enabled: bool,
    pub transactions: Vec<TransactionView>,
    /// The last 14 days, oldest first.
    pub flows: Vec<DayFlow>,
}

/// What the "New campaign" wizard asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewCampaign {
    pub name: String,
    /// `EMAIL`, `PHONE`, `CNPJ` or `EVP`.
    pub key_type: String,
    /// Ignored for `EVP` (the server makes the key).
    pub key: String,
    /// A key of another bank held by the company; empty: none for now.
    pub withdraw_key: String,
}

/// What the wizard created, with the AppID shown this one time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CampaignCreated {
    pub account_id: String,
    pub application: IssuedApplication,
    pub pix_key: (String, String),
    pub withdraw_key: Option<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookView {
    pub id: String,
    pub name: String,
    pub event: String,
    pub url: String,
    pub is_active: bool,
}

/// The Webhooks page: the company's webhooks and the events one may listen to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhooksPage {
    pub webhooks: Vec<WebhookView>,
    pub events: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveryView {
    pub id: String,
    pub event: String,
    /// `PENDING`, `DELIVERED` or `FAILED`.
    pub status: String,
    pub attempts: i64,
    pub last_status_code: Option<i64>,
    pub at: String,
}

/// A subscription of the company: one customer charged the same value on a schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionView {
    pub id: String,
    pub correlation_id: String,
    pub customer_name: String,
    /// Formatted with punctuation.
    pub customer_tax_id: String,
    /// Centavos per instalment.
    pub value: i64,
    /// `WEEKLY`, `BIWEEKLY`, `MONTHLY`, `BIMONTHLY`, `QUARTERLY`, `SEMIANNUALLY` or
    /// `ANNUALLY`.
    pub frequency: String,
    /// The day of the month (or of the period) each instalment's charge is generated.
    pub day_generate_charge: i64,
    /// Days from generation to the due date.
    pub day_due: i64,
    /// `PIX` or `BOLETO`.
    pub charge_type: String,
    /// `ACTIVE` or `CANCELED`.
    pub status: String,
    /// `YYYY-MM-DD`.
    pub start_date: String,
    /// RFC 3339.
    pub created_at: String,
}

impl SubscriptionView {
    pub fn is_active(&self) -> bool {
        self.status == "ACTIVE"
    }
}

/// The Subscriptions page: the company's newest subscriptions (up to 100) and today's
/// date, for the payment book's month and year.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubscriptionsPage {
    pub subscriptions: Vec<SubscriptionView>,
    /// Today in Brasília.
    pub year: i32,
    pub month: u8,
}

/// One instalment of a subscription's schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalmentView {
    pub number: u32,
    /// `YYYY-MM-DD`.
    pub generation_date: String,
    pub due_date: String,
    /// `SCHEDULED` (no charge yet), or the charge's status: `ACTIVE`, `COMPLETED`,
    /// `EXPIRED`.
    pub status: String,
    /// The boleto's typed line (linha digitável), formatted, once issued.
    pub typed_line: Option<String>,
}

/// The first instalments of a subscription and how many its schedule has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalmentsPage {
    pub instalments: Vec<InstalmentView>,
    /// Instalments of the schedule up to the end of next year.
    pub total: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupportAccount {
    pub id: String,
    pub is_default: bool,
    pub withdraw_key_api_enabled: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupportCompany {
    pub id: String,
    pub name: String,
    pub tax_id: String,
    pub features: Vec<String>,
    pub accounts: Vec<SupportAccount>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub at: String,
    pub actor: String,
    pub company: Option<String>,
    pub action: String,
    pub target: String,
    pub detail: String,
}

/// One document sent as evidence for a dispute: a link or an uploaded file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceView {
    pub url: Option<String>,
    pub file_id: Option<String>,
    /// A signed, expiring download link of the file (same origin).
    pub file_link: Option<String>,
    pub description: Option<String>,
}

/// A dispute (MED) on support's queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupportDispute {
    pub id: String,
    pub company_id: String,
    pub company: String,
    /// `IN_REVIEW`, `ACCEPTED`, `REJECTED` or `CANCELED`.
    pub status: String,
    /// Centavos.
    pub value: i64,
    pub reason: String,
    /// The disputed Pix.
    pub transaction_id: String,
    pub end_to_end_id: String,
    pub documents: Vec<EvidenceView>,
    pub resolution_note: Option<String>,
    /// RFC 3339.
    pub created_at: String,
}

impl SupportDispute {
    pub fn in_review(&self) -> bool {
        self.status == "IN_REVIEW"
    }
}

/// A representative of a KYC onboarding, with the names of their documents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepresentativeView {
    pub name: String,
    pub tax_id: String,
    pub email: String,
    /// `YYYY-MM-DD`.
    pub birth_date: String,
    pub documents: Vec<String>,
}

/// A KYC onboarding on support's queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupportOnboarding {
    pub id: String,
    pub company_id: String,
    pub company: String,
    pub correlation_id: String,
    pub tax_id: String,
    /// `IN_REVIEW`, `APPROVED`, `REJECTED` or `DOCUMENTS_REQUESTED`.
    pub status: String,
    pub review_note: Option<String>,
    pub representatives: Vec<RepresentativeView>,
    /// RFC 3339.
    pub updated_at: String,
}

impl SupportOnboarding {
    pub fn in_review(&self) -> bool {
        self.status == "IN_REVIEW"
    }
}

/// The support page: every company, the features support may switch, the dispute and
/// KYC queues (newest first) and the trail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupportPage {
    pub companies: Vec<SupportCompany>,
    pub features: Vec<String>,
    pub disputes: Vec<SupportDispute>,
    pub onboardings: Vec<SupportOnboarding>,
    pub audit: Vec<AuditEntry>,
}

#[cfg(feature = "ssr")]
#[async_trait::async_trait]
pub trait ConsoleBackend: Send + Sync + 'static {
    /// Checks the credentials; answers the user's id.
    async fn sign_in(&self, email: &str, password: &str) -> Result<String, ConsoleError>;
    /// The user of a session, or `None` if it no longer exists.
    async fn user(&self, user_id: &str) -> Result<Option<ConsoleUser>, ConsoleError>;

    // Users (company ADMIN).
    async fn users(&self, user_id: &str) -> Result<Vec<UserView>, ConsoleError>;
    async fn create_user(
        &self,
        user_id: &str,
        email: &str,
        password: &str,
        role: &str,
        api_plugins: bool,
    ) -> Result<UserView, ConsoleError>;
    async fn set_api_plugins(
        &self,
        user_id: &str,
        target: &str,
        granted: bool,
    ) -> Result<UserView, ConsoleError>;

    // API/Plugins (API_PLUGINS).
    async fn applications(&self, user_id: &str) -> Result<ApplicationsPage, ConsoleError>;
    async fn create_application(
        &self,
        user_id: &str,
        name: &str,
        kind: &str,
        account_id: &str,
    ) -> Result<IssuedApplication, ConsoleError>;
    async fn set_application_access(
        &self,
        user_id: &str,
        application_id: &str,
        scopes: Vec<String>,
        allowed_ips: Vec<String>,
    ) -> Result<ApplicationView, ConsoleError>;
    async fn set_application_active(
        &self,
        user_id: &str,
        application_id: &str,
        active: bool,
    ) -> Result<(), ConsoleError>;
    async fn rotate_secret(
        &self,
        user_id: &str,
        application_id: &str,
    ) -> Result<IssuedApplication, ConsoleError>;
    async fn plugins(&self, user_id: &str) -> Result<PluginsPage, ConsoleError>;
    async fn upload_plugin(
        &self,
        user_id: &str,
        name: &str,
        version: &str,
        component: Vec<u8>,
    ) -> Result<PluginView, ConsoleError>;
    async fn set_plugin_bindings(
        &self,
        user_id: &str,
        plugin_id: &str,
        bindings: Vec<BindingView>,
    ) -> Result<PluginView, ConsoleError>;
    async fn plugin_invocations(
        &self,
        user_id: &str,
        plugin_id: &str,
    ) -> Result<Vec<InvocationView>, ConsoleError>;
    async fn webhooks(&self, user_id: &str) -> Result<WebhooksPage, ConsoleError>;
    async fn create_webhook(
        &self,
        user_id: &str,
        name: &str,
        event: &str,
        url: &str,
    ) -> Result<WebhookView, ConsoleError>;
    async fn delete_webhook(&self, user_id: &str, webhook_id: &str) -> Result<(), ConsoleError>;
    async fn deliveries(
        &self,
        user_id: &str,
        webhook_id: &str,
    ) -> Result<Vec<DeliveryView>, ConsoleError>;
    async fn resend_delivery(
        &self,
        user_id: &str,
        delivery_id: &str,
    ) -> Result<DeliveryView, ConsoleError>;

    // Campaigns (every company user reads; API_PLUGINS changes, as it issues AppIDs).
    async fn campaigns(&self, user_id: &str) -> Result<Vec<CampaignView>, ConsoleError>;
    async fn new_campaign(
        &self,
        user_id: &str,
        new: NewCampaign,
    ) -> Result<CampaignCreated, ConsoleError>;
    /// Deletes the account's Pix keys; answers how many.
    async fn end_campaign(&self, user_id: &str, account_id: &str) -> Result<usize, ConsoleError>;

    // Subscriptions (every company user reads; API_PLUGINS cancels).
    /// The company's newest subscriptions, up to 100.
    async fn subscriptions(&self, user_id: &str) -> Result<SubscriptionsPage, ConsoleError>;
    async fn subscription_instalments(
        &self,
        user_id: &str,
        subscription_id: &str,
    ) -> Result<InstalmentsPage, ConsoleError>;
    async fn cancel_subscription(
        &self,
        user_id: &str,
        subscription_id: &str,
    ) -> Result<SubscriptionView, ConsoleError>;

    // Support (SUPPORT).
    async fn support(&self, user_id: &str) -> Result<SupportPage, ConsoleError>;
    async fn set_feature(
        &self,
        user_id: &str,
        company_id: &str,
        feature: &str,
        enabled: bool,
    ) -> Result<(), ConsoleError>;
    async fn set_withdraw_key_api(
        &self,
        user_id: &str,
        account_id: &str,
        enabled: bool,
    ) -> Result<(), ConsoleError>;
    /// `decision`: `ACCEPT`, `REJECT` or `CANCEL`; the note may be empty.
    async fn resolve_dispute(
        &self,
        user_id: &str,
        dispute_id: &str,
        decision: &str,
        note: &str,
    ) -> Result<SupportDispute, ConsoleError>;
    /// Opens a dispute on a Pix the company received (id or endToEndId); an empty
    /// reason takes the default.
    async fn open_dispute(
        &self,
        user_id: &str,
        company_id: &str,
        transaction_id: &str,
        reason: &str,
    ) -> Result<SupportDispute, ConsoleError>;
    /// `decision`: `APPROVE`, `REJECT` or `REQUEST_DOCUMENTS` (the last two need a note).
    async fn review_kyc(
        &self,
        user_id: &str,
        onboarding_id: &str,
        decision: &str,
        note: &str,
    ) -> Result<SupportOnboarding, ConsoleError>;
}

/// The backend as provided in the server fn context.
#[cfg(feature = "ssr")]
pub type Backend = std::sync::Arc<dyn ConsoleBackend>;
