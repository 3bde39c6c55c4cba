//! The one mapping from every service error to an HTTP answer:
//! `{"error": "<translated message>", "code": "<STABLE_CODE>"}` plus `details` for 400.
//! Messages follow `Accept-Language` (pt-BR default, en); codes never change.
//! A 5xx body is generic; its cause goes to the log with the request id.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::service::accounts::AccountError;
use crate::service::applications::{ApplicationError, AuthError};
use crate::service::charges::ChargeError;
use crate::service::companies::CompanyError;
use crate::service::console::ConsoleError;
use crate::service::customers::CustomerError;
use crate::service::directory::LookupError;
use crate::service::disputes::DisputeError;
use crate::service::files::FileError;
use crate::service::kyc::KycError;
use crate::service::pix_key::PixKeyError;
use crate::service::pix_keys::PixKeyServiceError;
use crate::service::plugins::PluginsError;
use crate::service::qr_codes::QrCodeError;
use crate::service::refunds::RefundError;
use crate::service::sandbox::SandboxError;
use crate::service::statement::StatementError;
use crate::service::subscriptions::SubscriptionError;
use crate::service::users::UserError;
use crate::service::webhooks::WebhookError;
use crate::service::withdraw_keys::WithdrawKeyError;
use crate::service::withdrawals::WithdrawError;
use crate::service::{FieldError, Problem};

/// The language of the current request's messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    PtBr,
    En,
}

tokio::task_local! {
    /// Set for each request by [`super::middleware::language`].
    pub static LANG: Lang;
}

impl Lang {
    /// Picks the first supported language of an `Accept-Language` header.
    pub fn from_accept_language(header: Option<&str>) -> Lang {
        let Some(header) = header else {
            return Lang::PtBr;
        };
        let mut choices: Vec<(f32, &str)> = header
            .split(',')
            .filter_map(|part| {
                let mut it = part.trim().split(';');
                let tag = it.next()?.trim();
                let q = it
                    .find_map(|p| p.trim().strip_prefix("q="))
                    .and_then(|q| q.parse::<f32>().ok())
                    .unwrap_or(1.0);
                Some((q, tag))
            })
            .collect();
        choices.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (_, tag) in choices {
            let tag = tag.to_ascii_lowercase();
            if tag.starts_with("pt") {
                return Lang::PtBr;
            }
            if tag.starts_with("en") {
                return Lang::En;
            }
        }
        Lang::PtBr
    }

    pub fn current() -> Lang {
        LANG.try_with(|l| *l).unwrap_or(Lang::PtBr)
    }
}

/// An error answer: status, stable code, optional argument for the message
/// (a scope or feature name), field details, and the hidden cause of a 5xx.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: std::borrow::Cow<'static, str>,
    pub arg: Option<String>,
    /// A message written by a company rule (plugin), shown as it is.
    pub rule_message: Option<Box<str>>,
    pub details: Vec<FieldError>,
    pub retry_after: Option<u32>,
    cause: Option<Box<str>>,
}

/// The body of every error answer; `Error` in the OpenAPI document, where
/// `ops::document_shared_answers` attaches it to every 4xx.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub(super) struct Body<'a> {
    /// The message, in the language of `Accept-Language`.
    error: String,
    /// The stable code clients decide on.
    code: &'a str,
    /// The seed's name for the code of the dispute-evidence rejection (rule 4).
    #[serde(rename = "errorCode", skip_serializing_if = "Option::is_none")]
    error_code: Option<&'a str>,
    /// Each invalid field, on 400 `VALIDATION_ERROR`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(inline)]
    details: Vec<Detail>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct Detail {
    field: String,
    message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str) -> Self {
        Self {
            status,
            code: std::borrow::Cow::Borrowed(code),
            arg: None,
            rule_message: None,
            details: Vec::new(),
            retry_after: None,
            cause: None,
        }
    }

    /// A refusal by a company rule (plugin): its own code and message, 400.
    pub fn rule(denial: crate::service::plugins::Denial) -> Self {
        Self {
            code: std::borrow::Cow::Owned(denial.code),
            rule_message: Some(denial.message.into()),
            ..Self::new(StatusCode::BAD_REQUEST, "PLUGIN_DENIED")
        }
    }

    pub fn with_arg(mut self, arg: impl Into<String>) -> Self {
        self.arg = Some(arg.into());
        self
    }

    pub fn validation(details: Vec<FieldError>) -> Self {
        Self {
            details,
            ..Self::new(StatusCode::BAD_REQUEST, "VALIDATION_ERROR")
        }
    }

    pub fn not_found(code: &'static str) -> Self {
        Self::new(StatusCode::NOT_FOUND, code)
    }

    /// A failure the client cannot fix: logged in full, answered generically.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        Self {
            cause: Some(cause.to_string().into()),
            ..Self::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL_ERROR")
        }
    }

    pub fn too_many_requests(retry_after_secs: u64) -> Self {
        Self {
            retry_after: Some(u32::try_from(retry_after_secs).unwrap_or(u32::MAX)),
            ..Self::new(StatusCode::TOO_MANY_REQUESTS, "TOO_MANY_REQUESTS")
        }
    }
}

