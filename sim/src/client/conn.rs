//! The client's connection task (ZooKeeper's ClientCnxn): connects to a
//! server from the list, establishes or resumes the session, re-registers
//! watches, sends requests in order, pings at T/3, declares the connection
//! lost after 2T/3 of silence, and reconnects — to another server — with
//! the same session until a server says the session is expired.

use std::collections::VecDeque;
use std::future::Future;
use std::task::Poll;
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::StreamExt;
use madsim::rand::Rng;
use madsim::time::Instant;
use zkdst_recipes::zk::{SessionState, ZkError, Zxid};

use super::record;
use super::watches::{ClientWatches, WatchKind};
use super::Shared;
use crate::net::{connect, Alarm, Receiver, Sender};
use crate::proto::{Request, Response, ToClient, ToServer};
use crate::server::node::client_addr;
use crate::zab::ServerId;
use zkdst_history::OpId;

/// A request's way back to its caller.
pub type Reply = oneshot::Sender<Result<(Response, Zxid), ZkError>>;

/// How a reply should register a watch when it arrives.
pub enum WatchReg {
    /// `exists`: data table if the node exists, exist table if not.
    Exists(zkdst_recipes::zk::OneshotWatchSender),
    /// `getData`: data table, only on success.
    Data(zkdst_recipes::zk::OneshotWatchSender),
    /// `getChildren`: child table, only on success.
    Child(zkdst_recipes::zk::OneshotWatchSender),
    Persistent(
        zkdst_recipes::zk::AddWatchMode,
        zkdst_recipes::zk::PersistentWatchSender,
    ),
}

pub enum Cmd {
    /// `xid` is the request id: the history's operation id, so a commit
    /// can be traced to the operation that caused it.
    Call {
        xid: i64,
        request: Request,
        reply: Reply,
        watch: Option<WatchReg>,
    },
    /// Drop the current connection (a fault).
    DropConnection,
    /// Lose the reply of the next write: let it apply, then drop the
    /// connection before the reply is seen (ZOOKEEPER-22).
    LoseNextWriteReply,
    /// Fail the connection as the next read's reply arrives (the reply is
    /// delivered) and stay away until the session has expired.
    ExpireAfterNextRead,
    /// Starts (true) or ends (false) one flap: while any is on, drop each
    /// connection as soon as a request has gone out on it (a flapping
    /// link: every call fails with ConnectionLoss, applied or not, and the
    /// client keeps reconnecting). Counted, so overlapping flaps each last
    /// their own duration.
    Flap(bool),
    /// Starts (true) or ends (false) lose-reply-then-flap: lose the next
    /// write's reply, then flap (as [`Cmd::Flap`]) from the next reply
    /// read after it until the end. One at a time: a second start while
    /// one is on only re-arms the lost reply.
    LoseReplyThenFlap(bool),
    /// The handle was closed: end the session locally.
    Shutdown,
}

/// Where a lose-reply-then-flap stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FlapAfterLoss {
    Off,
    /// Waiting for the write whose reply is lost.
    Armed,
    /// The reply was lost: the next reply read starts the flap.
    Lost,
    /// Counted in `flapping` until the end.
    Flapping,
}

/// A call not yet sent.
struct Call {
    xid: i64,
    request: Request,
    reply: Reply,
    watch: Option<WatchReg>,
}

/// A call sent and awaiting its reply: the request itself went out.
struct Sent {
    xid: i64,
    is_write: bool,
    /// The watch to register on success, with the request's path.
    watch: Option<(String, WatchReg)>,
    reply: Reply,
}

/// What the connection task waits for.
enum Ev {
    Cmd(Cmd),
    Frame(ToClient),
    Eof,
    /// The current deadline passed.
    Alarm,
}

/// The next event: commands first, then the server's packets, then the
/// deadline. One task polls them all, so a packet costs one wake-up.
fn next_event<'a>(
    cmds: &'a mut Cmds,
    conn: &'a mut Receiver<ToClient>,
    alarm: &'a mut Alarm,
    at: Instant,
) -> impl Future<Output = Ev> + 'a {
    futures::future::poll_fn(move |cx| {
        if let Some(c) = cmds.poll_next(cx) {
            return Poll::Ready(Ev::Cmd(c));
        }
        if let Poll::Ready(m) = conn.poll_recv(cx) {
            return Poll::Ready(m.map_or(Ev::Eof, Ev::Frame));
        }
        alarm.poll_at(cx, at).map(|()| Ev::Alarm)
    })
}

/// The handle's commands. Once every handle is dropped the session lives
/// on (pinging) until it expires or the node dies, like an unclosed client.
struct Cmds {
    rx: mpsc::UnboundedReceiver<Cmd>,
    open: bool,
}

