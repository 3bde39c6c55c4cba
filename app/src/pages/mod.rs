//! Pages of the console. Every page that needs a user goes through [`Signed`], which
//! renders the navigation for that user or sends the browser to `/login`.

pub mod applications;
pub mod campaigns;
pub mod plugins;
pub mod subscriptions;
pub mod support;
pub mod users;
pub mod webhooks;

use std::sync::Arc;

use leptos::prelude::*;
use leptos_router::hooks::use_navigate;

use crate::auth::{SignIn, SignOut, current_user};
use crate::backend::{ConsoleError, ConsoleUser};
use crate::i18n::t;

/// A page body for a signed-in user.
pub type Body = Arc<dyn Fn(ConsoleUser) -> AnyView + Send + Sync>;

/// The navigation bar and `body` for the signed-in user; `/login` for anyone else.
#[component]
pub fn Signed(body: Body) -> impl IntoView {
    let user = Resource::new(|| (), |_| current_user());
    view! {
        <Suspense fallback=|| view! { <p>{t("Carregando…", "Loading…")}</p> }>
            {move || {
                let body = body.clone();
                Suspend::new(async move {
                    match user.await {
                        Ok(Some(user)) => view! {
                            <Nav user=user.clone()/>
                            {body(user)}
                        }
                        .into_any(),
                        Ok(None) => view! { <ToLogin/> }.into_any(),
                        Err(e) => view! { <Problem error=e/> }.into_any(),
                    }
                })
            }}
        </Suspense>
    }
}

#[component]
fn ToLogin() -> impl IntoView {
    let navigate = use_navigate();
    Effect::new(move |_| navigate("/login", Default::default()));
    view! { <p><a href="/login">{t("Entrar no console", "Sign in to the console")}</a></p> }
}

/// Links to the sections this user may open, the language switch and sign-out.
#[component]
fn Nav(user: ConsoleUser) -> impl IntoView {
    let sign_out = ServerAction::<SignOut>::new();
    let company = user
        .company
        .as_ref()
        .map(|c| c.name.clone())
        .unwrap_or_else(|| t("Suporte Cofre", "Cofre support").to_owned());
    view! {
        <header class="topbar">
            <strong>"Cofre"</strong>
            <span class="company">{company}</span>
            <nav aria-label=t("Seções", "Sections")>
                <Show when={
                    let c = user.company.is_some();
                    move || c
                }>
                    <a href="/">{t("Campanhas", "Campaigns")}</a>
                    <a href="/subscriptions">{t("Assinaturas", "Subscriptions")}</a>
                </Show>
                <Show when={
                    let a = user.api_plugins();
                    move || a
                }>
                    <a href="/api-plugins">"API/Plugins"</a>
                    <a href="/plugins">"Plugins"</a>
                    <a href="/webhooks">"Webhooks"</a>
                </Show>
                <Show when={
                    let a = user.is_admin();
                    move || a
                }>
                    <a href="/users">{t("Usuários", "Users")}</a>
                </Show>
                <Show when={
                    let s = user.is_support();
                    move || s
                }>
                    <a href="/support">{t("Suporte", "Support")}</a>
                </Show>
            </nav>
            <span class="who">{user.email.clone()}</span>
            <LangSwitch/>
            <ActionForm action=sign_out>
                <button type="submit">{t("Sair", "Sign out")}</button>
            </ActionForm>
        </header>
    }
}

/// A full page load (not the client router), so the server renders the new language.
#[component]
fn LangSwitch() -> impl IntoView {
    view! {
        <span class="lang">
            <a href="/console/lang?to=pt-BR" rel="external" hreflang="pt-BR" lang="pt-BR">"PT"</a>
            " · "
            <a href="/console/lang?to=en" rel="external" hreflang="en" lang="en">"EN"</a>
        </span>
    }
}

