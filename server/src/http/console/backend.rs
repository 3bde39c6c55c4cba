//! [`ConsoleBackend`] over the services: each method resolves the signed-in user,
//! lets the service layer decide (`service::console` for who may do what), and turns
//! the answer into the console's plain data. Refusals carry the REST API's codes and
//! messages, in the console's language.

use std::collections::HashMap;

use async_trait::async_trait;
use cofre_app::backend::*;

use crate::http::error::{ApiError, Lang};
use crate::http::rfc3339;
use crate::service::Services;
use crate::service::applications::{Application, Caller, IssuedApplication as Issued};
use crate::service::console::{self, Actor};
use crate::service::plugins::{Binding, PluginView as ServicePlugin};
use crate::service::webhooks::NewWebhook;
use crate::service::{Page, events, features::Feature, plugins, scopes};
use crate::store;

pub struct ServiceBackend(pub Services);

fn refuse(err: impl Into<ApiError>) -> ConsoleError {
    err.into().into_console(Lang::current())
}

fn page(limit: i64) -> Page {
    Page { skip: 0, limit }
}

fn application_view(app: Application) -> ApplicationView {
    ApplicationView {
        id: app.id,
        name: app.name,
        kind: app.kind.as_str().to_owned(),
        is_active: app.is_active,
        client_id: app.client_id,
        account_id: app.account_id,
        scopes: app.scopes,
        allowed_ips: app.allowed_ips,
    }
}

fn issued_view(issued: Issued) -> IssuedApplication {
    IssuedApplication {
        app_id: issued.app_id,
        client_secret: issued.client_secret,
        application: application_view(issued.application),
    }
}

fn plugin_view(p: ServicePlugin) -> PluginView {
    PluginView {
        id: p.row.id,
        name: p.row.name,
        version: p.row.version,
        interface: p.row.interface,
        sha256: p.row.sha256,
        bindings: p
            .bindings
            .into_iter()
            .map(|b| {
                let mut config: Vec<(String, String)> = b.config.into_iter().collect();
                config.sort();
                BindingView {
                    hook: b.hook,
                    accounts: b.accounts.unwrap_or_default(),
                    config,
                }
            })
            .collect(),
    }
}

fn user_view(user: crate::service::users::User) -> UserView {
    UserView {
        api_plugins: user
            .permissions
            .iter()
            .any(|p| p == crate::service::users::API_PLUGINS),
        id: user.id,
        email: user.email,
        role: user.role.as_str().to_owned(),
    }
}

fn day(ms: i64) -> String {
    // The day's start in Brasília is 03:00 UTC, so the UTC date is the local date.
    rfc3339(ms).chars().take(10).collect()
}

impl ServiceBackend {
    async fn actor(&self, user_id: &str) -> Result<Actor, ConsoleError> {
        self.0.console().actor(user_id).await.map_err(refuse)
    }

    /// The company's MASTER power, for a user with API_PLUGINS.
    async fn api_caller(&self, user_id: &str) -> Result<Caller, ConsoleError> {
        let actor = self.actor(user_id).await?;
        let company = actor.require_api_plugins().map_err(refuse)?;
        self.0.console().caller(company).await.map_err(refuse)
    }

    async fn account_ids(&self, company_id: &str) -> Result<Vec<String>, ConsoleError> {
        let rows = store::accounts::list_for_company(self.0.store.pool(), company_id, 0, 1000)
            .await
            .map_err(|e| refuse(ApiError::internal(e)))?;
        Ok(rows.into_iter().map(|a| a.id).collect())
    }
}

#[async_trait]
impl ConsoleBackend for ServiceBackend {
    async fn sign_in(&self, email: &str, password: &str) -> Result<String, ConsoleError> {
        match self.0.users.sign_in(email, password).await {
            Ok(user) => Ok(user.id),
            Err(crate::service::users::UserError::NotFound) => {
                Err(refuse(crate::service::users::UserError::InvalidCredentials))
            }
            Err(err) => {
                // A lock says when to come back, as every other 429 does.
                if let crate::service::users::UserError::LockedOut { retry_after_secs } = &err
                    && let Some(response) =
                        leptos::prelude::use_context::<leptos_axum::ResponseOptions>()
                {
                    response.insert_header(
                        axum::http::header::RETRY_AFTER,
                        axum::http::HeaderValue::from(*retry_after_secs),
                    );
                }
                Err(refuse(err))
            }
        }
    }

