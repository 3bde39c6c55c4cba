//! Every console action as a server function: read the session, call the backend, set
//! the HTTP status of a refusal. Nothing here decides who may do what; the backend
//! (the server's services) does.

use leptos::prelude::*;
use leptos::server_fn::codec::{MultipartData, MultipartFormData};
#[cfg(feature = "ssr")]
use leptos::server_fn::error::FromServerFnError;

use crate::backend::*;

/// The session entry holding the signed-in user's id (also read by the server's own
/// console routes, such as the payment book download).
#[cfg(feature = "ssr")]
pub const USER_KEY: &str = "user_id";

#[cfg(feature = "ssr")]
fn internal(what: impl std::fmt::Display) -> ConsoleError {
    ConsoleError::from_server_fn_error(leptos::server_fn::error::ServerFnErrorErr::ServerError(
        what.to_string(),
    ))
}

#[cfg(feature = "ssr")]
pub(crate) fn backend() -> Result<Backend, ConsoleError> {
    use_context::<Backend>().ok_or_else(|| internal("console backend missing from context"))
}

#[cfg(feature = "ssr")]
pub(crate) async fn session() -> Result<tower_sessions::Session, ConsoleError> {
    leptos_axum::extract::<tower_sessions::Session>()
        .await
        .map_err(|e| internal(format!("session: {e}")))
}

/// Answers `result`, giving a refusal its HTTP status (a 500 otherwise).
#[cfg(feature = "ssr")]
pub(crate) fn reply<T>(result: Result<T, ConsoleError>) -> Result<T, ConsoleError> {
    if let Err(e) = &result
        && let Some(response) = use_context::<leptos_axum::ResponseOptions>()
        && let Ok(status) = http::StatusCode::from_u16(e.status())
    {
        response.set_status(status);
    }
    result
}

/// The backend and the signed-in user's id; 401 `NOT_SIGNED_IN` without a session.
#[cfg(feature = "ssr")]
async fn signed_in() -> Result<(Backend, String), ConsoleError> {
    let user_id: Option<String> = session()
        .await?
        .get(USER_KEY)
        .await
        .map_err(|e| internal(format!("session: {e}")))?;
    match user_id {
        Some(id) => Ok((backend()?, id)),
        None => reply(Err(ConsoleError::Refused {
            status: 401,
            code: "NOT_SIGNED_IN".into(),
            message: crate::i18n::server_text(
                "Sessão expirada; entre novamente.",
                "Session expired; sign in again.",
            )
            .into(),
            fields: vec![],
        })),
    }
}

/// One line per value, commas also accepted; blanks dropped.
#[cfg(feature = "ssr")]
fn lines(text: &str) -> Vec<String> {
    text.split(['\n', ',', ';'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[server(prefix = "/console/fn", endpoint = "users")]
pub async fn list_users() -> Result<Vec<UserView>, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.users(&me).await)
}

#[server(prefix = "/console/fn", endpoint = "create_user")]
pub async fn create_user(
    email: String,
    password: String,
    role: String,
    #[server(default)] api_plugins: Option<String>,
) -> Result<UserView, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(
        b.create_user(&me, &email, &password, &role, api_plugins.is_some())
            .await,
    )
}

#[server(prefix = "/console/fn", endpoint = "set_api_plugins")]
pub async fn set_api_plugins(user: String, granted: bool) -> Result<UserView, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.set_api_plugins(&me, &user, granted).await)
}

#[server(prefix = "/console/fn", endpoint = "applications")]
pub async fn list_applications() -> Result<ApplicationsPage, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.applications(&me).await)
}

#[server(prefix = "/console/fn", endpoint = "create_application")]
pub async fn create_application(
    name: String,
    kind: String,
    #[server(default)] account_id: String,
) -> Result<IssuedApplication, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.create_application(&me, &name, &kind, &account_id).await)
}

/// `scopes[]` from the checkboxes; `allowed_ips` one per line.
#[server(prefix = "/console/fn", endpoint = "set_application_access")]
pub async fn set_application_access(
    application: String,
    #[server(default)] scopes: Vec<String>,
    #[server(default)] allowed_ips: String,
) -> Result<ApplicationView, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(
        b.set_application_access(&me, &application, scopes, lines(&allowed_ips))
            .await,
    )
}

#[server(prefix = "/console/fn", endpoint = "set_application_active")]
pub async fn set_application_active(application: String, active: bool) -> Result<(), ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.set_application_active(&me, &application, active).await)
}

#[server(prefix = "/console/fn", endpoint = "rotate_secret")]
pub async fn rotate_secret(application: String) -> Result<IssuedApplication, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.rotate_secret(&me, &application).await)
}

#[server(prefix = "/console/fn", endpoint = "plugins")]
pub async fn list_plugins() -> Result<PluginsPage, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.plugins(&me).await)
}

/// Multipart: `name`, `version`, `file` (the component).
#[server(input = MultipartFormData, prefix = "/console/fn", endpoint = "upload_plugin")]
pub async fn upload_plugin(data: MultipartData) -> Result<PluginView, ConsoleError> {
    let (b, me) = signed_in().await?;
    let mut multipart = data
        .into_inner()
        .ok_or_else(|| internal("multipart data missing"))?;
    let (mut name, mut version, mut component) = (String::new(), String::new(), Vec::new());
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| internal(format!("multipart: {e}")))?
    {
        let field_name = field.name().unwrap_or_default().to_owned();
        let bytes = field
            .bytes()
            .await
            .map_err(|e| internal(format!("multipart: {e}")))?;
        match field_name.as_str() {
            "name" => name = String::from_utf8_lossy(&bytes).into_owned(),
            "version" => version = String::from_utf8_lossy(&bytes).into_owned(),
            "file" => component = bytes.to_vec(),
            _ => {}
        }
    }
    reply(b.upload_plugin(&me, &name, &version, component).await)
}

