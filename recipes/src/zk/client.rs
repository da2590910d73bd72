//! The one client interface recipes are written against. The simulated
//! client (`zkdst-sim`) and the real-ZooKeeper adapter both implement it, so
//! a recipe runs unchanged on either.

use std::future::Future;
use std::time::Duration;

use super::error::ZkResult;
use super::event::SessionState;
use super::types::{AddWatchMode, CreateMode, MultiError, Op, OpResult, ReadOp, ReadResult, SessionId, Stat};
use super::watch::{OneshotWatch, PersistentWatch, StateWatch};

/// A ZooKeeper session handle.
///
/// Every call may fail with `ConnectionLoss`, which means the request **may
/// or may not** have been applied (ZOOKEEPER-22); with `SessionExpired` once
/// the server has expired the session (every later call fails the same way);
/// and with `InvalidPath` before anything is sent. Requests of one handle are
/// applied in the order they were issued (FIFO), and a read reflects every
/// earlier write of the same handle.
///
/// Reads are served by the connected server and may be stale with respect to
/// other sessions; call `sync` first to see everything completed before it.
/// Cloning gives another reference to the same session.
pub trait ZkClient: Clone + Send + Sync + 'static {
    /// The session id (0 before the first connection is established).
    fn session_id(&self) -> SessionId;

    /// The negotiated session timeout.
    fn session_timeout(&self) -> Duration;

    /// The current session state.
    fn state(&self) -> SessionState;

    /// A new subscription to session state transitions, starting from now.
    fn state_watch(&self) -> StateWatch;

    /// Creates a node; returns the actual path (with the sequence suffix for
    /// sequential modes) and the new node's Stat.
    fn create(
        &self,
        path: &str,
        data: &[u8],
        mode: CreateMode,
    ) -> impl Future<Output = ZkResult<(String, Stat)>> + Send;

    /// Deletes a node if its version matches (`ANY_VERSION` matches any).
    fn delete(&self, path: &str, version: i32) -> impl Future<Output = ZkResult<()>> + Send;

    /// The node's Stat, or `None` if it does not exist.
    fn exists(&self, path: &str) -> impl Future<Output = ZkResult<Option<Stat>>> + Send;

    /// Like `exists`, and sets a watch that fires on create, delete or data
    /// change — set even when the node does not exist.
    fn exists_watch(&self, path: &str) -> impl Future<Output = ZkResult<(Option<Stat>, OneshotWatch)>> + Send;

    fn get_data(&self, path: &str) -> impl Future<Output = ZkResult<(Vec<u8>, Stat)>> + Send;

    /// Like `get_data`, and sets a watch for data change or delete. No watch
    /// is set when the node does not exist (`NoNode`).
    fn get_data_watch(&self, path: &str) -> impl Future<Output = ZkResult<(Vec<u8>, Stat, OneshotWatch)>> + Send;

    /// The children's names, in no particular order, and the parent's Stat.
    fn get_children(&self, path: &str) -> impl Future<Output = ZkResult<(Vec<String>, Stat)>> + Send;

    /// Like `get_children`, and sets a watch for a child created or deleted,
    /// or the node itself deleted.
    fn get_children_watch(
        &self,
        path: &str,
    ) -> impl Future<Output = ZkResult<(Vec<String>, Stat, OneshotWatch)>> + Send;

    /// Sets a node's data if its version matches; returns the new Stat.
    fn set_data(&self, path: &str, data: &[u8], version: i32) -> impl Future<Output = ZkResult<Stat>> + Send;

    /// Applies all ops atomically at one zxid, or none of them.
    fn multi(&self, ops: Vec<Op>) -> impl Future<Output = Result<Vec<OpResult>, MultiError>> + Send;

    /// Runs the reads one after another at one point of the server's applied
    /// state (ZooKeeper's multiRead); each read succeeds or fails on its own.
    /// The call as a whole fails only as any request does (ConnectionLoss,
    /// SessionExpired, a bad path). No watches are set.
    fn multi_read(&self, ops: Vec<ReadOp>) -> impl Future<Output = ZkResult<Vec<ReadResult>>> + Send;

    /// Makes the connected server catch up with the leader: reads issued after
    /// `sync` returns see every write completed before it was called.
    fn sync(&self, path: &str) -> impl Future<Output = ZkResult<()>> + Send;

    /// Adds a persistent (or persistent-recursive) watch on `path`.
    fn add_watch(&self, path: &str, mode: AddWatchMode) -> impl Future<Output = ZkResult<PersistentWatch>> + Send;

    /// Closes the session: its ephemerals are deleted and every later call
    /// fails. Idempotent.
    fn close(&self) -> impl Future<Output = ()> + Send;
}
