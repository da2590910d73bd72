//! Every recipe the harness drives, registered once: its workload client,
//! the checkers that judge what it promises (a scenario that names none
//! gets these), the directories its nodes live in, and its planted
//! variants with their bug class. Adding a recipe is one entry here (and
//! its `Recipe` word); adding a planted variant is one line in its
//! recipe's entry (and its `Variant` word).

use futures::FutureExt;
use zkdst_recipes::lock::Lock;
use zkdst_recipes::planted::{
    AdoptAnySession, BlindCreate, BlindItemCreate, CancelledTakeQueue, ClaimNameCompleteQueue, ClaimNameFate,
    DuplicateProcessingQueue, ExistsIsAnothers, ForgetWatchOnDisconnect, GoneIsMyTurn, IgnoreSuspension,
    LockingQueueRace, LostItemQueue, NoAbdication, NoOrphanCleanup, OneDelete, PlainDelete, PredecessorGoneIsMyTurn,
    ResetOnWake, RetryAmbiguousSet, UnfencedLock, VanishedHeadIsNobody, WatchTheHolder,
};
use zkdst_recipes::semaphore::Semaphore;
use zkdst_recipes::{counter, election, lock, membership, queue};
use zkdst_sim::client::library_lock::LockPrefix;

use crate::scenario::{Consumer, Recipe};
use crate::variant::Variant;
use crate::workload::library_lock::LibraryLock;
use crate::workload::queue::{CLAIM, Q, TAKE};
use crate::workload::{self as w};

use crate::workload::Client;

/// One recipe, as the harness knows it.
pub struct Entry {
    pub recipe: Recipe,
    /// The correct recipe's client.
    pub client: Client,
    /// The checkers that judge its promises.
    pub checkers: &'static [&'static str],
    /// Where its workload keeps its nodes (what `delete-recipe-dir` deletes).
    pub dirs: &'static [&'static str],
    pub planted: &'static [Planted],
}

/// A deliberately broken variant of a recipe (`recipes/src/planted/`).
pub struct Planted {
    pub variant: Variant,
    /// The bug class of `docs/bug-catalogue.md`.
    pub class: &'static str,
    /// The queue consumer it replaces, if it replaces one.
    pub consumer: Option<Consumer>,
    /// The client running it.
    pub client: Client,
}

const HOLDS: &[&str] = &["mutex", "fencing", "liveness"];

const fn planted(variant: Variant, class: &'static str, client: Client) -> Planted {
    Planted {
        variant,
        class,
        consumer: None,
        client,
    }
}

