//! A broken counter: the correct [`Counter`] with its ambiguous-write step
//! replaced.

use crate::counter::{Counter, Steps, WriteFate};
use crate::ctx::Ctx;
use crate::error::RecipeResult;
use crate::guid::Guid;
use crate::runtime::Runtime;
use crate::zk::ZkClient;

/// Double increment (kazoo `Counter`; Curator `DistributedAtomicLong`,
/// optimistic mode): read the value and version, `setData(value + delta,
/// version)`, and on any failure — ConnectionLoss included — re-read and
/// try again. A `setData` applied with its reply lost is applied a second
/// time: the counter runs ahead of the acknowledged increments.
pub type DoubleIncrementCounter<C, R> = Counter<C, R, RetryAmbiguousSet>;

/// A ConnectionLoss on the conditional set is taken for "not applied".
#[derive(Debug, Clone, Copy, Default)]
pub struct RetryAmbiguousSet;

impl Steps for RetryAmbiguousSet {
    async fn fate<C: ZkClient, R: Runtime>(&self, _: &Ctx<C, R>, _: &str, _: Guid, _: i32) -> RecipeResult<WriteFate> {
        // BUG: the set may have been applied; it is retried from a re-read.
        Ok(WriteFate::NotApplied)
    }
}
