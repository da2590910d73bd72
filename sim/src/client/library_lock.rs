//! The client library's own lock recipe as a subject under test —
//! zookeeper-client's `Client::lock`, whose `LockClient` is a lock people
//! ship. The workload takes it through `LibraryClient::lock` exactly as an
//! application would (acquire, write through the hold, drop to release), so
//! the hold checkers judge the library's code, not zkdst's recipes.

use std::any::Any;

use futures::future::BoxFuture;
use zkdst_recipes::zk::ZkResult;

zkdst_model::words! {
    /// How the library names its lock nodes.
    pub enum LockPrefix {
        /// Curator's `{dir}/_c_{uuid}-lock-{seq}`: a contender finds its own
        /// node after a lost create reply by its uuid.
        Curator = "curator",
        /// One shared `{dir}/lock-{seq}` prefix: a contender finds its node
        /// by its session (the ephemeral owner); one contender per session.
        Shared = "shared",
    }
}

/// A lock the library granted. Dropping it releases the lock (the library
/// deletes the node in the background, as `LockClient` does).
pub trait LibraryHold: Send + Sync + 'static {
    /// The lock node's path.
    fn node(&self) -> &str;
    /// The lock node's czxid when the hold was granted (`None`: the node
    /// was already gone): a fencing token that, unlike the sequence number,
    /// keeps increasing when the lock's directory is deleted and recreated.
    fn czxid(&self) -> Option<i64>;
    /// Sets `path`'s data in a multi that first checks the lock node still
    /// exists: the library's own fenced write (`LockClient::set_data`).
    fn checked_set<'a>(&'a self, path: &'a str, data: &'a [u8]) -> BoxFuture<'a, ZkResult<()>>;
}

/// The library's lock: contends for the lock in `dir` on the session `zk`
/// (the library's adapter, as its `connect` returned it), creating `dir`
/// if it is missing.
pub type LockFn =
    for<'a> fn(&'a (dyn Any + Send + Sync), &'a str, LockPrefix) -> BoxFuture<'a, ZkResult<Box<dyn LibraryHold>>>;