/// A refusal as an alert, with the stable code for support.
#[component]
pub fn Problem(error: ConsoleError) -> impl IntoView {
    let code = error.code().to_owned();
    let fields = match &error {
        ConsoleError::Refused { fields, .. } => fields.clone(),
        ConsoleError::Transport(_) => vec![],
    };
    view! {
        <div role="alert" class="error">
            <p>{error.to_string()} " " <small class="code">"(" {code} ")"</small></p>
            {(!fields.is_empty()).then(|| view! {
                <ul class="field-errors">
                    {fields.into_iter().map(|f| view! { <li><code>{f.field}</code> ": " {f.message}</li> }).collect_view()}
                </ul>
            })}
        </div>
    }
}

/// The error of the last run of an action, if it failed.
pub fn failure<T, S>(value: S) -> impl Fn() -> Option<ConsoleError> + Copy
where
    S: Get<Value = Option<Result<T, ConsoleError>>> + Copy,
{
    move || value.get().and_then(|r| r.err())
}

/// An inline message under a field, tied to it by `aria-describedby`.
#[component]
pub fn FieldError(id: &'static str, message: Signal<Option<String>>) -> impl IntoView {
    view! { <span id=id class="field-error" role="status">{move || message.get()}</span> }
}

/// A button that copies `text` to the clipboard (hydrated pages only).
#[component]
pub fn CopyButton(text: String) -> impl IntoView {
    #[cfg(not(feature = "hydrate"))]
    let _ = &text;
    let (copied, set_copied) = signal(false);
    let copy = move |_| {
        #[cfg(feature = "hydrate")]
        {
            let clipboard = window().navigator().clipboard();
            let _ = clipboard.write_text(&text);
        }
        set_copied.set(true);
    };
    view! {
        <button type="button" class="secondary" on:click=copy>
            {move || if copied.get() { t("Copiado", "Copied") } else { t("Copiar", "Copy") }}
        </button>
    }
}

/// Credentials shown once, with a warning that they will not be shown again.
#[component]
pub fn Secret(app_id: String, client_secret: String) -> impl IntoView {
    view! {
        <div class="secret" role="status">
            <p><strong>{t(
                "Guarde o AppID agora: ele não será mostrado de novo.",
                "Store the AppID now: it will not be shown again.",
            )}</strong></p>
            <label for="issued-app-id">"AppID"</label>
            <div class="copyable">
                <input id="issued-app-id" readonly value=app_id.clone()/>
                <CopyButton text=app_id/>
            </div>
            <label for="issued-secret">"Client secret"</label>
            <div class="copyable">
                <input id="issued-secret" readonly value=client_secret.clone()/>
                <CopyButton text=client_secret/>
            </div>
        </div>
    }
}

#[component]
pub fn Login() -> impl IntoView {
    let sign_in = ServerAction::<SignIn>::new();
    let error = failure(sign_in.value());
    view! {
        <section class="card login">
            <h1>{t("Entrar no Cofre", "Sign in to Cofre")}</h1>
            <ActionForm action=sign_in>
                <label for="email">"Email"</label>
                <input id="email" type="email" name="email" autocomplete="username" required/>
                <label for="password">{t("Senha", "Password")}</label>
                <input id="password" type="password" name="password" autocomplete="current-password" required/>
                <button type="submit">{t("Entrar", "Sign in")}</button>
            </ActionForm>
            <p role="alert" class="error">{move || error().map(|e| e.to_string())}</p>
            <p class="lang-line"><LangSwitch/></p>
        </section>
    }
}

/// The text inside a `<textarea>`. Leptos writes a textarea's children unescaped when
/// it renders on the server (to the HTML parser they are raw text, as in `<script>`),
/// so text someone typed could close the textarea there and open a `<script>`. The
/// server escapes it; the browser gets it as it is, since it builds text nodes without
/// parsing them (and hydration keeps the server's node).
pub fn textarea_text(text: String) -> String {
    if !cfg!(feature = "ssr") {
        return text;
    }
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// Milliseconds since the epoch are formatted by the server; this shortens RFC 3339.
pub fn short_time(rfc3339: &str) -> String {
    rfc3339.get(..16).unwrap_or(rfc3339).replace('T', " ")
}
