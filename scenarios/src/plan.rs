//! Fault plans: an explicit, serializable list of timed faults, derived
//! from the seed through its own ChaCha stream (so a different workload
//! does not reshuffle the faults), printable and shrinkable.

use std::fmt;

use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::PlanError;
use crate::scenario::{FaultMode, Scenario};
use crate::streams::stream;

/// A node of the simulation as a plan names it: `zk1`, `client3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Node {
    Server(u32),
    Client(u32),
}

impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Node::Server(s) => write!(f, "zk{s}"),
            Node::Client(c) => write!(f, "client{c}"),
        }
    }
}

impl From<Node> for String {
    fn from(n: Node) -> String {
        n.to_string()
    }
}

impl TryFrom<String> for Node {
    type Error = String;
    fn try_from(s: String) -> Result<Node, String> {
        let bad = || format!("expected a node like \"zk1\" or \"client0\", found {s:?}");
        if let Some(n) = s.strip_prefix("zk") {
            n.parse().map(Node::Server).map_err(|_| bad())
        } else if let Some(n) = s.strip_prefix("client") {
            n.parse().map(Node::Client).map_err(|_| bad())
        } else {
            Err(bad())
        }
    }
}

pub use zkdst_model::FaultKind;

/// One concrete fault. Targets are fixed when the plan is made, except the
/// leader, which is whoever leads when the fault fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Fault {
    /// Nodes split into groups that cannot talk to each other.
    PartitionHalves { groups: Vec<Vec<Node>> },
    /// The current leader cut off from every other node.
    IsolateLeader,
    /// Servers in a ring (this order): each sees its two neighbours only —
    /// every server sees a majority (with 3 servers: everybody), no two
    /// servers the same one.
    MajoritiesRing { order: Vec<u32> },
    /// Two halves joined only through the first server of `order`'s middle.
    Bridge { order: Vec<u32> },
    /// Traffic from `from` to `to` dropped (one direction).
    OneWayCut { from: Node, to: Node },
    /// A client cut from some servers (both directions).
    ClientCut { client: u32, servers: Vec<u32> },
    /// The leader killed (restarted after the fault's duration).
    KillLeader { lose_unsynced: bool },
    /// A server killed (restarted after the fault's duration).
    KillServer { server: u32, lose_unsynced: bool },
    /// A client's TCP connection closed (it reconnects).
    DropConnection { client: u32 },
    /// A client's next write is applied but its reply lost (ZOOKEEPER-22).
    LoseReply { client: u32 },
    /// A client partitioned from every server past its session timeout.
    ExpireSession { client: u32 },
    /// A node paused (stop-the-world), resumed after the duration.
    Pause { node: Node },
    /// Every link's latency raised, restored after the duration.
    LatencySpike { min_ms: u64, max_ms: u64 },
    /// An operator deletes the recipe's directory `path` (a session on
    /// client node `client`, outside the workload's), retrying while it is
    /// not empty, for at most the duration: the recipe must recreate it.
    DeleteRecipeDir { path: String, client: u32 },
}

impl Fault {
    /// The kind of this fault.
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::PartitionHalves { .. } => FaultKind::PartitionHalves,
            Fault::IsolateLeader => FaultKind::IsolateLeader,
            Fault::MajoritiesRing { .. } => FaultKind::MajoritiesRing,
            Fault::Bridge { .. } => FaultKind::Bridge,
            Fault::OneWayCut { .. } => FaultKind::OneWayCut,
            Fault::ClientCut { .. } => FaultKind::ClientCut,
            Fault::KillLeader { .. } => FaultKind::KillLeader,
            Fault::KillServer { .. } => FaultKind::KillServer,
            Fault::DropConnection { .. } => FaultKind::DropConnection,
            Fault::LoseReply { .. } => FaultKind::LoseReply,
            Fault::ExpireSession { .. } => FaultKind::ExpireSession,
            Fault::Pause { node: Node::Client(_) } => FaultKind::PauseClient,
            Fault::Pause { node: Node::Server(_) } => FaultKind::PauseServer,
            Fault::LatencySpike { .. } => FaultKind::LatencySpike,
            Fault::DeleteRecipeDir { .. } => FaultKind::DeleteRecipeDir,
        }
    }

    /// The stat name of this fault (`fault.kill-leader`).
    pub fn kind_name(&self) -> &'static str {
        self.kind().name()
    }

    /// True for faults that happen at an instant (nothing to undo).
    pub fn is_instant(&self) -> bool {
        matches!(self, Fault::DropConnection { .. } | Fault::LoseReply { .. })
    }
}

/// A fault at a time (ms after the workload started), undone after
/// `duration_ms` (0 for instant faults).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedFault {
    pub at_ms: u64,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(flatten)]
    pub fault: Fault,
}

/// The faults of one run, plus the workload size (what `shrink` reduces).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FaultPlan {
    pub faults: Vec<TimedFault>,
    /// Caps each client's recipe operations (shrinking the workload).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ops_per_client: Option<u64>,
}

