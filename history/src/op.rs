//! What an operation is, what it returned, and what a server committed.

use serde::{Deserialize, Serialize};

use super::{CreateMode, Data, Names, SessionId, Stat};

/// An operation a client invoked: a ZooKeeper call, a recipe-level action,
/// or an operation on a generic object (register, key/value) from a
/// third-party history.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "f", rename_all = "snake_case")]
pub enum Op {
    // --- ZooKeeper calls ---
    Create {
        path: String,
        data: Data,
        mode: CreateMode,
    },
    Delete {
        path: String,
        version: i32,
    },
    SetData {
        path: String,
        data: Data,
        version: i32,
    },
    Check {
        path: String,
        version: i32,
    },
    GetData {
        path: String,
        #[serde(default)]
        watch: bool,
    },
    Exists {
        path: String,
        #[serde(default)]
        watch: bool,
    },
    GetChildren {
        path: String,
        #[serde(default)]
        watch: bool,
    },
    Sync {
        path: String,
    },
    Multi {
        ops: Vec<Op>,
    },
    /// ZooKeeper's multiRead: `get_data` / `get_children` ops (no watches),
    /// each answered on its own.
    MultiRead {
        ops: Vec<Op>,
    },
    AddWatch {
        path: String,
        recursive: bool,
    },
    CloseSession,

    // --- generic objects (registers, key/value stores) ---
    /// Read a register or key (`key: None` for a single register).
    Read {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
    },
    Write {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        value: i64,
    },
    Cas {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
        expected: i64,
        new: i64,
    },
    Append {
        key: String,
        value: String,
    },
    Put {
        key: String,
        value: String,
    },
    Get {
        key: String,
    },

    // --- recipes ---
    /// Acquire a lock; `shared` for the read side of a read/write lock.
    /// Returns `Value::Token` (the fencing token).
    Acquire {
        lock: String,
        #[serde(default)]
        shared: bool,
    },
    Release {
        lock: String,
    },
    /// A write to a protected resource carrying a fencing token; the resource
    /// answers Ok if it accepted it.
    FencedWrite {
        resource: String,
        token: i64,
    },
    Enqueue {
        queue: String,
        item: String,
        #[serde(default)]
        priority: i64,
    },
    /// Returns `Value::Item` (`None` when empty, for a non-blocking take).
    Dequeue {
        queue: String,
    },
    /// An at-least-once consumer finishing `item` it claimed: Ok means the
    /// item is gone for good; a definite failure (`fail`) means the claim
    /// was lost and the item stays for another consumer.
    Complete {
        queue: String,
        item: String,
    },
    /// Asks how many items a queue holds: `len()` answers `Value::Int`,
    /// `is_empty()` answers `Value::Bool`.
    QueueLen {
        queue: String,
    },
    /// Stand for election; returns `Value::Token` (the leader's epoch/token)
    /// once elected.
    Campaign {
        election: String,
    },
    /// Stop leading (or stop campaigning).
    Resign {
        election: String,
    },
    /// Asks who leads (an election's `leader()`): returns the leader's epoch
    /// (its candidate node's czxid) as `Value::Token`, or `Value::Nil` when
    /// nobody stands.
    LeaderQuery {
        election: String,
    },
    /// A leader acting as leader with its token (checked: one leader per epoch).
    LeaderAct {
        election: String,
        token: i64,
    },
    /// The recipe told its leader that the leadership with `token` ended
    /// (session ended, node deleted, suspended past the grace): recorded
    /// the instant the application learned it, invoked and completed at once.
    LeadershipLost {
        election: String,
        token: i64,
        reason: String,
    },
    /// The recipe told a holder that its hold of `lock` with `token` is
    /// lost (a lock guard's `is_lost()`): recorded the instant the
    /// application learned it, invoked and completed at once.
    HoldLost {
        lock: String,
        token: i64,
    },
    /// What a holder's guard said of its hold of `lock` with `token` when
    /// the application asked before acting, the hold not lost: suspended
    /// (its client Disconnected) or held. Invoked and completed at once.
    HoldState {
        lock: String,
        token: i64,
        suspended: bool,
    },
    /// What a revocable holder's guard said of revocation: whether another
    /// client asked it to release (`revoke_requested()`), asked when the
    /// hold began and, with `heard`, the instant `revocation_requested()`
    /// resolved. Invoked and completed at once.
    RevokeState {
        lock: String,
        token: i64,
        requested: bool,
        #[serde(default)]
        heard: bool,
    },
    /// The node a hold of `lock` with `token` stands on, as the recipe's
    /// guard names it: path, name, sequence number and the Stat it was
    /// created with. Recorded right after the acquire, invoked and
    /// completed at once (checked against the commit log: `hold-node`).
    HoldNode {
        lock: String,
        token: i64,
        path: String,
        name: String,
        sequence: i32,
        stat: Stat,
    },
    BarrierEnter {
        barrier: String,
    },
    BarrierLeave {
        barrier: String,
    },
    /// Wait until the barrier is removed / N have entered.
    BarrierWait {
        barrier: String,
    },
    /// Put a single barrier up (its node created): waits invoked after this
    /// completed must not return before a `BarrierRemove`.
    BarrierSet {
        barrier: String,
    },
    /// Take a single barrier down (its node deleted): releases the waiters.
    BarrierRemove {
        barrier: String,
    },
    /// Returns the new value as `Value::Int`.
    Increment {
        counter: String,
        delta: i64,
    },
    CounterRead {
        counter: String,
    },
    Join {
        group: String,
        member: String,
    },
    Leave {
        group: String,
        member: String,
    },
    /// A member acting on its standing in the group (as a partition owner
    /// acts on the partitions its view assigns it): recorded only while
    /// the recipe reported the member Joined, invoked and completed at once.
    MemberAct {
        group: String,
        member: String,
    },
    /// Returns the member's view of the group as `Value::View` (or, from
    /// older histories, the names alone as `Value::Names`).
    Members {
        group: String,
        /// A wait for a change: the view must be newer than this zxid (that
        /// of the view the client last saw).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        newer_than: Option<i64>,
    },
    /// Publishes `value` (unique per set); with `expected_version`, only
    /// over that version of the key (a conditional set). A conditional set
    /// returns the version it wrote as `Value::Versioned`, and fails (a
    /// definite `Fail`) only if it was not applied.
    ConfigSet {
        key: String,
        value: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expected_version: Option<i64>,
    },
    /// Returns the value seen as `Value::Item` with its version in `Value::Versioned`.
    ConfigGet {
        key: String,
        /// A wait for a change: the value must be newer than this version
        /// (the one the client last saw).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        newer_than: Option<i64>,
    },
    /// A two-phase-commit site's vote.
    Vote {
        txn: String,
        site: String,
        commit: bool,
    },
    /// The decision a site or the coordinator reached: `Value::Bool(true)` = commit.
    Decide {
        txn: String,
        site: String,
    },
    Acquired {
        semaphore: String,
    },
    Returned {
        semaphore: String,
    },
}

