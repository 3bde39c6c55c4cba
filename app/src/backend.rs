//! What the console needs from the server, as plain data. The server crate implements
//! [`ConsoleBackend`] over its services and provides it to every server fn by context.

use serde::{Deserialize, Serialize};

/// The signed-in user and their company, as the console shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleUser {
    pub id: String,
    pub email: String,
    pub role: String,
    pub permissions: Vec<String>,
    pub company: Option<ConsoleCompany>,
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

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum ConsoleError {
    #[error("Email ou senha incorretos.")]
    InvalidCredentials,
    #[error("Sessão expirada; entre novamente.")]
    NotSignedIn,
    #[error("Falha temporária; tente novamente.")]
    Unavailable,
}

#[cfg(feature = "ssr")]
#[async_trait::async_trait]
pub trait ConsoleBackend: Send + Sync + 'static {
    /// Checks the credentials; answers the user's id.
    async fn sign_in(&self, email: &str, password: &str) -> Result<String, ConsoleError>;
    /// The user of a session, or `None` if it no longer exists.
    async fn user(&self, user_id: &str) -> Result<Option<ConsoleUser>, ConsoleError>;
}

/// The backend as provided in the server fn context.
#[cfg(feature = "ssr")]
pub type Backend = std::sync::Arc<dyn ConsoleBackend>;
