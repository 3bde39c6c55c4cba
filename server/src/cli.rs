//! The `cofre` command line. Every command takes `--database-url` (or `DATABASE_URL`)
//! and, where it prints data, `--json` for a machine-readable answer on stdout.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::json;

use crate::config::Settings;
use crate::service::applications::NewApplication;
use crate::service::companies::NewCompany;
use crate::service::features::Feature;
use crate::service::users::UserError;
use crate::service::{Services, demo, directory};
use crate::store::Store;

#[derive(Parser, Debug)]
#[command(name = "cofre", version, about = "Cofre: Pix banking-as-a-service")]
pub struct Cli {
    /// Configuration file (default: ./cofre.toml when present).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    /// `sqlite://FILE` or `postgres://...`; overrides the configuration.
    #[arg(long, global = true, env = "DATABASE_URL")]
    pub database_url: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the API and the console (runs migrations first).
    Serve {
        /// Address to listen on, e.g. 127.0.0.1:3000.
        #[arg(long)]
        bind: Option<String>,
    },
    /// Apply the database migrations and exit.
    Migrate(JsonFlag),
    /// Companies (tenants).
    #[command(subcommand)]
    Company(CompanyCommand),
    /// Applications (AppIDs).
    #[command(subcommand)]
    Application(ApplicationCommand),
    /// Switch a company feature on or off.
    Feature {
        action: Switch,
        #[arg(long)]
        company: String,
        /// BAAS, DISPUTE_EVIDENCE_FILE_ID, MASTER_APP_READ_ANY_ACCOUNT, SPLIT, SUBACCOUNT, KYC_ONBOARDING_LINK
        feature: String,
    },
    /// Bank accounts.
    #[command(subcommand)]
    Account(AccountCommand),
    /// Console users.
    #[command(subcommand)]
    User(UserCommand),
    /// The simulated Pix directory (DICT).
    #[command(subcommand)]
    Dict(DictCommand),
    /// Create (or reuse) a demo BaaS company and print how to use it.
    Demo(JsonFlag),
    /// Webhook signing keys and deliveries.
    #[command(subcommand)]
    Webhook(WebhookCommand),
    /// The double-entry ledger.
    #[command(subcommand)]
    Ledger(LedgerCommand),
    /// Benchmarks (figures for the README, not tests).
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Subcommand, Debug)]
pub enum WebhookCommand {
    /// Make a new current signing key; the old ones stay published.
    RotateKey(JsonFlag),
    /// Send a delivery again now (also one that gave up after its 8 attempts).
    Resend {
        delivery_id: String,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Subcommand, Debug)]
