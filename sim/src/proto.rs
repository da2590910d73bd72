//! What travels over the simulated network: client ↔ server packets and
//! server ↔ server messages. They travel as typed values (see `net`).

use std::sync::Arc;

use zkdst_recipes::zk::{
    AddWatchMode, CreateMode, EventType, MultiError, Op, OpResult, ReadOp, ReadResult, SessionId, Stat, ZkError, Zxid,
};

use zkdst_history::Names;

use crate::tree::{DataTree, Txn};
use crate::zab::{Msg, ServerId};

/// The log entry payload: the transaction and its header.
pub type LogTxn = Arc<LoggedTxn>;
/// A snapshot's payload: the applied tree with its session table. The tree
/// is persistent (im), so a snapshot shares structure with the live tree
/// and costs O(1) to take and to load, like ZooKeeper's fuzzy snapshot
/// written in the background, without a serialized copy per snapshot.
pub type SnapImage = Arc<DataTree>;

/// A transaction as logged: ZooKeeper's TxnHeader (session, cxid, time) and
/// the transaction. The header lets the server holding the session's
/// connection answer it when the entry commits.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedTxn {
    pub session: SessionId,
    pub xid: i64,
    pub time_ms: i64,
    pub txn: Txn,
}

/// A client request.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Create {
        path: String,
        data: Vec<u8>,
        mode: CreateMode,
    },
    Delete {
        path: String,
        version: i32,
    },
    SetData {
        path: String,
        data: Vec<u8>,
        version: i32,
    },
    Multi(Vec<Op>),
    /// ZooKeeper's multiRead: reads served together from the server's tree.
    MultiRead(Vec<ReadOp>),
    Exists {
        path: String,
        watch: bool,
    },
    GetData {
        path: String,
        watch: bool,
    },
    GetChildren {
        path: String,
        watch: bool,
    },
    Sync {
        path: String,
    },
    AddWatch {
        path: String,
        mode: AddWatchMode,
    },
    CloseSession,
}

impl Request {
    /// Writes go through the leader and the log.
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Request::Create { .. }
                | Request::Delete { .. }
                | Request::SetData { .. }
                | Request::Multi(_)
                | Request::CloseSession
        )
    }

    /// Approximate encoded size, for the `jute.maxbuffer` check.
    pub fn wire_len(&self) -> usize {
        let ops_len = |ops: &Vec<Op>| {
            ops.iter()
                .map(|o| match o {
                    Op::Create { path, data, .. } | Op::SetData { path, data, .. } => 16 + path.len() + data.len(),
                    Op::Delete { path, .. } | Op::Check { path, .. } => 16 + path.len(),
                })
                .sum::<usize>()
        };
        match self {
            Request::Create { path, data, .. } | Request::SetData { path, data, .. } => 28 + path.len() + data.len(),
            Request::Multi(ops) => 16 + ops_len(ops),
            Request::MultiRead(ops) => 16 + ops.iter().map(|o| 16 + o.path().len()).sum::<usize>(),
            Request::Delete { path, .. }
            | Request::Exists { path, .. }
            | Request::GetData { path, .. }
            | Request::GetChildren { path, .. }
            | Request::Sync { path }
            | Request::AddWatch { path, .. } => 20 + path.len(),
            Request::CloseSession => 12,
        }
    }
}

/// A reply to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    Create {
        path: String,
        stat: Stat,
    },
    Delete,
    SetData {
        stat: Stat,
    },
    Multi(Vec<OpResult>),
    MultiFailed(MultiError),
    MultiRead(Vec<ReadResult>),
    Exists(Option<Stat>),
    GetData {
        data: Vec<u8>,
        stat: Stat,
    },
    /// `children` in the server's (unspecified, shuffled) order; `sorted`
    /// the same names sorted and shared, as the history records them
    /// (sorting the client's copy again cost an eighth of a seed on large
    /// directories).
    GetChildren {
        children: Vec<String>,
        sorted: Names,
        stat: Stat,
    },
    Sync,
    AddWatch,
    CloseSession,
    Error(ZkError),
}

/// Client → server.
#[derive(Debug, Clone, PartialEq)]
pub enum ToServer {
    /// `session == 0` asks for a new session.
    Connect {
        session: SessionId,
        last_zxid: Zxid,
        timeout_ms: i32,
    },
    /// Re-registers the client's watches after a reconnect.
    SetWatches {
        relative_zxid: Zxid,
        data: Vec<String>,
        exist: Vec<String>,
        child: Vec<String>,
        persistent: Vec<String>,
        persistent_recursive: Vec<String>,
    },
    Request {
        xid: i64,
        request: Request,
    },
    Ping,
}

/// Server → client.
#[derive(Debug, Clone, PartialEq)]
pub enum ToClient {
    /// `timeout_ms == 0`: the session is expired (or unknown).
    Connected {
        session: SessionId,
        timeout_ms: i32,
        server: ServerId,
    },
    Reply {
        xid: i64,
        zxid: Zxid,
        response: Response,
    },
    /// A watch notification (ZooKeeper's xid -1 packet).
    Event {
        event_type: EventType,
        path: String,
        zxid: Zxid,
    },
    Pong {
        zxid: Zxid,
    },
}

/// Server → server.
#[derive(Debug, Clone, PartialEq)]
pub enum PeerMsg {
    /// First message on a connection: who is calling.
    Hello {
        from: ServerId,
    },
    /// A learner's message to its leader, stamped with the epoch it follows:
    /// a leader drops one from another epoch (a stale message delivered
    /// late, which in ZooKeeper dies with the learner's old connection).
    ToLeader {
        epoch: u32,
        msg: Box<PeerMsg>,
    },
    Zab(Msg<LogTxn, SnapImage>),
    /// A learner forwards a client's write to the leader.
    Forward {
        session: SessionId,
        xid: i64,
        request: ForwardedWrite,
    },
    /// Sessions heard from since the last report (learner → leader).
    Touch(Vec<SessionId>),
    /// A learner asks the leader to flush pending commits for a sync.
    SyncRequest {
        session: SessionId,
        xid: i64,
    },
    /// The leader's commit point when it answered: the learner answers the
    /// client only once it has applied that far.
    SyncReply {
        session: SessionId,
        xid: i64,
        zxid: Zxid,
    },
    /// A learner asks whether a reconnecting session is still alive.
    Revalidate {
        session: SessionId,
        conn: u64,
    },
    /// `timeout_ms == 0`: expired.
    Revalidated {
        session: SessionId,
        conn: u64,
        timeout_ms: i32,
    },
}

/// A write forwarded to the leader.
#[derive(Debug, Clone, PartialEq)]
pub enum ForwardedWrite {
    Request(Request),
    CreateSession { timeout_ms: i32 },
}
