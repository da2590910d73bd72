//! Deliberately broken recipes for the harness's self-tests; **never use in
//! production** (compiled only with the crate's `planted` feature).
//!
//! Each type here reproduces one class of real recipe bug from
//! `docs/bug-catalogue.md` (Curator, Kazoo, ZooKeeper contrib), as its own
//! named type beside the correct recipe — never a flag inside the correct
//! code. Each is the correct recipe with one of its steps replaced — a
//! step impl and a type alias — so that a detection is a detection of that
//! one step: the lock family, the semaphore and the election replace one
//! of [`crate::lock::Steps`] (`lock.rs`, `leader.rs`), the queues one of
//! [`crate::queue::Steps`] (`queue.rs`), the latch, the counter and the
//! group member one of their own (`election.rs`, `counter.rs`,
//! `membership.rs`). Three are the correct recipe misused: [`UnfencedLock`]
//! (no fencing token), [`DuplicateProcessingQueue`] (sold as
//! exactly-once) and [`CancelledTakeQueue`] (a take dropped by its
//! timeout). A scenario selects one with `workload.variant =
//! "TypeName"` (`scenarios/planted/*.toml`, hunted by `zkdst bench bugs`);
//! the planted-bug tests (`scenarios/tests/planted.rs`) run each against
//! the simulated ensemble with the fault that triggers it and require the
//! checkers to report the violation, while the correct recipe passes the
//! same seeds.
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
//! | [`ClaimNameCompleteQueue`] | completion fate read from a reusable name | zkdst's own queue, found by `never-completed` |
//! | [`GoneBlockerLock`] | blocker gone before its watch taken for the turn | the recipe's step 4 ("if exists() returns null, go to step 2") |
//! | [`CancelledTakeQueue`] | take cancelled mid-flight (the queue's cancellation leak) | zkdst's own queue, found by blocking takes |

mod counter;
mod election;
mod leader;
mod lock;
mod membership;
mod queue;

use crate::ctx::Ctx;
use crate::runtime::Runtime;
use crate::zk::{ZkClient, ZkError};

/// The blind retry the planted creates and deletes share: after an
/// ambiguous failure `e` (the attempt may have been applied) it sleeps the
/// retry policy's delay and says to try again, up to 20 attempts.
async fn back_off_blindly<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, attempt: &mut u32, e: &ZkError) -> bool {
    if !e.is_ambiguous() || *attempt >= 20 {
        return false;
    }
    ctx.runtime().sleep(ctx.retry_policy().delay(*attempt)).await;
    *attempt += 1;
    true
}

pub use counter::{DoubleIncrementCounter, RetryAmbiguousSet};
pub use election::{ResetLivelockLatch, ResetOnWake};
pub use leader::{
    GoneBlockerLock, GoneIsMyTurn, NoAbdication, NoAbdicationElection, PredecessorGoneElection,
    PredecessorGoneIsMyTurn, VanishedHeadIsNobody, VanishedLeaderElection,
};
pub use lock::{
    AdoptAnySession, BlindCreate, CancellationLeakLock, DeleteUnderDisconnectLock, ForgetWatchOnDisconnect, HerdLock,
    LeakedLeaseSemaphore, LostWatchLock, NoOrphanCleanup, OneDelete, StaleSessionLock, UnfencedGuard, UnfencedLock,
    UnprotectedCreateLock, WatchTheHolder,
};
pub use membership::{IgnoreSuspension, SuspendedIgnoredMember};
pub use queue::{
    BlindItemCreate, CancelledTakeQueue, ClaimNameCompleteQueue, ClaimNameFate, DuplicateItemQueue,
    DuplicateProcessingQueue, ExistsIsAnothers, LockingQueueRace, LostItemQueue, PlainDelete,
};
