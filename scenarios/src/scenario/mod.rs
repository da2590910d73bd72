//! Scenario files: what to run (ensemble, clients, recipe and workload),
//! which faults to inject, which checkers judge the history, and which seeds
//! to run by default. TOML, every field but `name` and `workload.recipe`
//! defaulted; unknown fields are errors that name the field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use zkdst_model::Exercised;

use serde::{Deserialize, Serialize};
use zkdst_checker::Params;

use crate::plan::{FaultKind, TimedFault};
use crate::variant::Variant;
use zkdst_sim::client::library_lock::LockPrefix;
use zkdst_sim::planted::SimBug;

mod ensemble;
mod validate;

/// A scenario as written in its file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub ensemble: Ensemble,
    pub workload: Workload,
    #[serde(default)]
    pub faults: Faults,
    #[serde(default)]
    pub check: Check,
    #[serde(default)]
    pub seeds: Seeds,
    #[serde(default)]
    pub expect: Expect,
    /// A measured figure reported rather than judged (e.g. the herd
    /// effect's notifications per release).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<Measure>,
}

/// A figure a checker measures, reported on every run; a run whose figure
/// is above `flag_above` counts as a detection for `zkdst bench bugs`,
/// never as a failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// `checker.figure`, e.g. `mutex.notifications_per_release`.
    pub figure: String,
    pub flag_above: f64,
}

/// The ensemble and its clients.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ensemble {
    pub servers: u32,
    /// ZooKeeper's tickTime.
    pub tick_ms: u64,
    /// The session timeout every client asks for.
    pub session_timeout_ms: u32,
    /// Number of client nodes running the workload.
    pub clients: u32,
    /// ZooKeeper's snapCount: a server snapshots after about this many
    /// transactions and purges the log behind its retained snapshots. Small
    /// values make restarts load snapshots and lagging followers get SNAP.
    pub snap_count: u32,
    /// Sequential names start this far past ZooKeeper's (the simulator's
    /// `PrepConfig::sequence_base`): near `2147483647` a run reaches the
    /// 32-bit wrap (ZOOKEEPER-4372) within a few hundred creates, where a
    /// real server needs 2^31. Stats (cversion) are unchanged.
    #[serde(skip_serializing_if = "is_zero_i32")]
    pub sequence_base: i32,
    /// How often the leader deletes empty containers (ZooKeeper's
    /// `znode.container.checkIntervalMs`, default 60 s: longer than most
    /// runs, so a scenario whose recipes make container parents
    /// (`workload.container_parents`) sets a shorter one).
    #[serde(skip_serializing_if = "is_default_container_check")]
    pub container_check_ms: u64,
    /// A planted simulator bug (`zkdst_sim::planted::SimBug`) to run in
    /// place of the correct server; needs a build with feature `planted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planted: Option<SimBug>,
    /// The client the workload's sessions use; unset, the build's own:
    /// `sim` in `zkdst`, `wire` in `zkdst-wire` (see [`Scenario::client`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<Client>,
}

zkdst_model::words! {
    /// The client a workload's sessions use.
    pub enum Client {
        /// zkdst's simulated client: typed requests, no bytes.
        Sim = "sim",
        /// The client library a `zkdst-wire` build installs (zookeeper-client
        /// 0.11, unmodified), speaking ZooKeeper's wire protocol to the
        /// simulated servers.
        Wire = "wire",
    }
}

impl Default for Ensemble {
    fn default() -> Self {
        Ensemble {
            servers: 3,
            tick_ms: 500,
            session_timeout_ms: 4000,
            clients: 5,
            snap_count: zkdst_sim::zab::ZabConfig::default().snap_count,
            sequence_base: 0,
            container_check_ms: DEFAULT_CONTAINER_CHECK_MS,
            planted: None,
            client: None,
        }
    }
}

