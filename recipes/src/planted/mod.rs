//! Deliberately broken recipes for the harness's self-tests; **never use in
//! production** (compiled only with the crate's `planted` feature).
//!
//! Each type here reproduces one class of real recipe bug from
//! `docs/bug-catalogue.md` (Curator, Kazoo, ZooKeeper contrib), as its own
//! named type beside the correct recipe — never a flag inside the correct
//! code. The lock family (and the semaphore) are the correct recipe with
//! one of its [`crate::lock::Steps`] replaced (`lock.rs`); the others still
//! reimplement the broken operation beside the correct one. A scenario selects one with `workload.variant = "TypeName"`
//! (`scenarios/planted/*.toml`, hunted by `zkdst bench bugs`); the
//! planted-bug tests (`scenarios/tests/planted.rs`) run each against the simulated ensemble with the fault that triggers it
//! and require the checkers to report the violation, while the correct
//! recipe passes the same seeds.
//!
//! | type | class | real bug |
//! |---|---|---|
//! | [`UnprotectedCreateLock`] | unprotected create (also: the lock without a guid) | CURATOR-45 |
//! | [`StaleSessionLock`] | stale-session adoption | CURATOR-696 / 498 / 604 |
//! | [`UnfencedLock`] | expired but still acting (a lock used without fencing) | CURATOR-206, Tech Note 10 |
//! | [`ResetLivelockLatch`] | reset livelock | CURATOR-644 / 645 |
//! | [`CancellationLeakLock`] | cancellation leak | CURATOR-79 / 462 |
//! | [`DeleteUnderDisconnectLock`] | delete under disconnect | CURATOR-202 / 678 / 486 |
//! | [`LostWatchLock`] | lost watch on reconnect | kazoo PR #170, CURATOR-623 |
//! | [`LockingQueueRace`] | locking-queue race | kazoo #366 / PR #523 |
//! | [`SuspendedIgnoredMember`] | suspended ignored | kazoo SetPartitioner f9cc08f |
//! | [`LeakedLeaseSemaphore`] | leaked lease | CURATOR-315 / 595 |
//! | [`DuplicateProcessingQueue`] | duplicate processing | CURATOR-605 |
//! | [`LostItemQueue`] | lost item | kazoo `Queue.get`, Curator `SimpleDistributedQueue.take` |
//! | [`DuplicateItemQueue`] | duplicate item (also: the queue that retries enqueue blindly) | the seeds' warning |
//! | [`DoubleIncrementCounter`] | double increment | kazoo `Counter`, Curator `DistributedAtomicLong` |
//! | [`HerdLock`] | herd effect (every waiter watches the holder) | the recipes page's simple lock |
//! | [`NoAbdicationElection`] | suspended ignored, by a leader | Curator TN10, kazoo `Election.run` |
//! | [`PredecessorGoneElection`] | predecessor gone taken for leadership | the ZooKeeper recipe's warning |

mod counter;
mod election;
mod leader;
mod lock;
mod membership;
mod queue;

pub use counter::DoubleIncrementCounter;
pub use election::ResetLivelockLatch;
pub use leader::{NoAbdicationElection, PredecessorGoneElection};
pub use lock::{
    AdoptAnySession, BlindCreate, CancellationLeakLock, DeleteUnderDisconnectLock, ForgetWatchOnDisconnect, HerdLock,
    LeakedLeaseSemaphore, LostWatchLock, NoOrphanCleanup, OneDelete, StaleSessionLock, UnfencedGuard, UnfencedLock,
    UnprotectedCreateLock, WatchTheHolder,
};
pub use membership::SuspendedIgnoredMember;
pub use queue::{DuplicateItemQueue, DuplicateProcessingQueue, LockingQueueRace, LostItemQueue, PlainClaim};
