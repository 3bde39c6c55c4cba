//! Campaigns: every account of the company with its money, keys and recent movement;
//! the "New campaign" wizard; "End campaign".

use std::sync::Arc;

use leptos::prelude::*;

use super::{FieldError, Problem, Secret, Signed, failure, short_time};
use crate::api::{EndCampaign, StartCampaign, list_campaigns};
use crate::backend::{CampaignView, ConsoleUser, DayFlow};
use crate::i18n::{money, t};

#[component]
pub fn Campaigns() -> impl IntoView {
    view! { <Signed body=Arc::new(|user| view! { <CampaignList user/> }.into_any())/> }
}

#[component]
fn CampaignList(user: ConsoleUser) -> impl IntoView {
    if user.company.is_none() {
        return view! {
            <section class="card">
                <p><a href="/support">{t("Abrir o painel de suporte", "Open the support page")}</a></p>
            </section>
        }
        .into_any();
    }
    let end = ServerAction::<EndCampaign>::new();
    let data = Resource::new(move || end.version().get(), |_| list_campaigns());
    let can_change = user.api_plugins();
    let error = failure(end.value());
    view! {
        <section class="card">
            <div class="heading-row">
                <h1>{t("Campanhas", "Campaigns")}</h1>
                {can_change.then(|| view! {
                    <a class="button" href="/campaigns/new">{t("Nova campanha", "New campaign")}</a>
                })}
            </div>
            {move || error().map(|e| view! { <Problem error=e/> })}
            {move || end.value().get().and_then(|r| r.ok()).map(|n| view! {
                <p role="status" class="ok">{format!("{} {n}", t("Campanha encerrada; chaves Pix apagadas:", "Campaign ended; Pix keys deleted:"))}</p>
            })}
            <Transition fallback=|| view! { <p>{t("Carregando…", "Loading…")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Ok(list) => list
                            .into_iter()
                            .map(|campaign| view! { <CampaignCard campaign can_change end/> })
                            .collect_view()
                            .into_any(),
                        Err(e) => view! { <Problem error=e/> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
    .into_any()
}

#[component]
fn CampaignCard(
    campaign: CampaignView,
    can_change: bool,
    end: ServerAction<EndCampaign>,
) -> impl IntoView {
    let confirming = RwSignal::new(false);
    let id = campaign.account_id.clone();
    let account = StoredValue::new(id.clone());
    let keys = campaign.pix_keys.len();
    let title = if campaign.is_default {
        format!(
            "{} {}",
            t("Conta principal", "Main account"),
            campaign.account_id
        )
    } else {
        format!("{} {}", t("Campanha", "Campaign"), campaign.account_id)
    };
    view! {
        <article class="campaign" data-account=id.clone()>
            <h2>{title}</h2>
            <dl class="balance">
                <dt>{t("Saldo total", "Total balance")}</dt><dd>{money(campaign.total)}</dd>
                <dt>{t("Bloqueado", "Blocked")}</dt><dd>{money(campaign.blocked)}</dd>
                <dt>{t("Disponível", "Available")}</dt><dd>{money(campaign.available)}</dd>
            </dl>
            <h3>{t("Chaves Pix", "Pix keys")}</h3>
            {if campaign.pix_keys.is_empty() {
                view! { <p class="empty">{t("Nenhuma chave Pix.", "No Pix keys.")}</p> }.into_any()
            } else {
                view! {
                    <ul class="keys">
                        {campaign.pix_keys.iter().map(|(key, kind)| view! {
                            <li><code>{key.clone()}</code> " " <span class="tag">{kind.clone()}</span></li>
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
            <p>
                <strong>{t("Chave de saque: ", "Withdraw key: ")}</strong>
                {match &campaign.withdraw_key {
                    Some((key, kind)) => format!("{key} ({kind})"),
                    None => t("nenhuma", "none").to_owned(),
                }}
            </p>
            <FlowChart flows=campaign.flows.clone()/>
            <h3>{t("Últimas transações", "Last transactions")}</h3>
            {if campaign.transactions.is_empty() {
                view! { <p class="empty">{t("Nenhuma transação.", "No transactions.")}</p> }.into_any()
            } else {
                view! {
                    <table>
                        <thead><tr>
                            <th scope="col">{t("Quando", "When")}</th>
                            <th scope="col">{t("Tipo", "Kind")}</th>
                            <th scope="col" class="num">{t("Valor", "Value")}</th>
                            <th scope="col">"endToEndId"</th>
                        </tr></thead>
                        <tbody>
                            {campaign.transactions.iter().map(|tx| view! {
                                <tr>
                                    <td>{short_time(&tx.at)}</td>
                                    <td>{tx.kind.clone()}</td>
                                    <td class="num">{money(tx.value)}</td>
                                    <td><code>{tx.end_to_end_id.clone()}</code></td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }.into_any()
            }}
            {(can_change && !campaign.is_default).then(|| view! {
                <div class="danger-zone">
                    <Show
                        when=move || confirming.get()
                        fallback=move || view! {
                            <button type="button" class="danger" on:click=move |_| confirming.set(true)>
                                {t("Encerrar campanha", "End campaign")}
                            </button>
                        }
                    >
                        <p role="alert">{format!("{} ({keys})", t(
                            "Apagar todas as chaves Pix desta conta? Ninguém mais poderá pagar para elas.",
                            "Delete every Pix key of this account? Nobody will be able to pay them again.",
                        ))}</p>
                        <ActionForm action=end>
                            <input type="hidden" name="account" value=account.get_value()/>
                            <button type="submit" class="danger">{t("Confirmar encerramento", "Confirm end")}</button>
                            <button type="button" class="secondary" on:click=move |_| confirming.set(false)>
                                {t("Cancelar", "Cancel")}
                            </button>
                        </ActionForm>
                    </Show>
                </div>
            })}
        </article>
    }
}

/// Money in (green) and out (red) per day as bars; the numbers are in the label.
#[component]
fn FlowChart(flows: Vec<DayFlow>) -> impl IntoView {
    const BAR: f64 = 8.0;
    const HEIGHT: f64 = 60.0;
    let max = flows
        .iter()
        .map(|f| f.money_in.max(f.money_out))
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let total_in: i64 = flows.iter().map(|f| f.money_in).sum();
    let total_out: i64 = flows.iter().map(|f| f.money_out).sum();
    let label = format!(
        "{} {} · {} {}",
        t("Entradas em 14 dias:", "Money in over 14 days:"),
        money(total_in),
        t("saídas:", "money out:"),
        money(total_out)
    );
    let width = flows.len() as f64 * (BAR * 2.0 + 4.0);
    view! {
        <figure class="chart">
            <svg role="img" aria-label=label.clone() width=width height=HEIGHT viewBox=format!("0 0 {width} {HEIGHT}")>
                {flows.iter().enumerate().map(|(i, f)| {
                    let x = i as f64 * (BAR * 2.0 + 4.0);
                    let h_in = f.money_in as f64 / max * HEIGHT;
                    let h_out = f.money_out as f64 / max * HEIGHT;
                    view! {
                        <g>
                            <title>{format!("{}: +{} / -{}", f.day, money(f.money_in), money(f.money_out))}</title>
                            <rect class="in" x=x y=HEIGHT - h_in width=BAR height=h_in/>
                            <rect class="out" x=x + BAR y=HEIGHT - h_out width=BAR height=h_out/>
                        </g>
                    }
                }).collect_view()}
            </svg>
            <figcaption>{label}</figcaption>
        </figure>
    }
}

#[component]
pub fn NewCampaignPage() -> impl IntoView {
    view! { <Signed body=Arc::new(|_| view! { <Wizard/> }.into_any())/> }
}

#[component]
fn Wizard() -> impl IntoView {
    let create = ServerAction::<StartCampaign>::new();
    let error = failure(create.value());
    let created = move || create.value().get().and_then(|r| r.ok());
    // Inline messages under the fields the server named.
    let field =
        move |name: &'static str| Signal::derive(move || error().and_then(|e| e.field(name)));
    view! {
        <section class="card">
            <h1>{t("Nova campanha", "New campaign")}</h1>
            <p class="hint">{t(
                "Cria, de uma vez, a conta da campanha, a aplicação (AppID) ligada a ela, a chave Pix e, se informada, a chave de saque.",
                "Creates, in one go, the campaign's account, the application (AppID) bound to it, the Pix key and, if given, the withdraw key.",
            )}</p>
            <ActionForm action=create>
                <label for="campaign-name">{t("Nome da campanha", "Campaign name")}</label>
                <input id="campaign-name" name="campaign[name]" required maxlength="100" aria-describedby="campaign-name-error"/>
                <FieldError id="campaign-name-error" message=field("name")/>
                <label for="campaign-key-type">{t("Tipo da chave Pix", "Pix key type")}</label>
                <select id="campaign-key-type" name="campaign[key_type]" aria-describedby="campaign-key-type-error">
                    <option value="EMAIL">"EMAIL"</option>
                    <option value="PHONE">{t("PHONE (telefone)", "PHONE")}</option>
                    <option value="CNPJ">"CNPJ"</option>
                    <option value="EVP">{t("EVP (aleatória)", "EVP (random)")}</option>
                </select>
                <FieldError id="campaign-key-type-error" message=field("keyType")/>
                <label for="campaign-key">{t("Chave Pix (vazia para EVP)", "Pix key (empty for EVP)")}</label>
                <input id="campaign-key" name="campaign[key]" aria-describedby="campaign-key-error"/>
                <FieldError id="campaign-key-error" message=field("key")/>
                <label for="campaign-withdraw">{t("Chave de saque (opcional)", "Withdraw key (optional)")}</label>
                <input id="campaign-withdraw" name="campaign[withdraw_key]" aria-describedby="withdraw-hint"/>
                <small id="withdraw-hint" class="hint">{t(
                    "Uma chave Pix de outro banco, do mesmo CNPJ da empresa.",
                    "A Pix key at another bank, held by the company's own CNPJ.",
                )}</small>
                <button type="submit">{t("Criar campanha", "Create campaign")}</button>
            </ActionForm>
            {move || error().map(|e| view! { <Problem error=e/> })}
            {move || created().map(|c| view! {
                <div class="created">
                    <h2>{t("Campanha criada", "Campaign created")}</h2>
                    <dl class="details">
                        <dt>{t("Conta", "Account")}</dt><dd><code>{c.account_id.clone()}</code></dd>
                        <dt>{t("Aplicação", "Application")}</dt><dd>{c.application.application.name.clone()}</dd>
                        <dt>{t("Chave Pix", "Pix key")}</dt><dd><code>{c.pix_key.0.clone()}</code> " (" {c.pix_key.1.clone()} ")"</dd>
                        <dt>{t("Chave de saque", "Withdraw key")}</dt>
                        <dd>{c.withdraw_key.clone().map(|(k, kind)| format!("{k} ({kind})")).unwrap_or_else(|| t("nenhuma", "none").to_owned())}</dd>
                    </dl>
                    <Secret app_id=c.application.app_id.clone() client_secret=c.application.client_secret.clone()/>
                    <p><a href="/">{t("Ver campanhas", "See campaigns")}</a></p>
                </div>
            })}
        </section>
    }
}
