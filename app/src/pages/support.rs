//! Support (SUPPORT role): company features and each account's withdraw key API, the
//! review of disputes (MED) and KYC onboardings, with the audit trail of who changed
//! what.

use std::sync::Arc;

use leptos::prelude::*;

use super::{FieldError, Problem, Signed, failure, short_time};
use crate::api::{
    OpenDispute, ResolveDispute, ReviewKyc, SetFeature, SetWithdrawKeyApi, load_support,
};
use crate::backend::{ConsoleUser, SupportCompany, SupportDispute, SupportOnboarding};
use crate::i18n::{money, t};

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
    let resolve = ServerAction::<ResolveDispute>::new();
    let open = ServerAction::<OpenDispute>::new();
    let review = ServerAction::<ReviewKyc>::new();
    let data = Resource::new(
        move || {
            (
                feature.version().get(),
                withdraw.version().get(),
                resolve.version().get(),
                open.version().get(),
                review.version().get(),
            )
        },
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
                            let companies = page.companies.clone();
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
                                <Disputes disputes=page.disputes companies resolve open/>
                                <Onboardings onboardings=page.onboardings review/>
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

/// A dispute's status in words.
fn dispute_status(status: &str) -> &'static str {
    match status {
        "IN_REVIEW" => t("Em análise", "In review"),
        "ACCEPTED" => t(
            "Aceita (valor devolvido ao pagador)",
            "Accepted (value returned to the payer)",
        ),
        "REJECTED" => t("Rejeitada (valor liberado)", "Rejected (value released)"),
        "CANCELED" => t("Cancelada pelo pagador", "Canceled by the payer"),
        _ => t("Desconhecido", "Unknown"),
    }
}

/// An onboarding's status in words.
fn onboarding_status(status: &str) -> &'static str {
    match status {
        "IN_REVIEW" => t("Em análise", "In review"),
        "APPROVED" => t("Aprovado", "Approved"),
        "REJECTED" => t("Rejeitado", "Rejected"),
        "DOCUMENTS_REQUESTED" => t("Documentos solicitados", "Documents requested"),
        _ => t("Desconhecido", "Unknown"),
    }
}

/// The dispute queue (newest first), with the form that opens one.
#[component]
fn Disputes(
    disputes: Vec<SupportDispute>,
    companies: Vec<SupportCompany>,
    resolve: ServerAction<ResolveDispute>,
    open: ServerAction<OpenDispute>,
) -> impl IntoView {
    let open_error = failure(open.value());
    let field =
        move |name: &'static str| Signal::derive(move || open_error().and_then(|e| e.field(name)));
    let empty = disputes.is_empty();
    view! {
        <section class="queue disputes" aria-labelledby="disputes-title">
            <h2 id="disputes-title">{t("Disputas", "Disputes")}</h2>
            <p class="hint">{t(
                "Aceitar devolve o valor bloqueado ao pagador; rejeitar o libera para a empresa.",
                "Accepting returns the blocked value to the payer; rejecting releases it to the company.",
            )}</p>
            <details class="open-dispute" open=move || open_error().is_some()>
                <summary>{t("Abrir disputa", "Open a dispute")}</summary>
                <ActionForm action=open>
                    <label for="open-dispute-company">{t("Empresa", "Company")}</label>
                    <select id="open-dispute-company" name="company">
                        {companies.into_iter().map(|c| view! { <option value=c.id>{c.name}</option> }).collect_view()}
                    </select>
                    <label for="open-dispute-transaction">{t("Pix recebido (id ou endToEndId)", "Received Pix (id or endToEndId)")}</label>
                    <input id="open-dispute-transaction" name="transaction" required maxlength="100" aria-describedby="open-dispute-transaction-error"/>
                    <FieldError id="open-dispute-transaction-error" message=field("transaction")/>
                    <label for="open-dispute-reason">{t("Motivo (opcional)", "Reason (optional)")}</label>
                    <input id="open-dispute-reason" name="reason" maxlength="140" placeholder="MED: fraude" aria-describedby="open-dispute-reason-error"/>
                    <FieldError id="open-dispute-reason-error" message=field("reason")/>
                    <button type="submit" prop:disabled=move || open.pending().get()>{t("Abrir disputa", "Open dispute")}</button>
                </ActionForm>
            </details>
            // Outside the form: the list reloads after each action and closes it.
            {move || open_error().map(|e| view! { <Problem error=e/> })}
            {move || open.value().get().and_then(|r| r.ok()).map(|d| view! {
                <p class="ok" role="status">{t("Disputa aberta:", "Dispute opened:")} " " <code>{d.id}</code> " — " {money(d.value)} " " {t("bloqueados", "blocked")}</p>
            })}
            {move || failure(resolve.value())().map(|e| view! { <Problem error=e/> })}
            {move || resolve.value().get().and_then(|r| r.ok()).map(|d| view! {
                <p class="ok" role="status">{t("Disputa encerrada:", "Dispute closed:")} " " <code>{d.id}</code> " — " {dispute_status(&d.status)}</p>
            })}
            {empty.then(|| view! { <p class="empty">{t("Nenhuma disputa.", "No disputes.")}</p> })}
            {disputes.into_iter().map(|d| view! { <DisputeItem dispute=d resolve/> }).collect_view()}
        </section>
    }
}