    async fn user(&self, user_id: &str) -> Result<Option<ConsoleUser>, ConsoleError> {
        let user = match self.0.console().actor(user_id).await {
            Ok(actor) => actor.user,
            Err(console::ConsoleError::NotSignedIn) => return Ok(None),
            Err(err) => return Err(refuse(err)),
        };
        let company = match &user.company_id {
            Some(id) => {
                let company = self.0.companies.get(id).await.map_err(refuse)?;
                let main = store::accounts::main_of(self.0.store.pool(), id)
                    .await
                    .map_err(|e| refuse(ApiError::internal(e)))?;
                Some(ConsoleCompany {
                    id: company.id,
                    name: company.name,
                    tax_id: company.tax_id.formatted(),
                    features: company.features,
                    main_account_id: main.id,
                })
            }
            None => None,
        };
        Ok(Some(ConsoleUser {
            id: user.id,
            email: user.email,
            role: user.role.as_str().to_owned(),
            permissions: user.permissions,
            company,
        }))
    }

    async fn users(&self, user_id: &str) -> Result<Vec<UserView>, ConsoleError> {
        let actor = self.actor(user_id).await?;
        let company = actor.require_admin().map_err(refuse)?;
        let users = self.0.users.list(company).await.map_err(refuse)?;
        Ok(users.into_iter().map(user_view).collect())
    }

    async fn create_user(
        &self,
        user_id: &str,
        email: &str,
        password: &str,
        role: &str,
        api_plugins: bool,
    ) -> Result<UserView, ConsoleError> {
        let actor = self.actor(user_id).await?;
        self.0
            .console()
            .create_user(&actor, email, password, role, api_plugins)
            .await
            .map(user_view)
            .map_err(refuse)
    }

    async fn set_api_plugins(
        &self,
        user_id: &str,
        target: &str,
        granted: bool,
    ) -> Result<UserView, ConsoleError> {
        let actor = self.actor(user_id).await?;
        self.0
            .console()
            .set_api_plugins(&actor, target, granted)
            .await
            .map(user_view)
            .map_err(refuse)
    }

