//! One byte-stream client connection as a 3.8 server handles it, in front
//! of the typed server core: frames in, typed packets to the core, the
//! core's packets back out as frames.
//!
//! ZooKeeper's rules kept here:
//! - the first frame is a ConnectRequest (or a four-letter word); frames
//!   that follow it before the ConnectResponse are held, as the server
//!   disables receive until the session is set up (`disableRecv`);
//! - a reconnect with the wrong password, or to an expired session, gets
//!   timeOut 0, sessionId 0 and a 16-byte zero password, then the close;
//! - replies leave in request order, pings included (CommitProcessor
//!   queues them behind the session's pending writes), so the requests the
//!   connection answers itself wait at their place in that order; auth and
//!   sasl are answered on receipt, as `processPacket` answers them;
//! - a frame that does not decode closes the connection.
//!
//! Every frame it reads and writes, and its close with the reason, goes to
//! its log ([`WireConn::take_log`]): the servers' record of the connection
//! in the history, on which client libraries are judged.

use std::collections::VecDeque;

use madsim::task::NodeId;
use zkdst_history::{CloseReason, ClosedBy, ConnEvent};
use zkdst_recipes::zk::SessionId;
use zkdst_wire as w;
use zkdst_wire::{ErrorCode, FrameDecoder, Limits, ServerReply};

use super::convert::{self, Shape};
use crate::proto::{ToClient, ToServer};
use crate::server::{ConnId, ServerCore};

/// The password a session gets: derived from its id, so that a server
/// restarted from disk checks it as ZooKeeper does with its secret.
pub fn session_passwd(session: SessionId) -> Vec<u8> {
    let mut p = session.to_be_bytes().to_vec();
    p.extend_from_slice(&(session ^ 0x5a17_c0de_7a11_5eed).rotate_left(17).to_be_bytes());
    p
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the ConnectRequest.
    New,
    /// The ConnectRequest went to the core; later frames are held.
    Connecting,
    Open(SessionId),
    Closed,
}

/// A request the connection answers itself, when it reaches the head.
#[derive(Debug, Clone)]
enum Local {
    Error(ErrorCode),
    SetWatches(ToServer),
    RemoveWatches { path: String, kind: i32, remove: bool },
    GetEphemerals(String),
    GetAllChildrenNumber(String),
    SetAcl(String),
}

#[derive(Debug)]
enum Entry {
    /// Sent to the core; `done` once its reply came back.
    Core {
        xid: i32,
        shape: Shape,
        done: Option<ServerReply>,
    },
    Local {
        xid: i32,
        op: Local,
    },
    /// A core request received behind a `Local` not yet run: sent to the
    /// core once every `Local` before it has run. The server applies a
    /// session's requests in order, and the core would apply it at once —
    /// a RemoveWatches run afterwards would remove the watch a later
    /// exists had just set.
    Held {
        xid: i32,
        shape: Shape,
        msg: ToServer,
    },
}

/// A wire connection's state. Feed it frames with [`WireConn::receive`] and
/// the core's packets with [`WireConn::deliver`]; take the bytes to send
/// with [`WireConn::take_output`].
#[derive(Debug)]
pub struct WireConn {
    id: ConnId,
    /// The node that opened it.
    peer: NodeId,
    decoder: FrameDecoder,
    phase: Phase,
    held: VecDeque<Vec<u8>>,
    queue: VecDeque<Entry>,
    out: Vec<u8>,
    /// The connection closes once `out` is sent.
    close: bool,
    /// Why it closes (set with `close`).
    reason: Option<CloseReason>,
    /// What this connection saw since the last `take_log`.
    log: Vec<ConnEvent>,
}

impl WireConn {
    pub fn new(id: ConnId, peer: NodeId) -> Self {
        WireConn {
            id,
            peer,
            decoder: FrameDecoder::new(Limits::default()),
            phase: Phase::New,
            held: VecDeque::new(),
            queue: VecDeque::new(),
            out: Vec::new(),
            close: false,
            reason: None,
            log: Vec::new(),
        }
    }

    /// The node that opened the connection.
    pub fn peer(&self) -> NodeId {
        self.peer
    }

    /// The frames read and written and the close, since the last call.
    pub fn take_log(&mut self) -> Vec<ConnEvent> {
        std::mem::take(&mut self.log)
    }

    /// The server closes the connection for `reason` (its shell, for a
    /// close the core decided).
    pub fn closed_by_server(&mut self, reason: CloseReason) {
        if self.reason.is_none() {
            self.reason = Some(reason);
            self.log.push(ConnEvent::Close {
                by: ClosedBy::Server,
                reason,
            });
        }
        self.phase = Phase::Closed;
        self.close = true;
    }

