//! Company rules as plugins: uploading and binding components, and running them at the
//! service layer's decision points through the sandboxed host (`plugins/host`).
//!
//! Failure policy per hook: the authorisation hooks (`authorize-withdraw`,
//! `check-pix-key`) deny with `PLUGIN_FAILED` when a plugin fails; the shaping hooks
//! (`shape-charge`, `shape-webhook`) go on as if the plugin had kept the input, and log.
//! A plugin only ever sees its own company's data: bindings are looked up by company.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;

use cofre_plugin_host::{
    ChargeDecision, ChargeDraft, Decision, EventDecision, Host, Limits, OutgoingEvent,
    PixKeyRequest, Plugin, PluginError, Withdrawal,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tracing::instrument;

use super::applications::Caller;
use super::clock::SharedClock;
use super::{FieldError, Page, PageInfo, Problem, Validation};
use crate::store::{
    self, Store, StoreError,
    plugins::{InvocationRow, PluginRow},
};

/// The hook points, as bindings name them.
pub const HOOKS: [&str; 4] = [
    "authorize-withdraw",
    "check-pix-key",
    "shape-charge",
    "shape-webhook",
];

/// Largest component accepted.
pub const MAX_COMPONENT_BYTES: usize = 10 * 1024 * 1024;

/// Which hook a plugin serves, for which accounts (`None`: all), with which configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    pub hook: String,
    pub accounts: Option<Vec<String>>,
    #[serde(default)]
    pub config: HashMap<String, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PluginsError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error(transparent)]
    Refused(PluginError),
    #[error("plugin not found")]
    NotFound,
    #[error("account not found")]
    AccountNotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A refusal by a company rule: the plugin's own code, or `PLUGIN_FAILED`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Denial {
    pub code: String,
    pub message: String,
}

#[derive(Clone, Debug)]
pub struct PluginView {
    pub row: PluginRow,
    pub bindings: Vec<Binding>,
}

#[derive(Clone)]
pub struct Plugins {
    store: Store,
    clock: SharedClock,
    limits: Limits,
    host: Arc<OnceLock<Arc<Host>>>,
    loaded: Arc<RwLock<HashMap<String, Plugin>>>,
}

impl std::fmt::Debug for Plugins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugins")
            .field("limits", &self.limits)
            .finish()
    }
}

fn bindings_of(row: &PluginRow) -> Result<Vec<Binding>, StoreError> {
    serde_json::from_str(&row.bindings)
        .map_err(|_| StoreError::Corrupt(format!("bindings of plugin {}", row.id)))
}

impl Plugins {
    pub fn new(store: Store, clock: SharedClock, limits: Limits) -> Self {
        Self {
            store,
            clock,
            limits,
            host: Arc::new(OnceLock::new()),
            loaded: Arc::new(RwLock::new(HashMap::new())),
        }
    }

    /// The process's host, made on first use (an engine and a ticker thread).
    fn host(&self) -> Result<Arc<Host>, PluginError> {
        if let Some(host) = self.host.get() {
            return Ok(host.clone());
        }
        let host = Arc::new(Host::new(self.limits)?);
        Ok(self.host.get_or_init(|| host).clone())
    }

    /// Validates the component (compiles and links it) before anything is saved.
    #[instrument(name = "service.plugins.upload", skip_all, fields(company_id = %caller.company_id))]
    pub async fn upload(
        &self,
        caller: &Caller,
        name: Option<&str>,
        version: Option<&str>,
        component: Vec<u8>,
    ) -> Result<PluginView, PluginsError> {
        let mut v = Validation::default();
        let name = v.text("name", name, 100);
        let version = v.text("version", version, 50);
        if component.is_empty() {
            v.add("file", Problem::Required);
        }
        v.finish().map_err(PluginsError::Validation)?;
        let host = self.host().map_err(PluginsError::Refused)?;
        let (label, bytes) = (name.clone(), component.clone());
        let ver = version.clone();
        let plugin = tokio::task::spawn_blocking(move || host.load(&label, &ver, &bytes))
            .await
            .map_err(|e| StoreError::Corrupt(e.to_string()))?
            .map_err(PluginsError::Refused)?;
        let row = PluginRow {
            id: store::new_id("plg"),
            company_id: caller.company_id.clone(),
            name,
            version,
            interface: plugin.interface.clone(),
            sha256: Sha256::digest(&component)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            bindings: "[]".into(),
            created_at: self.clock.now_millis(),
        };
        let mut tx = self.store.begin().await?;
        store::plugins::insert(&mut tx, &row, &component).await?;
        tx.commit().await.map_err(StoreError::from)?;
        self.loaded
            .write()
            .expect("plugin cache")
            .insert(row.id.clone(), plugin);
        Ok(PluginView {
            row,
            bindings: vec![],
        })
    }

