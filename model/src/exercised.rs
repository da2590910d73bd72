//! What a run exercised: the counters a run keeps (faults that fired,
//! session states reached, situations found in the history or reported by
//! the workload). Summed over a campaign they show what was tested; a
//! scenario's `[expect.min]` demands minimums, by these names — a name
//! that is not one of them is refused when the scenario loads.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{FaultKind, SessionState};

crate::words! {
    /// A situation a run counts.
    pub enum Situation {
        /// Distinct leader epochs seen committing.
        LeaderEpochs = "leader-epochs",
        /// A create ended in ConnectionLoss (applied or not: unknown).
        ConnlossDuringCreate = "connloss-during-create",
        /// A ZooKeeper call (not a recipe operation) ended unknown.
        ZkIndeterminate = "zk-indeterminate",
        /// A recipe operation ended unknown.
        RecipeAmbiguous = "recipe-ambiguous",
        /// A recipe operation spanned a change of leader.
        LeaderChangeMidOp = "leader-change-mid-op",
        RecipeOps = "recipe-ops",
        /// A sequential node numbered past the 32-bit wrap (negative) was
        /// created while a node of its directory numbered before it (near
        /// 2^31) still lived: creation order and signed order disagree
        /// (the scenario's `sequence_base` brings the wrap within reach).
        SequenceWrapped = "sequence-wrapped",
        /// The leader expired the session of a client holding a lock, lease
        /// or leadership.
        ExpiryWhileHolding = "expiry-while-holding",
        /// A create's reply was lost, its retry met NodeExists, and the
        /// read that followed, to learn whose node it is, lost its
        /// connection too: the recipe must decide with the node's owner
        /// unknown.
        FateReadLost = "fate-read-lost",
        /// Workers still in an operation past the liveness deadline.
        WorkersStuck = "workers-stuck",
        DiskSnapshots = "disk.snapshots",
        DiskSnapSyncs = "disk.snap-syncs",
        DiskLoadsFromSnapshot = "disk.loads-from-snapshot",
        // Reported by the workload (`exercised: NAME` notes in the history).
        AcquireGaveUp = "acquire-gave-up",
        /// A barrier waiter waited with a time limit (`wait_for`).
        BarrierTimedWait = "barrier.timed-wait",
        DoubleBarrierRejoined = "double-barrier.rejoined",
        ElectionLongTerm = "election.long-term",
        ElectionLostWhileLeading = "election.lost-while-leading",
        /// A client asked who leads and was told a leader.
        ElectionLeaderAsked = "election.leader-asked",
        /// A group member's wait for a view change returned a newer view.
        MembershipViewWaited = "membership.view-waited",
        /// A group member acted on its standing (status Joined).
        MembershipActed = "membership.acted",
        /// A member managed by hand (its own session, not a `GroupMember`)
        /// was removed with `remove_member`.
        MembershipRemovedByHand = "membership.removed-by-hand",
        /// A holder let its lock guard go (dropped it, as a scope exit
        /// does) instead of releasing it.
        LockGuardDropped = "lock.guard-dropped",
        /// A lock hold drawn long (`workload.long_hold`): 1.5 to 3 session
        /// timeouts of writes.
        LockLongHold = "lock.long-hold",
        /// A holder heard from its guard that its hold was lost, and stopped.
        LockHoldLost = "lock.hold-lost",
        /// A long-holding holder, waiting on its guard's
        /// `suspended_or_lost()`, was woken by a suspension.
        LockWokenSuspended = "lock.woken-suspended",
        RevokeHonoured = "revoke-honoured",
        RevokeRequested = "revoke-requested",
        RecipeDirDeleted = "recipe-dir-deleted",
        /// The leader deleted an emptied container (a recipe's directory
        /// created with container parents).
        ContainerReaped = "container-reaped",
        /// An at-least-once consumer found its claim lost before completing.
        QueueClaimLost = "queue.claim-lost",
        /// A claim processed for long (`workload.long_hold`): 1.5 to 3
        /// session timeouts of asking the claim.
        QueueLongClaim = "queue.long-claim",
        /// An at-least-once consumer gave an item back with `abandon`.
        QueueClaimAbandoned = "queue.claim-abandoned",
        /// An at-least-once consumer dropped its claim without completing.
        QueueClaimDropped = "queue.claim-dropped",
        /// A 2PC site started to join only after the coordinator's join
        /// timeout.
        TxSiteLate = "two-phase.site-late",
    }
}

