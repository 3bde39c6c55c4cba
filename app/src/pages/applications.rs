//! API/Plugins: the company's applications (AppIDs), new MASTER or API applications,
//! scopes, IP allow-lists, activation and secret rotation.

use std::sync::Arc;

use leptos::prelude::*;

use super::{Problem, Secret, Signed, failure, textarea_text};
use crate::api::{
    CreateApplication, RotateSecret, SetApplicationAccess, SetApplicationActive, list_applications,
};
use crate::backend::{ApplicationView, ConsoleUser, ScopeGroupView};
use crate::i18n::t;

#[component]
pub fn Applications() -> impl IntoView {
    view! { <Signed body=Arc::new(|user| view! { <ApplicationList user/> }.into_any())/> }
}

#[component]
fn ApplicationList(user: ConsoleUser) -> impl IntoView {
    if !user.api_plugins() {
        return view! {
            <section class="card">
                <p role="alert" class="error">{t(
                    "Você não tem a permissão API_PLUGINS; peça ao administrador da empresa.",
                    "You do not have the API_PLUGINS permission; ask your company's admin.",
                )}</p>
            </section>
        }
        .into_any();
    }
    let create = ServerAction::<CreateApplication>::new();
    let access = ServerAction::<SetApplicationAccess>::new();
    let active = ServerAction::<SetApplicationActive>::new();
    let rotate = ServerAction::<RotateSecret>::new();
    let data = Resource::new(
        move || {
            (
                create.version().get(),
                access.version().get(),
                active.version().get(),
                rotate.version().get(),
            )
        },
        |_| list_applications(),
    );
    let kind = RwSignal::new("API".to_owned());
    view! {
        <section class="card">
            <h1>"API/Plugins"</h1>
            {move || failure(create.value())().map(|e| view! { <Problem error=e/> })}
            {move || create.value().get().and_then(|r| r.ok()).map(|issued| view! {
                <div class="created">
                    <h2>{format!("{} {}", t("Aplicação criada:", "Application created:"), issued.application.name)}</h2>
                    <Secret app_id=issued.app_id client_secret=issued.client_secret/>
                </div>
            })}
            {move || failure(rotate.value())().map(|e| view! { <Problem error=e/> })}
            {move || rotate.value().get().and_then(|r| r.ok()).map(|issued| view! {
                <div class="created">
                    <h2>{format!("{} {}", t("Novo segredo de", "New secret of"), issued.application.name)}</h2>
                    <Secret app_id=issued.app_id client_secret=issued.client_secret/>
                </div>
            })}
            <Transition fallback=|| view! { <p>{t("Carregando…", "Loading…")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Err(e) => view! { <Problem error=e/> }.into_any(),
                        Ok(page) => {
                            let groups = page.scope_groups.clone();
                            let main = page.main_account_id.clone();
                            view! {
                                <details class="new-app">
                                    <summary>{t("Nova API/Plugin", "New API/Plugin")}</summary>
                                    <ActionForm action=create>
                                        <label for="app-name">{t("Nome", "Name")}</label>
                                        <input id="app-name" name="name" required maxlength="100"/>
                                        <fieldset>
                                            <legend>{t("Tipo", "Type")}</legend>
                                            <label class="inline">
                                                <input type="radio" name="kind" value="API" checked on:change=move |_| kind.set("API".into())/>
                                                " API " <small>{t("(ligada a uma conta)", "(bound to one account)")}</small>
                                            </label>
                                            <label class="inline">
                                                <input type="radio" name="kind" value="MASTER" on:change=move |_| kind.set("MASTER".into())/>
                                                " MASTER " <small>{t("(conta principal; cria contas e aplicações)", "(main account; creates accounts and applications)")}</small>
                                            </label>
                                        </fieldset>
                                        <label for="app-account">{t("Conta", "Account")}</label>
                                        <select id="app-account" name="account_id" prop:disabled=move || kind.get() == "MASTER">
                                            {page.accounts.iter().map(|a| {
                                                let label = if *a == main { format!("{a} ({})", t("principal", "main")) } else { a.clone() };
                                                view! { <option value=a.clone()>{label}</option> }
                                            }).collect_view()}
                                        </select>
                                        <button type="submit">{t("Criar", "Create")}</button>
                                    </ActionForm>
                                </details>
                                {page.applications.into_iter().map(|app| {
                                    view! { <ApplicationCard app groups=groups.clone() access active rotate/> }
                                }).collect_view()}
                            }.into_any()
                        }
                    }
                })}
            </Transition>
            {move || failure(access.value())().map(|e| view! { <Problem error=e/> })}
            {move || failure(active.value())().map(|e| view! { <Problem error=e/> })}
        </section>
    }
    .into_any()
}