impl ApiError {
    /// The same answer for a console server fn: status, code, translated message and
    /// field messages. A 5xx is logged here and answered generically.
    pub fn into_console(self, lang: Lang) -> cofre_app::backend::ConsoleError {
        if let Some(cause) = &self.cause {
            tracing::error!(code = %self.code, %cause, "console action failed");
        }
        cofre_app::backend::ConsoleError::Refused {
            status: self.status.as_u16(),
            message: self
                .rule_message
                .as_deref()
                .map(str::to_owned)
                .unwrap_or_else(|| message(&self.code, self.arg.as_deref(), lang)),
            fields: self
                .details
                .iter()
                .map(|d| cofre_app::backend::FieldMessage {
                    field: d.field.clone(),
                    message: problem(d.problem, lang),
                })
                .collect(),
            code: self.code.into_owned(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let lang = Lang::current();
        if let Some(cause) = &self.cause {
            tracing::error!(code = %self.code, %cause, "request failed");
        }
        let body = Body {
            error: self
                .rule_message
                .as_deref()
                .map(str::to_owned)
                .unwrap_or_else(|| message(&self.code, self.arg.as_deref(), lang)),
            code: &self.code,
            error_code: (self.code == "DISPUTE_EVIDENCE_FILE_ID_NOT_ALLOWED")
                .then_some(&*self.code),
            details: self
                .details
                .iter()
                .map(|d| Detail {
                    field: d.field.clone(),
                    message: problem(d.problem, lang),
                })
                .collect(),
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// The translated message of a stable code. Unknown codes fall back to a generic text
/// so that a missing translation never hides the code itself.
pub fn message(code: &str, arg: Option<&str>, lang: Lang) -> String {
    let arg = arg.unwrap_or_default();
    let (pt, en): (String, String) = match code {
        "APP_ID_MISSING" => (
            "AppID ausente: envie o AppID no cabeçalho Authorization".into(),
            "Missing AppID: send the AppID in the Authorization header".into(),
        ),
        "APP_ID_INVALID" => (
            "AppID inválido (envie o valor puro, sem o prefixo Bearer)".into(),
            "Invalid AppID (send the bare value, without the Bearer prefix)".into(),
        ),
        "APPLICATION_INACTIVE" => (
            "Aplicação inativa".into(),
            "Application is not active".into(),
        ),
        "IP_NOT_ALLOWED" => (
            "Endereço IP não permitido para esta aplicação".into(),
            "IP address not allowed for this application".into(),
        ),
        "MASTER_APPLICATION_REQUIRED" => (
            "Esta operação exige uma aplicação MASTER".into(),
            "This operation requires a MASTER application".into(),
        ),
        "SCOPE_MISSING" => (
            format!("A aplicação não tem o escopo {arg}"),
            format!("The application lacks the scope {arg}"),
        ),
        "FEATURE_DISABLED" => (
            format!("A empresa não tem a funcionalidade {arg} habilitada"),
            format!("The company does not have the feature {arg} enabled"),
        ),
        "TOO_MANY_REQUESTS" => (
            "Limite de requisições atingido; tente novamente mais tarde".into(),
            "Request limit reached; try again later".into(),
        ),
        "VALIDATION_ERROR" => (
            "Requisição inválida: verifique os campos".into(),
            "Invalid request: check the fields".into(),
        ),
        "INVALID_JSON" => ("JSON malformado".into(), "Malformed JSON".into()),
        "UNSUPPORTED_MEDIA_TYPE" => (
            "Envie Content-Type: application/json".into(),
            "Send Content-Type: application/json".into(),
        ),
        "PAYLOAD_TOO_LARGE" => (
            "Corpo da requisição grande demais".into(),
            "Request body too large".into(),
        ),
        "NOT_FOUND" => ("Recurso não encontrado".into(), "Resource not found".into()),
        "NOT_SIGNED_IN" => (
            "Sessão expirada; entre novamente".into(),
            "Session expired; sign in again".into(),
        ),
        "INVALID_CREDENTIALS" => (
            "Email ou senha incorretos".into(),
            "Wrong email or password".into(),
        ),
        "SIGN_IN_LOCKED" => (
            format!("Muitas tentativas erradas; tente de novo em {arg} segundos"),
            format!("Too many failed attempts; try again in {arg} seconds"),
        ),
        "CONSOLE_PERMISSION_MISSING" => (
            format!("Seu usuário não tem a permissão {arg}"),
            format!("Your user does not have the {arg} permission"),
        ),
        "CSRF_REJECTED" => (
            "Requisição de outra origem recusada".into(),
            "Cross-origin request refused".into(),
        ),
        "MAIN_ACCOUNT_NOT_A_CAMPAIGN" => (
            "A conta principal não é uma campanha e não pode ser encerrada".into(),
            "The main account is not a campaign and cannot be ended".into(),
        ),
        "USER_NOT_FOUND" => ("Usuário não encontrado".into(), "User not found".into()),
        "ROUTE_NOT_FOUND" => ("Rota não encontrada".into(), "Route not found".into()),
        "METHOD_NOT_ALLOWED" => ("Método não permitido".into(), "Method not allowed".into()),
        "ACCOUNT_NOT_FOUND" => ("Conta não encontrada".into(), "Account not found".into()),
        "APPLICATION_NOT_FOUND" => (
            "Aplicação não encontrada".into(),
            "Application not found".into(),
        ),
        "COMPANY_NOT_FOUND" => ("Empresa não encontrada".into(), "Company not found".into()),
        "TAX_ID_ALREADY_EXISTS" => (
            "Já existe uma empresa com este CNPJ".into(),
            "A company with this tax id already exists".into(),
        ),
        "EMAIL_ALREADY_EXISTS" => (
            "Já existe um usuário com este email".into(),
            "A user with this email already exists".into(),
        ),
        "CORRELATION_ID_CONFLICT" => (
            "Este correlationID já foi usado com outro conteúdo".into(),
            "This correlationID was already used with a different body".into(),
        ),
        "PIX_KEY_INVALID" => (
            format!("Chave pix inválida: {arg}"),
            format!("Invalid Pix key: {arg}"),
        ),
        "PIX_KEY_NOT_HOLDERS" => (
            "Chaves CPF e CNPJ devem ser do próprio titular da conta".into(),
            "CPF and CNPJ keys must be the account holder's own tax id".into(),
        ),
        "PIX_KEY_LIMIT_REACHED" => (
            "A conta já tem o número máximo de chaves pix (20)".into(),
            "The account already has the maximum number of Pix keys (20)".into(),
        ),
        "PIX_KEY_ALREADY_EXISTS" => (
            "Chave pix já existente".into(),
            "Pix key already exists".into(),
        ),
        "PIX_KEY_NOT_FOUND" => (
            "Chave pix não encontrada".into(),
            "Pix key not found".into(),
        ),
        "WITHDRAW_KEY_API_DISABLED" => (
            "A API de chave de saque não está habilitada para esta conta; fale com o suporte"
                .into(),
            "The withdraw key API is not enabled for this account; contact support".into(),
        ),
        "WITHDRAW_KEY_NOT_FOUND" => (
            "A empresa não tem esta chave de saque; cadastre-a com POST".into(),
            "The company does not have this withdraw key; register it with POST".into(),
        ),
        "WITHDRAW_KEY_HOLDER_MISMATCH" => (
            "O titular da chave não é o titular da conta".into(),
            "The key's holder is not the account's holder".into(),
        ),
        "WITHDRAW_KEY_INTERNAL" => (
            "Chaves de contas do próprio Cofre não são aceitas como chave de saque".into(),
            "Keys of Cofre's own accounts are not accepted as withdraw keys".into(),
        ),
        "CUSTOMER_NOT_FOUND" => ("Cliente não encontrado".into(), "Customer not found".into()),
        "CUSTOMER_ALREADY_EXISTS" => (
            "Já existe um cliente com este correlationID".into(),
            "A customer with this correlationID already exists".into(),
        ),
        "ACCOUNT_WITHOUT_PIX_KEY" => (
            "A conta não tem chave pix; cadastre uma antes de cobrar".into(),
            "The account has no Pix key; register one before charging".into(),
        ),
        "CHARGE_NOT_FOUND" => ("Cobrança não encontrada".into(), "Charge not found".into()),
        "CHARGE_NOT_ACTIVE" => (
            format!("A cobrança não está ativa ({arg})"),
            format!("The charge is not active ({arg})"),
        ),
        "CHARGE_PAID" => (
            "Uma cobrança paga não pode ser removida".into(),
            "A paid charge cannot be deleted".into(),
        ),
        "CHARGE_NOT_PAID" => (
            "A cobrança ainda não foi paga".into(),
            "The charge has not been paid".into(),
        ),
        "QRCODE_NOT_FOUND" => ("QR code não encontrado".into(), "QR code not found".into()),
        "TRANSACTION_NOT_FOUND" => (
            "Transação não encontrada".into(),
            "Transaction not found".into(),
        ),
        "TRANSACTION_NOT_REFUNDABLE" => (
            "Só um Pix recebido pode ser devolvido ou contestado".into(),
            "Only a received Pix can be refunded or disputed".into(),
        ),
        "REFUND_NOT_FOUND" => ("Devolução não encontrada".into(), "Refund not found".into()),
        "REFUND_ABOVE_RECEIVED" => (
            format!("A devolução passa do valor recebido e ainda não devolvido ({arg} centavos)"),
            format!("The refund is above what was received and not yet refunded ({arg} centavos)"),
        ),
        "INSUFFICIENT_FUNDS" => (
            "Saldo disponível insuficiente".into(),
            "Insufficient available balance".into(),
        ),
        "WITHDRAW_KEY_NOT_SET" => (
            "A conta não tem chave de saque selecionada".into(),
            "The account has no withdraw key selected".into(),
        ),
        "WITHDRAW_VALUE_INVALID" => (
            "O valor do saque deve ser um número positivo de centavos".into(),
            "The withdraw value must be a positive number of centavos".into(),
        ),
        "WEBHOOK_NOT_FOUND" => ("Webhook não encontrado".into(), "Webhook not found".into()),
        "DELIVERY_NOT_FOUND" => ("Entrega não encontrada".into(), "Delivery not found".into()),
        "WEBHOOK_URL_NOT_ALLOWED" => (
            "A URL do webhook aponta para um endereço privado ou local".into(),
            "The webhook URL points to a private or loopback address".into(),
        ),
        "PLUGIN_NOT_FOUND" => ("Plugin não encontrado".into(), "Plugin not found".into()),
        "PLUGIN_INVALID" => (
            format!("O arquivo não é um componente válido da interface cofre:rules: {arg}"),
            format!("The file is not a valid component of the cofre:rules interface: {arg}"),
        ),
        "PLUGIN_INTERFACE_UNSUPPORTED" => (
            format!("Versão de interface não suportada: {arg}"),
            format!("Unsupported interface version: {arg}"),
        ),
        "PLUGIN_FAILED" => (
            "Uma regra da empresa falhou".into(),
            "A company rule failed".into(),
        ),
        "MULTIPART_REQUIRED" => (
            "Envie Content-Type: multipart/form-data com os campos file e purpose".into(),
            "Send Content-Type: multipart/form-data with the fields file and purpose".into(),
        ),
        "MULTIPART_INVALID" => (
            format!("Corpo multipart inválido: {arg}"),
            format!("Invalid multipart body: {arg}"),
        ),
        "FILE_TOO_LARGE" => (
            format!("O arquivo passa do limite de {arg} bytes"),
            format!("The file is larger than the limit of {arg} bytes"),
        ),
        "FILE_UNREADABLE" => (
            "Documento ilegível: envie um PDF, PNG ou JPEG completo".into(),
            "Unreadable document: send a whole PDF, PNG or JPEG".into(),
        ),
        "FILE_NOT_FOUND" => ("Arquivo não encontrado".into(), "File not found".into()),
        "FILE_PURPOSE_MISMATCH" => (
            format!("O arquivo foi enviado com outra finalidade ({arg}); envie-o de novo com a finalidade certa"),
            format!("The file was uploaded for another purpose ({arg}); upload it again with the right purpose"),
        ),
        "FILE_URL_EXPIRED" => (
            "O link do arquivo expirou; peça um novo".into(),
            "The file link expired; ask for a new one".into(),
        ),
        "FILE_URL_INVALID" => (
            "Link de arquivo inválido".into(),
            "Invalid file link".into(),
        ),
        "DISPUTE_EVIDENCE_FILE_ID_NOT_ALLOWED" => (
            "A empresa não tem a funcionalidade DISPUTE_EVIDENCE_FILE_ID: envie url em vez de fileId".into(),
            "The company does not have the DISPUTE_EVIDENCE_FILE_ID feature: send url instead of fileId".into(),
        ),
        "DISPUTE_EVIDENCE_URL_AND_FILE_ID" => (
            "Cada documento leva url ou fileId, nunca os dois".into(),
            "Each document takes url or fileId, never both".into(),
        ),
        "DISPUTE_NOT_FOUND" => ("Disputa não encontrada".into(), "Dispute not found".into()),
        "DISPUTE_ALREADY_EXISTS" => (
            "Este Pix já tem uma disputa".into(),
            "This Pix already has a dispute".into(),
        ),
        "DISPUTE_CLOSED" => (
            format!("A disputa está encerrada ({arg})"),
            format!("The dispute is closed ({arg})"),
        ),
        "DISPUTE_EVIDENCE_LIMIT" => (
            format!("Uma disputa aceita no máximo {arg} documentos"),
            format!("A dispute takes at most {arg} documents"),
        ),
        "KYC_ONBOARDING_NOT_FOUND" => (
            "Onboarding KYC não encontrado".into(),
            "KYC onboarding not found".into(),
        ),
        "KYC_ONBOARDING_NOT_IN_REVIEW" => (
            format!("O onboarding KYC não está em análise ({arg})"),
            format!("The KYC onboarding is not in review ({arg})"),
        ),
        "SUBSCRIPTION_NOT_FOUND" => (
            "Assinatura não encontrada".into(),
            "Subscription not found".into(),
        ),
        "SUBSCRIPTION_CANCELED" => (
            "A assinatura está cancelada".into(),
            "The subscription is canceled".into(),
        ),
        "PAYMENT_BOOK_EMPTY" => (
            "Nenhuma parcela é gerada até esse mês".into(),
            "No instalment is generated up to that month".into(),
        ),
        "ENDPOINT_REMOVED" => (
            format!("Endpoint removido do contrato público ({arg}); veja GET /api/v1/changelog"),
            format!("Endpoint removed from the public contract ({arg}); see GET /api/v1/changelog"),
        ),
        "INTERNAL_ERROR" => (
            "Erro interno; tente novamente".into(),
            "Internal error; try again".into(),
        ),
        _ => (
            "Erro interno; tente novamente".into(),
            "Internal error; try again".into(),
        ),
    };
    match lang {
        Lang::PtBr => pt,
        Lang::En => en,
    }
}

fn problem(p: Problem, lang: Lang) -> String {
    match (p, lang) {
        (Problem::Required, Lang::PtBr) => "campo obrigatório".into(),
        (Problem::Required, Lang::En) => "required".into(),
        (Problem::TooLong { max }, Lang::PtBr) => format!("no máximo {max} caracteres"),
        (Problem::TooLong { max }, Lang::En) => format!("at most {max} characters"),
        (Problem::Invalid, Lang::PtBr) => "valor inválido".into(),
        (Problem::Invalid, Lang::En) => "invalid value".into(),
        (Problem::UnknownValue, Lang::PtBr) => "valor desconhecido".into(),
        (Problem::UnknownValue, Lang::En) => "unknown value".into(),
        (Problem::NotAllowedForType, Lang::PtBr) => {
            "não permitido para este tipo de aplicação".into()
        }
        (Problem::NotAllowedForType, Lang::En) => "not allowed for this application type".into(),
    }
}

impl From<AuthError> for ApiError {
    fn from(err: AuthError) -> Self {
        use StatusCode as S;
        match err {
            AuthError::Missing => ApiError::new(S::UNAUTHORIZED, "APP_ID_MISSING"),
            AuthError::Invalid => ApiError::new(S::UNAUTHORIZED, "APP_ID_INVALID"),
            AuthError::Inactive => ApiError::new(S::UNAUTHORIZED, "APPLICATION_INACTIVE"),
            AuthError::IpNotAllowed => ApiError::new(S::FORBIDDEN, "IP_NOT_ALLOWED"),
            AuthError::MasterRequired => ApiError::new(S::FORBIDDEN, "MASTER_APPLICATION_REQUIRED"),
            AuthError::ScopeMissing(scope) => {
                ApiError::new(S::FORBIDDEN, "SCOPE_MISSING").with_arg(scope)
            }
            AuthError::FeatureDisabled(f) => {
                ApiError::new(S::FORBIDDEN, "FEATURE_DISABLED").with_arg(f.as_str())
            }
            AuthError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<ApplicationError> for ApiError {
    fn from(err: ApplicationError) -> Self {
        match err {
            ApplicationError::Validation(details) => ApiError::validation(details),
            ApplicationError::AccountNotFound => ApiError::not_found("ACCOUNT_NOT_FOUND"),
            ApplicationError::NotFound => ApiError::not_found("APPLICATION_NOT_FOUND"),
            ApplicationError::CompanyNotFound => ApiError::not_found("COMPANY_NOT_FOUND"),
            ApplicationError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<CompanyError> for ApiError {
    fn from(err: CompanyError) -> Self {
        match err {
            CompanyError::Validation(details) => ApiError::validation(details),
            CompanyError::TaxIdTaken => {
                ApiError::new(StatusCode::CONFLICT, "TAX_ID_ALREADY_EXISTS")
            }
            CompanyError::EmailTaken => ApiError::new(StatusCode::CONFLICT, "EMAIL_ALREADY_EXISTS"),
            CompanyError::NotFound => ApiError::not_found("COMPANY_NOT_FOUND"),
            CompanyError::AccountNotFound => ApiError::not_found("ACCOUNT_NOT_FOUND"),
            CompanyError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<UserError> for ApiError {
    fn from(err: UserError) -> Self {
        match err {
            UserError::InvalidCredentials => {
                ApiError::new(StatusCode::UNAUTHORIZED, "INVALID_CREDENTIALS")
            }
            UserError::LockedOut { retry_after_secs } => ApiError {
                retry_after: Some(u32::try_from(retry_after_secs).unwrap_or(u32::MAX)),
                ..ApiError::new(StatusCode::TOO_MANY_REQUESTS, "SIGN_IN_LOCKED")
                    .with_arg(retry_after_secs.to_string())
            },
            UserError::NotFound => ApiError::not_found("USER_NOT_FOUND"),
            UserError::Validation(details) => ApiError::validation(details),
            UserError::EmailTaken => ApiError::new(StatusCode::CONFLICT, "EMAIL_ALREADY_EXISTS"),
            UserError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<ConsoleError> for ApiError {
    fn from(err: ConsoleError) -> Self {
        match err {
            ConsoleError::NotSignedIn => ApiError::new(StatusCode::UNAUTHORIZED, "NOT_SIGNED_IN"),
            ConsoleError::PermissionMissing(what) => {
                ApiError::new(StatusCode::FORBIDDEN, "CONSOLE_PERMISSION_MISSING").with_arg(what)
            }
            ConsoleError::MainAccountNotACampaign => {
                ApiError::new(StatusCode::BAD_REQUEST, "MAIN_ACCOUNT_NOT_A_CAMPAIGN")
            }
            ConsoleError::AccountNotFound => ApiError::not_found("ACCOUNT_NOT_FOUND"),
            ConsoleError::CompanyNotFound => ApiError::not_found("COMPANY_NOT_FOUND"),
            ConsoleError::Validation(details) => ApiError::validation(details),
            ConsoleError::User(e) => e.into(),
            ConsoleError::Account(e) => e.into(),
            ConsoleError::Application(e) => e.into(),
            ConsoleError::PixKey(e) => e.into(),
            ConsoleError::WithdrawKey(e) => e.into(),
            ConsoleError::Company(e) => e.into(),
            ConsoleError::Dispute(e) => e.into(),
            ConsoleError::Kyc(e) => e.into(),
            ConsoleError::Subscription(e) => e.into(),
            ConsoleError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<AccountError> for ApiError {
    fn from(err: AccountError) -> Self {
        match err {
            AccountError::Auth(e) => e.into(),
            AccountError::NotFound => ApiError::not_found("ACCOUNT_NOT_FOUND"),
            AccountError::CorrelationIdConflict => {
                ApiError::new(StatusCode::CONFLICT, "CORRELATION_ID_CONFLICT")
            }
            AccountError::Store(e) => ApiError::internal(e),
        }
    }
}

fn invalid_key(err: PixKeyError) -> ApiError {
    let arg = match Lang::current() {
        Lang::PtBr => match err {
            PixKeyError::Invalid(kind) => format!("não é um {kind} válido"),
            PixKeyError::TooLong => "no máximo 77 caracteres".into(),
            PixKeyError::Unrecognised => "o valor não é uma chave de nenhum tipo".into(),
        },
        Lang::En => err.to_string(),
    };
    ApiError::new(StatusCode::BAD_REQUEST, "PIX_KEY_INVALID").with_arg(arg)
}

impl From<PixKeyServiceError> for ApiError {
    fn from(err: PixKeyServiceError) -> Self {
        use StatusCode as S;
        match err {
            PixKeyServiceError::Validation(d) => ApiError::validation(d),
            PixKeyServiceError::Invalid(e) => invalid_key(e),
            PixKeyServiceError::NotHolders => ApiError::new(S::BAD_REQUEST, "PIX_KEY_NOT_HOLDERS"),
            PixKeyServiceError::LimitReached => ApiError::new(S::CONFLICT, "PIX_KEY_LIMIT_REACHED"),
            PixKeyServiceError::AlreadyExists => {
                ApiError::new(S::CONFLICT, "PIX_KEY_ALREADY_EXISTS")
            }
            PixKeyServiceError::NotFound => ApiError::not_found("PIX_KEY_NOT_FOUND"),
            PixKeyServiceError::Account(e) => e.into(),
            PixKeyServiceError::Auth(e) => e.into(),
            PixKeyServiceError::Denied(denial) => ApiError::rule(denial),
            PixKeyServiceError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<LookupError> for ApiError {
    fn from(err: LookupError) -> Self {
        match err {
            LookupError::Invalid(e) => invalid_key(e),
            LookupError::NotFound => ApiError::not_found("PIX_KEY_NOT_FOUND"),
            LookupError::RateLimited { retry_after_secs } => {
                ApiError::too_many_requests(retry_after_secs)
            }
            LookupError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<WithdrawKeyError> for ApiError {
    fn from(err: WithdrawKeyError) -> Self {
        use StatusCode as S;
        match err {
            WithdrawKeyError::ApiDisabled => {
                ApiError::new(S::FORBIDDEN, "WITHDRAW_KEY_API_DISABLED")
            }
            WithdrawKeyError::Validation(d) => ApiError::validation(d),
            WithdrawKeyError::Invalid(e) => invalid_key(e),
            // The seed's row: 400 `Chave pix já existente`, use PUT instead.
            WithdrawKeyError::AlreadyExists => {
                ApiError::new(S::BAD_REQUEST, "PIX_KEY_ALREADY_EXISTS")
            }
            WithdrawKeyError::NotRegistered => ApiError::not_found("WITHDRAW_KEY_NOT_FOUND"),
            WithdrawKeyError::Internal => ApiError::new(S::BAD_REQUEST, "WITHDRAW_KEY_INTERNAL"),
            WithdrawKeyError::HolderMismatch => {
                ApiError::new(S::BAD_REQUEST, "WITHDRAW_KEY_HOLDER_MISMATCH")
            }
            WithdrawKeyError::Lookup(e) => e.into(),
            WithdrawKeyError::Account(e) => e.into(),
            WithdrawKeyError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<CustomerError> for ApiError {
    fn from(err: CustomerError) -> Self {
        match err {
            CustomerError::Validation(d) => ApiError::validation(d),
            CustomerError::NotFound => ApiError::not_found("CUSTOMER_NOT_FOUND"),
            CustomerError::AlreadyExists => {
                ApiError::new(StatusCode::CONFLICT, "CUSTOMER_ALREADY_EXISTS")
            }
            CustomerError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<ChargeError> for ApiError {
    fn from(err: ChargeError) -> Self {
        use StatusCode as S;
        match err {
            ChargeError::Validation(d) => ApiError::validation(d),
            ChargeError::AccountWithoutPixKey => {
                ApiError::new(S::BAD_REQUEST, "ACCOUNT_WITHOUT_PIX_KEY")
            }
            ChargeError::CorrelationIdConflict => {
                ApiError::new(S::CONFLICT, "CORRELATION_ID_CONFLICT")
            }
            ChargeError::NotFound => ApiError::not_found("CHARGE_NOT_FOUND"),
            ChargeError::NotActive(status) => {
                ApiError::new(S::CONFLICT, "CHARGE_NOT_ACTIVE").with_arg(status)
            }
            ChargeError::Paid => ApiError::new(S::CONFLICT, "CHARGE_PAID"),
            ChargeError::Denied(denial) => ApiError::rule(denial),
            ChargeError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<QrCodeError> for ApiError {
    fn from(err: QrCodeError) -> Self {
        use StatusCode as S;
        match err {
            QrCodeError::Validation(d) => ApiError::validation(d),
            QrCodeError::PixKeyNotFound => ApiError::not_found("PIX_KEY_NOT_FOUND"),
            QrCodeError::AccountWithoutPixKey => {
                ApiError::new(S::BAD_REQUEST, "ACCOUNT_WITHOUT_PIX_KEY")
            }
            QrCodeError::CorrelationIdConflict => {
                ApiError::new(S::CONFLICT, "CORRELATION_ID_CONFLICT")
            }
            QrCodeError::NotFound => ApiError::not_found("QRCODE_NOT_FOUND"),
            QrCodeError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<RefundError> for ApiError {
    fn from(err: RefundError) -> Self {
        use StatusCode as S;
        match err {
            RefundError::Validation(d) => ApiError::validation(d),
            RefundError::TransactionNotFound => ApiError::not_found("TRANSACTION_NOT_FOUND"),
            RefundError::NotFound => ApiError::not_found("REFUND_NOT_FOUND"),
            RefundError::NotRefundable => {
                ApiError::new(S::BAD_REQUEST, "TRANSACTION_NOT_REFUNDABLE")
            }
            RefundError::AboveReceived(left) => {
                ApiError::new(S::BAD_REQUEST, "REFUND_ABOVE_RECEIVED").with_arg(left.to_string())
            }
            RefundError::InsufficientFunds => ApiError::new(S::BAD_REQUEST, "INSUFFICIENT_FUNDS"),
            RefundError::CorrelationIdConflict => {
                ApiError::new(S::CONFLICT, "CORRELATION_ID_CONFLICT")
            }
            RefundError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<StatementError> for ApiError {
    fn from(err: StatementError) -> Self {
        match err {
            StatementError::Auth(e) => e.into(),
            StatementError::AccountNotFound => ApiError::not_found("ACCOUNT_NOT_FOUND"),
            StatementError::TransactionNotFound => ApiError::not_found("TRANSACTION_NOT_FOUND"),
            StatementError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<SandboxError> for ApiError {
    fn from(err: SandboxError) -> Self {
        use StatusCode as S;
        match err {
            SandboxError::Validation(d) => ApiError::validation(d),
            SandboxError::PixKeyNotFound => ApiError::not_found("PIX_KEY_NOT_FOUND"),
            SandboxError::InsufficientFunds => ApiError::new(S::BAD_REQUEST, "INSUFFICIENT_FUNDS"),
            SandboxError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<WithdrawError> for ApiError {
    fn from(err: WithdrawError) -> Self {
        use StatusCode as S;
        match err {
            WithdrawError::NotFound => ApiError::not_found("ACCOUNT_NOT_FOUND"),
            WithdrawError::WithdrawKeyNotSet => {
                ApiError::new(S::BAD_REQUEST, "WITHDRAW_KEY_NOT_SET")
            }
            WithdrawError::InvalidValue => ApiError::new(S::BAD_REQUEST, "WITHDRAW_VALUE_INVALID"),
            WithdrawError::InsufficientFunds => ApiError::new(S::BAD_REQUEST, "INSUFFICIENT_FUNDS"),
            WithdrawError::Account(e) => e.into(),
            WithdrawError::Denied(denial) => ApiError::rule(denial),
            WithdrawError::CorrelationIdConflict => {
                ApiError::new(S::CONFLICT, "CORRELATION_ID_CONFLICT")
            }
            WithdrawError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<WebhookError> for ApiError {
    fn from(err: WebhookError) -> Self {
        match err {
            WebhookError::Validation(d) => ApiError::validation(d),
            WebhookError::UrlNotAllowed => {
                ApiError::new(StatusCode::BAD_REQUEST, "WEBHOOK_URL_NOT_ALLOWED")
            }
            WebhookError::NotFound => ApiError::not_found("WEBHOOK_NOT_FOUND"),
            WebhookError::DeliveryNotFound => ApiError::not_found("DELIVERY_NOT_FOUND"),
            WebhookError::ApplicationNotFound => ApiError::not_found("APPLICATION_NOT_FOUND"),
            WebhookError::MasterRequired => {
                ApiError::new(StatusCode::FORBIDDEN, "MASTER_APPLICATION_REQUIRED")
            }
            WebhookError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<PluginsError> for ApiError {
    fn from(err: PluginsError) -> Self {
        use cofre_plugin_host::PluginError as P;
        match err {
            PluginsError::Validation(d) => ApiError::validation(d),
            PluginsError::Refused(P::UnsupportedVersion(v)) => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "PLUGIN_INTERFACE_UNSUPPORTED",
            )
            .with_arg(v),
            PluginsError::Refused(e) => {
                let text: String = e.to_string().chars().take(300).collect();
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "PLUGIN_INVALID").with_arg(text)
            }
            PluginsError::NotFound => ApiError::not_found("PLUGIN_NOT_FOUND"),
            PluginsError::AccountNotFound => ApiError::not_found("ACCOUNT_NOT_FOUND"),
            PluginsError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<FileError> for ApiError {
    fn from(err: FileError) -> Self {
        use StatusCode as S;
        match err {
            FileError::Validation(d) => ApiError::validation(d),
            FileError::TooLarge { max } => {
                ApiError::new(S::PAYLOAD_TOO_LARGE, "FILE_TOO_LARGE").with_arg(max.to_string())
            }
            FileError::Unreadable => ApiError::new(S::UNPROCESSABLE_ENTITY, "FILE_UNREADABLE"),
            FileError::BodyUnreadable => ApiError::new(S::BAD_REQUEST, "MULTIPART_INVALID")
                .with_arg("the body ended before the file did"),
            FileError::NotFound => ApiError::not_found("FILE_NOT_FOUND"),
            FileError::PurposeMismatch(purpose) => {
                ApiError::new(S::BAD_REQUEST, "FILE_PURPOSE_MISMATCH").with_arg(purpose)
            }
            FileError::UrlExpired => ApiError::new(S::FORBIDDEN, "FILE_URL_EXPIRED"),
            FileError::UrlInvalid => ApiError::new(S::FORBIDDEN, "FILE_URL_INVALID"),
            FileError::CorrelationIdConflict => {
                ApiError::new(S::CONFLICT, "CORRELATION_ID_CONFLICT")
            }
            FileError::ObjectStore(e) => ApiError::internal(e),
            FileError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<DisputeError> for ApiError {
    fn from(err: DisputeError) -> Self {
        use StatusCode as S;
        match err {
            DisputeError::Validation(d) => ApiError::validation(d),
            DisputeError::FileIdNotAllowed => {
                ApiError::new(S::FORBIDDEN, "DISPUTE_EVIDENCE_FILE_ID_NOT_ALLOWED")
            }
            DisputeError::UrlAndFileId => {
                ApiError::new(S::BAD_REQUEST, "DISPUTE_EVIDENCE_URL_AND_FILE_ID")
            }
            DisputeError::NotFound => ApiError::not_found("DISPUTE_NOT_FOUND"),
            DisputeError::TransactionNotFound => ApiError::not_found("TRANSACTION_NOT_FOUND"),
            DisputeError::NotDisputable => {
                ApiError::new(S::BAD_REQUEST, "TRANSACTION_NOT_REFUNDABLE")
            }
            DisputeError::AlreadyExists => ApiError::new(S::CONFLICT, "DISPUTE_ALREADY_EXISTS"),
            DisputeError::Closed(status) => {
                ApiError::new(S::CONFLICT, "DISPUTE_CLOSED").with_arg(status)
            }
            DisputeError::TooManyDocuments => ApiError::new(S::CONFLICT, "DISPUTE_EVIDENCE_LIMIT")
                .with_arg(crate::service::disputes::MAX_DOCUMENTS.to_string()),
            DisputeError::InsufficientFunds => ApiError::new(S::BAD_REQUEST, "INSUFFICIENT_FUNDS"),
            DisputeError::File(e) => e.into(),
            DisputeError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<KycError> for ApiError {
    fn from(err: KycError) -> Self {
        match err {
            KycError::Validation(d) => ApiError::validation(d),
            KycError::NotFound => ApiError::not_found("KYC_ONBOARDING_NOT_FOUND"),
            KycError::NotInReview(status) => {
                ApiError::new(StatusCode::CONFLICT, "KYC_ONBOARDING_NOT_IN_REVIEW").with_arg(status)
            }
            KycError::File(e) => e.into(),
            KycError::Store(e) => ApiError::internal(e),
        }
    }
}

impl From<SubscriptionError> for ApiError {
    fn from(err: SubscriptionError) -> Self {
        use StatusCode as S;
        match err {
            SubscriptionError::Validation(d) => ApiError::validation(d),
            SubscriptionError::NotFound => ApiError::not_found("SUBSCRIPTION_NOT_FOUND"),
            SubscriptionError::CorrelationIdConflict => {
                ApiError::new(S::CONFLICT, "CORRELATION_ID_CONFLICT")
            }
            SubscriptionError::Canceled => ApiError::new(S::CONFLICT, "SUBSCRIPTION_CANCELED"),
            SubscriptionError::PaymentBookEmpty => {
                ApiError::new(S::BAD_REQUEST, "PAYMENT_BOOK_EMPTY")
            }
            SubscriptionError::Charge(e) => e.into(),
            SubscriptionError::Boleto(e) => ApiError::internal(e),
            SubscriptionError::Pdf(e) => ApiError::internal(e),
            SubscriptionError::Store(e) => ApiError::internal(e),
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code written in the http layer (`ApiError::new` and `not_found` calls),
    /// read from the sources themselves so that none is forgotten.
    fn codes_in_sources() -> Vec<String> {
        let sources = [
            include_str!("error.rs"),
            include_str!("json.rs"),
            include_str!("mod.rs"),
            include_str!("charges.rs"),
            include_str!("auth.rs"),
            include_str!("console/mod.rs"),
            include_str!("files.rs"),
            include_str!("removed.rs"),
        ];
        let mut codes = Vec::new();
        for source in sources {
            for (i, _) in source.match_indices('"') {
                let rest = &source[i + 1..];
                let Some(end) = rest.find('"') else { continue };
                let candidate = &rest[..end];
                let before = &source[..i];
                let constructor = before.trim_end().ends_with(',')
                    && before.rfind("ApiError::new(") > before.rfind(';')
                    || before.ends_with("not_found(");
                if constructor
                    && candidate.len() > 3
                    && candidate
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b == b'_')
                {
                    codes.push(candidate.to_owned());
                }
            }
        }
        codes.sort();
        codes.dedup();
        codes
    }

    #[test]
    fn every_code_the_api_answers_has_its_own_message() {
        let codes = codes_in_sources();
        assert!(codes.len() > 40, "the scan found the codes: {codes:?}");
        for lang in [Lang::PtBr, Lang::En] {
            let generic = message("NO_SUCH_CODE", None, lang);
            for code in &codes {
                if code != "INTERNAL_ERROR" {
                    assert_ne!(
                        message(code, Some("X"), lang),
                        generic,
                        "{code} has no {lang:?} message"
                    );
                }
            }
        }
    }

    #[test]
    fn accept_language_picks_the_preferred_supported_language() {
        assert_eq!(Lang::from_accept_language(None), Lang::PtBr);
        assert_eq!(Lang::from_accept_language(Some("en-US,en;q=0.9")), Lang::En);
        assert_eq!(
            Lang::from_accept_language(Some("fr, en;q=0.5, pt-BR;q=0.8")),
            Lang::PtBr
        );
        assert_eq!(Lang::from_accept_language(Some("de")), Lang::PtBr);
    }
}
