//! Planted variants: a scenario's `workload.variant` names one of the
//! deliberately broken recipe types of `zkdst_recipes::planted` to run in
//! place of the correct recipe, with the same workload. The variant only
//! picks a type; the correct recipes carry no flags. Without a variant the
//! scenario runs the correct recipe (a planted scenario's "correct twin").

use crate::scenario::{Consumer, Recipe};

zkdst_model::words! {
    /// A planted recipe type, named as in `zkdst_recipes::planted`.
    pub enum Variant {
        UnprotectedCreateLock = "UnprotectedCreateLock",
        StaleSessionLock = "StaleSessionLock",
        UnfencedLock = "UnfencedLock",
        ResetLivelockLatch = "ResetLivelockLatch",
        CancellationLeakLock = "CancellationLeakLock",
        DeleteUnderDisconnectLock = "DeleteUnderDisconnectLock",
        LostWatchLock = "LostWatchLock",
        LockingQueueRace = "LockingQueueRace",
        SuspendedIgnoredMember = "SuspendedIgnoredMember",
        LeakedLeaseSemaphore = "LeakedLeaseSemaphore",
        DuplicateProcessingQueue = "DuplicateProcessingQueue",
        LostItemQueue = "LostItemQueue",
        DuplicateItemQueue = "DuplicateItemQueue",
        DoubleIncrementCounter = "DoubleIncrementCounter",
        HerdLock = "HerdLock",
        NoAbdicationElection = "NoAbdicationElection",
        PredecessorGoneElection = "PredecessorGoneElection",
    }
}

impl Variant {
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
            assert_eq!(Variant::from_name(v.name()), Some(*v));
            assert!(seen.insert(v.class()), "{v:?}");
        }
    }
}
