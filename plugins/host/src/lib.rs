//! The plugin host: runs company rules as sandboxed WebAssembly components.
//!
//! One [`Host`] per process holds the wasmtime engine (component model, pooling
//! allocator, epoch interruption) and a ticker thread. A [`Plugin`] is a validated,
//! pre-linked component (`InstancePre`) of one released interface version; every call
//! gets a fresh store with a memory limit and an epoch deadline, and WASI imports that
//! grant nothing (no files, no network, no environment, a clock frozen at zero). A
//! plugin that traps, runs past its deadline or asks for too much memory gives a typed
//! [`PluginError`] naming it; the process keeps running.

mod v0_1_0;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter, Store,
};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// The interface versions this host runs, newest last.
pub const SUPPORTED_VERSIONS: &[&str] = &["0.1.0"];

/// Sandbox limits of every call.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub memory_bytes: usize,
    pub deadline: Duration,
    /// Calls that may run at once (pooling allocator slots).
    pub concurrent_calls: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_bytes: 16 * 1024 * 1024,
            deadline: Duration::from_millis(10),
            concurrent_calls: 64,
        }
    }
}

/// Why a plugin could not be loaded or did not answer.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("not a WebAssembly component of the cofre:rules interface: {0}")]
    Invalid(String),
    #[error("plugin built for interface version {0}, which this host does not run (runs {versions})", versions = SUPPORTED_VERSIONS.join(", "))]
    UnsupportedVersion(String),
    #[error("plugin {plugin} trapped: {message}")]
    Trap { plugin: String, message: String },
    #[error("plugin {plugin} ran past its deadline of {deadline_ms} ms")]
    Timeout { plugin: String, deadline_ms: u64 },
    #[error("plugin {plugin} asked for more than {limit_bytes} bytes of memory")]
    MemoryExceeded { plugin: String, limit_bytes: usize },
}