    async fn applications(&self, user_id: &str) -> Result<ApplicationsPage, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        let applications = self
            .0
            .applications
            .list(&caller.company_id)
            .await
            .map_err(refuse)?;
        Ok(ApplicationsPage {
            applications: applications.into_iter().map(application_view).collect(),
            accounts: self.account_ids(&caller.company_id).await?,
            main_account_id: caller.account_id,
            scope_groups: scopes::GROUPS
                .iter()
                .map(|g| ScopeGroupView {
                    resource: g.group.to_owned(),
                    scopes: g
                        .scopes
                        .iter()
                        .map(|s| ScopeView {
                            name: s.name.to_owned(),
                            description: s.description.to_owned(),
                            master_only: s.master_only,
                        })
                        .collect(),
                })
                .collect(),
        })
    }

    async fn create_application(
        &self,
        user_id: &str,
        name: &str,
        kind: &str,
        account_id: &str,
    ) -> Result<IssuedApplication, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        let company = self
            .0
            .companies
            .get(&caller.company_id)
            .await
            .map_err(refuse)?;
        let new = crate::service::applications::NewApplication {
            name: Some(name.to_owned()),
            kind: Some(kind.to_owned()),
            account_id: Some(account_id.to_owned()).filter(|a| !a.trim().is_empty()),
            ..Default::default()
        };
        self.0
            .applications
            .create(&company, new)
            .await
            .map(issued_view)
            .map_err(refuse)
    }

    async fn set_application_access(
        &self,
        user_id: &str,
        application_id: &str,
        scopes: Vec<String>,
        allowed_ips: Vec<String>,
    ) -> Result<ApplicationView, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        self.0
            .applications
            .set_access(&caller.company_id, application_id, &scopes, &allowed_ips)
            .await
            .map(application_view)
            .map_err(refuse)
    }

    async fn set_application_active(
        &self,
        user_id: &str,
        application_id: &str,
        active: bool,
    ) -> Result<(), ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        self.0
            .applications
            .set_active(&caller.company_id, application_id, active)
            .await
            .map_err(refuse)
    }

    async fn rotate_secret(
        &self,
        user_id: &str,
        application_id: &str,
    ) -> Result<IssuedApplication, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        let client_id = self
            .0
            .applications
            .list(&caller.company_id)
            .await
            .map_err(refuse)?
            .into_iter()
            .find(|a| a.id == application_id)
            .map(|a| a.client_id)
            .ok_or_else(|| refuse(crate::service::applications::ApplicationError::NotFound))?;
        self.0
            .applications
            .rotate_secret(&caller.company_id, &client_id)
            .await
            .map(issued_view)
            .map_err(refuse)
    }

    async fn plugins(&self, user_id: &str) -> Result<PluginsPage, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        let list = self.0.plugins.list(&caller).await.map_err(refuse)?;
        Ok(PluginsPage {
            plugins: list.into_iter().map(plugin_view).collect(),
            hooks: plugins::HOOKS.iter().map(|h| (*h).to_owned()).collect(),
            accounts: self.account_ids(&caller.company_id).await?,
        })
    }

    async fn upload_plugin(
        &self,
        user_id: &str,
        name: &str,
        version: &str,
        component: Vec<u8>,
    ) -> Result<PluginView, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        self.0
            .plugins
            .upload(&caller, Some(name), Some(version), component)
            .await
            .map(plugin_view)
            .map_err(refuse)
    }

    async fn set_plugin_bindings(
        &self,
        user_id: &str,
        plugin_id: &str,
        bindings: Vec<BindingView>,
    ) -> Result<PluginView, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        let bindings = bindings
            .into_iter()
            .map(|b| Binding {
                hook: b.hook,
                accounts: Some(b.accounts).filter(|a| !a.is_empty()),
                config: b.config.into_iter().collect::<HashMap<_, _>>(),
            })
            .collect();
        self.0
            .plugins
            .set_bindings(&caller, plugin_id, bindings)
            .await
            .map(plugin_view)
            .map_err(refuse)
    }

    async fn plugin_invocations(
        &self,
        user_id: &str,
        plugin_id: &str,
    ) -> Result<Vec<InvocationView>, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        let (rows, _) = self
            .0
            .plugins
            .invocations(&caller, plugin_id, page(50))
            .await
            .map_err(refuse)?;
        Ok(rows
            .into_iter()
            .map(|r| InvocationView {
                hook: r.hook,
                decision: r.decision,
                code: r.code,
                duration_us: r.duration_us,
                error: r.error,
                at: rfc3339(r.at),
            })
            .collect())
    }

    async fn webhooks(&self, user_id: &str) -> Result<WebhooksPage, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        let (rows, _) = self
            .0
            .webhooks
            .list(&caller, None, page(Page::MAX_LIMIT))
            .await
            .map_err(refuse)?;
        Ok(WebhooksPage {
            webhooks: rows
                .into_iter()
                .map(|w| WebhookView {
                    id: w.id,
                    name: w.name,
                    event: w.event,
                    url: w.url,
                    is_active: w.is_active,
                })
                .collect(),
            events: events::EVENTS
                .iter()
                .map(|(e, _)| (*e).to_owned())
                .collect(),
        })
    }

    async fn create_webhook(
        &self,
        user_id: &str,
        name: &str,
        event: &str,
        url: &str,
    ) -> Result<WebhookView, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        let new = NewWebhook {
            name: Some(name.to_owned()),
            event: Some(event.to_owned()),
            url: Some(url.to_owned()),
            is_active: Some(true),
            ..Default::default()
        };
        let w = self.0.webhooks.create(&caller, new).await.map_err(refuse)?;
        Ok(WebhookView {
            id: w.id,
            name: w.name,
            event: w.event,
            url: w.url,
            is_active: w.is_active,
        })
    }

    async fn delete_webhook(&self, user_id: &str, webhook_id: &str) -> Result<(), ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        self.0
            .webhooks
            .delete(&caller, webhook_id)
            .await
            .map_err(refuse)
    }

    async fn deliveries(
        &self,
        user_id: &str,
        webhook_id: &str,
    ) -> Result<Vec<DeliveryView>, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        let (rows, _) = self
            .0
            .webhooks
            .deliveries(&caller, webhook_id, page(50))
            .await
            .map_err(refuse)?;
        Ok(rows.into_iter().map(delivery_view).collect())
    }

    async fn resend_delivery(
        &self,
        user_id: &str,
        delivery_id: &str,
    ) -> Result<DeliveryView, ConsoleError> {
        let caller = self.api_caller(user_id).await?;
        self.0
            .webhooks
            .resend(Some(&caller.company_id), delivery_id)
            .await
            .map(delivery_view)
            .map_err(refuse)
    }

    async fn campaigns(&self, user_id: &str) -> Result<Vec<CampaignView>, ConsoleError> {
        let actor = self.actor(user_id).await?;
        let summaries = self.0.console().campaigns(&actor).await.map_err(refuse)?;
        Ok(summaries
            .into_iter()
            .map(|s| CampaignView {
                account_id: s.account.id.clone(),
                is_default: s.account.is_default,
                total: s.account.balance.total,
                blocked: s.account.balance.blocked,
                available: s.account.balance.available,
                pix_keys: s.pix_keys,
                withdraw_key: s
                    .account
                    .withdraw_key
                    .map(|w| (w.key, w.kind.as_str().to_owned())),
                withdraw_key_api_enabled: s.account.withdraw_key_api_enabled,
                transactions: s
                    .transactions
                    .into_iter()
                    .map(|t| {
                        let sign = crate::service::ledger::Kind::parse(&t.kind)
                            .map(crate::service::ledger::Kind::sign)
                            .unwrap_or(1);
                        TransactionView {
                            value: t.value * if sign < 0 { -1 } else { 1 },
                            kind: t.kind,
                            end_to_end_id: t.end_to_end_id,
                            at: rfc3339(t.created_at),
                        }
                    })
                    .collect(),
                flows: s
                    .flows
                    .into_iter()
                    .map(|(at, money_in, money_out)| DayFlow {
                        day: day(at),
                        money_in,
                        money_out,
                    })
                    .collect(),
            })
            .collect())
    }

    async fn new_campaign(
        &self,
        user_id: &str,
        new: NewCampaign,
    ) -> Result<CampaignCreated, ConsoleError> {
        let actor = self.actor(user_id).await?;
        let created = self
            .0
            .console()
            .new_campaign(
                &actor,
                console::NewCampaign {
                    name: new.name,
                    key_type: new.key_type,
                    key: new.key,
                    withdraw_key: new.withdraw_key,
                },
            )
            .await
            .map_err(refuse)?;
        Ok(CampaignCreated {
            account_id: created.account_id,
            application: issued_view(created.application),
            pix_key: (
                created.pix_key.key,
                created.pix_key.kind.as_str().to_owned(),
            ),
            withdraw_key: created.withdraw_key,
        })
    }

    async fn end_campaign(&self, user_id: &str, account_id: &str) -> Result<usize, ConsoleError> {
        let actor = self.actor(user_id).await?;
        self.0
            .console()
            .end_campaign(&actor, account_id)
            .await
            .map_err(refuse)
    }

    async fn subscriptions(&self, user_id: &str) -> Result<SubscriptionsPage, ConsoleError> {
        let actor = self.actor(user_id).await?;
        let page = self
            .0
            .console()
            .subscriptions(&actor)
            .await
            .map_err(refuse)?;
        Ok(SubscriptionsPage {
            subscriptions: page
                .subscriptions
                .into_iter()
                .map(subscription_view)
                .collect(),
            year: page.today.year(),
            month: u8::from(page.today.month()),
        })
    }

    async fn subscription_instalments(
        &self,
        user_id: &str,
        subscription_id: &str,
    ) -> Result<InstalmentsPage, ConsoleError> {
        let actor = self.actor(user_id).await?;
        let (instalments, total) = self
            .0
            .console()
            .subscription_instalments(&actor, subscription_id)
            .await
            .map_err(refuse)?;
        Ok(InstalmentsPage {
            instalments: instalments.into_iter().map(instalment_view).collect(),
            total,
        })
    }

    async fn cancel_subscription(
        &self,
        user_id: &str,
        subscription_id: &str,
    ) -> Result<SubscriptionView, ConsoleError> {
        let actor = self.actor(user_id).await?;
        self.0
            .console()
            .cancel_subscription(&actor, subscription_id)
            .await
            .map(subscription_view)
            .map_err(refuse)
    }

    async fn support(&self, user_id: &str) -> Result<SupportPage, ConsoleError> {
        let actor = self.actor(user_id).await?;
        let audit = self.0.console().audit_trail(&actor).await.map_err(refuse)?;
        let pool = self.0.store.pool();
        let internal = |e| refuse(ApiError::internal(e));
        let mut companies = Vec::new();
        for row in store::companies::list_all(pool).await.map_err(internal)? {
            let company = self.0.companies.get(&row.id).await.map_err(refuse)?;
            let accounts = store::accounts::list_for_company(pool, &row.id, 0, 1000)
                .await
                .map_err(internal)?;
            companies.push(SupportCompany {
                id: company.id,
                name: company.name,
                tax_id: company.tax_id.formatted(),
                features: company.features,
                accounts: accounts
                    .into_iter()
                    .map(|a| SupportAccount {
                        id: a.id,
                        is_default: a.is_default,
                        withdraw_key_api_enabled: a.withdraw_key_api_enabled,
                    })
                    .collect(),
            });
        }
        let names: HashMap<String, String> = companies
            .iter()
            .map(|c| (c.id.clone(), c.name.clone()))
            .collect();
        let disputes = self
            .0
            .console()
            .support_disputes(&actor)
            .await
            .map_err(refuse)?;
        let onboardings = self.0.console().support_kyc(&actor).await.map_err(refuse)?;
        Ok(SupportPage {
            companies,
            features: Feature::ALL.iter().map(|f| f.as_str().to_owned()).collect(),
            disputes: disputes.into_iter().map(dispute_view).collect(),
            onboardings: onboardings.into_iter().map(onboarding_view).collect(),
            audit: audit
                .into_iter()
                .map(|a| AuditEntry {
                    at: rfc3339(a.at),
                    actor: a.actor_email,
                    company: a.company_id.and_then(|id| names.get(&id).cloned()),
                    action: a.action,
                    target: a.target,
                    detail: a.detail,
                })
                .collect(),
        })
    }

    async fn set_feature(
        &self,
        user_id: &str,
        company_id: &str,
        feature: &str,
        enabled: bool,
    ) -> Result<(), ConsoleError> {
        let actor = self.actor(user_id).await?;
        self.0
            .console()
            .set_feature(&actor, company_id, feature, enabled)
            .await
            .map_err(refuse)
    }

    async fn set_withdraw_key_api(
        &self,
        user_id: &str,
        account_id: &str,
        enabled: bool,
    ) -> Result<(), ConsoleError> {
        let actor = self.actor(user_id).await?;
        self.0
            .console()
            .set_withdraw_key_api(&actor, account_id, enabled)
            .await
            .map_err(refuse)
    }

    async fn resolve_dispute(
        &self,
        user_id: &str,
        dispute_id: &str,
        decision: &str,
        note: &str,
    ) -> Result<SupportDispute, ConsoleError> {
        let actor = self.actor(user_id).await?;
        self.0
            .console()
            .resolve_dispute(&actor, dispute_id, decision, Some(note))
            .await
            .map(dispute_view)
            .map_err(refuse)
    }

    async fn open_dispute(
        &self,
        user_id: &str,
        company_id: &str,
        transaction_id: &str,
        reason: &str,
    ) -> Result<SupportDispute, ConsoleError> {
        let actor = self.actor(user_id).await?;
        self.0
            .console()
            .open_dispute(&actor, company_id, transaction_id, Some(reason))
            .await
            .map(dispute_view)
            .map_err(refuse)
    }

    async fn review_kyc(
        &self,
        user_id: &str,
        onboarding_id: &str,
        decision: &str,
        note: &str,
    ) -> Result<SupportOnboarding, ConsoleError> {
        let actor = self.actor(user_id).await?;
        self.0
            .console()
            .review_kyc(&actor, onboarding_id, decision, Some(note))
            .await
            .map(onboarding_view)
            .map_err(refuse)
    }
}

