//! Subscriptions: the company's newest subscriptions with their instalments, the
//! payment book (carnê) PDF and "Cancel subscription".

use std::sync::Arc;

use leptos::prelude::*;

use super::{Problem, Signed, failure, short_time};
use crate::api::{CancelSubscription, list_subscriptions, subscription_instalments};
use crate::backend::{ConsoleUser, InstalmentView, SubscriptionView};
use crate::i18n::{money, t};

#[component]
pub fn Subscriptions() -> impl IntoView {
    view! { <Signed body=Arc::new(|user| view! { <SubscriptionList user/> }.into_any())/> }
}

#[component]
fn SubscriptionList(user: ConsoleUser) -> impl IntoView {
    if user.company.is_none() {
        return view! {
            <section class="card">
                <p><a href="/support">{t("Abrir o painel de suporte", "Open the support page")}</a></p>
            </section>
        }
        .into_any();
    }
    let cancel = ServerAction::<CancelSubscription>::new();
    let data = Resource::new(move || cancel.version().get(), |_| list_subscriptions());
    let can_change = user.api_plugins();
    let error = failure(cancel.value());
    view! {
        <section class="card">
            <h1>{t("Assinaturas", "Subscriptions")}</h1>
            <p class="hint">{t(
                "As 100 assinaturas mais recentes da empresa. Crie assinaturas pela API (POST /api/v1/subscriptions).",
                "The company's 100 newest subscriptions. Create subscriptions over the API (POST /api/v1/subscriptions).",
            )}</p>
            {move || error().map(|e| view! { <Problem error=e/> })}
            {move || cancel.value().get().and_then(|r| r.ok()).map(|s| view! {
                <p role="status" class="ok">{format!("{} {}", t("Assinatura cancelada:", "Subscription canceled:"), s.correlation_id)}</p>
            })}
            <Transition fallback=|| view! { <p>{t("Carregando…", "Loading…")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(page) if page.subscriptions.is_empty() => view! {
                            <p class="empty">{t("Nenhuma assinatura.", "No subscriptions.")}</p>
                        }.into_any(),
                        Ok(page) => {
                            let (year, month) = (page.year, page.month);
                            page.subscriptions
                                .into_iter()
                                .map(|subscription| view! {
                                    <SubscriptionCard subscription can_change cancel year month/>
                                })
                                .collect_view()
                                .into_any()
                        }
                        Err(e) => view! { <Problem error=e/> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
    .into_any()
}

/// A frequency in words.
fn frequency(code: &str) -> &'static str {
    match code {
        "WEEKLY" => t("Semanal", "Weekly"),
        "BIWEEKLY" => t("Quinzenal", "Every two weeks"),
        "MONTHLY" => t("Mensal", "Monthly"),
        "BIMONTHLY" => t("Bimestral", "Every two months"),
        "QUARTERLY" => t("Trimestral", "Quarterly"),
        "SEMIANNUALLY" => t("Semestral", "Every six months"),
        "ANNUALLY" => t("Anual", "Yearly"),
        _ => t("Desconhecida", "Unknown"),
    }
}

/// A subscription's status in words.
fn subscription_status(status: &str) -> &'static str {
    match status {
        "ACTIVE" => t("Ativa", "Active"),
        "CANCELED" => t("Cancelada", "Canceled"),
        _ => t("Desconhecido", "Unknown"),
    }
}

/// An instalment's status in words: scheduled, or its charge's status.
fn instalment_status(status: &str) -> &'static str {
    match status {
        "SCHEDULED" => t("Agendada (sem cobrança)", "Scheduled (no charge yet)"),
        "ACTIVE" => t("Cobrança em aberto", "Charge open"),
        "COMPLETED" => t("Paga", "Paid"),
        "EXPIRED" => t("Vencida", "Expired"),
        _ => t("Desconhecido", "Unknown"),
    }
}

fn month_name(month: u8) -> &'static str {
    match month {
        1 => t("janeiro", "January"),
        2 => t("fevereiro", "February"),
        3 => t("março", "March"),
        4 => t("abril", "April"),
        5 => t("maio", "May"),
        6 => t("junho", "June"),
        7 => t("julho", "July"),
        8 => t("agosto", "August"),
        9 => t("setembro", "September"),
        10 => t("outubro", "October"),
        11 => t("novembro", "November"),
        _ => t("dezembro", "December"),
    }
}