pub enum LedgerCommand {
    /// Check every invariant (each transaction sums to zero, balances equal their
    /// postings, no negative balance); exits non-zero on any violation.
    Verify(JsonFlag),
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// create-key / list-keys / check-key against an in-process Cofre, beside a bare
    /// axum endpoint (the HTTP ceiling). Without --database-url it uses a fresh
    /// temporary SQLite file; with one, it adds a bench company to that database.
    Campaign {
        /// Concurrent clients.
        #[arg(long, default_value_t = 16)]
        clients: usize,
        /// Requests per operation.
        #[arg(long, default_value_t = 4000)]
        requests: usize,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Overhead of a trivial allow-all plugin on the withdraw path (fresh store,
    /// instantiate, call), one thread.
    Plugins {
        /// The component (default: the pix-key-policy example, which allows withdrawals).
        #[arg(
            long,
            default_value = "plugins/examples/target/wasm32-wasip2/release/pix_key_policy.wasm"
        )]
        component: PathBuf,
        #[arg(long, default_value_t = 20_000)]
        calls: usize,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Drain a backlog of committed events to a local receiver that answers 200 at once.
    Webhooks {
        #[arg(long, default_value_t = 100_000)]
        events: usize,
        /// Delivery loops running at once.
        #[arg(long, default_value_t = 4)]
        loops: usize,
        /// Deliveries in flight per loop.
        #[arg(long, default_value_t = 64)]
        batch: usize,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Company B's latency at a steady pace, alone and while company A floods the
    /// API from one AppID (which the rate limit answers with 429).
    Flood {
        /// Length of each phase.
        #[arg(long, default_value_t = 10)]
        seconds: u64,
        /// Company A's loops, each sending as fast as it can.
        #[arg(long, default_value_t = 32)]
        flooders: usize,
        /// Company B's requests per second (under its rate limit).
        #[arg(long, default_value_t = 40)]
        b_per_second: u64,
        #[command(flatten)]
        out: JsonFlag,
    },
    /// Sandbox Pix in to one hot account, beside the database's ceiling for the same
    /// work (pgbench's TPC-B-like on Postgres; the bare ledger statements on SQLite).
    PixIn {
        #[arg(long, default_value_t = 16)]
        clients: usize,
        #[arg(long, default_value_t = 4000)]
        requests: usize,
        /// How long pgbench runs (Postgres only).
        #[arg(long, default_value_t = 10)]
        ceiling_seconds: u64,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Args, Debug)]
pub struct JsonFlag {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Switch {
    Enable,
    Disable,
}

#[derive(Subcommand, Debug)]
pub enum CompanyCommand {
    /// Create a company with its main account and first admin.
    Create {
        #[arg(long)]
        name: String,
        /// CNPJ, numeric or alphanumeric, with or without punctuation.
        #[arg(long)]
        tax_id: String,
        /// Bank-as-a-service mode (feature BAAS): one account per campaign.
        #[arg(long)]
        baas: bool,
        #[arg(long)]
        admin_email: String,
        #[arg(long)]
        admin_password: String,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Subcommand, Debug)]
pub enum ApplicationCommand {
    /// Create an application and print its AppID (shown only this once).
    Create {
        #[arg(long)]
        company: String,
        #[arg(long)]
        name: String,
        /// MASTER or API.
        #[arg(long = "type")]
        kind: String,
        /// Account of an API application (default: the main account).
        #[arg(long)]
        account: Option<String>,
        /// Scope to grant (repeat); none means every scope of the type.
        #[arg(long = "scope")]
        scopes: Vec<String>,
        /// CIDR or address allowed to use the AppID (repeat); none means any.
        #[arg(long = "allow-ip")]
        allow_ips: Vec<String>,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create a platform SUPPORT user (features, withdraw key API, audit trail).
    CreateSupport {
        #[arg(long)]
        email: String,
        #[arg(long)]
        password: String,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Subcommand, Debug)]
pub enum AccountCommand {
    /// Enable or disable an account's withdraw key API (`/api/v1/pix-keys/withdraw`).
    WithdrawKeyApi {
        action: Switch,
        #[arg(long)]
        account: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum DictCommand {
    /// Import external directory entries from CSV (header row) or JSON lines
    /// (`.jsonl`/`.ndjson`); importing the same entries again changes nothing.
    Import {
        file: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
}

/// Benchmarks use a fresh temporary SQLite file unless a database was named; the
/// folder lives as long as the returned guard.
fn scratch_database(settings: &mut Settings, explicit: bool) -> anyhow::Result<tempfile::TempDir> {
    let scratch = tempfile::tempdir()?;
    if !explicit {
        settings.database.url = format!("sqlite://{}", scratch.path().join("bench.db").display());
    }
    Ok(scratch)
}

fn print(json: bool, value: serde_json::Value, text: impl FnOnce() -> String) {
    if json {
        println!("{value}");
    } else {
        println!("{}", text());
    }
}

async fn services(settings: &Settings) -> anyhow::Result<Services> {
    let store = Store::connect(&settings.database.url)
        .await
        .with_context(|| {
            format!(
                "connecting to {}",
                crate::store::redact(&settings.database.url)
            )
        })?;
    store.migrate().await.context("migrating the database")?;
    Ok(Services::new(store))
}

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let mut settings = Settings::load(cli.config.as_deref())?;
    let explicit_database = cli.database_url.is_some();
    if let Some(url) = cli.database_url {
        settings.database.url = url;
    }
    if !matches!(cli.command, Command::Serve { .. }) && std::env::var_os("RUST_LOG").is_none() {
        // One-shot commands print their result; only problems go to the log.
        settings.log.level = "warn".into();
    }
    crate::telemetry::init(&settings.log);
    match cli.command {
        Command::Serve { bind } => {
            if let Some(bind) = bind {
                settings.server.bind = bind;
            }
            let running = crate::start(settings).await?;
            tracing::info!(addr = %running.addr, "cofre listening");
            tokio::select! {
                served = running.task => served??,
                _ = tokio::signal::ctrl_c() => tracing::info!("shutting down"),
            }
        }
        Command::User(UserCommand::CreateSupport {
            email,
            password,
            out,
        }) => {
            let services = services(&settings).await?;
            let user = services
                .users
                .create_support(&email, &password)
                .await
                .map_err(|e| match e {
                    UserError::Validation(details) => {
                        anyhow::anyhow!("invalid {}", fields(&details))
                    }
                    other => anyhow::Error::new(other),
                })?;
            print(
                out.json,
                json!({ "userId": user.id, "email": user.email, "role": "SUPPORT" }),
                || format!("support user {} created", user.email),
            );
        }
        Command::Migrate(out) => {
            let services = services(&settings).await?;
            let applied = services.store.applied_migrations().await?;
            print(out.json, json!({ "migrations": applied }), || {
                format!("database is up to date ({} migrations)", applied.len())
            });
        }
        Command::Company(CompanyCommand::Create {
            name,
            tax_id,
            baas,
            admin_email,
            admin_password,
            out,
        }) => {
            let services = services(&settings).await?;
            let created = services
                .companies
                .create(NewCompany {
                    name,
                    tax_id,
                    baas,
                    admin_email,
                    admin_password,
                })
                .await
                .map_err(describe_company_error)?;
            let tax = created.company.tax_id.formatted();
            print(
                out.json,
                json!({
                    "companyId": created.company.id,
                    "mainAccountId": created.main_account_id,
                    "taxID": tax,
                }),
                || {
                    format!(
                        "company {} created; main account {}",
                        created.company.id, created.main_account_id
                    )
                },
            );
        }
        Command::Application(ApplicationCommand::Create {
            company,
            name,
            kind,
            account,
            scopes,
            allow_ips,
            out,
        }) => {
            let services = services(&settings).await?;
            let company = services
                .companies
                .get(&company)
                .await
                .map_err(|_| anyhow::anyhow!("company {company} not found"))?;
            let issued = services
                .applications
                .create(
                    &company,
                    NewApplication {
                        name: Some(name),
                        kind: Some(kind),
                        account_id: account,
                        scopes,
                        allowed_ips: allow_ips,
                    },
                )
                .await
                .map_err(describe_application_error)?;
            print(
                out.json,
                json!({
                    "appID": issued.app_id,
                    "clientId": issued.application.client_id,
                    "clientSecret": issued.client_secret,
                    "type": issued.application.kind.as_str(),
                    "companyBankAccount": issued.application.account_id,
                }),
                || format!("AppID (shown only now): {}", issued.app_id),
            );
        }
        Command::Feature {
            action,
            company,
            feature,
        } => {
            let feature: Feature = feature.parse()?;
            let services = services(&settings).await?;
            let on = matches!(action, Switch::Enable);
            services
                .companies
                .set_feature(&company, feature, on)
                .await
                .map_err(describe_company_error)?;
            println!(
                "feature {feature} {} for company {company}",
                if on { "enabled" } else { "disabled" }
            );
        }
        Command::Account(AccountCommand::WithdrawKeyApi { action, account }) => {
            let services = services(&settings).await?;
            let on = matches!(action, Switch::Enable);
            services
                .companies
                .set_withdraw_key_api(&account, on)
                .await
                .map_err(describe_company_error)?;
            println!(
                "withdraw key API {} for account {account}",
                if on { "enabled" } else { "disabled" }
            );
        }
        Command::Dict(DictCommand::Import { file, out }) => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let json_lines = file.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                e.eq_ignore_ascii_case("jsonl") || e.eq_ignore_ascii_case("ndjson")
            });
            let lines = directory::parse_import(&text, json_lines).map_err(|problems| {
                anyhow::anyhow!("nothing imported:\n{}", problems.join("\n"))
            })?;
            let services = services(&settings).await?;
            let report = services.directory.import(&lines).await?;
            print(out.json, serde_json::to_value(&report)?, || {
                format!(
                    "{} entries read: {} imported, {} already present",
                    report.read, report.imported, report.unchanged
                )
            });
        }
        Command::Webhook(WebhookCommand::RotateKey(out)) => {
            let services = services(&settings).await?;
            let key = services
                .webhooks
                .signer()
                .rotate(services.clock.now_millis())
                .await?;
            let all = services
                .webhooks
                .signer()
                .public_keys(services.clock.now_millis())
                .await?;
            print(
                out.json,
                json!({ "keyIdentifier": key.key_identifier, "publishedKeys": all.len() }),
                || {
                    format!(
                        "new current key {} ({} keys published)",
                        key.key_identifier,
                        all.len()
                    )
                },
            );
        }
        Command::Webhook(WebhookCommand::Resend { delivery_id, out }) => {
            let services = services(&settings).await?;
            let delivery = services.webhooks.resend(None, &delivery_id).await?;
            print(
                out.json,
                json!({ "deliveryId": delivery.row.id, "status": delivery.row.status }),
                || format!("delivery {} is due again", delivery.row.id),
            );
        }
        Command::Ledger(LedgerCommand::Verify(out)) => {
            let services = services(&settings).await?;
            let violations = crate::service::ledger::verify(&services.store).await?;
            print(
                out.json,
                json!({ "ok": violations.is_empty(), "violations": violations }),
                || {
                    if violations.is_empty() {
                        "ledger OK: every transaction balances and every balance equals its postings".into()
                    } else {
                        format!(
                            "{} violation(s):\n{}",
                            violations.len(),
                            violations.join("\n")
                        )
                    }
                },
            );
            if !violations.is_empty() {
                anyhow::bail!("the ledger has {} violation(s)", violations.len());
            }
        }
        Command::Bench(BenchCommand::PixIn {
            clients,
            requests,
            ceiling_seconds,
            out,
        }) => {
            let _scratch = scratch_database(&mut settings, explicit_database)?;
            let report = crate::bench::pix_in(
                settings,
                crate::bench::BenchOptions { clients, requests },
                ceiling_seconds,
            )
            .await?;
            print(out.json, serde_json::to_value(&report)?, || report.table());
        }
        Command::Bench(BenchCommand::Plugins {
            component,
            calls,
            out,
        }) => {
            let report =
                tokio::task::spawn_blocking(move || crate::bench::plugins(&component, calls))
                    .await??;
            print(out.json, serde_json::to_value(&report)?, || report.table());
        }
        Command::Bench(BenchCommand::Webhooks {
            events,
            loops,
            batch,
            out,
        }) => {
            let _scratch = scratch_database(&mut settings, explicit_database)?;
            let report = crate::bench::webhooks(settings, events, loops, batch).await?;
            print(out.json, serde_json::to_value(&report)?, || report.table());
        }
        Command::Bench(BenchCommand::Flood {
            seconds,
            flooders,
            b_per_second,
            out,
        }) => {
            let _scratch = scratch_database(&mut settings, explicit_database)?;
            let report = crate::bench::flood(settings, seconds, flooders, b_per_second).await?;
            print(out.json, serde_json::to_value(&report)?, || report.table());
        }
        Command::Bench(BenchCommand::Campaign {
            clients,
            requests,
            out,
        }) => {
            let _scratch = scratch_database(&mut settings, explicit_database)?;
            let report =
                crate::bench::campaign(settings, crate::bench::BenchOptions { clients, requests })
                    .await?;
            print(out.json, serde_json::to_value(&report)?, || report.table());
        }
        Command::Demo(out) => {
            let base_url = settings.public_url();
            let services = services(&settings).await?;
            let demo = demo::ensure(&services, &base_url).await?;
            print(out.json, serde_json::to_value(&demo)?, || {
                format!(
                    "Demo company {} ready.\n  Console: {}/login  ({} / {}; also {} without API_PLUGINS, and support {})\n  MASTER AppID: {}\n  Try: curl -H 'Authorization: {}' {}/api/v1/application/scopes",
                    demo.company_id,
                    demo.base_url,
                    demo.admin_email,
                    demo.admin_password,
                    demo.member_email,
                    demo.support_email,
                    demo.master_app_id,
                    demo.master_app_id,
                    demo.base_url
                )
            });
        }
    }
    Ok(())
}

fn fields(details: &[crate::service::FieldError]) -> String {
    details
        .iter()
        .map(|d| format!("{}: {:?}", d.field, d.problem))
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_company_error(err: crate::service::companies::CompanyError) -> anyhow::Error {
    match err {
        crate::service::companies::CompanyError::Validation(d) => {
            anyhow::anyhow!("invalid fields: {}", fields(&d))
        }
        other => anyhow::anyhow!(other),
    }
}

fn describe_application_error(
    err: crate::service::applications::ApplicationError,
) -> anyhow::Error {
    match err {
        crate::service::applications::ApplicationError::Validation(d) => {
            anyhow::anyhow!("invalid fields: {}", fields(&d))
        }
        other => anyhow::anyhow!(other),
    }
}