    pub async fn list(&self, caller: &Caller) -> Result<Vec<PluginView>, PluginsError> {
        let rows = store::plugins::list(self.store.pool(), &caller.company_id).await?;
        rows.into_iter()
            .map(|row| {
                Ok(PluginView {
                    bindings: bindings_of(&row)?,
                    row,
                })
            })
            .collect()
    }

    async fn own(&self, caller: &Caller, id: &str) -> Result<PluginRow, PluginsError> {
        match store::plugins::get(self.store.pool(), id).await {
            Ok(row) if row.company_id == caller.company_id => Ok(row),
            Ok(_) | Err(StoreError::NotFound) => Err(PluginsError::NotFound),
            Err(e) => Err(e.into()),
        }
    }

    /// Replaces the plugin's bindings; every account named must be the company's.
    pub async fn set_bindings(
        &self,
        caller: &Caller,
        id: &str,
        bindings: Vec<Binding>,
    ) -> Result<PluginView, PluginsError> {
        let row = self.own(caller, id).await?;
        let mut v = Validation::default();
        for (i, b) in bindings.iter().enumerate() {
            if !HOOKS.contains(&b.hook.as_str()) {
                v.add(format!("bindings[{i}].hook"), Problem::UnknownValue);
            }
        }
        v.finish().map_err(PluginsError::Validation)?;
        for account in bindings.iter().flat_map(|b| b.accounts.iter().flatten()) {
            match store::accounts::get(self.store.pool(), account).await {
                Ok(a) if a.company_id == caller.company_id => {}
                Ok(_) | Err(StoreError::NotFound) => return Err(PluginsError::AccountNotFound),
                Err(e) => return Err(e.into()),
            }
        }
        let text = serde_json::to_string(&bindings).expect("bindings serialise");
        let mut tx = self.store.begin().await?;
        store::plugins::set_bindings(&mut tx, id, &text).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(PluginView {
            row: PluginRow {
                bindings: text,
                ..row
            },
            bindings,
        })
    }

    pub async fn delete(&self, caller: &Caller, id: &str) -> Result<(), PluginsError> {
        self.own(caller, id).await?;
        let mut tx = self.store.begin().await?;
        store::plugins::delete(&mut tx, id, self.clock.now_millis()).await?;
        tx.commit().await.map_err(StoreError::from)?;
        self.loaded.write().expect("plugin cache").remove(id);
        Ok(())
    }

    pub async fn invocations(
        &self,
        caller: &Caller,
        id: &str,
        page: Page,
    ) -> Result<(Vec<InvocationRow>, PageInfo), PluginsError> {
        self.own(caller, id).await?;
        let (rows, total) =
            store::plugins::invocations(self.store.pool(), id, page.skip, page.limit).await?;
        Ok((rows, page.info(total)))
    }