zkdst_model::words! {
    /// The recipe under test.
    pub enum Recipe {
        /// No recipe: raw ZooKeeper calls (service-level scenarios).
        Ensemble = "ensemble",
        Lock = "lock",
        Rwlock = "rwlock",
        /// The read/write lock with revocation: waiters ask holders to release.
        RevocableLock = "revocable-lock",
        /// The exclusive lock with revocation (Curator's revocable mutex).
        RevocableMutex = "revocable-mutex",
        Semaphore = "semaphore",
        Queue = "queue",
        PriorityQueue = "priority-queue",
        Election = "election",
        LeaderLatch = "leader-latch",
        Barrier = "barrier",
        DoubleBarrier = "double-barrier",
        Counter = "counter",
        Membership = "membership",
        Config = "config",
        TwoPhaseCommit = "two-phase-commit",
        /// The client library's own lock (zookeeper-client's `Client::lock`),
        /// judged as a lock: only through the wire (`zkdst-wire`).
        LibraryLock = "library-lock",
    }
}

/// How a queue consumer takes items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Consumer {
    #[default]
    AtMostOnce,
    AtLeastOnce,
}

/// The workload: which recipe, how hard, how long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub recipe: Recipe,
    /// Simulated seconds of workload under faults.
    #[serde(default = "d_duration")]
    pub duration_s: u64,
    /// Simulated seconds the workload keeps running after everything healed
    /// (the liveness phase).
    #[serde(default = "d_liveness")]
    pub liveness_s: u64,
    /// Pause between a client's operations, ms (uniform in the range).
    #[serde(default = "d_think")]
    pub think_ms: [u64; 2],
    /// How long a holder holds (lock, lease, leadership, claimed item), ms.
    #[serde(default = "d_hold")]
    pub hold_ms: [u64; 2],
    /// At most this many recipe operations per client (None: unbounded).
    #[serde(default)]
    pub max_ops_per_client: Option<u64>,
    /// Queue: how consumers take items.
    #[serde(default)]
    pub consumer: Consumer,
    /// Queue: how many of the clients produce (the others consume).
    #[serde(default)]
    pub producers: Option<u32>,
    /// Semaphore: number of leases.
    #[serde(default = "d_permits")]
    pub permits: u32,
    /// Two-phase commit: probability a site votes commit.
    #[serde(default = "d_commit_p")]
    pub commit_probability: f64,
    /// A planted (deliberately broken) type to run in place of the correct
    /// recipe, named as in `zkdst_recipes::planted`; absent: the correct one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
    /// An external workload: a command run once per seed against the
    /// served ensemble (`sh -c`, from the directory zkdst runs in), which
    /// writes its operation record where `ZKDST_RECORD` says (see
    /// `serve::external`). Absent: the recipe's own Rust workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<String>,
    /// Library lock: how the library names its lock nodes (`curator`, the
    /// default, or `shared`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_prefix: Option<LockPrefix>,
    /// Lock: during the fault phase an acquire gives up after this long (a
    /// cancelled acquire); after the heal acquires block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquire_timeout_ms: Option<u64>,
    /// Lock, rwlock, revocable lock, semaphore and election: the share of
    /// acquires (campaigns) that give up after a wait drawn from 10 ms to
    /// half the session timeout, as applications with a deadline do: the
    /// waiter's node vanishes without it ever holding.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub give_up: f64,
    /// Lock: the share of holds that last 1.5 to 3 session timeouts
    /// (during the fault phase), writing every 50-300 ms while the guard
    /// says held: long enough for a holder's session to end, and its client
    /// to hear so, mid-hold. At-least-once queue: the share of claims
    /// processed that long, the processor asking its claim every 50-300 ms.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub long_hold: f64,
    /// Lock: what a holder does when its connection drops.
    #[serde(default, skip_serializing_if = "OnDisconnect::is_keep")]
    pub on_disconnect: OnDisconnect,
    /// Membership: run a partitioner over this many partitions (members
    /// stay joined and write to the partitions their view assigns them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u32>,
    /// The recipes' retry budget (attempts per call that may end in
    /// ConnectionLoss, the first included): each seed draws one of these
    /// for all its clients, as applications configure small budgets and
    /// large ones — a small one reaches the paths where a call gives up
    /// on a live session. Empty: the recipes' default (20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry_attempts: Vec<u32>,
    /// The share of seeds whose applications create their recipes'
    /// directories as containers (Curator's
    /// `creatingParentContainersIfNeeded`), which the leader deletes once
    /// emptied (every `ensemble.container_check_ms`); the other seeds
    /// create them persistent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub container_parents: f64,
}