    /// The client's end of stream.
    pub fn closed_by_client(&mut self) {
        if self.reason.is_none() {
            self.reason = Some(CloseReason::ClientEof);
            self.log.push(ConnEvent::Close {
                by: ClosedBy::Client,
                reason: CloseReason::ClientEof,
            });
        }
        self.phase = Phase::Closed;
        self.close = true;
    }

    /// Bytes to send, and why the connection must close after them (if it
    /// must).
    pub fn take_output(&mut self) -> (Vec<u8>, Option<CloseReason>) {
        (std::mem::take(&mut self.out), self.reason.filter(|_| self.close))
    }

    /// Bytes from the client: every whole frame is acted on.
    pub fn receive(&mut self, bytes: &[u8], core: &mut ServerCore, now_ms: u64) {
        if self.close {
            return;
        }
        self.decoder.push(bytes);
        // Before the first frame, the first 4 bytes may be a four-letter
        // word instead of a length (they may arrive in pieces).
        if let (Phase::New, [a, b, c, d, ..]) = (self.phase, self.decoder.buffered()) {
            if let Some(word) = w::frame::four_letter_word([*a, *b, *c, *d]) {
                // 3.8's default whitelist holds `srvr` only; the simulator
                // runs no admin commands, as if the whitelist were empty.
                self.out.extend_from_slice(
                    format!("{word} is not executed because it is not in the whitelist.\n").as_bytes(),
                );
                return self.shut(core, CloseReason::FourLetterWord);
            }
        }
        loop {
            match self.decoder.next_frame() {
                Ok(Some(frame)) => self.frame(frame, core, now_ms),
                Ok(None) => break,
                Err(_) => return self.shut(core, CloseReason::BadFrame),
            }
            if self.close {
                return;
            }
        }
    }

    fn shut(&mut self, core: &mut ServerCore, reason: CloseReason) {
        self.closed_by_server(reason);
        core.on_client_closed(self.id);
    }

    fn frame(&mut self, frame: Vec<u8>, core: &mut ServerCore, now_ms: u64) {
        match self.phase {
            Phase::New => {
                let Ok(req) = w::decode_connect_request(&frame) else {
                    return self.shut(core, CloseReason::BadFrame);
                };
                self.phase = Phase::Connecting;
                let password_ok = req.session_id == 0 || req.passwd == session_passwd(req.session_id);
                self.log.push(ConnEvent::Connect {
                    session: req.session_id,
                    last_zxid_seen: req.last_zxid_seen,
                    timeout_ms: req.time_out,
                    read_only: req.read_only.unwrap_or(false),
                    password_ok,
                });
                if !password_ok {
                    // `reopenSession` with a bad password: finishSessionInit(false).
                    self.expired_reply();
                    return self.shut(core, CloseReason::SessionRefused);
                }
                core.on_client(
                    now_ms,
                    self.id,
                    ToServer::Connect {
                        session: req.session_id,
                        last_zxid: req.last_zxid_seen,
                        timeout_ms: req.time_out,
                    },
                );
            }
            Phase::Connecting => self.held.push_back(frame),
            Phase::Open(session) => self.request(frame, session, core, now_ms),
            Phase::Closed => {}
        }
    }

