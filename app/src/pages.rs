//! Pages of the console.

use leptos::prelude::*;
use leptos_router::hooks::use_navigate;

use crate::auth::{SignIn, SignOut, current_user};
use crate::backend::ConsoleUser;

/// Landing page: who is signed in and for which company; sends others to `/login`.
#[component]
pub fn Home() -> impl IntoView {
    let user = Resource::new(|| (), |_| current_user());
    view! {
        <Suspense fallback=|| view! { <p>"Carregando…"</p> }>
            {move || Suspend::new(async move {
                match user.await {
                    Ok(Some(user)) => view! { <Dashboard user/> }.into_any(),
                    Ok(None) => view! { <Redirect/> }.into_any(),
                    Err(e) => view! { <p role="alert" class="error">{e.to_string()}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn Redirect() -> impl IntoView {
    let navigate = use_navigate();
    Effect::new(move |_| navigate("/login", Default::default()));
    view! { <p><a href="/login">"Entrar no console"</a></p> }
}

#[component]
fn Dashboard(user: ConsoleUser) -> impl IntoView {
    let sign_out = ServerAction::<SignOut>::new();
    let (details, set_details) = signal(false);
    let company = user.company.clone();
    view! {
        <header class="topbar">
            <strong>"Cofre"</strong>
            <span class="who">{user.email.clone()}</span>
            <ActionForm action=sign_out>
                <button type="submit">"Sair"</button>
            </ActionForm>
        </header>
        <section class="card">
            {match company {
                Some(c) => {
                    let features = c.features.join(", ");
                    view! {
                        <h1>{c.name.clone()}</h1>
                        <button
                            type="button"
                            aria-expanded=move || details.get().to_string()
                            on:click=move |_| set_details.update(|d| *d = !*d)
                        >
                            {move || if details.get() { "Ocultar detalhes" } else { "Mostrar detalhes" }}
                        </button>
                        <Show when=move || details.get()>
                            <dl class="details">
                                <dt>"CNPJ"</dt><dd>{c.tax_id.clone()}</dd>
                                <dt>"Conta principal"</dt><dd>{c.main_account_id.clone()}</dd>
                                <dt>"Funcionalidades"</dt><dd>{features.clone()}</dd>
                            </dl>
                        </Show>
                    }.into_any()
                }
                None => view! { <h1>"Suporte Cofre"</h1> }.into_any(),
            }}
            <p class="role">"Perfil: " {user.role.clone()}</p>
        </section>
    }
}

#[component]
pub fn Login() -> impl IntoView {
    let sign_in = ServerAction::<SignIn>::new();
    let error = move || {
        sign_in.value().get().and_then(|r| r.err()).map(|e| {
            let text = e.to_string();
            text.trim_start_matches("error running server function: ")
                .to_owned()
        })
    };
    view! {
        <section class="card login">
            <h1>"Entrar no Cofre"</h1>
            <ActionForm action=sign_in>
                <label for="email">"Email"</label>
                <input id="email" type="email" name="email" autocomplete="username" required/>
                <label for="password">"Senha"</label>
                <input id="password" type="password" name="password" autocomplete="current-password" required/>
                <button type="submit">"Entrar"</button>
            </ActionForm>
            <p role="alert" class="error">{error}</p>
        </section>
    }
}