impl Cmds {
    fn poll_next(&mut self, cx: &mut std::task::Context<'_>) -> Option<Cmd> {
        if !self.open {
            return None;
        }
        match self.rx.poll_next_unpin(cx) {
            Poll::Ready(Some(c)) => Some(c),
            Poll::Ready(None) => {
                self.open = false;
                None
            }
            Poll::Pending => None,
        }
    }

    fn try_next(&mut self) -> Option<Cmd> {
        if !self.open {
            return None;
        }
        self.rx.try_recv().ok()
    }
}

/// The connection task. Ends when the session is expired or closed.
pub async fn run(shared: std::sync::Arc<Shared>, servers: Vec<ServerId>, cmds: mpsc::UnboundedReceiver<Cmd>) {
    let mut cmds = Cmds { rx: cmds, open: true };
    let mut c = Cnxn {
        shared,
        servers,
        queued: VecDeque::new(),
        pending: VecDeque::new(),
        watches: ClientWatches::default(),
        last_zxid: 0,
        lose_next_write_reply: false,
        expire_after_next_read: false,
        stay_away: false,
        drop_now: false,
        flapping: 0,
        flap_after_loss: FlapAfterLoss::Off,
    };
    let mut next = madsim::rand::thread_rng().gen_range(0..c.servers.len().max(1));
    let mut first = true;
    loop {
        if !first {
            // ClientCnxn sleeps a random 0-1 s before every reconnect.
            let ms = madsim::rand::thread_rng().gen_range(0..1000);
            let away = if std::mem::take(&mut c.stay_away) {
                // Two session timeouts: the leader has expired it by then.
                c.timeout() * 2
            } else {
                Duration::ZERO
            };
            madsim::time::sleep(away + Duration::from_millis(ms)).await;
        }
        first = false;
        let server = c.servers[next % c.servers.len()];
        next += 1;
        tracing::debug!("connecting to zk{server} ({} calls queued)", c.queued.len());
        match c.session(server, &mut cmds).await {
            Outcome::Ended => return,
            Outcome::Lost => {}
        }
    }
}

enum Outcome {
    Lost,
    Ended,
}

struct Cnxn {
    shared: std::sync::Arc<Shared>,
    servers: Vec<ServerId>,
    /// Calls not yet sent (issued while disconnected).
    queued: VecDeque<Call>,
    /// Calls sent on the current connection, awaiting replies in order.
    pending: VecDeque<Sent>,
    watches: ClientWatches,
    last_zxid: Zxid,
    lose_next_write_reply: bool,
    expire_after_next_read: bool,
    /// The next reconnect waits out the session (expire-after-read).
    stay_away: bool,
    drop_now: bool,
    /// Flaps on: drop the connection once a request has gone out
    /// (flap-connection).
    flapping: u32,
    flap_after_loss: FlapAfterLoss,
}

impl Cnxn {
    fn timeout(&self) -> Duration {
        Duration::from_millis(self.shared.timeout_ms().max(1) as u64)
    }