fn dispute_view(q: console::QueuedDispute) -> SupportDispute {
    let d = q.dispute;
    let links = q.file_links;
    SupportDispute {
        id: d.row.id,
        company_id: d.row.company_id,
        company: q.company,
        status: d.row.status,
        value: d.row.value,
        reason: d.row.reason,
        transaction_id: d.pix.id,
        end_to_end_id: d.pix.end_to_end_id,
        documents: d
            .evidence
            .into_iter()
            .map(|e| EvidenceView {
                url: e.url,
                file_link: e.file_id.as_ref().and_then(|f| {
                    links
                        .iter()
                        .find(|(id, _)| id == f)
                        .map(|(_, link)| link.clone())
                }),
                file_id: e.file_id,
                description: e.description,
            })
            .collect(),
        resolution_note: d.row.resolution_note,
        created_at: rfc3339(d.row.created_at),
    }
}

fn onboarding_view(q: console::QueuedOnboarding) -> SupportOnboarding {
    let o = q.onboarding;
    SupportOnboarding {
        tax_id: crate::service::tax_id::TaxId::parse(&o.row.tax_id)
            .map(|t| t.formatted())
            .unwrap_or(o.row.tax_id),
        id: o.row.id,
        company_id: o.row.company_id,
        company: q.company,
        correlation_id: o.row.correlation_id,
        status: o.row.status,
        review_note: o.row.review_note,
        representatives: o
            .representatives
            .into_iter()
            .map(|r| RepresentativeView {
                tax_id: crate::service::tax_id::TaxId::parse(&r.row.tax_id)
                    .map(|t| t.formatted())
                    .unwrap_or(r.row.tax_id),
                name: r.row.name,
                email: r.row.email,
                birth_date: r.row.birth_date,
                documents: r.documents.into_iter().map(|f| f.name).collect(),
            })
            .collect(),
        updated_at: rfc3339(o.row.updated_at),
    }
}