/// One binding per call: the hook, the accounts (one per line, none: all) and the
/// configuration (`key=value` per line). An empty hook removes every binding.
#[server(prefix = "/console/fn", endpoint = "set_plugin_binding")]
pub async fn set_plugin_binding(
    plugin: String,
    #[server(default)] hook: String,
    #[server(default)] accounts: String,
    #[server(default)] config: String,
) -> Result<PluginView, ConsoleError> {
    let (b, me) = signed_in().await?;
    let bindings = if hook.trim().is_empty() {
        vec![]
    } else {
        vec![BindingView {
            hook: hook.trim().to_owned(),
            accounts: lines(&accounts),
            config: config
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .collect(),
        }]
    };
    reply(b.set_plugin_bindings(&me, &plugin, bindings).await)
}

#[server(prefix = "/console/fn", endpoint = "plugin_invocations")]
pub async fn plugin_invocations(plugin: String) -> Result<Vec<InvocationView>, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.plugin_invocations(&me, &plugin).await)
}

#[server(prefix = "/console/fn", endpoint = "webhooks")]
pub async fn list_webhooks() -> Result<WebhooksPage, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.webhooks(&me).await)
}

#[server(prefix = "/console/fn", endpoint = "create_webhook")]
pub async fn create_webhook(
    name: String,
    event: String,
    url: String,
) -> Result<WebhookView, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.create_webhook(&me, &name, &event, &url).await)
}

#[server(prefix = "/console/fn", endpoint = "delete_webhook")]
pub async fn delete_webhook(webhook: String) -> Result<(), ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.delete_webhook(&me, &webhook).await)
}

#[server(prefix = "/console/fn", endpoint = "deliveries")]
pub async fn list_deliveries(webhook: String) -> Result<Vec<DeliveryView>, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.deliveries(&me, &webhook).await)
}

#[server(prefix = "/console/fn", endpoint = "resend_delivery")]
pub async fn resend_delivery(delivery: String) -> Result<DeliveryView, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.resend_delivery(&me, &delivery).await)
}

#[server(prefix = "/console/fn", endpoint = "campaigns")]
pub async fn list_campaigns() -> Result<Vec<CampaignView>, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.campaigns(&me).await)
}

#[server(prefix = "/console/fn", endpoint = "start_campaign")]
pub async fn start_campaign(campaign: NewCampaign) -> Result<CampaignCreated, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.new_campaign(&me, campaign).await)
}

#[server(prefix = "/console/fn", endpoint = "end_campaign")]
pub async fn end_campaign(account: String) -> Result<usize, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.end_campaign(&me, &account).await)
}

#[server(prefix = "/console/fn", endpoint = "subscriptions")]
pub async fn list_subscriptions() -> Result<SubscriptionsPage, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.subscriptions(&me).await)
}

#[server(prefix = "/console/fn", endpoint = "subscription_instalments")]
pub async fn subscription_instalments(
    subscription: String,
) -> Result<InstalmentsPage, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.subscription_instalments(&me, &subscription).await)
}

#[server(prefix = "/console/fn", endpoint = "cancel_subscription")]
pub async fn cancel_subscription(subscription: String) -> Result<SubscriptionView, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.cancel_subscription(&me, &subscription).await)
}

#[server(prefix = "/console/fn", endpoint = "support")]
pub async fn load_support() -> Result<SupportPage, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.support(&me).await)
}

#[server(prefix = "/console/fn", endpoint = "set_feature")]
pub async fn set_feature(
    company: String,
    feature: String,
    enabled: bool,
) -> Result<(), ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.set_feature(&me, &company, &feature, enabled).await)
}

#[server(prefix = "/console/fn", endpoint = "set_withdraw_key_api")]
pub async fn set_withdraw_key_api(account: String, enabled: bool) -> Result<(), ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.set_withdraw_key_api(&me, &account, enabled).await)
}

/// `decision`: `ACCEPT` or `REJECT` (support decides), `CANCEL` (the payer withdrew).
#[server(prefix = "/console/fn", endpoint = "resolve_dispute")]
pub async fn resolve_dispute(
    dispute: String,
    #[server(default)] decision: String,
    #[server(default)] note: String,
) -> Result<SupportDispute, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.resolve_dispute(&me, &dispute, &decision, &note).await)
}

/// `transaction`: the received Pix's id or endToEndId.
#[server(prefix = "/console/fn", endpoint = "open_dispute")]
pub async fn open_dispute(
    company: String,
    #[server(default)] transaction: String,
    #[server(default)] reason: String,
) -> Result<SupportDispute, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.open_dispute(&me, &company, &transaction, &reason).await)
}

/// `decision`: `APPROVE`, `REJECT` or `REQUEST_DOCUMENTS` (the last two need a note).
#[server(prefix = "/console/fn", endpoint = "review_kyc")]
pub async fn review_kyc(
    onboarding: String,
    #[server(default)] decision: String,
    #[server(default)] note: String,
) -> Result<SupportOnboarding, ConsoleError> {
    let (b, me) = signed_in().await?;
    reply(b.review_kyc(&me, &onboarding, &decision, &note).await)
}