impl FaultPlan {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn from_json(text: &str, file: &str) -> Result<FaultPlan, PlanError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| PlanError {
            file: file.to_string(),
            field: e.path().to_string(),
            message: e.inner().to_string(),
        })
    }

    pub fn hash(&self) -> String {
        crate::scenario::short_hash(&serde_json::to_vec(self).unwrap_or_default())
    }

    /// The plan a seed gets under a scenario.
    pub fn generate(scenario: &Scenario, seed: u64) -> FaultPlan {
        let f = &scenario.faults;
        let faults = match f.mode {
            FaultMode::None => Vec::new(),
            FaultMode::Plan => f.plan.clone(),
            FaultMode::Swarm => swarm(scenario, seed),
        };
        FaultPlan {
            faults,
            max_ops_per_client: scenario.workload.max_ops_per_client,
        }
    }
}

impl fmt::Display for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.faults.is_empty() {
            writeln!(f, "(no faults)")?;
        }
        for t in &self.faults {
            let body = serde_json::to_value(&t.fault)
                .ok()
                .and_then(|v| v.as_object().cloned())
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| k.as_str() != "kind")
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            let dur = if t.fault.is_instant() {
                String::new()
            } else {
                format!(" for {} ms", t.duration_ms)
            };
            writeln!(f, "{:>7} ms  {}{dur}  {body}", t.at_ms, t.fault.kind_name())?;
        }
        if let Some(n) = self.max_ops_per_client {
            writeln!(f, "workload capped at {n} ops per client")?;
        }
        Ok(())
    }
}

fn pick<T: Copy>(rng: &mut impl Rng, v: &[T]) -> T {
    v[rng.gen_range(0..v.len())]
}

fn range(rng: &mut impl Rng, r: [u64; 2]) -> u64 {
    if r[0] >= r[1] {
        r[0]
    } else {
        rng.gen_range(r[0]..=r[1])
    }
}

/// Swarm testing: per seed, each kind is on with its probability; the
/// seed's fault rate is drawn too; then faults are drawn from the kinds on.
fn swarm(scenario: &Scenario, seed: u64) -> Vec<TimedFault> {
    let mut rng = stream(seed, "faults");
    let f = &scenario.faults;
    let enabled: Vec<FaultKind> = f
        .swarm
        .iter()
        .filter(|(_, p)| **p > 0.0 && rng.gen_bool(p.clamp(0.0, 1.0)))
        .map(|(k, _)| *k)
        .collect();
    if enabled.is_empty() {
        return Vec::new();
    }
    let servers: Vec<u32> = (1..=scenario.ensemble.servers).collect();
    let clients: Vec<u32> = (0..scenario.ensemble.clients).collect();
    let timeout = scenario.ensemble.session_timeout_ms as u64;
    // The seed's rate: somewhere between the scenario's min and max interval.
    let lo = range(&mut rng, f.interval_ms);
    let hi = lo.max(range(&mut rng, [lo, f.interval_ms[1]]));
    let end = scenario.fault_phase_ms();
    let mut out = Vec::new();
    let mut t = range(&mut rng, [lo, hi]);
    while t < end {
        let kind = pick(&mut rng, &enabled);
        let mut duration = range(&mut rng, f.duration_ms);
        let fault = match kind {
            FaultKind::PartitionHalves => {
                let mut nodes: Vec<Node> = servers
                    .iter()
                    .map(|s| Node::Server(*s))
                    .chain(clients.iter().map(|c| Node::Client(*c)))
                    .collect();
                nodes.shuffle(&mut rng);
                let cut = rng.gen_range(1..nodes.len().max(2));
                let (a, b) = nodes.split_at(cut.min(nodes.len()));
                let mut a = a.to_vec();
                let mut b = b.to_vec();
                a.sort();
                b.sort();
                Fault::PartitionHalves { groups: vec![a, b] }
            }
            FaultKind::IsolateLeader => Fault::IsolateLeader,
            FaultKind::MajoritiesRing => {
                let mut order = servers.clone();
                order.shuffle(&mut rng);
                Fault::MajoritiesRing { order }
            }
            FaultKind::Bridge => {
                let mut order = servers.clone();
                order.shuffle(&mut rng);
                Fault::Bridge { order }
            }
            FaultKind::OneWayCut => {
                let a = pick(&mut rng, &servers);
                let to_client = rng.gen_bool(0.3);
                if to_client {
                    let c = pick(&mut rng, &clients);
                    if rng.gen_bool(0.5) {
                        Fault::OneWayCut {
                            from: Node::Server(a),
                            to: Node::Client(c),
                        }
                    } else {
                        Fault::OneWayCut {
                            from: Node::Client(c),
                            to: Node::Server(a),
                        }
                    }
                } else {
                    let others: Vec<u32> = servers.iter().copied().filter(|s| *s != a).collect();
                    if others.is_empty() {
                        continue_fault(&mut t, &mut rng, lo, hi);
                        continue;
                    }
                    Fault::OneWayCut {
                        from: Node::Server(a),
                        to: Node::Server(pick(&mut rng, &others)),
                    }
                }
            }
            FaultKind::ClientCut => {
                let c = pick(&mut rng, &clients);
                let mut ss: Vec<u32> = servers.iter().copied().filter(|_| rng.gen_bool(0.5)).collect();
                if ss.is_empty() {
                    ss.push(pick(&mut rng, &servers));
                }
                Fault::ClientCut { client: c, servers: ss }
            }
            FaultKind::KillLeader => Fault::KillLeader {
                lose_unsynced: rng.gen_bool(0.5),
            },
            FaultKind::KillServer => Fault::KillServer {
                server: pick(&mut rng, &servers),
                lose_unsynced: rng.gen_bool(0.5),
            },
            FaultKind::DropConnection => {
                duration = 0;
                Fault::DropConnection {
                    client: pick(&mut rng, &clients),
                }
            }
            FaultKind::LoseReply => {
                duration = 0;
                Fault::LoseReply {
                    client: pick(&mut rng, &clients),
                }
            }
            FaultKind::ExpireSession => {
                duration = timeout * 2 + range(&mut rng, [0, timeout]);
                Fault::ExpireSession {
                    client: pick(&mut rng, &clients),
                }
            }
            FaultKind::PauseClient => {
                duration = if rng.gen_bool(0.5) {
                    timeout * 3 / 2 + range(&mut rng, [0, timeout])
                } else {
                    range(&mut rng, [10, timeout / 2])
                };
                Fault::Pause {
                    node: Node::Client(pick(&mut rng, &clients)),
                }
            }
            FaultKind::PauseServer => {
                duration = if rng.gen_bool(0.5) {
                    timeout * 3 / 2 + range(&mut rng, [0, timeout])
                } else {
                    range(&mut rng, [10, timeout / 2])
                };
                Fault::Pause {
                    node: Node::Server(pick(&mut rng, &servers)),
                }
            }
            FaultKind::LatencySpike => {
                let min_ms = range(&mut rng, [5, 50]);
                Fault::LatencySpike {
                    min_ms,
                    max_ms: min_ms + range(&mut rng, [10, 400]),
                }
            }
            FaultKind::DeleteRecipeDir => {
                let dirs = crate::registry::entry(scenario.workload.recipe).dirs;
                if dirs.is_empty() {
                    continue_fault(&mut t, &mut rng, lo, hi);
                    continue;
                }
                Fault::DeleteRecipeDir {
                    path: pick(&mut rng, dirs).to_string(),
                    client: scenario.ensemble.clients,
                }
            }
        };
        out.push(TimedFault {
            at_ms: t,
            duration_ms: duration,
            fault,
        });
        continue_fault(&mut t, &mut rng, lo, hi);
    }
    out
}