    fn request(&mut self, frame: Vec<u8>, session: SessionId, core: &mut ServerCore, now_ms: u64) {
        let Ok(req) = w::decode_request(&frame) else {
            return self.shut(core, CloseReason::BadFrame);
        };
        let xid = req.xid;
        self.log.push(ConnEvent::Request {
            xid,
            op: format!("{:?}", req.request.opcode()),
        });
        use w::Request as R;
        let local = match &req.request {
            R::Ping => return self.submit(xid, Shape::Ping, ToServer::Ping, core, now_ms),
            R::Auth(a) => {
                // Answered on receipt. `digest` and `ip` are the providers a
                // 3.8 server has by default; any other scheme is AuthFailed,
                // and the server closes the connection after saying so.
                let ok = a.scheme == "digest" || a.scheme == "ip";
                let result = if ok {
                    Ok(w::Response::Auth)
                } else {
                    Err(ErrorCode::AuthFailed)
                };
                self.emit(&ServerReply { xid, zxid: 0, result });
                if !ok {
                    self.shut(core, CloseReason::AuthFailed);
                }
                return;
            }
            R::Sasl(_) => {
                // No SASL login is configured on the simulated servers.
                self.emit(&ServerReply {
                    xid,
                    zxid: 0,
                    result: Err(ErrorCode::AuthFailed),
                });
                return self.shut(core, CloseReason::AuthFailed);
            }
            R::SetWatches(s) => self.set_watches(ToServer::SetWatches {
                relative_zxid: s.relative_zxid,
                data: sorted(&s.data_watches),
                exist: sorted(&s.exist_watches),
                child: sorted(&s.child_watches),
                persistent: Vec::new(),
                persistent_recursive: Vec::new(),
            }),
            R::SetWatches2(s) => self.set_watches(ToServer::SetWatches {
                relative_zxid: s.relative_zxid,
                data: sorted(&s.data_watches),
                exist: sorted(&s.exist_watches),
                child: sorted(&s.child_watches),
                persistent: sorted(&s.persistent_watches),
                persistent_recursive: sorted(&s.persistent_recursive_watches),
            }),
            R::RemoveWatches(r) => Local::RemoveWatches {
                path: r.path.clone(),
                kind: r.watcher_type,
                remove: true,
            },
            R::CheckWatches(r) => Local::RemoveWatches {
                path: r.path.clone(),
                kind: r.watcher_type,
                remove: false,
            },
            R::GetEphemerals(p) => Local::GetEphemerals(p.path.clone()),
            R::GetAllChildrenNumber(p) => Local::GetAllChildrenNumber(p.path.clone()),
            // reconfigEnabled is false by default in 3.8.
            R::Reconfig(_) => Local::Error(ErrorCode::ReconfigDisabled),
            R::SetAcl(s) => Local::SetAcl(s.path.clone()),
            other => match convert::core_request(other) {
                Some((shape, Ok(request))) => {
                    let msg = ToServer::Request {
                        xid: xid as i64,
                        request,
                    };
                    self.submit(xid, shape, msg, core, now_ms);
                    return self.release(session, core, now_ms);
                }
                Some((_, Err(e))) => Local::Error(convert::code(&e)),
                // The requests the connection answers itself are matched above.
                None => Local::Error(ErrorCode::Unimplemented),
            },
        };
        self.queue.push_back(Entry::Local { xid, op: local });
        self.release(session, core, now_ms);
    }

    /// A SetWatches, recorded as the server reads it.
    fn set_watches(&mut self, msg: ToServer) -> Local {
        if let ToServer::SetWatches {
            relative_zxid,
            data,
            exist,
            child,
            ..
        } = &msg
        {
            self.log.push(ConnEvent::SetWatches {
                relative_zxid: *relative_zxid,
                data: data.clone(),
                exist: exist.clone(),
                child: child.clone(),
            });
        }
        Local::SetWatches(msg)
    }

    /// A packet from the core for this connection.
    pub fn deliver(&mut self, msg: ToClient, core: &mut ServerCore, now_ms: u64) {
        if self.close {
            return;
        }
        match msg {
            ToClient::Connected {
                session, timeout_ms, ..
            } => {
                if timeout_ms <= 0 {
                    self.expired_reply();
                    self.closed_by_server(CloseReason::SessionRefused);
                    return;
                }
                let rsp = w::ConnectResponse {
                    protocol_version: 0,
                    time_out: timeout_ms,
                    session_id: session,
                    passwd: session_passwd(session),
                    read_only: Some(false),
                };
                self.out.extend(w::encode_connect_response(&rsp));
                self.log.push(ConnEvent::Established { session, timeout_ms });
                self.phase = Phase::Open(session);
                while let Some(frame) = self.held.pop_front() {
                    self.request(frame, session, core, now_ms);
                    if self.close {
                        return;
                    }
                }
            }
            ToClient::Event { event_type, path, .. } => {
                let event = w::WatcherEvent {
                    event_type: convert::event_type(event_type),
                    state: w::KeeperState::SyncConnected,
                    path,
                };
                self.log.push(ConnEvent::Notification {
                    path: event.path.clone(),
                    event: format!("{:?}", event.event_type),
                    zxid: w::response::NOTIFICATION_ZXID,
                });
                self.out.extend(w::encode_notification(&event));
            }
            ToClient::Pong { zxid } => {
                self.fill(w::xid::PING, zxid, |_| Ok(w::Response::Ping));
                if let Phase::Open(s) = self.phase {
                    self.release(s, core, now_ms);
                }
            }
            ToClient::Reply { xid, zxid, response } => {
                self.fill(xid as i32, zxid, |shape| convert::shape_reply(shape, response));
                if let Phase::Open(s) = self.phase {
                    self.release(s, core, now_ms);
                }
            }
        }
    }

    /// The reply to the oldest unanswered request `xid` (pings: -2) is in.
    fn fill(&mut self, xid: i32, zxid: i64, result: impl FnOnce(&Shape) -> Result<w::Response, ErrorCode>) {
        for e in self.queue.iter_mut() {
            if let Entry::Core { xid: x, shape, done } = e {
                if *x == xid && done.is_none() {
                    *done = Some(ServerReply {
                        xid,
                        zxid,
                        result: result(shape),
                    });
                    return;
                }
            }
        }
    }

