//! Sign-in, sign-out and the current user, as server functions over the session.

use leptos::prelude::*;

use crate::backend::ConsoleUser;

#[cfg(feature = "ssr")]
const USER_KEY: &str = "user_id";

#[cfg(feature = "ssr")]
fn backend() -> Result<crate::backend::Backend, ServerFnError> {
    use_context::<crate::backend::Backend>()
        .ok_or_else(|| ServerFnError::new("console backend missing from context"))
}

#[cfg(feature = "ssr")]
async fn session() -> Result<tower_sessions::Session, ServerFnError> {
    leptos_axum::extract::<tower_sessions::Session>()
        .await
        .map_err(|e| ServerFnError::new(format!("session: {e}")))
}

/// Signs in and rotates the session id (no session fixation); redirects home.
#[server(prefix = "/console/fn", endpoint = "sign_in")]
pub async fn sign_in(email: String, password: String) -> Result<(), ServerFnError> {
    let user_id = backend()?.sign_in(&email, &password).await.map_err(|e| {
        // A wrong password is the client's mistake: 401, not the default 500.
        if e == crate::backend::ConsoleError::InvalidCredentials
            && let Some(response) = use_context::<leptos_axum::ResponseOptions>()
        {
            response.set_status(http::StatusCode::UNAUTHORIZED);
        }
        ServerFnError::new(e.to_string())
    })?;
    let session = session().await?;
    session
        .cycle_id()
        .await
        .map_err(|e| ServerFnError::new(e.to_string()))?;
    session
        .insert(USER_KEY, user_id)
        .await
        .map_err(|e| ServerFnError::new(e.to_string()))?;
    leptos_axum::redirect("/");
    Ok(())
}

#[server(prefix = "/console/fn", endpoint = "sign_out")]
pub async fn sign_out() -> Result<(), ServerFnError> {
    session()
        .await?
        .flush()
        .await
        .map_err(|e| ServerFnError::new(e.to_string()))?;
    leptos_axum::redirect("/login");
    Ok(())
}

/// The signed-in user, or `None`.
#[server(prefix = "/console/fn", endpoint = "current_user")]
pub async fn current_user() -> Result<Option<ConsoleUser>, ServerFnError> {
    let session = session().await?;
    let user_id: Option<String> = session
        .get(USER_KEY)
        .await
        .map_err(|e| ServerFnError::new(e.to_string()))?;
    let Some(user_id) = user_id else {
        return Ok(None);
    };
    backend()?
        .user(&user_id)
        .await
        .map_err(|e| ServerFnError::new(e.to_string()))
}