/// What a lock holder does when its connection drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnDisconnect {
    /// Keep the handle and the hold (the recipe deals with it).
    #[default]
    Keep,
    /// Distrust the handle: open a new session, acquire again on it, and
    /// close the old handle a second later (CURATOR-696's application).
    NewSession,
}

impl OnDisconnect {
    fn is_keep(&self) -> bool {
        *self == OnDisconnect::Keep
    }
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_zero_i32(n: &i32) -> bool {
    *n == 0
}

/// ZooKeeper's `znode.container.checkIntervalMs` default.
pub const DEFAULT_CONTAINER_CHECK_MS: u64 = 60_000;

fn is_default_container_check(ms: &u64) -> bool {
    *ms == DEFAULT_CONTAINER_CHECK_MS
}

fn d_duration() -> u64 {
    30
}
fn d_liveness() -> u64 {
    10
}
fn d_think() -> [u64; 2] {
    [5, 50]
}
fn d_hold() -> [u64; 2] {
    [1, 40]
}
fn d_permits() -> u32 {
    2
}
fn d_commit_p() -> f64 {
    0.8
}

/// How faults are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultMode {
    /// Per seed: each kind is enabled with its swarm probability, then
    /// faults are drawn from the enabled kinds (TigerBeetle's swarm testing).
    #[default]
    Swarm,
    /// The explicit `plan` below, for every seed.
    Plan,
    /// No faults.
    None,
}

/// The faults of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    pub mode: FaultMode,
    /// Time between two fault starts, ms.
    pub interval_ms: [u64; 2],
    /// How long a fault lasts before it is undone, ms.
    pub duration_ms: [u64; 2],
    /// Swarm: probability that each kind is enabled for a seed. Kinds not
    /// listed are disabled.
    pub swarm: BTreeMap<FaultKind, f64>,
    /// Plan: the explicit timed faults.
    pub plan: Vec<TimedFault>,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            mode: FaultMode::Swarm,
            interval_ms: [1000, 4000],
            duration_ms: [500, 6000],
            swarm: FaultKind::ALL.iter().map(|k| (*k, 0.5)).collect(),
            plan: Vec::new(),
        }
    }
}

/// Checkers every scenario runs, whether or not its file lists them: the
/// replicas agree, no recipe call says "session lost" of a live session,
/// none fails with bad data or an invalid argument, and the servers fire
/// every one-shot watch the recipes set, once, in order with the replies
/// (`progress` is run on every seed by the runner).
pub const ALWAYS_CHECKED: [&str; 4] = ["replicas", "session-lost", "recipe-errors", "watches"];

/// What every scenario run through a client library (`client = "wire"`)
/// adds: the library's protocol promises, judged from the servers' record
/// of its connections.
pub const WIRE_CHECKED: &str = "client-protocol";

/// The judges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Check {
    /// Checker registry names (`zkdst list` shows them).
    pub checkers: Vec<String>,
    pub params: Params,
    /// After the heal, at least this many recipe operations must succeed.
    pub min_progress: u64,
}

impl Default for Check {
    fn default() -> Self {
        Check {
            checkers: vec!["liveness".into()],
            params: Params {
                liveness_bound_ms: 20_000,
                ..Params::default()
            },
            min_progress: 1,
        }
    }
}

/// The default seed range `start..start+count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Seeds {
    pub start: u64,
    pub count: u64,
    /// Seeds the cargo test runs (fewer for heavy scenarios).
    pub test_count: u64,
}

impl Default for Seeds {
    fn default() -> Self {
        Seeds {
            start: 0,
            count: 1000,
            test_count: 50,
        }
    }
}