#[component]
fn DisputeItem(dispute: SupportDispute, resolve: ServerAction<ResolveDispute>) -> impl IntoView {
    let d = dispute;
    let note_id = format!("dispute-note-{}", d.id);
    let in_review = d.in_review();
    let documents = d.documents.len();
    let id = d.id.clone();
    view! {
        <article class="dispute" data-dispute=d.id.clone() data-status=d.status.clone()>
            <h3>
                {d.company.clone()} " · " {money(d.value)} " "
                <span class="tag status">{dispute_status(&d.status)}</span>
            </h3>
            <dl class="details">
                <dt>{t("Disputa", "Dispute")}</dt><dd><code>{d.id.clone()}</code></dd>
                <dt>{t("Motivo", "Reason")}</dt><dd>{d.reason.clone()}</dd>
                <dt>"endToEndId"</dt><dd><code>{d.end_to_end_id.clone()}</code></dd>
                <dt>{t("Aberta em", "Opened at")}</dt><dd>{short_time(&d.created_at)}</dd>
                <dt>{t("Documentos", "Documents")}</dt>
                <dd>
                    {documents}
                    {(documents > 0).then(|| view! {
                        <ul class="evidence">
                            {d.documents.into_iter().map(|e| view! {
                                <li>
                                    {e.url.map(|u| {
                                        let text = u.clone();
                                        view! { <a href=u rel="noopener noreferrer nofollow" target="_blank">{text}</a> }
                                    })}
                                    {e.file_id.map(|f| match e.file_link {
                                        Some(link) => view! { <a href=link rel="noopener noreferrer" target="_blank"><code>{f}</code></a> }.into_any(),
                                        None => view! { <code>{f}</code> }.into_any(),
                                    })}
                                    {e.description.map(|text| view! { " — " {text} })}
                                </li>
                            }).collect_view()}
                        </ul>
                    })}
                </dd>
                {d.resolution_note.map(|n| view! { <dt>{t("Nota", "Note")}</dt><dd class="note">{n}</dd> })}
            </dl>
            {in_review.then(|| view! {
                <ActionForm action=resolve>
                    <input type="hidden" name="dispute" value=id.clone()/>
                    <label for=note_id.clone()>{t("Nota (opcional)", "Note (optional)")}</label>
                    <textarea id=note_id name="note" rows="2" maxlength="500"></textarea>
                    <div class="actions">
                        <button type="submit" name="decision" value="ACCEPT" prop:disabled=move || resolve.pending().get()>
                            {t("Aceitar disputa", "Accept dispute")}
                        </button>
                        <button type="submit" name="decision" value="REJECT" class="secondary" prop:disabled=move || resolve.pending().get()>
                            {t("Rejeitar disputa", "Reject dispute")}
                        </button>
                    </div>
                </ActionForm>
            })}
        </article>
    }
}

