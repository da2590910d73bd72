//! Fault plans: an explicit, serializable list of timed faults, derived
//! from the seed through its own ChaCha stream (so a different workload
//! does not reshuffle the faults), printable and shrinkable.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::PlanError;

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
    /// A client's connection fails as its next read's reply arrives and
    /// stays down until its session has expired: what the recipe sends
    /// next (its write, after the read) fails with SessionExpired.
    ExpireAfterRead { client: u32 },
    /// A client's connection drops as each request goes out on it, until
    /// the fault's duration is over: every call fails with ConnectionLoss.
    FlapConnection { client: u32 },
    /// A client's next write is applied but its reply lost; from the next
    /// reply it reads, its connection flaps until the fault's duration is
    /// over: the write's retry is answered, the read of its fate fails.
    LoseReplyThenFlap { client: u32 },
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
            Fault::ExpireAfterRead { .. } => FaultKind::ExpireAfterRead,
            Fault::FlapConnection { .. } => FaultKind::FlapConnection,
            Fault::LoseReplyThenFlap { .. } => FaultKind::LoseReplyThenFlap,
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
        matches!(
            self,
            Fault::DropConnection { .. } | Fault::LoseReply { .. } | Fault::ExpireAfterRead { .. }
        )
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
        crate::hash::short_hash(&serde_json::to_vec(self).unwrap_or_default())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_plan_names_the_field() {
        let e = FaultPlan::from_json(r#"{"faults":[{"at_ms":1,"kind":"pause","node":"zkx"}]}"#, "p.json").unwrap_err();
        assert_eq!((e.file.as_str(), e.field.as_str()), ("p.json", "faults[0]"), "{e}");
        assert!(e.to_string().starts_with("p.json: field `faults[0]`: "), "{e}");
    }
}