/// What a campaign must have exercised: stat name → minimum total over the
/// campaign (e.g. `"fault.kill-leader" = 1`, `"expiry-while-holding" = 1`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Expect {
    pub min: BTreeMap<Exercised, u64>,
}

/// Why a scenario file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot read: {message}")]
    Io { file: String, message: String },
    #[error("{file}: field `{field}`: {message}")]
    Field {
        file: String,
        field: String,
        message: String,
    },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
}

impl Scenario {
    /// The client the workload's sessions use: the file's `[ensemble]
    /// client`, else the build's own — `wire` where a client library is
    /// installed (`zkdst-wire`), `sim` elsewhere.
    pub fn client(&self) -> Client {
        self.ensemble
            .client
            .unwrap_or(match zkdst_sim::client::library::library() {
                Some(_) => Client::Wire,
                None => Client::Sim,
            })
    }

    /// Scenario text as its types; `file` names it in errors.
    /// `Scenario::parse` (in resolve.rs) validates it and completes it
    /// from the registry.
    pub(crate) fn decode(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::parse(text).map_err(|e| ScenarioError::Invalid {
            file: file.to_string(),
            message: e.to_string().trim().to_string(),
        })?;
        let s: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = e.path().to_string();
            let inner = e.into_inner();
            ScenarioError::Field {
                file: file.to_string(),
                field,
                message: inner.message().trim().to_string(),
            }
        })?;
        Ok(s)
    }

    /// The same scenario running the correct recipe (the planted
    /// scenario's twin, which must pass the seeds the planted one fails).
    pub fn correct_twin(&self) -> Scenario {
        let mut s = self.clone();
        if s.workload.variant.take().is_some() | s.ensemble.planted.take().is_some() {
            s.name = format!("{} (correct)", s.name);
        }
        s
    }

    /// The measured figure of a run's results, if the scenario measures one.
    pub fn measured(&self, results: &[zkdst_checker::properties::CheckResult]) -> Option<f64> {
        let m = self.measure.as_ref()?;
        let (checker, figure) = m.figure.split_once('.')?;
        results
            .iter()
            .find(|r| r.checker == checker)
            .and_then(|r| r.figures.get(figure).copied())
    }

    /// A stable hash of the scenario's content (for repro lines).
    pub fn hash(&self) -> String {
        short_hash(&serde_json::to_vec(self).unwrap_or_default())
    }

    /// Simulated time from the workload start to the heal.
    pub fn fault_phase_ms(&self) -> u64 {
        self.workload.duration_s * 1000
    }
}

pub use crate::hash::short_hash;

/// The regression seeds' file (`zkdst regress`), beside the shipped
/// scenarios but not one of them.
pub const REGRESSIONS_FILE: &str = "scenarios/regressions.toml";

/// The scenario files shipped in `scenarios/` (next to this crate).
pub fn shipped_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether scenario text (already parsed once) names its checkers.
pub(crate) fn names_checkers(text: &str) -> bool {
    text.parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("check")?.get("checkers").cloned())
        .is_some()
}

/// Every shipped scenario file, sorted by name (the regression seeds'
/// file beside them is not a scenario).
pub fn shipped() -> Vec<PathBuf> {
    let regressions = Path::new(REGRESSIONS_FILE).file_name();
    let mut v = toml_files(&shipped_dir());
    v.retain(|p| p.file_name() != regressions);
    v
}

/// The planted-bug scenarios (`scenarios/planted/`), sorted by name: each
/// runs a planted type and is expected to FAIL. Planted simulator bugs
/// (`sim-*.toml`) only in a build with feature `planted`.
pub fn planted() -> Vec<PathBuf> {
    let mut v = toml_files(&shipped_dir().join("planted"));
    if !zkdst_sim::planted::ENABLED {
        v.retain(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("sim-"))
        });
    }
    v
}

fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension().is_some_and(|x| x == "toml") && p.file_name().is_some_and(|n| n != "Cargo.toml")
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[cfg(test)]
mod tests;
