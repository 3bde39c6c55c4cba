//! Webhooks: create, list, delete; each webhook's deliveries with status and resend.

use std::sync::Arc;

use leptos::prelude::*;

use super::{Problem, Signed, failure, short_time};
use crate::api::{CreateWebhook, DeleteWebhook, ResendDelivery, list_deliveries, list_webhooks};
use crate::backend::{ConsoleUser, WebhookView};
use crate::i18n::t;

#[component]
pub fn Webhooks() -> impl IntoView {
    view! { <Signed body=Arc::new(|user| view! { <WebhookList user/> }.into_any())/> }
}

#[component]
fn WebhookList(user: ConsoleUser) -> impl IntoView {
    if !user.api_plugins() {
        return view! {
            <section class="card"><p role="alert" class="error">{t(
                "Você não tem a permissão API_PLUGINS.",
                "You do not have the API_PLUGINS permission.",
            )}</p></section>
        }
        .into_any();
    }
    let create = ServerAction::<CreateWebhook>::new();
    let delete = ServerAction::<DeleteWebhook>::new();
    let resend = ServerAction::<ResendDelivery>::new();
    let data = Resource::new(
        move || (create.version().get(), delete.version().get()),
        |_| list_webhooks(),
    );
    view! {
        <section class="card">
            <h1>"Webhooks"</h1>
            {move || failure(create.value())().map(|e| view! { <Problem error=e/> })}
            {move || failure(delete.value())().map(|e| view! { <Problem error=e/> })}
            {move || failure(resend.value())().map(|e| view! { <Problem error=e/> })}
            {move || resend.value().get().and_then(|r| r.ok()).map(|d| view! {
                <p role="status" class="ok">{format!("{} {} ({})", t("Reenvio agendado:", "Resend scheduled:"), d.id, d.status)}</p>
            })}
            <Transition fallback=|| view! { <p>{t("Carregando…", "Loading…")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Err(e) => view! { <Problem error=e/> }.into_any(),
                        Ok(page) => view! {
                            <details class="new-webhook">
                                <summary>{t("Novo webhook", "New webhook")}</summary>
                                <ActionForm action=create>
                                    <label for="webhook-name">{t("Nome", "Name")}</label>
                                    <input id="webhook-name" name="name" required maxlength="100"/>
                                    <label for="webhook-event">{t("Evento", "Event")}</label>
                                    <select id="webhook-event" name="event">
                                        {page.events.iter().map(|e| view! { <option value=e.clone()>{e.clone()}</option> }).collect_view()}
                                    </select>
                                    <label for="webhook-url">"URL"</label>
                                    <input id="webhook-url" name="url" type="url" required placeholder="https://"/>
                                    <button type="submit">{t("Criar webhook", "Create webhook")}</button>
                                </ActionForm>
                            </details>
                            {if page.webhooks.is_empty() {
                                view! { <p class="empty">{t("Nenhum webhook.", "No webhooks.")}</p> }.into_any()
                            } else {
                                page.webhooks.into_iter().map(|webhook| view! {
                                    <WebhookCard webhook delete resend/>
                                }).collect_view().into_any()
                            }}
                        }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
    .into_any()
}

#[component]
fn WebhookCard(
    webhook: WebhookView,
    delete: ServerAction<DeleteWebhook>,
    resend: ServerAction<ResendDelivery>,
) -> impl IntoView {
    let shown = RwSignal::new(false);
    let webhook_key = StoredValue::new(webhook.id.clone());
    let id = webhook.id.clone();
    let deliveries = Resource::new(
        move || (shown.get(), resend.version().get()),
        move |(shown, _)| {
            let id = id.clone();
            async move {
                if shown {
                    list_deliveries(id).await.map(Some)
                } else {
                    Ok(None)
                }
            }
        },
    );
    view! {
        <article class="webhook" data-webhook=webhook.id.clone()>
            <h2>{webhook.name.clone()} " " <span class="tag">{webhook.event.clone()}</span></h2>
            <p><code>{webhook.url.clone()}</code> " "
                {if webhook.is_active { t("(ativo)", "(active)") } else { t("(inativo)", "(inactive)") }}</p>
            <div class="actions">
                <button type="button" class="secondary" aria-expanded=move || shown.get().to_string()
                    on:click=move |_| shown.update(|s| *s = !*s)>
                    {t("Entregas", "Deliveries")}
                </button>
                <ActionForm action=delete>
                    <input type="hidden" name="webhook" value=webhook_key.get_value()/>
                    <button type="submit" class="danger">{t("Apagar", "Delete")}</button>
                </ActionForm>
            </div>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match deliveries.await {
                        Ok(None) => ().into_any(),
                        Err(e) => view! { <Problem error=e/> }.into_any(),
                        Ok(Some(rows)) if rows.is_empty() => view! {
                            <p class="empty">{t("Nenhuma entrega ainda.", "No deliveries yet.")}</p>
                        }.into_any(),
                        Ok(Some(rows)) => view! {
                            <table>
                                <thead><tr>
                                    <th scope="col">{t("Quando", "When")}</th>
                                    <th scope="col">{t("Evento", "Event")}</th>
                                    <th scope="col">"Status"</th>
                                    <th scope="col" class="num">{t("Tentativas", "Attempts")}</th>
                                    <th scope="col">"HTTP"</th>
                                    <th scope="col"></th>
                                </tr></thead>
                                <tbody>
                                    {rows.into_iter().map(|d| view! {
                                        <tr>
                                            <td>{short_time(&d.at)}</td>
                                            <td>{d.event}</td>
                                            <td>{d.status}</td>
                                            <td class="num">{d.attempts}</td>
                                            <td>{d.last_status_code.map(|c| c.to_string()).unwrap_or_default()}</td>
                                            <td>
                                                <ActionForm action=resend>
                                                    <input type="hidden" name="delivery" value=d.id/>
                                                    <button type="submit" class="secondary">{t("Reenviar", "Resend")}</button>
                                                </ActionForm>
                                            </td>
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