/// The registry.
pub static RECIPES: &[Entry] = &[
    Entry {
        recipe: Recipe::Ensemble,
        client: |e| w::ensemble::client(e).boxed(),
        checkers: &["zk-consistency"],
        dirs: &[],
        planted: &[],
    },
    Entry {
        recipe: Recipe::Lock,
        client: |e| w::locks::lock(e, |c, _| Lock::new(c, w::locks::LOCK)).boxed(),
        checkers: HOLDS,
        dirs: &[w::locks::LOCK],
        planted: &[
            planted(Variant::UnprotectedCreateLock, "unprotected create", |e| {
                w::locks::lock(e, |c, _| Lock::with_steps(c, w::locks::LOCK, BlindCreate)).boxed()
            }),
            planted(Variant::StaleSessionLock, "stale-session adoption", |e| {
                let adopt = |c, id| Lock::with_steps(c, w::locks::LOCK, AdoptAnySession { owner: u64::from(id) });
                w::locks::lock(e, adopt).boxed()
            }),
            planted(Variant::UnfencedLock, "expired but still acting", |e| {
                w::locks::lock(e, |c, _| UnfencedLock::new(c, w::locks::LOCK)).boxed()
            }),
            planted(Variant::CancellationLeakLock, "cancellation leak", |e| {
                w::locks::lock(e, |c, _| Lock::with_steps(c, w::locks::LOCK, NoOrphanCleanup)).boxed()
            }),
            planted(Variant::DeleteUnderDisconnectLock, "delete under disconnect", |e| {
                w::locks::lock(e, |c, _| Lock::with_steps(c, w::locks::LOCK, OneDelete)).boxed()
            }),
            planted(Variant::LostWatchLock, "lost watch on reconnect", |e| {
                w::locks::lock(e, |c, _| Lock::with_steps(c, w::locks::LOCK, ForgetWatchOnDisconnect)).boxed()
            }),
            planted(Variant::HerdLock, "herd effect", |e| {
                w::locks::lock(e, |c, _| Lock::with_steps(c, w::locks::LOCK, WatchTheHolder)).boxed()
            }),
            planted(
                Variant::GoneBlockerLock,
                "blocker gone before its watch taken for the turn",
                |e| w::locks::lock(e, |c, _| Lock::with_steps(c, w::locks::LOCK, GoneIsMyTurn)).boxed(),
            ),
        ],
    },
    Entry {
        recipe: Recipe::LibraryLock,
        client: |e| match e.scenario.workload.lock_prefix.unwrap_or(LockPrefix::Curator) {
            LockPrefix::Curator => w::locks::lock(e, |c, _| LibraryLock::new(c, LockPrefix::Curator)).boxed(),
            LockPrefix::Shared => w::locks::lock(e, |c, _| LibraryLock::new(c, LockPrefix::Shared)).boxed(),
        },
        checkers: HOLDS,
        dirs: &[w::locks::LOCK],
        planted: &[],
    },
    Entry {
        recipe: Recipe::Rwlock,
        client: |e| w::locks::rwlock(e).boxed(),
        checkers: HOLDS,
        dirs: &[w::locks::RW],
        planted: &[],
    },
    Entry {
        recipe: Recipe::RevocableLock,
        client: |e| w::revocable::client(e).boxed(),
        checkers: HOLDS,
        dirs: &[w::revocable::DIR],
        planted: &[],
    },
    Entry {
        recipe: Recipe::RevocableMutex,
        client: |e| w::revocable::mutex_client(e).boxed(),
        checkers: HOLDS,
        dirs: &[w::revocable::MUTEX_DIR],
        planted: &[],
    },
    Entry {
        recipe: Recipe::Semaphore,
        client: |e| w::locks::semaphore(e, |c, p| Semaphore::new(c, w::locks::SEM, p)).boxed(),
        checkers: &["semaphore", "liveness"],
        dirs: &[w::locks::SEM],
        planted: &[planted(Variant::LeakedLeaseSemaphore, "leaked lease", |e| {
            let leaky = |c, p| Ok(Semaphore::with_steps(c, w::locks::SEM, p, BlindCreate));
            w::locks::semaphore(e, leaky).boxed()
        })],
    },
    Entry {
        recipe: Recipe::Queue,
        client: |e| w::queue::client(e, false, queue::Exact, TAKE, CLAIM).boxed(),
        checkers: &["queue", "liveness"],
        dirs: &[Q],
        planted: &[
            Planted {
                consumer: Some(Consumer::AtLeastOnce),
                ..planted(
                    Variant::ClaimNameCompleteQueue,
                    "completion fate from a reusable name",
                    |e| {
                        let claim = |c| ClaimNameCompleteQueue::with_steps(c, Q, ClaimNameFate);
                        w::queue::client(e, false, queue::Exact, TAKE, claim).boxed()
                    },
                )
            },
            Planted {
                consumer: Some(Consumer::AtLeastOnce),
                ..planted(Variant::LockingQueueRace, "locking-queue race", |e| {
                    let claim = |c| LockingQueueRace::with_steps(c, Q, ExistsIsAnothers);
                    w::queue::client(e, false, queue::Exact, TAKE, claim).boxed()
                })
            },
            // The claiming consumer where an at-most-once one belongs.
            Planted {
                consumer: Some(Consumer::AtMostOnce),
                ..planted(Variant::DuplicateProcessingQueue, "duplicate processing", |e| {
                    let take = |c| DuplicateProcessingQueue::new(c, Q);
                    w::queue::client(e, false, queue::Exact, take, CLAIM).boxed()
                })
            },
            Planted {
                consumer: Some(Consumer::AtMostOnce),
                ..planted(Variant::LostItemQueue, "lost item", |e| {
                    let take = |c| LostItemQueue::with_steps(c, Q, PlainDelete);
                    w::queue::client(e, false, queue::Exact, take, CLAIM).boxed()
                })
            },
            planted(Variant::DuplicateItemQueue, "duplicate item", |e| {
                w::queue::client(e, false, BlindItemCreate, TAKE, CLAIM).boxed()
            }),
            Planted {
                consumer: Some(Consumer::AtMostOnce),
                ..planted(Variant::CancelledTakeQueue, "take cancelled mid-flight", |e| {
                    let take = |c| CancelledTakeQueue::new(c, Q);
                    w::queue::client(e, false, queue::Exact, take, CLAIM).boxed()
                })
            },
        ],
    },
    Entry {
        recipe: Recipe::PriorityQueue,
        client: |e| w::queue::client(e, true, queue::Exact, TAKE, CLAIM).boxed(),
        checkers: &["queue", "liveness"],
        dirs: &[Q],
        planted: &[],
    },
    Entry {
        recipe: Recipe::Election,
        client: |e| w::election::election(e, lock::Exact).boxed(),
        checkers: &["election", "liveness"],
        dirs: &[w::election::ELECTION],
        planted: &[
            planted(Variant::NoAbdicationElection, "suspended ignored by a leader", |e| {
                w::election::election(e, NoAbdication).boxed()
            }),
            planted(
                Variant::PredecessorGoneElection,
                "predecessor gone taken for leadership",
                |e| w::election::election(e, PredecessorGoneIsMyTurn).boxed(),
            ),
            planted(
                Variant::VanishedLeaderElection,
                "leader gone between listing and read taken for no leader",
                |e| w::election::election(e, VanishedHeadIsNobody).boxed(),
            ),
        ],
    },
    Entry {
        recipe: Recipe::LeaderLatch,
        client: |e| w::election::leader_latch(e, election::latch::Exact).boxed(),
        checkers: &["election", "liveness"],
        dirs: &[w::election::ELECTION],
        planted: &[planted(Variant::ResetLivelockLatch, "reset livelock", |e| {
            w::election::leader_latch(e, ResetOnWake).boxed()
        })],
    },
    Entry {
        recipe: Recipe::Barrier,
        client: |e| w::barrier::single(e).boxed(),
        checkers: &["barrier", "liveness"],
        dirs: &[],
        planted: &[],
    },
    Entry {
        recipe: Recipe::DoubleBarrier,
        client: |e| w::barrier::double(e).boxed(),
        checkers: &["double-barrier", "liveness"],
        dirs: &[],
        planted: &[],
    },
    Entry {
        recipe: Recipe::Counter,
        client: |e| w::misc::counter(e, counter::Exact).boxed(),
        checkers: &["counter"],
        dirs: &[],
        planted: &[planted(Variant::DoubleIncrementCounter, "double increment", |e| {
            w::misc::counter(e, RetryAmbiguousSet).boxed()
        })],
    },
    Entry {
        recipe: Recipe::Membership,
        client: |e| w::membership::client(e, membership::Exact).boxed(),
        checkers: &["membership"],
        dirs: &[],
        planted: &[planted(Variant::SuspendedIgnoredMember, "suspended ignored", |e| {
            w::membership::client(e, IgnoreSuspension).boxed()
        })],
    },
    Entry {
        recipe: Recipe::Config,
        client: |e| w::misc::config(e).boxed(),
        checkers: &["config"],
        dirs: &[],
        planted: &[],
    },
    Entry {
        recipe: Recipe::TwoPhaseCommit,
        client: |e| w::misc::two_phase(e).boxed(),
        checkers: &["two-phase-commit"],
        dirs: &[],
        planted: &[],
    },
];