/// A hook's answer: go on, or refuse with a stable code and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny { code: String, message: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Withdrawal {
    pub now_ms: i64,
    pub account_id: String,
    pub value: i64,
    pub withdraw_key: String,
    pub withdraw_key_type: String,
    pub available: i64,
    pub blocked: i64,
    pub recent_withdrawals_ms: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PixKeyRequest {
    pub now_ms: i64,
    pub account_id: String,
    pub key: String,
    pub key_type: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChargeDraft {
    pub now_ms: i64,
    pub account_id: String,
    pub correlation_id: String,
    pub value: i64,
    pub comment: Option<String>,
    pub expires_in: i64,
    pub additional_info: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChargeDecision {
    Keep(ChargeDraft),
    Deny { code: String, message: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutgoingEvent {
    pub now_ms: i64,
    pub event: String,
    pub payload: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventDecision {
    Keep,
    Replace(String),
    Drop,
}

/// A log line a plugin wrote through the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    pub level: String,
    pub message: String,
}

/// Per-call state of a store: WASI that grants nothing, the plugin's configuration, the
/// memory limiter and what the plugin logged.
pub(crate) struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryLimiter,
    pub(crate) config: HashMap<String, String>,
    pub(crate) logs: Vec<LogLine>,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Refuses memory growth past the limit and remembers that it did.
struct MemoryLimiter {
    limit: usize,
    denied: Arc<AtomicBool>,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.denied.store(true, Ordering::Relaxed);
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

/// A clock that never moves: plugins learn time only from their inputs.
struct FrozenClock;

impl wasmtime_wasi::HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl wasmtime_wasi::HostMonotonicClock for FrozenClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// The engine, linkers and ticker of one process.
pub struct Host {
    engine: Engine,
    linker: Linker<State>,
    limits: Limits,
    ticks_per_deadline: u64,
    stop: Arc<AtomicBool>,
}

/// Epoch tick length: deadlines are counted in these.
const TICK: Duration = Duration::from_millis(1);

impl Host {
    pub fn new(limits: Limits) -> Result<Self, PluginError> {
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(limits.concurrent_calls)
            .total_core_instances(limits.concurrent_calls * 4)
            .total_memories(limits.concurrent_calls * 2)
            .total_tables(limits.concurrent_calls * 4)
            .max_memory_size(limits.memory_bytes);
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            .memory_reservation(limits.memory_bytes as u64)
            .memory_guard_size(64 * 1024)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine =
            Engine::new(&config).map_err(|e| PluginError::Invalid(format!("engine: {e}")))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| PluginError::Invalid(e.to_string()))?;
        v0_1_0::add_to_linker(&mut linker).map_err(|e| PluginError::Invalid(e.to_string()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let ticker_engine = engine.clone();
        let ticker_stop = stop.clone();
        std::thread::Builder::new()
            .name("cofre-plugin-epoch".into())
            .spawn(move || {
                while !ticker_stop.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    ticker_engine.increment_epoch();
                }
            })
            .map_err(|e| PluginError::Invalid(format!("epoch ticker: {e}")))?;
        let ticks_per_deadline = (limits.deadline.as_micros() / TICK.as_micros()).max(1) as u64;
        Ok(Self {
            engine,
            linker,
            limits,
            ticks_per_deadline,
            stop,
        })
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Compiles and validates a component and links it against the interface version
    /// it was built for. Nothing is kept if this fails.
    pub fn load(&self, name: &str, version: &str, bytes: &[u8]) -> Result<Plugin, PluginError> {
        let component = Component::new(&self.engine, bytes)
            .map_err(|e| PluginError::Invalid(format!("{e:#}")))?;
        let interface = interface_version(&self.engine, &component)?;
        let runner = match interface.as_str() {
            "0.1.0" => v0_1_0::Runner::new(&self.linker, &component)?,
            other => return Err(PluginError::UnsupportedVersion(other.to_owned())),
        };
        Ok(Plugin {
            name: format!("{name}@{version}"),
            interface,
            runner: Arc::new(runner),
        })
    }

    fn store(&self, config: &HashMap<String, String>) -> (Store<State>, Arc<AtomicBool>) {
        let denied = Arc::new(AtomicBool::new(false));
        let wasi = WasiCtx::builder()
            .wall_clock(FrozenClock)
            .monotonic_clock(FrozenClock)
            .build();
        let state = State {
            wasi,
            table: ResourceTable::new(),
            limiter: MemoryLimiter {
                limit: self.limits.memory_bytes,
                denied: denied.clone(),
            },
            config: config.clone(),
            logs: Vec::new(),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limiter);
        store.set_epoch_deadline(self.ticks_per_deadline);
        store.epoch_deadline_trap();
        (store, denied)
    }

    /// Turns a wasmtime failure into the typed error, naming the plugin.
    fn failure(&self, plugin: &Plugin, err: wasmtime::Error, memory_denied: bool) -> PluginError {
        if memory_denied {
            return PluginError::MemoryExceeded {
                plugin: plugin.name.clone(),
                limit_bytes: self.limits.memory_bytes,
            };
        }
        if let Some(wasmtime::Trap::Interrupt) = err.downcast_ref::<wasmtime::Trap>() {
            return PluginError::Timeout {
                plugin: plugin.name.clone(),
                deadline_ms: self.limits.deadline.as_millis() as u64,
            };
        }
        PluginError::Trap {
            plugin: plugin.name.clone(),
            message: format!("{err:#}"),
        }
    }

    pub fn authorize_withdraw(
        &self,
        plugin: &Plugin,
        config: &HashMap<String, String>,
        input: &Withdrawal,
    ) -> Result<(Decision, Vec<LogLine>), PluginError> {
        let (mut store, denied) = self.store(config);
        let result = plugin.runner.authorize_withdraw(&mut store, input);
        self.finish(plugin, store, denied, result)
    }

    pub fn check_pix_key(
        &self,
        plugin: &Plugin,
        config: &HashMap<String, String>,
        input: &PixKeyRequest,
    ) -> Result<(Decision, Vec<LogLine>), PluginError> {
        let (mut store, denied) = self.store(config);
        let result = plugin.runner.check_pix_key(&mut store, input);
        self.finish(plugin, store, denied, result)
    }

    pub fn shape_charge(
        &self,
        plugin: &Plugin,
        config: &HashMap<String, String>,
        input: &ChargeDraft,
    ) -> Result<(ChargeDecision, Vec<LogLine>), PluginError> {
        let (mut store, denied) = self.store(config);
        let result = plugin.runner.shape_charge(&mut store, input);
        self.finish(plugin, store, denied, result)
    }

    pub fn shape_webhook(
        &self,
        plugin: &Plugin,
        config: &HashMap<String, String>,
        input: &OutgoingEvent,
    ) -> Result<(EventDecision, Vec<LogLine>), PluginError> {
        let (mut store, denied) = self.store(config);
        let result = plugin.runner.shape_webhook(&mut store, input);
        self.finish(plugin, store, denied, result)
    }

    fn finish<T>(
        &self,
        plugin: &Plugin,
        store: Store<State>,
        denied: Arc<AtomicBool>,
        result: wasmtime::Result<T>,
    ) -> Result<(T, Vec<LogLine>), PluginError> {
        match result {
            Ok(value) => Ok((value, store.into_data().logs)),
            Err(err) => Err(self.failure(plugin, err, denied.load(Ordering::Relaxed))),
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The interface version a component was built for: the version of the `cofre:rules`
/// interfaces it imports (`cofre:rules/types@0.1.0`, `cofre:rules/host@0.1.0`).
fn interface_version(engine: &Engine, component: &Component) -> Result<String, PluginError> {
    let ty = component.component_type();
    let version = ty.imports(engine).find_map(|(name, _)| {
        name.strip_prefix("cofre:rules/")
            .and_then(|rest| rest.split_once('@'))
            .map(|(_, v)| v.to_owned())
    });
    version.ok_or_else(|| {
        PluginError::Invalid("the component imports no cofre:rules interface".into())
    })
}

/// A loaded plugin: cheap to clone, shared by every call.
#[derive(Clone)]
pub struct Plugin {
    /// `name@version`, as errors name it.
    pub name: String,
    /// The interface version it was built for.
    pub interface: String,
    runner: Arc<dyn Runner>,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("name", &self.name)
            .field("interface", &self.interface)
            .finish()
    }
}

/// One released interface version's bindings.
pub(crate) trait Runner: Send + Sync {
    fn authorize_withdraw(
        &self,
        store: &mut Store<State>,
        input: &Withdrawal,
    ) -> wasmtime::Result<Decision>;
    fn check_pix_key(
        &self,
        store: &mut Store<State>,
        input: &PixKeyRequest,
    ) -> wasmtime::Result<Decision>;
    fn shape_charge(
        &self,
        store: &mut Store<State>,
        input: &ChargeDraft,
    ) -> wasmtime::Result<ChargeDecision>;
    fn shape_webhook(
        &self,
        store: &mut Store<State>,
        input: &OutgoingEvent,
    ) -> wasmtime::Result<EventDecision>;
}