/// One counter of a run: `fault.KIND`, `skipped.KIND` (a fault the plan
/// held that could not fire, e.g. no leader to kill), `session.STATE`, or
/// a [`Situation`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Exercised {
    Fault(FaultKind),
    Skipped(FaultKind),
    Session(SessionState),
    Situation(Situation),
}

/// Prefix of a history note that counts a [`Situation`] the workload
/// reported.
pub const EXERCISED_NOTE: &str = "exercised: ";

impl Situation {
    /// The history note by which the workload reports this situation
    /// (read back by [`Exercised::from_note`]).
    pub fn note(self) -> String {
        format!("{EXERCISED_NOTE}{self}")
    }
}

impl Exercised {
    /// The counter named by a history note, if the note reports one.
    pub fn from_note(text: &str) -> Option<Exercised> {
        let name = text.strip_prefix(EXERCISED_NOTE)?;
        Situation::from_name(name).map(Exercised::Situation)
    }
}

impl From<Situation> for Exercised {
    fn from(s: Situation) -> Self {
        Exercised::Situation(s)
    }
}

impl fmt::Display for Exercised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exercised::Fault(k) => write!(f, "fault.{k}"),
            Exercised::Skipped(k) => write!(f, "skipped.{k}"),
            Exercised::Session(s) => write!(f, "session.{}", s.name()),
            Exercised::Situation(s) => f.write_str(s.name()),
        }
    }
}

impl FromStr for Exercised {
    type Err = String;

    fn from_str(name: &str) -> Result<Exercised, String> {
        let unknown = || {
            format!(
                "unknown counter {name:?}: expected fault.KIND, skipped.KIND (KIND: {}), session.STATE (STATE: {}), or one of: {}",
                FaultKind::WORDS.join(", "),
                SessionState::ALL.map(SessionState::name).join(", "),
                Situation::WORDS.join(", ")
            )
        };
        if let Some(k) = name.strip_prefix("fault.") {
            return FaultKind::from_name(k).map(Exercised::Fault).ok_or_else(unknown);
        }
        if let Some(k) = name.strip_prefix("skipped.") {
            return FaultKind::from_name(k).map(Exercised::Skipped).ok_or_else(unknown);
        }
        if let Some(s) = name.strip_prefix("session.") {
            return SessionState::ALL
                .into_iter()
                .find(|st| st.name() == s)
                .map(Exercised::Session)
                .ok_or_else(unknown);
        }
        Situation::from_name(name).map(Exercised::Situation).ok_or_else(unknown)
    }
}

impl Serialize for Exercised {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Exercised {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Exercised, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_round_trips_by_its_name() {
        let all = FaultKind::ALL
            .iter()
            .flat_map(|k| [Exercised::Fault(*k), Exercised::Skipped(*k)])
            .chain(SessionState::ALL.map(Exercised::Session))
            .chain(Situation::ALL.iter().map(|s| Exercised::Situation(*s)));
        for e in all {
            assert_eq!(e.to_string().parse::<Exercised>(), Ok(e));
        }
        assert_eq!(Exercised::Fault(FaultKind::KillServer).to_string(), "fault.kill-server");
    }

    #[test]
    fn a_misspelt_counter_is_refused_with_the_names() {
        for bad in [
            "fault.kill-leeder",
            "session.connceted",
            "expiry-while-holdin",
            "skipped.",
        ] {
            let err = bad.parse::<Exercised>().unwrap_err();
            assert!(err.contains(bad) && err.contains("kill-leader"), "{err}");
        }
    }

    #[test]
    fn notes_name_situations() {
        assert_eq!(
            Exercised::from_note("exercised: revoke-honoured"),
            Some(Exercised::Situation(Situation::RevokeHonoured))
        );
        assert_eq!(Exercised::from_note("exercised: nothing"), None);
        for s in Situation::ALL {
            assert_eq!(Exercised::from_note(&s.note()), Some(Exercised::Situation(*s)));
        }
        assert_eq!(Exercised::from_note("revoke-honoured"), None);
    }
}