/// A recipe's entry.
pub fn entry(recipe: Recipe) -> &'static Entry {
    RECIPES
        .iter()
        .find(|e| e.recipe == recipe)
        .unwrap_or_else(|| unreachable!("every recipe is registered (tested): {recipe}"))
}

/// A planted variant's entry, and its recipe's.
pub fn planted_entry(variant: Variant) -> (&'static Entry, &'static Planted) {
    RECIPES
        .iter()
        .find_map(|e| e.planted.iter().find(|p| p.variant == variant).map(|p| (e, p)))
        .unwrap_or_else(|| unreachable!("every variant is registered (tested): {variant}"))
}

/// The client a scenario's workload runs: its variant's, or its recipe's.
pub fn client(recipe: Recipe, variant: Option<Variant>) -> Client {
    match variant {
        Some(v) => planted_entry(v).1.client,
        None => entry(recipe).client,
    }
}

/// What the registry knows of a planted variant.
impl Variant {
    /// The recipe this type is a broken version of.
    pub fn recipe(self) -> Recipe {
        planted_entry(self).0.recipe
    }

    /// The queue consumer the type replaces (queue variants that replace a
    /// consumer; the others run with either).
    pub fn consumer(self) -> Option<Consumer> {
        planted_entry(self).1.consumer
    }