    /// One connection: connect, handshake, then serve until it is lost.
    async fn session(&mut self, server: ServerId, cmds: &mut Cmds) -> Outcome {
        let t = self.timeout();
        let connect_timeout = t / self.servers.len().max(1) as u32;
        let connecting = connect::<ToServer, ToClient>(client_addr(server));
        let (wtx, mut r) = match madsim::time::timeout(connect_timeout, connecting).await {
            Ok(Ok(c)) => c,
            _ => return self.connect_failed(cmds),
        };
        let mut alarm = Alarm::new();
        let session = self.shared.session_id();
        wtx.send(ToServer::Connect {
            session,
            last_zxid: self.last_zxid,
            timeout_ms: self.shared.requested_timeout_ms(),
        });
        // Handshake.
        let deadline = alarm.now() + connect_timeout.max(Duration::from_millis(1));
        loop {
            match next_event(cmds, &mut r, &mut alarm, deadline).await {
                Ev::Alarm | Ev::Eof => return self.connect_failed(cmds),
                Ev::Cmd(cmd) => {
                    if let Some(o) = self.command(cmd, None) {
                        return o;
                    }
                }
                Ev::Frame(ToClient::Connected {
                    session: sid,
                    timeout_ms,
                    server,
                }) => {
                    if timeout_ms <= 0 {
                        return self.end(SessionState::Expired);
                    }
                    self.shared.connected(sid, timeout_ms, server);
                    self.watches.session_event(SessionState::SyncConnected);
                    break;
                }
                Ev::Frame(_) => {}
            }
        }
        // Re-register watches, then send what waited.
        if !self.watches.is_empty() {
            let (data, exist, child, persistent, persistent_recursive) = self.watches.for_set_watches();
            let session = self.shared.session_id();
            let lists = [data.clone(), exist.clone(), child.clone()];
            self.shared
                .recorder
                .set_watches(self.shared.id, session, self.last_zxid, lists);
            wtx.send(ToServer::SetWatches {
                relative_zxid: self.last_zxid,
                data,
                exist,
                child,
                persistent,
                persistent_recursive,
            });
        }
        let resent = !self.queued.is_empty();
        while let Some(call) = self.queued.pop_front() {
            self.send(&wtx, call);
        }
        if resent && self.flapping > 0 {
            return self.lost();
        }
        let t = self.timeout();
        let ping_every = t / 3;
        let read_timeout = t * 2 / 3;
        let mut last_send = alarm.now();
        let mut last_recv = alarm.now();
        loop {
            let ping_at = last_send + ping_every;
            let dead_at = last_recv + read_timeout;
            match next_event(cmds, &mut r, &mut alarm, ping_at.min(dead_at)).await {
                Ev::Alarm => {
                    let now = alarm.now();
                    if now >= dead_at {
                        return self.lost();
                    }
                    if now >= ping_at {
                        wtx.send(ToServer::Ping);
                        last_send = now;
                    }
                }
                Ev::Cmd(cmd) => {
                    let before = self.pending.len();
                    if let Some(o) = self.command(cmd, Some(&wtx)) {
                        return o;
                    }
                    if self.pending.len() != before {
                        last_send = alarm.now();
                    }
                    if self.drop_now {
                        self.drop_now = false;
                        return self.lost();
                    }
                }
                Ev::Frame(msg) => {
                    // Like ClientCnxn, check the read timeout before reading:
                    // after a long pause (GC) the connection is lost, whatever
                    // arrived meanwhile.
                    if alarm.now() >= dead_at {
                        return self.lost();
                    }
                    last_recv = alarm.now();
                    match msg {
                        ToClient::Reply { xid, zxid, response } => {
                            let Some(call) = self.pending.pop_front() else {
                                return self.lost();
                            };
                            if call.xid != xid {
                                // Out-of-order reply: the protocol is broken; drop the connection.
                                self.pending.push_front(call);
                                return self.lost();
                            }
                            if self.lose_next_write_reply && call.is_write {
                                // The server applied it; the reply is lost.
                                self.lose_next_write_reply = false;
                                if self.flap_after_loss == FlapAfterLoss::Armed {
                                    self.flap_after_loss = FlapAfterLoss::Lost;
                                }
                                self.pending.push_front(call);
                                return self.lost();
                            }
                            if zxid > 0 {
                                self.last_zxid = self.last_zxid.max(zxid);
                            }
                            let read = !call.is_write;
                            self.complete(call, response, zxid);
                            if self.flap_after_loss == FlapAfterLoss::Lost {
                                // The link answered once; now it flaps.
                                self.flap_after_loss = FlapAfterLoss::Flapping;
                                self.flapping = self.flapping.saturating_add(1);
                            }
                            if self.shared.state() == SessionState::Closed {
                                return self.end(SessionState::Closed);
                            }
                            if read && self.expire_after_next_read {
                                // The reply is the recipe's; what it sends
                                // next waits for a session that expires.
                                self.expire_after_next_read = false;
                                self.stay_away = true;
                                return self.lost();
                            }
                        }
                        ToClient::Event { event_type, path, .. } => {
                            self.shared.record_watch(event_type, &path);
                            self.watches.deliver(event_type, &path);
                        }
                        ToClient::Pong { .. } | ToClient::Connected { .. } => {}
                    }
                }
                Ev::Eof => return self.lost(),
            }
        }
    }

    /// Handles a command; `Some` ends the connection attempt with that outcome.
    fn command(&mut self, cmd: Cmd, wtx: Option<&Sender<ToServer>>) -> Option<Outcome> {
        match cmd {
            Cmd::Call {
                xid,
                request,
                reply,
                watch,
            } => {
                let call = Call {
                    xid,
                    request,
                    reply,
                    watch,
                };
                match wtx {
                    Some(w) => {
                        self.send(w, call);
                        self.drop_now |= self.flapping > 0;
                    }
                    None => self.queued.push_back(call),
                }
                None
            }
            Cmd::DropConnection => {
                if wtx.is_some() {
                    self.drop_now = true;
                }
                None
            }
            Cmd::LoseNextWriteReply => {
                self.lose_next_write_reply = true;
                None
            }
            Cmd::ExpireAfterNextRead => {
                self.expire_after_next_read = true;
                None
            }
            Cmd::Flap(on) => {
                self.flapping = if on {
                    self.flapping.saturating_add(1)
                } else {
                    self.flapping.saturating_sub(1)
                };
                None
            }
            Cmd::LoseReplyThenFlap(true) => {
                self.lose_next_write_reply = true;
                if self.flap_after_loss == FlapAfterLoss::Off {
                    self.flap_after_loss = FlapAfterLoss::Armed;
                }
                None
            }
            Cmd::LoseReplyThenFlap(false) => {
                if self.flap_after_loss == FlapAfterLoss::Flapping {
                    self.flapping = self.flapping.saturating_sub(1);
                }
                self.flap_after_loss = FlapAfterLoss::Off;
                None
            }
            Cmd::Shutdown => Some(self.end(SessionState::Closed)),
        }
    }

