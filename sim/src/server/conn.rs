//! A client connection as the server sees it: the session it carries and
//! the session's requests in arrival order. Replies leave in that order —
//! a read waits behind the session's earlier writes (FIFO, read-your-writes).

use std::collections::VecDeque;

use zkdst_recipes::zk::{SessionId, Zxid};

use crate::proto::{Request, Response};

pub type ConnId = u64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnState {
    /// Waiting for the Connect packet.
    New,
    /// A new session is being created through the leader.
    Creating {
        session: SessionId,
        timeout_ms: i32,
    },
    /// An existing session is being revalidated with the leader.
    Revalidating {
        session: SessionId,
    },
    Open {
        session: SessionId,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// A read: executed when it reaches the head of the queue.
    Read,
    /// A write forwarded to the leader, awaiting its commit here.
    AwaitCommit,
    /// A sync, awaiting the leader's reply.
    AwaitSync,
    Done {
        zxid: Zxid,
        response: Response,
    },
}

#[derive(Debug, Clone)]
pub struct Pending {
    pub xid: i64,
    pub request: Request,
    pub stage: Stage,
    /// Sent on an earlier connection of the session, now closed: it still
    /// runs and holds the session's later requests behind it, but its reply
    /// goes nowhere.
    pub orphaned: bool,
}

impl Pending {
    /// A write or sync still on its way through the ensemble.
    pub fn in_flight(&self) -> bool {
        matches!(self.stage, Stage::AwaitCommit | Stage::AwaitSync)
    }
}

#[derive(Debug)]
pub struct Conn {
    pub state: ConnState,
    pub queue: VecDeque<Pending>,
    /// Close once the queue is drained (after a CloseSession reply).
    pub close_when_drained: bool,
}

impl Conn {
    pub fn new() -> Self {
        Conn {
            state: ConnState::New,
            queue: VecDeque::new(),
            close_when_drained: false,
        }
    }

    pub fn session(&self) -> Option<SessionId> {
        match self.state {
            ConnState::Open { session } => Some(session),
            _ => None,
        }
    }

    /// Completes the pending request `xid` (a write or sync); false if none waits.
    pub fn complete(&mut self, xid: i64, zxid: Zxid, response: Response) -> bool {
        for p in self.queue.iter_mut() {
            if p.xid == xid && p.in_flight() {
                p.stage = Stage::Done { zxid, response };
                return true;
            }
        }
        false
    }
}

impl Default for Conn {
    fn default() -> Self {
        Conn::new()
    }
}
