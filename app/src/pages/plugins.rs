//! Plugins: upload a component, see its interface version and validation, bind it to a
//! hook and accounts with configuration, read its invocation log.

use std::sync::Arc;

use leptos::prelude::*;

use super::{Problem, Signed, failure, short_time, textarea_text};
use crate::api::{SetPluginBinding, list_plugins, plugin_invocations, upload_plugin};
use crate::backend::{ConsoleError, ConsoleUser, PluginView};
use crate::i18n::t;

#[component]
pub fn Plugins() -> impl IntoView {
    view! { <Signed body=Arc::new(|user| view! { <PluginList user/> }.into_any())/> }
}

#[component]
fn PluginList(user: ConsoleUser) -> impl IntoView {
    if !user.api_plugins() {
        return view! {
            <section class="card"><p role="alert" class="error">{t(
                "Você não tem a permissão API_PLUGINS.",
                "You do not have the API_PLUGINS permission.",
            )}</p></section>
        }
        .into_any();
    }
    // The upload is multipart, so it runs from the submit handler with the form's data.
    let upload = Action::new_local(|data: &web_sys::FormData| upload_plugin(data.clone().into()));
    let bind = ServerAction::<SetPluginBinding>::new();
    let data = Resource::new(
        move || (upload.version().get(), bind.version().get()),
        |_| list_plugins(),
    );
    let on_submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        #[cfg(feature = "hydrate")]
        {
            use wasm_bindgen::JsCast;
            if let Some(form) = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlFormElement>().ok())
                && let Ok(data) = web_sys::FormData::new_with_form(&form)
            {
                upload.dispatch_local(data);
            }
        }
    };
    let upload_error = move || {
        upload
            .value()
            .get()
            .and_then(|r: Result<PluginView, ConsoleError>| r.err())
    };
    view! {
        <section class="card">
            <h1>"Plugins"</h1>
            <form class="upload" on:submit=on_submit>
                <label for="plugin-name">{t("Nome", "Name")}</label>
                <input id="plugin-name" name="name" required maxlength="100"/>
                <label for="plugin-version">{t("Versão", "Version")}</label>
                <input id="plugin-version" name="version" required maxlength="50" value="0.1.0"/>
                <label for="plugin-file">{t("Componente (.wasm)", "Component (.wasm)")}</label>
                <input id="plugin-file" name="file" type="file" accept=".wasm,application/wasm" required/>
                <button type="submit" prop:disabled=move || upload.pending().get()>{t("Enviar e validar", "Upload and validate")}</button>
            </form>
            {move || upload_error().map(|e| view! { <Problem error=e/> })}
            {move || upload.value().get().and_then(|r| r.ok()).map(|p| view! {
                <p role="status" class="ok">{format!(
                    "{} {} {} — {} {}",
                    t("Componente válido:", "Valid component:"), p.name, p.version,
                    t("interface", "interface"), p.interface
                )}</p>
            })}
            {move || failure(bind.value())().map(|e| view! { <Problem error=e/> })}
            <Transition fallback=|| view! { <p>{t("Carregando…", "Loading…")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Err(e) => view! { <Problem error=e/> }.into_any(),
                        Ok(page) if page.plugins.is_empty() => view! {
                            <p class="empty">{t("Nenhum plugin enviado.", "No plugins uploaded.")}</p>
                        }.into_any(),
                        Ok(page) => page.plugins.into_iter().map(|plugin| view! {
                            <PluginCard plugin hooks=page.hooks.clone() bind/>
                        }).collect_view().into_any(),
                    }
                })}
            </Transition>
        </section>
    }
    .into_any()
}