fn continue_fault(t: &mut u64, rng: &mut impl Rng, lo: u64, hi: u64) {
    *t += range(rng, [lo, hi]).max(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        Scenario::parse("name = \"x\"\n[workload]\nrecipe = \"lock\"\n", "x").unwrap()
    }

    /// A fault's stat name is its plan `kind` (a pause is split by the
    /// node it stops), so a plan file, the stats and a swarm's weights
    /// name each kind alike.
    #[test]
    fn stats_name_a_fault_as_its_plan_does() {
        let s = scenario();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            for f in FaultPlan::generate(&s, seed).faults {
                let json = serde_json::to_value(&f.fault).unwrap();
                let tag = json["kind"].as_str().unwrap().to_string();
                let name = f.fault.kind_name();
                match tag.as_str() {
                    "pause" => assert!(name == "pause-client" || name == "pause-server", "{name}"),
                    _ => assert_eq!(name, tag),
                }
                seen.insert(f.fault.kind());
            }
        }
        assert!(seen.contains(&FaultKind::KillServer), "{seen:?}");
    }

    #[test]
    fn plans_are_seeded_and_round_trip() {
        let s = scenario();
        let a = FaultPlan::generate(&s, 7);
        assert_eq!(a, FaultPlan::generate(&s, 7));
        let differs = (0..20).any(|seed| FaultPlan::generate(&s, seed) != a);
        assert!(differs);
        let back = FaultPlan::from_json(&a.to_json(), "p.json").unwrap();
        assert_eq!(a, back);
        assert!(a.faults.iter().all(|f| f.at_ms < s.fault_phase_ms()));
    }

    #[test]
    fn swarm_covers_every_kind_over_seeds() {
        let s = scenario();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..50 {
            for f in FaultPlan::generate(&s, seed).faults {
                seen.insert(f.fault.kind_name());
            }
        }
        assert_eq!(seen.len(), FaultKind::ALL.len(), "{seen:?}");
    }

    #[test]
    fn bad_plan_names_the_field() {
        let e = FaultPlan::from_json(r#"{"faults":[{"at_ms":1,"kind":"pause","node":"zkx"}]}"#, "p.json").unwrap_err();
        assert_eq!((e.file.as_str(), e.field.as_str()), ("p.json", "faults[0]"), "{e}");
        assert!(e.to_string().starts_with("p.json: field `faults[0]`: "), "{e}");
    }
}