    fn send(&mut self, w: &Sender<ToServer>, call: Call) {
        let sent = Sent {
            xid: call.xid,
            is_write: call.request.is_write(),
            watch: call.watch.map(|reg| (request_path(&call.request).to_string(), reg)),
            reply: call.reply,
        };
        w.send(ToServer::Request {
            xid: call.xid,
            request: call.request,
        });
        self.pending.push_back(sent);
    }

    fn complete(&mut self, call: Sent, response: Response, zxid: Zxid) {
        if let Some((path, reg)) = call.watch {
            match (&response, reg) {
                (Response::Exists(Some(_)), WatchReg::Exists(w)) => self.watches.add(WatchKind::Data, &path, w),
                (Response::Exists(None), WatchReg::Exists(w)) => self.watches.add(WatchKind::Exist, &path, w),
                (Response::GetData { .. }, WatchReg::Data(w)) => self.watches.add(WatchKind::Data, &path, w),
                (Response::GetChildren { .. }, WatchReg::Child(w)) => self.watches.add(WatchKind::Child, &path, w),
                (Response::AddWatch, WatchReg::Persistent(mode, w)) => self.watches.add_persistent(&path, mode, w),
                _ => {}
            }
        }
        if matches!(response, Response::CloseSession) {
            self.shared.set_state(SessionState::Closed);
        }
        // Recorded here, as the reply is read off the connection, so the
        // history keeps the wire's order of replies and watch events.
        let r = Ok((response, zxid));
        let (outcome, zxid) = record::outcome_of(&r);
        self.shared
            .recorder
            .complete(call.xid as OpId, self.shared.id, outcome, zxid);
        let _ = call.reply.send(r);
    }

    /// A connection attempt failed: like ClientCnxn's cleanup, everything
    /// waiting fails with ConnectionLoss.
    fn connect_failed(&mut self, cmds: &mut Cmds) -> Outcome {
        // Calls issued while disconnected wait for a connection; each failed
        // attempt fails them (ClientCnxn's cleanup), so take them in first.
        while let Some(cmd) = cmds.try_next() {
            if let Some(o) = self.command(cmd, None) {
                return o;
            }
        }
        self.fail_all(ZkError::ConnectionLoss);
        Outcome::Lost
    }

    /// An established connection was lost: in-flight calls fail with
    /// ConnectionLoss (they may or may not have been applied). The caller
    /// drops the connection.
    fn lost(&mut self) -> Outcome {
        self.fail_all(ZkError::ConnectionLoss);
        self.shared.set_state(SessionState::Disconnected);
        self.watches.session_event(SessionState::Disconnected);
        Outcome::Lost
    }

    fn fail_all(&mut self, e: ZkError) {
        let replies = self.pending.drain(..).map(|c| c.reply);
        for reply in replies.chain(self.queued.drain(..).map(|c| c.reply)) {
            let _ = reply.send(Err(e.clone()));
        }
    }

    /// The session is over (expired or closed): fail everything, tell every
    /// watcher, and stop.
    fn end(&mut self, state: SessionState) -> Outcome {
        let e = if state == SessionState::Expired {
            ZkError::SessionExpired
        } else {
            ZkError::Closed
        };
        self.fail_all(e);
        self.watches.end(state);
        self.shared.set_state(state);
        Outcome::Ended
    }
}

/// The path a watch registered by `request` is on.
fn request_path(request: &Request) -> &str {
    match request {
        Request::Create { path, .. }
        | Request::Delete { path, .. }
        | Request::SetData { path, .. }
        | Request::Exists { path, .. }
        | Request::GetData { path, .. }
        | Request::GetChildren { path, .. }
        | Request::Sync { path }
        | Request::AddWatch { path, .. } => path,
        Request::Multi(_) | Request::MultiRead(_) | Request::CloseSession => "",
    }
}