    /// Sends a core request on, or holds it behind a `Local` still queued.
    fn submit(&mut self, xid: i32, shape: Shape, msg: ToServer, core: &mut ServerCore, now_ms: u64) {
        if self.queue.iter().any(|e| !matches!(e, Entry::Core { .. })) {
            self.queue.push_back(Entry::Held { xid, shape, msg });
            return;
        }
        self.queue.push_back(Entry::Core { xid, shape, done: None });
        core.on_client(now_ms, self.id, msg);
    }

    /// Sends the held core requests that no `Local` precedes any more.
    fn send_held(&mut self, core: &mut ServerCore, now_ms: u64) {
        for e in self.queue.iter_mut() {
            match e {
                Entry::Core { .. } => {}
                Entry::Local { .. } => return,
                Entry::Held { xid, shape, .. } => {
                    let (xid, shape) = (*xid, shape.clone());
                    let Entry::Held { msg, .. } = std::mem::replace(e, Entry::Core { xid, shape, done: None }) else {
                        unreachable!("matched above")
                    };
                    core.on_client(now_ms, self.id, msg);
                }
            }
        }
    }

    /// Sends every reply at the head of the queue that is ready, answering
    /// the connection's own requests as they reach the head.
    fn release(&mut self, session: SessionId, core: &mut ServerCore, now_ms: u64) {
        while let Some(head) = self.queue.front_mut() {
            match head {
                Entry::Core { done: None, .. } | Entry::Held { .. } => break,
                Entry::Core { done, .. } => {
                    let reply = done.take().expect("checked");
                    self.queue.pop_front();
                    self.emit(&reply);
                }
                Entry::Local { .. } => {
                    let Some(Entry::Local { xid, op }) = self.queue.pop_front() else {
                        unreachable!("matched above")
                    };
                    self.local(xid, op, session, core, now_ms);
                    if self.close {
                        return;
                    }
                    self.send_held(core, now_ms);
                }
            }
        }
    }

    fn local(&mut self, xid: i32, op: Local, session: SessionId, core: &mut ServerCore, now_ms: u64) {
        let zxid = core.tree().last_zxid();
        let result = match op {
            Local::Error(code) => Err(code),
            Local::SetWatches(msg) => {
                // The events SetWatches fires go out before its reply, as
                // the server fires them while processing it.
                core.on_client(now_ms, self.id, msg);
                for m in core.take_client_messages(self.id) {
                    self.deliver(m, core, now_ms);
                }
                Ok(w::Response::SetWatches)
            }
            Local::RemoveWatches { path, kind, remove } => match core.remove_watch(session, &path, kind, remove) {
                Ok(true) => Ok(if remove {
                    w::Response::RemoveWatches
                } else {
                    w::Response::CheckWatches
                }),
                Ok(false) => Err(ErrorCode::NoWatcher),
                Err(e) => Err(convert::code(&e)),
            },
            Local::GetEphemerals(prefix) => {
                let mut ephemerals = core.tree().ephemerals(session);
                if prefix != "/" {
                    ephemerals.retain(|p| p.starts_with(&prefix));
                }
                Ok(w::Response::GetEphemerals { ephemerals })
            }
            Local::GetAllChildrenNumber(path) => match core.tree().all_children_number(&path) {
                Some(n) => Ok(w::Response::GetAllChildrenNumber { total_number: n as i32 }),
                None => Err(ErrorCode::NoNode),
            },
            // ACL changes are not modelled: refused loudly, never accepted
            // and ignored (a missing node is still NoNode).
            Local::SetAcl(path) => match core.tree().stat(&path) {
                None => Err(ErrorCode::NoNode),
                Some(_) => Err(ErrorCode::Unimplemented),
            },
        };
        self.emit(&ServerReply { xid, zxid, result });
    }

    fn emit(&mut self, reply: &ServerReply) {
        self.log.push(ConnEvent::Reply {
            xid: reply.xid,
            zxid: reply.zxid,
            err: reply.result.as_ref().err().copied(),
        });
        self.out.extend(w::encode_reply(reply));
    }

    fn expired_reply(&mut self) {
        self.log.push(ConnEvent::Established {
            session: 0,
            timeout_ms: 0,
        });
        let rsp = w::ConnectResponse {
            protocol_version: 0,
            time_out: 0,
            session_id: 0,
            passwd: vec![0; 16],
            read_only: Some(false),
        };
        self.out.extend(w::encode_connect_response(&rsp));
    }
}

/// SetWatches lists come from the client's hash maps in no fixed order; the
/// server fires their events in list order, so sort them to keep replay
/// independent of the client's hash seeds. (The order is arbitrary on a
/// real server too.)
fn sorted(paths: &[String]) -> Vec<String> {
    let mut v = paths.to_vec();
    v.sort();
    v
}