/// The KYC queue, last changed first.
#[component]
fn Onboardings(
    onboardings: Vec<SupportOnboarding>,
    review: ServerAction<ReviewKyc>,
) -> impl IntoView {
    let empty = onboardings.is_empty();
    view! {
        <section class="queue onboardings" aria-labelledby="kyc-title">
            <h2 id="kyc-title">{t("Onboarding KYC", "KYC onboarding")}</h2>
            <p class="hint">{t(
                "Rejeitar ou pedir documentos exige uma nota: é o que a empresa lê para saber o que fazer.",
                "Rejecting or asking for documents needs a note: it tells the company what to do.",
            )}</p>
            {move || failure(review.value())().map(|e| view! { <Problem error=e/> })}
            {move || review.value().get().and_then(|r| r.ok()).map(|o| view! {
                <p class="ok" role="status">{t("Onboarding revisado:", "Onboarding reviewed:")} " " <code>{o.correlation_id}</code> " — " {onboarding_status(&o.status)}</p>
            })}
            {empty.then(|| view! { <p class="empty">{t("Nenhum onboarding.", "No onboardings.")}</p> })}
            {onboardings.into_iter().map(|o| view! { <OnboardingItem onboarding=o review/> }).collect_view()}
        </section>
    }
}

#[component]
fn OnboardingItem(onboarding: SupportOnboarding, review: ServerAction<ReviewKyc>) -> impl IntoView {
    let o = onboarding;
    let note_id = format!("kyc-note-{}", o.id);
    let in_review = o.in_review();
    let id = o.id.clone();
    view! {
        <article class="onboarding" data-onboarding=o.correlation_id.clone() data-status=o.status.clone()>
            <h3>
                {o.company.clone()} " · " {o.tax_id.clone()} " "
                <span class="tag status">{onboarding_status(&o.status)}</span>
            </h3>
            <dl class="details">
                <dt>"correlationID"</dt><dd><code>{o.correlation_id.clone()}</code></dd>
                <dt>{t("Atualizado em", "Updated at")}</dt><dd>{short_time(&o.updated_at)}</dd>
                {o.review_note.map(|n| view! { <dt>{t("Nota", "Note")}</dt><dd class="note">{n}</dd> })}
            </dl>
            <table class="representatives">
                <thead><tr>
                    <th scope="col">{t("Representante", "Representative")}</th>
                    <th scope="col">"CPF"</th>
                    <th scope="col">"Email"</th>
                    <th scope="col">{t("Nascimento", "Birth date")}</th>
                    <th scope="col">{t("Documentos", "Documents")}</th>
                </tr></thead>
                <tbody>
                    {o.representatives.into_iter().map(|r| view! {
                        <tr>
                            <td>{r.name}</td>
                            <td>{r.tax_id}</td>
                            <td>{r.email}</td>
                            <td>{r.birth_date}</td>
                            <td>{r.documents.join(", ")}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
            {in_review.then(|| view! {
                <ActionForm action=review>
                    <input type="hidden" name="onboarding" value=id.clone()/>
                    <label for=note_id.clone()>{t("Nota (obrigatória para rejeitar ou pedir documentos)", "Note (required to reject or ask for documents)")}</label>
                    <textarea id=note_id name="note" rows="2" maxlength="500"></textarea>
                    <div class="actions">
                        <button type="submit" name="decision" value="APPROVE" prop:disabled=move || review.pending().get()>
                            {t("Aprovar", "Approve")}
                        </button>
                        <button type="submit" name="decision" value="REQUEST_DOCUMENTS" class="secondary" prop:disabled=move || review.pending().get()>
                            {t("Pedir documentos", "Request documents")}
                        </button>
                        <button type="submit" name="decision" value="REJECT" class="danger" prop:disabled=move || review.pending().get()>
                            {t("Rejeitar", "Reject")}
                        </button>
                    </div>
                </ActionForm>
            })}
        </article>
    }
}
