//! What the recorder found when it compared one server's applied sequence
//! with the canonical one (the sequence of committed transactions, from
//! the first server to apply each zxid). Each server's sequence is folded
//! into a chain hash: `chain' = H(chain, zxid, digest of the txn)`; two
//! servers at one zxid with equal chains applied the same transactions.

use serde::{Deserialize, Serialize};

/// The finding an `Event::Replica` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplicaCheck {
    /// At `zxid` the server applied a different txn than the canonical
    /// one, reached a different tree (digest), loaded a snapshot that is
    /// not the canonical state, or applied a zxid the canonical sequence
    /// does not have.
    Diverged,
    /// The server applied `zxid` without the committed txn `missing`
    /// before it, which it had never applied.
    Gap,
    /// The server had applied the committed txn `missing`, then (after a
    /// restart or a snapshot load) went on past it without it: a committed
    /// transaction rolled back.
    RolledBack,
    /// The server's position at the end of the recording, one per server.
    Final,
}

impl ReplicaCheck {
    pub fn name(self) -> &'static str {
        match self {
            ReplicaCheck::Diverged => "diverged",
            ReplicaCheck::Gap => "gap",
            ReplicaCheck::RolledBack => "rolled-back",
            ReplicaCheck::Final => "final",
        }
    }
}