impl Op {
    /// A ZooKeeper call (create, getData, multi ...) rather than a
    /// recipe-level operation a workload records (acquire, enqueue ...).
    pub fn is_zookeeper_call(&self) -> bool {
        matches!(
            self,
            Op::Create { .. }
                | Op::Delete { .. }
                | Op::SetData { .. }
                | Op::Check { .. }
                | Op::GetData { .. }
                | Op::Exists { .. }
                | Op::GetChildren { .. }
                | Op::Sync { .. }
                | Op::Multi { .. }
                | Op::MultiRead { .. }
                | Op::AddWatch { .. }
                | Op::CloseSession
        )
    }
}

/// How an operation ended.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outcome {
    /// The operation took effect (or, for a read, observed) with this result.
    /// A ZooKeeper error reply such as `NodeExists` is an `Ok` whose value is
    /// `Value::Error`: the server decided it, at a zxid.
    Ok { value: Value },
    /// Definitely did not take effect (rejected before sending, or the
    /// session was already known to be gone).
    Fail { error: String },
    /// Unknown: may have taken effect at any time after the invocation
    /// (ConnectionLoss, a timeout).
    Info { error: String },
}

/// A returned value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Value {
    Unit,
    /// A ZooKeeper error reply (`NoNode`, `BadVersion`, ...): the operation
    /// was decided by the server and changed nothing. For a failed multi,
    /// `results` holds the per-op codes.
    Error {
        code: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        results: Vec<MultiOpResult>,
    },
    Created {
        path: String,
        stat: Stat,
    },
    Stat {
        stat: Option<Stat>,
    },
    Data {
        data: Data,
        stat: Stat,
    },
    Children {
        children: Names,
        stat: Stat,
    },
    Multi {
        results: Vec<MultiOpResult>,
    },
    /// A multiRead's results, one per op: `Data`, `ChildNames` or `Error`.
    Reads {
        results: Vec<Value>,
    },
    /// A multiRead's getChildren result: names only (ZooKeeper's
    /// GetChildrenResult has no Stat), sorted.
    ChildNames {
        children: Names,
    },
    Int {
        value: i64,
    },
    /// Absent register / key (a read of nil).
    Nil,
    Str {
        value: String,
    },
    Bool {
        value: bool,
    },
    /// A fencing token or leadership epoch.
    Token {
        token: i64,
    },
    /// A taken item (`None`: nothing to take), and the priority the
    /// recipe reported for it, where it reports one.
    Item {
        item: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        priority: Option<i64>,
    },
    Versioned {
        value: Option<String>,
        version: i64,
    },
    Names {
        names: Vec<String>,
    },
    /// A group membership view: the member ids, sorted, as of `zxid` (the
    /// group node's pzxid when the view was read).
    View {
        members: Vec<String>,
        zxid: i64,
    },
}

/// One op's result inside a multi.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MultiOpResult {
    Create {
        path: String,
        stat: Stat,
    },
    Delete,
    SetData {
        stat: Stat,
    },
    Check,
    /// `code` is `Ok` for ops before the failing one, the error for the
    /// failing op, `RuntimeInconsistency` after it.
    Error {
        code: String,
    },
}

/// A committed transaction, as a history records it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TxnRecord {
    CreateSession {
        session: SessionId,
        timeout_ms: i64,
    },
    /// A session ended (closed or expired); its ephemerals went with it.
    CloseSession {
        session: SessionId,
        #[serde(default)]
        expired: bool,
        deleted: Vec<String>,
    },
    Create {
        path: String,
        data: Data,
        #[serde(default)]
        ephemeral_owner: SessionId,
        #[serde(default)]
        session: SessionId,
    },
    Delete {
        path: String,
    },
    SetData {
        path: String,
        data: Data,
        version: i32,
    },
    Check {
        path: String,
    },
    Multi {
        txns: Vec<TxnRecord>,
    },
    /// A request the server decided as an error: it changed nothing.
    Error {
        code: String,
    },
}
