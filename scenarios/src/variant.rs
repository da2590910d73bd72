//! Planted variants: a scenario's `workload.variant` names one of the
//! deliberately broken recipe types of `zkdst_recipes::planted` to run in
//! place of the correct recipe, with the same workload. The variant only
//! picks a type; the correct recipes carry no flags. Without a variant the
//! scenario runs the correct recipe (a planted scenario's "correct twin").

use serde::{Deserialize, Serialize};

use crate::scenario::{Consumer, Recipe};

/// A planted recipe type, named as in `zkdst_recipes::planted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Variant {
    UnprotectedCreateLock,
    StaleSessionLock,
    UnfencedLock,
    ResetLivelockLatch,
    CancellationLeakLock,
    DeleteUnderDisconnectLock,
    LostWatchLock,
    LockingQueueRace,
    SuspendedIgnoredMember,
    LeakedLeaseSemaphore,
    DuplicateProcessingQueue,
    LostItemQueue,
    DuplicateItemQueue,
    DoubleIncrementCounter,
    HerdLock,
    NoAbdicationElection,
    PredecessorGoneElection,
}

impl Variant {
    pub const ALL: [Variant; 17] = [
        Variant::UnprotectedCreateLock,
        Variant::StaleSessionLock,
        Variant::UnfencedLock,
        Variant::ResetLivelockLatch,
        Variant::CancellationLeakLock,
        Variant::DeleteUnderDisconnectLock,
        Variant::LostWatchLock,
        Variant::LockingQueueRace,
        Variant::SuspendedIgnoredMember,
        Variant::LeakedLeaseSemaphore,
        Variant::DuplicateProcessingQueue,
        Variant::LostItemQueue,
        Variant::DuplicateItemQueue,
        Variant::DoubleIncrementCounter,
        Variant::HerdLock,
        Variant::NoAbdicationElection,
        Variant::PredecessorGoneElection,
    ];

    /// The type name (as written in scenario files).
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// The recipe this type is a broken version of.
    pub fn recipe(self) -> Recipe {
        match self {
            Variant::UnprotectedCreateLock
            | Variant::StaleSessionLock
            | Variant::UnfencedLock
            | Variant::CancellationLeakLock
            | Variant::DeleteUnderDisconnectLock
            | Variant::LostWatchLock
            | Variant::HerdLock => Recipe::Lock,
            Variant::ResetLivelockLatch => Recipe::LeaderLatch,
            Variant::NoAbdicationElection | Variant::PredecessorGoneElection => Recipe::Election,
            Variant::LockingQueueRace
            | Variant::DuplicateProcessingQueue
            | Variant::LostItemQueue
            | Variant::DuplicateItemQueue => Recipe::Queue,
            Variant::SuspendedIgnoredMember => Recipe::Membership,
            Variant::LeakedLeaseSemaphore => Recipe::Semaphore,
            Variant::DoubleIncrementCounter => Recipe::Counter,
        }
    }

    /// The queue consumer the type replaces (queue variants that replace a
    /// consumer; the others run with either).
    pub fn consumer(self) -> Option<Consumer> {
        match self {
            Variant::LockingQueueRace => Some(Consumer::AtLeastOnce),
            Variant::LostItemQueue | Variant::DuplicateProcessingQueue => Some(Consumer::AtMostOnce),
            _ => None,
        }
    }

    /// The bug class of `docs/bug-catalogue.md`.
    pub fn class(self) -> &'static str {
        match self {
            Variant::UnprotectedCreateLock => "unprotected create",
            Variant::StaleSessionLock => "stale-session adoption",
            Variant::UnfencedLock => "expired but still acting",
            Variant::ResetLivelockLatch => "reset livelock",
            Variant::CancellationLeakLock => "cancellation leak",
            Variant::DeleteUnderDisconnectLock => "delete under disconnect",
            Variant::LostWatchLock => "lost watch on reconnect",
            Variant::LockingQueueRace => "locking-queue race",
            Variant::SuspendedIgnoredMember => "suspended ignored",
            Variant::LeakedLeaseSemaphore => "leaked lease",
            Variant::DuplicateProcessingQueue => "duplicate processing",
            Variant::LostItemQueue => "lost item",
            Variant::DuplicateItemQueue => "duplicate item",
            Variant::DoubleIncrementCounter => "double increment",
            Variant::HerdLock => "herd effect",
            Variant::NoAbdicationElection => "suspended ignored by a leader",
            Variant::PredecessorGoneElection => "predecessor gone taken for leadership",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_distinct() {
        let mut seen = std::collections::BTreeSet::new();
        for v in Variant::ALL {
            let back: Variant = serde_json::from_value(serde_json::Value::String(v.name())).unwrap();
            assert_eq!(back, v);
            assert!(seen.insert(v.class()), "{v:?}");
        }
    }
}