#[component]
fn ApplicationCard(
    app: ApplicationView,
    groups: Vec<ScopeGroupView>,
    access: ServerAction<SetApplicationAccess>,
    active: ServerAction<SetApplicationActive>,
    rotate: ServerAction<RotateSecret>,
) -> impl IntoView {
    let full_access = app.scopes.is_empty();
    let is_master = app.kind == "MASTER";
    let app_key = StoredValue::new(app.id.clone());
    let ips_id = StoredValue::new(format!("ips-{}", app.id));
    let ips_text = StoredValue::new(app.allowed_ips.join("\n"));
    let granted = StoredValue::new(app.scopes.clone());
    let groups = StoredValue::new(groups);
    let status = if app.is_active {
        t("ativa", "active")
    } else {
        t("inativa", "inactive")
    };
    view! {
        <article class="application" data-app=app.id.clone()>
            <h2>{app.name.clone()} " " <span class="tag">{app.kind.clone()}</span> " " <span class="tag">{status}</span></h2>
            <dl class="details">
                <dt>"clientId"</dt><dd><code>{app.client_id.clone()}</code></dd>
                <dt>{t("Conta", "Account")}</dt><dd><code>{app.account_id.clone()}</code></dd>
                <dt>{t("Escopos", "Scopes")}</dt>
                <dd>{if full_access { t("todos do tipo", "all of its type").to_owned() } else { app.scopes.join(", ") }}</dd>
                <dt>{t("IPs permitidos", "Allowed IPs")}</dt>
                <dd>{if app.allowed_ips.is_empty() { t("qualquer um", "any").to_owned() } else { app.allowed_ips.join(", ") }}</dd>
            </dl>
            {full_access.then(|| view! {
                <p class="warning" role="note">{t(
                    "Acesso total: sem escopos definidos, esta aplicação pode usar todos os endpoints do seu tipo. Restrinja aos escopos de que ela precisa.",
                    "Full access: with no scopes set, this application may use every endpoint of its type. Restrict it to the scopes it needs.",
                )}</p>
            })}
            <details>
                <summary>{t("Editar escopos e IPs", "Edit scopes and IPs")}</summary>
                <ActionForm action=access>
                    <input type="hidden" name="application" value=app_key.get_value()/>
                    {groups.get_value().into_iter().filter(|g| is_master || g.scopes.iter().any(|s| !s.master_only)).map(|g| view! {
                        <fieldset class="scopes">
                            <legend>{g.resource.clone()}</legend>
                            {g.scopes.iter().filter(|s| is_master || !s.master_only).map(|s| {
                                let checked = granted.with_value(|g| g.contains(&s.name));
                                view! {
                                    <label class="inline" title=s.description.clone()>
                                        <input type="checkbox" name="scopes[]" value=s.name.clone() checked=checked/>
                                        " " {s.name.clone()}
                                    </label>
                                }
                            }).collect_view()}
                        </fieldset>
                    }).collect_view()}
                    <label for=ips_id.get_value()>{t("IPs permitidos (um por linha; vazio: qualquer um)", "Allowed IPs (one per line; empty: any)")}</label>
                    <textarea id=ips_id.get_value() name="allowed_ips" rows="3">{textarea_text(ips_text.get_value())}</textarea>
                    <button type="submit">{t("Salvar acesso", "Save access")}</button>
                </ActionForm>
            </details>
            <div class="actions">
                <ActionForm action=active>
                    <input type="hidden" name="application" value=app_key.get_value()/>
                    <input type="hidden" name="active" value=(!app.is_active).to_string()/>
                    <button type="submit" class="secondary">
                        {if app.is_active { t("Desativar", "Deactivate") } else { t("Ativar", "Activate") }}
                    </button>
                </ActionForm>
                <ActionForm action=rotate>
                    <input type="hidden" name="application" value=app_key.get_value()/>
                    <button type="submit" class="secondary">{t("Trocar segredo", "Rotate secret")}</button>
                </ActionForm>
            </div>
        </article>
    }
}