    /// Whether any plugin of the company is bound to `hook` (lets callers skip
    /// gathering a hook's input when no rule will read it).
    pub async fn any_bound(&self, company_id: &str, hook: &str) -> Result<bool, StoreError> {
        for row in store::plugins::list(self.store.pool(), company_id).await? {
            if bindings_of(&row)?.iter().any(|b| b.hook == hook) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The company's plugins bound to `hook` for `account` (`None`: bindings for all).
    async fn bound(
        &self,
        company_id: &str,
        account_id: Option<&str>,
        hook: &str,
    ) -> Result<Vec<(Plugin, PluginRow, HashMap<String, String>)>, StoreError> {
        let rows = store::plugins::list(self.store.pool(), company_id).await?;
        let mut out = Vec::new();
        for row in rows {
            let matching: Vec<Binding> = bindings_of(&row)?
                .into_iter()
                .filter(|b| b.hook == hook)
                .filter(|b| match (&b.accounts, account_id) {
                    (None, _) => true,
                    (Some(list), Some(a)) => list.iter().any(|x| x == a),
                    (Some(_), None) => false,
                })
                .collect();
            for binding in matching {
                match self.loaded_plugin(&row).await {
                    Ok(plugin) => out.push((plugin, row.clone(), binding.config)),
                    Err(err) => {
                        tracing::error!(plugin_id = %row.id, %err, "a stored plugin no longer loads")
                    }
                }
            }
        }
        Ok(out)
    }

    async fn loaded_plugin(&self, row: &PluginRow) -> Result<Plugin, String> {
        if let Some(p) = self.loaded.read().expect("plugin cache").get(&row.id) {
            return Ok(p.clone());
        }
        let bytes = store::plugins::component(self.store.pool(), &row.id)
            .await
            .map_err(|e| e.to_string())?;
        let host = self.host().map_err(|e| e.to_string())?;
        let (name, version) = (row.name.clone(), row.version.clone());
        let plugin = tokio::task::spawn_blocking(move || host.load(&name, &version, &bytes))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        self.loaded
            .write()
            .expect("plugin cache")
            .insert(row.id.clone(), plugin.clone());
        Ok(plugin)
    }

    /// Runs one call on the blocking pool and logs it.
    async fn run<T: Send + 'static>(
        &self,
        row: &PluginRow,
        hook: &str,
        call: impl FnOnce(&Host) -> Result<T, PluginError> + Send + 'static,
        describe: impl Fn(&T) -> (&'static str, Option<String>),
    ) -> Result<T, PluginError> {
        let host = self.host()?;
        let started = Instant::now();
        let result = tokio::task::spawn_blocking(move || call(&host))
            .await
            .unwrap_or_else(|e| Err(PluginError::Invalid(format!("plugin call panicked: {e}"))));
        let (decision, code, error) = match &result {
            Ok(value) => {
                let (d, c) = describe(value);
                (d, c, None)
            }
            Err(e) => ("ERROR", None, Some(e.to_string())),
        };
        let invocation = InvocationRow {
            id: store::new_id("inv"),
            plugin_id: row.id.clone(),
            company_id: row.company_id.clone(),
            hook: hook.into(),
            decision: decision.into(),
            code,
            duration_us: started.elapsed().as_micros() as i64,
            error,
            at: self.clock.now_millis(),
        };
        if let Err(err) = store::plugins::insert_invocation(self.store.pool(), &invocation).await {
            tracing::warn!(%err, "could not log a plugin invocation");
        }
        if let Err(err) = &result {
            tracing::warn!(plugin = %row.name, hook, %err, "plugin failed");
        }
        result
    }

    fn decision_label(
        d: &(Decision, Vec<cofre_plugin_host::LogLine>),
    ) -> (&'static str, Option<String>) {
        match &d.0 {
            Decision::Allow => ("ALLOW", None),
            Decision::Deny { code, .. } => ("DENY", Some(code.clone())),
        }
    }

    /// `authorize-withdraw`: every bound plugin must allow; a failing one denies.
    pub async fn authorize_withdraw(
        &self,
        company_id: &str,
        input: Withdrawal,
    ) -> Result<(), Denial> {
        self.authorize(
            company_id,
            &input.account_id.clone(),
            "authorize-withdraw",
            move |host, plugin, config| host.authorize_withdraw(plugin, config, &input),
        )
        .await
    }

    /// `check-pix-key`: every bound plugin must allow; a failing one denies.
    pub async fn check_pix_key(
        &self,
        company_id: &str,
        input: PixKeyRequest,
    ) -> Result<(), Denial> {
        self.authorize(
            company_id,
            &input.account_id.clone(),
            "check-pix-key",
            move |host, plugin, config| host.check_pix_key(plugin, config, &input),
        )
        .await
    }

    async fn authorize<F>(
        &self,
        company_id: &str,
        account_id: &str,
        hook: &'static str,
        call: F,
    ) -> Result<(), Denial>
    where
        F: Fn(
                &Host,
                &Plugin,
                &HashMap<String, String>,
            ) -> Result<(Decision, Vec<cofre_plugin_host::LogLine>), PluginError>
            + Send
            + Sync
            + Clone
            + 'static,
    {
        let bound = self
            .bound(company_id, Some(account_id), hook)
            .await
            .map_err(|e| Denial {
                code: "PLUGIN_FAILED".into(),
                message: format!("company rules could not be read: {e}"),
            })?;
        for (plugin, row, config) in bound {
            let call = call.clone();
            let outcome = self
                .run(
                    &row,
                    hook,
                    move |host| call(host, &plugin, &config),
                    Self::decision_label,
                )
                .await;
            match outcome {
                Ok((Decision::Allow, _)) => {}
                Ok((Decision::Deny { code, message }, _)) => return Err(Denial { code, message }),
                Err(err) => {
                    return Err(Denial {
                        code: "PLUGIN_FAILED".into(),
                        message: err.to_string(),
                    });
                }
            }
        }
        Ok(())
    }

    /// `shape-charge`: each bound plugin may change the draft or refuse it; a failing
    /// plugin leaves the draft as it was.
    pub async fn shape_charge(
        &self,
        company_id: &str,
        mut draft: ChargeDraft,
    ) -> Result<ChargeDraft, Denial> {
        let bound = self
            .bound(company_id, Some(&draft.account_id.clone()), "shape-charge")
            .await
            .unwrap_or_default();
        for (plugin, row, config) in bound {
            let input = draft.clone();
            let outcome = self
                .run(
                    &row,
                    "shape-charge",
                    move |host| host.shape_charge(&plugin, &config, &input),
                    |d| match &d.0 {
                        ChargeDecision::Keep(_) => ("KEEP", None),
                        ChargeDecision::Deny { code, .. } => ("DENY", Some(code.clone())),
                    },
                )
                .await;
            match outcome {
                Ok((ChargeDecision::Keep(shaped), _)) => draft = shaped,
                Ok((ChargeDecision::Deny { code, message }, _)) => {
                    return Err(Denial { code, message });
                }
                Err(_) => {}
            }
        }
        Ok(draft)
    }

    /// `shape-webhook` (bindings for all accounts): the payload to send, or `None` to
    /// send nothing. A failing plugin leaves the payload as it was.
    pub async fn shape_webhook(&self, company_id: &str, event: OutgoingEvent) -> Option<String> {
        let bound = self
            .bound(company_id, None, "shape-webhook")
            .await
            .unwrap_or_default();
        let mut payload = event.payload.clone();
        for (plugin, row, config) in bound {
            let input = OutgoingEvent {
                payload: payload.clone(),
                ..event.clone()
            };
            let outcome = self
                .run(
                    &row,
                    "shape-webhook",
                    move |host| host.shape_webhook(&plugin, &config, &input),
                    |d| match &d.0 {
                        EventDecision::Keep => ("KEEP", None),
                        EventDecision::Replace(_) => ("REPLACE", None),
                        EventDecision::Drop => ("DROP", None),
                    },
                )
                .await;
            match outcome {
                Ok((EventDecision::Replace(p), _))
                    if serde_json::from_str::<serde_json::Value>(&p).is_ok() =>
                {
                    payload = p
                }
                Ok((EventDecision::Drop, _)) => return None,
                _ => {}
            }
        }
        Some(payload)
    }
}
