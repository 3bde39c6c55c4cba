//! The Cofre console: server-rendered Leptos pages, hydrated in the browser.
//!
//! Server functions are thin shims over [`backend::ConsoleBackend`], which the server
//! crate implements with the same services as the REST API, so that the console and
//! the API can never disagree.

#![recursion_limit = "256"]

pub mod api;
pub mod auth;
pub mod backend;
pub mod i18n;
pub mod pages;

use leptos::prelude::*;
use leptos_meta::{MetaTags, Stylesheet, Title, provide_meta_context};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::path;

/// Where server functions are mounted; outside `/api/v1`, which belongs to the REST API.
pub const SERVER_FN_PREFIX: &str = "/console/fn";

/// The HTML document around the app (server side only).
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang=i18n::detect().tag()>
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <AutoReload options=options.clone()/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    provide_context(i18n::detect());
    // Effects run only in the browser, once hydrated: a marker for people and tests
    // that actions now work.
    Effect::new(|_| {
        if let Some(body) = document().body() {
            let _ = body.set_attribute("data-hydrated", "true");
        }
    });
    view! {
        <Stylesheet id="cofre" href="/pkg/cofre.css"/>
        <Title text="Cofre"/>
        <Router>
            <main>
                <Routes fallback=|| view! { <p class="empty">{i18n::t("Página não encontrada.", "Page not found.")}</p> }>
                    <Route path=path!("/") view=pages::campaigns::Campaigns/>
                    <Route path=path!("/login") view=pages::Login/>
                    <Route path=path!("/campaigns/new") view=pages::campaigns::NewCampaignPage/>
                    <Route path=path!("/api-plugins") view=pages::applications::Applications/>
                    <Route path=path!("/plugins") view=pages::plugins::Plugins/>
                    <Route path=path!("/webhooks") view=pages::webhooks::Webhooks/>
                    <Route path=path!("/subscriptions") view=pages::subscriptions::Subscriptions/>
                    <Route path=path!("/users") view=pages::users::Users/>
                    <Route path=path!("/support") view=pages::support::Support/>
                </Routes>
            </main>
        </Router>
    }
}

#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
}
