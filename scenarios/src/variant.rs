//! Planted variants: a scenario's `workload.variant` names one of the
//! deliberately broken recipe types of `zkdst_recipes::planted` to run in
//! place of the correct recipe, with the same workload. What each is (its
//! recipe, bug class, client) is registered in the registry (registry.rs), which
//! answers `Variant::recipe`, `consumer` and `class`. The variant only
//! picks a type; the correct recipes carry no flags. Without a variant the
//! scenario runs the correct recipe (a planted scenario's "correct twin").

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
        ClaimNameCompleteQueue = "ClaimNameCompleteQueue",
        CancelledTakeQueue = "CancelledTakeQueue",
        GoneBlockerLock = "GoneBlockerLock",
        VanishedLeaderElection = "VanishedLeaderElection",
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
            assert!(seen.insert(v.name()), "{v:?}");
        }
    }
}
