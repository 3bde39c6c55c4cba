//! Support (SUPPORT role): company features and each account's withdraw key API, with
//! the audit trail of who changed what.

use std::sync::Arc;

use leptos::prelude::*;

use super::{Problem, Signed, failure, short_time};
use crate::api::{SetFeature, SetWithdrawKeyApi, load_support};
use crate::backend::ConsoleUser;
use crate::i18n::t;

#[component]
pub fn Support() -> impl IntoView {
    view! { <Signed body=Arc::new(|user| view! { <SupportPanel user/> }.into_any())/> }
}

#[component]
fn SupportPanel(user: ConsoleUser) -> impl IntoView {
    if !user.is_support() {
        return view! {
            <section class="card"><p role="alert" class="error">{t(
                "Esta página é só do suporte Cofre.",
                "This page is for Cofre support only.",
            )}</p></section>
        }
        .into_any();
    }
    let feature = ServerAction::<SetFeature>::new();
    let withdraw = ServerAction::<SetWithdrawKeyApi>::new();
    let data = Resource::new(
        move || (feature.version().get(), withdraw.version().get()),
        |_| load_support(),
    );
    view! {
        <section class="card">
            <h1>{t("Suporte", "Support")}</h1>
            {move || failure(feature.value())().map(|e| view! { <Problem error=e/> })}
            {move || failure(withdraw.value())().map(|e| view! { <Problem error=e/> })}
            <Transition fallback=|| view! { <p>{t("Carregando…", "Loading…")}</p> }>
                {move || Suspend::new(async move {
                    match data.await {
                        Err(e) => view! { <Problem error=e/> }.into_any(),
                        Ok(page) => {
                            let features = page.features.clone();
                            view! {
                                {page.companies.into_iter().map(|c| {
                                    let features = features.clone();
                                    let company_key = StoredValue::new(c.id.clone());
                                    view! {
                                        <article class="company" data-company=c.name.clone()>
                                            <h2>{c.name.clone()} " " <small>{c.tax_id.clone()}</small></h2>
                                            <h3>{t("Funcionalidades", "Features")}</h3>
                                            <ul class="switches">
                                                {features.into_iter().map(|f| {
                                                    let on = c.features.contains(&f);
                                                    view! {
                                                        <li>
                                                            <ActionForm action=feature>
                                                                <input type="hidden" name="company" value=company_key.get_value()/>
                                                                <input type="hidden" name="feature" value=f.clone()/>
                                                                <input type="hidden" name="enabled" value=(!on).to_string()/>
                                                                <span class="switch-name">{f.clone()}</span> " "
                                                                <span class="tag">{if on { t("ativa", "on") } else { t("inativa", "off") }}</span> " "
                                                                <button type="submit" class="secondary" aria-label=format!("{} {f}", if on { t("Desativar", "Disable") } else { t("Ativar", "Enable") })>
                                                                    {if on { t("Desativar", "Disable") } else { t("Ativar", "Enable") }}
                                                                </button>
                                                            </ActionForm>
                                                        </li>
                                                    }
                                                }).collect_view()}
                                            </ul>
                                            <h3>{t("API de chave de saque por conta", "Withdraw key API per account")}</h3>
                                            <ul class="switches">
                                                {c.accounts.into_iter().map(|a| view! {
                                                    <li>
                                                        <ActionForm action=withdraw>
                                                            <input type="hidden" name="account" value=a.id.clone()/>
                                                            <input type="hidden" name="enabled" value=(!a.withdraw_key_api_enabled).to_string()/>
                                                            <code>{a.id.clone()}</code>
                                                            {a.is_default.then(|| format!(" ({})", t("principal", "main")))} " "
                                                            <span class="tag">{if a.withdraw_key_api_enabled { t("habilitada", "enabled") } else { t("desabilitada", "disabled") }}</span> " "
                                                            <button type="submit" class="secondary">
                                                                {if a.withdraw_key_api_enabled { t("Desabilitar", "Disable") } else { t("Habilitar", "Enable") }}
                                                            </button>
                                                        </ActionForm>
                                                    </li>
                                                }).collect_view()}
                                            </ul>
                                        </article>
                                    }
                                }).collect_view()}
                                <h2>{t("Trilha de auditoria", "Audit trail")}</h2>
                                <table class="audit">
                                    <thead><tr>
                                        <th scope="col">{t("Quando", "When")}</th>
                                        <th scope="col">{t("Quem", "Who")}</th>
                                        <th scope="col">{t("Ação", "Action")}</th>
                                        <th scope="col">{t("Alvo", "Target")}</th>
                                        <th scope="col">{t("Detalhe", "Detail")}</th>
                                    </tr></thead>
                                    <tbody>
                                        {page.audit.into_iter().map(|a| view! {
                                            <tr>
                                                <td>{short_time(&a.at)}</td>
                                                <td>{a.actor}</td>
                                                <td>{a.action}</td>
                                                <td>{a.target}</td>
                                                <td>{a.detail}</td>
                                            </tr>
                                        }).collect_view()}
                                    </tbody>
                                </table>
                            }.into_any()
                        }
                    }
                })}
            </Transition>
        </section>
    }
    .into_any()
}
