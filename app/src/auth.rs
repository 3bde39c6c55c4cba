//! Sign-in, sign-out and the current user, as server functions over the session.

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use crate::api::{USER_KEY, backend, reply, session};
use crate::backend::{ConsoleError, ConsoleUser};

#[cfg(feature = "ssr")]
fn session_error(e: impl std::fmt::Display) -> ConsoleError {
    use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
    ConsoleError::from_server_fn_error(ServerFnErrorErr::ServerError(format!("session: {e}")))
}

/// Signs in and rotates the session id (no session fixation); redirects home. A wrong
/// password answers 401; repeated failures lock the email (429).
#[server(prefix = "/console/fn", endpoint = "sign_in")]
pub async fn sign_in(email: String, password: String) -> Result<(), ConsoleError> {
    let user_id = reply(backend()?.sign_in(&email, &password).await)?;
    let session = session().await?;
    session.cycle_id().await.map_err(session_error)?;
    session
        .insert(USER_KEY, user_id)
        .await
        .map_err(session_error)?;
    leptos_axum::redirect("/");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "sign_out")]
pub async fn sign_out() -> Result<(), ConsoleError> {
    session().await?.flush().await.map_err(session_error)?;
    leptos_axum::redirect("/login");
    Ok(())
}

/// The signed-in user, or `None`.
#[server(prefix = "/console/fn", endpoint = "current_user")]
pub async fn current_user() -> Result<Option<ConsoleUser>, ConsoleError> {
    let user_id: Option<String> = session()
        .await?
        .get(USER_KEY)
        .await
        .map_err(session_error)?;
    let Some(user_id) = user_id else {
        return Ok(None);
    };
    reply(backend()?.user(&user_id).await)
}