#[component]
fn SubscriptionCard(
    subscription: SubscriptionView,
    can_change: bool,
    cancel: ServerAction<CancelSubscription>,
    /// Today in Brasília, for the payment book's defaults.
    year: i32,
    month: u8,
) -> impl IntoView {
    let shown = RwSignal::new(false);
    let confirming = RwSignal::new(false);
    let key = StoredValue::new(subscription.id.clone());
    let id = subscription.id.clone();
    let instalments = Resource::new(
        move || shown.get(),
        move |shown| {
            let id = id.clone();
            async move {
                if shown {
                    subscription_instalments(id).await.map(Some)
                } else {
                    Ok(None)
                }
            }
        },
    );
    let boleto = subscription.charge_type == "BOLETO";
    let active = subscription.is_active();
    let name = subscription.correlation_id.clone();
    view! {
        <article class="subscription" data-subscription=subscription.id.clone() data-status=subscription.status.clone()>
            <h2>{subscription.correlation_id.clone()} " "
                <span class="tag status">{subscription_status(&subscription.status)}</span></h2>
            <dl class="details">
                <dt>{t("Cliente", "Customer")}</dt>
                <dd>{subscription.customer_name.clone()} " (" {subscription.customer_tax_id.clone()} ")"</dd>
                <dt>{t("Valor da parcela", "Instalment value")}</dt><dd>{money(subscription.value)}</dd>
                <dt>{t("Frequência", "Frequency")}</dt><dd>{frequency(&subscription.frequency)}</dd>
                <dt>{t("Geração e vencimento", "Generation and due date")}</dt>
                <dd>{format!(
                    "{} {} · {} {} {}",
                    t("gerada no dia", "generated on day"),
                    subscription.day_generate_charge,
                    t("vence", "due"),
                    subscription.day_due,
                    t("dias depois", "days later"),
                )}</dd>
                <dt>{t("Cobrança", "Charge type")}</dt>
                <dd><span class="tag">{if boleto { t("Boleto", "Boleto") } else { "Pix" }}</span></dd>
                <dt>{t("Criada em", "Created")}</dt><dd>{short_time(&subscription.created_at)}</dd>
            </dl>
            <div class="actions">
                <button type="button" class="secondary" aria-expanded=move || shown.get().to_string()
                    on:click=move |_| shown.update(|s| *s = !*s)>
                    {t("Parcelas", "Instalments")}
                </button>
            </div>
            <Transition fallback=|| ()>
                {move || Suspend::new(async move {
                    match instalments.await {
                        Ok(None) => ().into_any(),
                        Err(e) => view! { <Problem error=e/> }.into_any(),
                        Ok(Some(page)) => view! {
                            <InstalmentTable rows=page.instalments total=page.total boleto/>
                        }.into_any(),
                    }
                })}
            </Transition>
            {(active && can_change).then(|| view! {
                <form class="payment-book" method="get" target="_blank"
                    action=format!("/console/subscriptions/{}/payment-book", key.get_value())>
                    <h3>{t("Carnê (PDF)", "Payment book (PDF)")}</h3>
                    <div class="inline-fields">
                        <span>
                            <label for=format!("book-month-{}", key.get_value())>{t("Até o mês", "Up to month")}</label>
                            <select id=format!("book-month-{}", key.get_value()) name="month" required>
                                {(1..=12u8).map(|m| view! {
                                    <option value=m.to_string() selected=m == 12>{format!("{m} - {}", month_name(m))}</option>
                                }).collect_view()}
                            </select>
                        </span>
                        <span>
                            <label for=format!("book-year-{}", key.get_value())>{t("Ano", "Year")}</label>
                            <input id=format!("book-year-{}", key.get_value()) name="year" type="number" required
                                min=year.to_string() max=(year + 1).to_string() value=year.to_string()/>
                        </span>
                        <button type="submit" class="secondary">{t("Abrir carnê", "Open payment book")}</button>
                    </div>
                    <small class="hint">{format!(
                        "{} ({} {month}/{year})",
                        t(
                            "Emite agora a cobrança de cada parcela gerada até o fim do mês escolhido que ainda não tem uma.",
                            "Issues now the charge of every instalment generated up to the end of the chosen month that has none yet.",
                        ),
                        t("hoje:", "today:"),
                    )}</small>
                </form>
                <div class="danger-zone">
                    <Show
                        when=move || confirming.get()
                        fallback=move || view! {
                            <button type="button" class="danger" on:click=move |_| confirming.set(true)>
                                {t("Cancelar assinatura", "Cancel subscription")}
                            </button>
                        }
                    >
                        <p role="alert">{format!("{} ({name})", t(
                            "Cancelar esta assinatura? Nenhuma parcela será cobrada depois disso; as cobranças já emitidas continuam valendo.",
                            "Cancel this subscription? No instalment is charged after this; charges already issued stay payable.",
                        ))}</p>
                        <ActionForm action=cancel>
                            <input type="hidden" name="subscription" value=key.get_value()/>
                            <button type="submit" class="danger">{t("Confirmar cancelamento", "Confirm cancellation")}</button>
                            <button type="button" class="secondary" on:click=move |_| confirming.set(false)>
                                {t("Manter assinatura", "Keep subscription")}
                            </button>
                        </ActionForm>
                    </Show>
                </div>
            })}
        </article>
    }
}

#[component]
fn InstalmentTable(rows: Vec<InstalmentView>, total: i64, boleto: bool) -> impl IntoView {
    let shown = rows.len();
    view! {
        <table class="instalments">
            <thead><tr>
                <th scope="col" class="num">"#"</th>
                <th scope="col">{t("Geração", "Generation")}</th>
                <th scope="col">{t("Vencimento", "Due date")}</th>
                <th scope="col">"Status"</th>
                {boleto.then(|| view! { <th scope="col">{t("Linha digitável", "Typed line")}</th> })}
            </tr></thead>
            <tbody>
                {rows.into_iter().map(|i| view! {
                    <tr data-status=i.status.clone()>
                        <td class="num">{i.number}</td>
                        <td>{i.generation_date}</td>
                        <td>{i.due_date}</td>
                        <td>{instalment_status(&i.status)}</td>
                        {boleto.then(|| view! {
                            <td><code class="hash">{i.typed_line.unwrap_or_default()}</code></td>
                        })}
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        <p class="hint">{format!(
            "{shown} {} {total} {}",
            t("de", "of"),
            t("parcelas até o fim do ano que vem.", "instalments up to the end of next year."),
        )}</p>
    }
}