    /// The bug class of `docs/bug-catalogue.md`.
    pub fn class(self) -> &'static str {
        planted_entry(self).1.class
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workload records a recipe error by its message; the
    /// session-lost checker recognises SessionLost by this prefix.
    #[test]
    fn session_lost_is_recorded_as_the_checker_reads_it() {
        use zkdst_checker::properties::session_lost::ERROR_PREFIX;
        use zkdst_recipes::error::RecipeError;
        assert!(RecipeError::SessionLost.to_string().starts_with(ERROR_PREFIX));
        assert!(!RecipeError::Ambiguous("x".into()).to_string().starts_with(ERROR_PREFIX));
    }

    /// The needless-ambiguity check recognises Ambiguous by the start of
    /// its message.
    #[test]
    fn ambiguous_is_recorded_as_the_checker_reads_it() {
        use zkdst_checker::properties::needless_ambiguity::AMBIGUOUS_PREFIX;
        use zkdst_recipes::error::RecipeError;
        assert!(RecipeError::Ambiguous("x".into())
            .to_string()
            .starts_with(AMBIGUOUS_PREFIX));
        for other in [RecipeError::SessionLost, RecipeError::Cancelled("x")] {
            assert!(!other.to_string().starts_with(AMBIGUOUS_PREFIX), "{other}");
        }
    }

    /// The recipe-errors checker recognises BadData, InvalidArgument and
    /// Conflict by the start of their messages.
    #[test]
    fn bad_data_and_invalid_argument_are_recorded_as_the_checker_reads_them() {
        use zkdst_checker::properties::recipe_errors::{
            BAD_DATA_PREFIX, INVALID_ARGUMENT_PREFIX, PROTOCOL_CONFLICT_PREFIX,
        };
        use zkdst_recipes::error::RecipeError;
        let bad = RecipeError::BadData {
            path: "/p".into(),
            reason: "r".into(),
        };
        assert!(bad.to_string().starts_with(BAD_DATA_PREFIX));
        assert!(RecipeError::InvalidArgument("x".into())
            .to_string()
            .starts_with(INVALID_ARGUMENT_PREFIX));
        assert!(RecipeError::Conflict("x".into())
            .to_string()
            .starts_with(PROTOCOL_CONFLICT_PREFIX));
        for other in [RecipeError::SessionLost, RecipeError::Ambiguous("x".into())] {
            let m = other.to_string();
            assert!(
                [BAD_DATA_PREFIX, INVALID_ARGUMENT_PREFIX, PROTOCOL_CONFLICT_PREFIX]
                    .iter()
                    .all(|p| !m.starts_with(p)),
                "{m}"
            );
        }
    }

    #[test]
    fn every_recipe_and_variant_is_registered_once() {
        for r in Recipe::ALL {
            assert_eq!(RECIPES.iter().filter(|e| e.recipe == *r).count(), 1, "{r}");
        }
        for v in Variant::ALL {
            let n: usize = RECIPES
                .iter()
                .map(|e| e.planted.iter().filter(|p| p.variant == *v).count())
                .sum();
            assert_eq!(n, 1, "{v}");
        }
        let classes: std::collections::BTreeSet<&str> = Variant::ALL.iter().map(|v| v.class()).collect();
        assert_eq!(classes.len(), Variant::ALL.len(), "one bug class per variant");
        for e in RECIPES {
            for c in e.checkers {
                assert!(zkdst_checker::properties::lookup(c).is_ok(), "{}: {c}", e.recipe);
            }
        }
    }
}