#[component]
fn PluginCard(
    plugin: PluginView,
    hooks: Vec<String>,
    bind: ServerAction<SetPluginBinding>,
) -> impl IntoView {
    let id = plugin.id.clone();
    let show_log = RwSignal::new(0u32);
    let log = Resource::new(
        move || show_log.get(),
        move |n| {
            let id = id.clone();
            async move {
                if n == 0 {
                    Ok(None)
                } else {
                    plugin_invocations(id).await.map(Some)
                }
            }
        },
    );
    let current = plugin.bindings.first().cloned();
    let plugin_key = StoredValue::new(plugin.id.clone());
    let hooks = StoredValue::new(hooks);
    let accounts_text = current
        .as_ref()
        .map(|b| b.accounts.join("\n"))
        .unwrap_or_default();
    let config_text = current
        .as_ref()
        .map(|b| {
            b.config
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let form = StoredValue::new((current.map(|b| b.hook), accounts_text, config_text));
    view! {
        <article class="plugin" data-plugin=plugin.id.clone()>
            <h2>{plugin.name.clone()} " " <span class="tag">{plugin.version.clone()}</span></h2>
            <dl class="details">
                <dt>{t("Interface", "Interface")}</dt><dd><code>{plugin.interface.clone()}</code></dd>
                <dt>{t("Validação", "Validation")}</dt><dd>{t("compilado e ligado com sucesso", "compiled and linked successfully")}</dd>
                <dt>"SHA-256"</dt><dd><code class="hash">{plugin.sha256.clone()}</code></dd>
                <dt>{t("Ligações", "Bindings")}</dt>
                <dd>{if plugin.bindings.is_empty() {
                    t("nenhuma", "none").to_owned()
                } else {
                    plugin.bindings.iter().map(|b| {
                        let accounts = if b.accounts.is_empty() { t("todas as contas", "every account").to_owned() } else { b.accounts.join(", ") };
                        let config = b.config.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
                        format!("{} → {accounts} {config}", b.hook)
                    }).collect::<Vec<_>>().join("; ")
                }}</dd>
            </dl>
            <details>
                <summary>{t("Ligar a um gancho", "Bind to a hook")}</summary>
                <ActionForm action=bind>
                    <input type="hidden" name="plugin" value=plugin_key.get_value()/>
                    <label for=format!("hook-{}", plugin_key.get_value())>{t("Gancho", "Hook")}</label>
                    <select id=format!("hook-{}", plugin_key.get_value()) name="hook">
                        <option value="">{t("(nenhum: desligar)", "(none: unbind)")}</option>
                        {hooks.get_value().into_iter().map(|h| {
                            let selected = form.with_value(|f| f.0.as_ref() == Some(&h));
                            view! { <option value=h.clone() selected=selected>{h.clone()}</option> }
                        }).collect_view()}
                    </select>
                    <label for=format!("accounts-{}", plugin_key.get_value())>{t("Contas (uma por linha; vazio: todas)", "Accounts (one per line; empty: all)")}</label>
                    <textarea id=format!("accounts-{}", plugin_key.get_value()) name="accounts" rows="2">{textarea_text(form.with_value(|f| f.1.clone()))}</textarea>
                    <label for=format!("config-{}", plugin_key.get_value())>{t("Configuração (chave=valor por linha)", "Configuration (key=value per line)")}</label>
                    <textarea id=format!("config-{}", plugin_key.get_value()) name="config" rows="3">{textarea_text(form.with_value(|f| f.2.clone()))}</textarea>
                    <button type="submit">{t("Salvar ligação", "Save binding")}</button>
                </ActionForm>
            </details>
            <button type="button" class="secondary" on:click=move |_| show_log.update(|n| *n += 1)>
                {t("Ver invocações", "Show invocations")}
            </button>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match log.await {
                        Ok(None) => ().into_any(),
                        Err(e) => view! { <Problem error=e/> }.into_any(),
                        Ok(Some(rows)) if rows.is_empty() => view! {
                            <p class="empty">{t("Nenhuma invocação ainda.", "No invocations yet.")}</p>
                        }.into_any(),
                        Ok(Some(rows)) => view! {
                            <table class="invocations">
                                <thead><tr>
                                    <th scope="col">{t("Quando", "When")}</th>
                                    <th scope="col">{t("Gancho", "Hook")}</th>
                                    <th scope="col">{t("Decisão", "Decision")}</th>
                                    <th scope="col">{t("Código", "Code")}</th>
                                    <th scope="col" class="num">"µs"</th>
                                    <th scope="col">{t("Erro", "Error")}</th>
                                </tr></thead>
                                <tbody>
                                    {rows.into_iter().map(|r| view! {
                                        <tr>
                                            <td>{short_time(&r.at)}</td>
                                            <td>{r.hook}</td>
                                            <td>{r.decision}</td>
                                            <td>{r.code.unwrap_or_default()}</td>
                                            <td class="num">{r.duration_us}</td>
                                            <td>{r.error.unwrap_or_default()}</td>
                                        </tr>
                                    }).collect_view()}
                                </tbody>
                            </table>
                        }.into_any(),
                    }
                })}
            </Transition>
        </article>
    }
}