fn subscription_view(s: crate::service::subscriptions::Subscription) -> SubscriptionView {
    SubscriptionView {
        customer_tax_id: crate::service::tax_id::TaxId::parse(&s.customer.tax_id)
            .map(|t| t.formatted())
            .unwrap_or(s.customer.tax_id),
        customer_name: s.customer.name,
        id: s.row.id,
        correlation_id: s.row.correlation_id,
        value: s.row.value,
        frequency: s.row.frequency,
        day_generate_charge: s.row.day_generate_charge,
        day_due: s.row.day_due,
        charge_type: s.row.charge_type,
        status: s.row.status,
        start_date: s.row.start_date,
        created_at: rfc3339(s.row.created_at),
    }
}

fn instalment_view(v: crate::service::subscriptions::InstalmentView) -> InstalmentView {
    let date = crate::service::clock::date_text;
    InstalmentView {
        number: v.instalment.number,
        generation_date: date(v.instalment.generation),
        due_date: date(v.instalment.due),
        // As the REST API's installments answer it.
        status: v
            .charge
            .map_or_else(|| "SCHEDULED".to_owned(), |c| c.status),
        typed_line: v
            .issued
            .and_then(|i| i.boleto_line)
            .map(|line| crate::service::boleto::format_typed_line(&line)),
    }
}

fn delivery_view(d: crate::service::webhooks::Delivery) -> DeliveryView {
    DeliveryView {
        last_status_code: d.attempts.last().and_then(|a| a.status_code),
        id: d.row.id,
        event: d.row.event,
        status: d.row.status,
        attempts: d.row.attempts,
        at: rfc3339(d.row.created_at),
    }
}
