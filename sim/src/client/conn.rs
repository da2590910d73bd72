//! The client's connection task (ZooKeeper's ClientCnxn): connects to a
//! server from the list, establishes or resumes the session, re-registers
//! watches, sends requests in order, pings at T/3, declares the connection
//! lost after 2T/3 of silence, and reconnects — to another server — with
//! the same session until a server says the session is expired.

use std::collections::VecDeque;
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use futures::StreamExt;
use madsim::net::TcpStream;
use madsim::rand::Rng;
use madsim::time::Instant;
use zkdst_recipes::zk::{SessionState, ZkError, Zxid};

use super::watches::{ClientWatches, WatchKind};
use super::Shared;
use crate::net::{encoded, read_frame, writer, WriteCmd};
use crate::proto::{Request, Response, ToClient, ToServer};
use crate::server::node::client_addr;
use crate::zab::ServerId;

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
    /// The handle was closed: end the session locally.
    Shutdown,
}

struct Call {
    xid: i64,
    request: Request,
    reply: Reply,
    watch: Option<WatchReg>,
}

enum Ev {
    Cmd(Cmd),
    Frame(u64, ToClient),
    Eof(u64),
}

/// The connection task. Ends when the session is expired or closed.
pub async fn run(shared: std::sync::Arc<Shared>, servers: Vec<ServerId>, cmds: mpsc::UnboundedReceiver<Cmd>) {
    let (etx, mut rx) = mpsc::unbounded::<Ev>();
    let ctx = etx.clone();
    madsim::task::spawn(async move {
        let mut cmds = cmds;
        while let Some(c) = cmds.next().await {
            if ctx.unbounded_send(Ev::Cmd(c)).is_err() {
                return;
            }
        }
    });
    let mut c = Cnxn {
        shared,
        servers,
        queued: VecDeque::new(),
        pending: VecDeque::new(),
        watches: ClientWatches::default(),
        last_zxid: 0,
        generation: 0,
        lose_next_write_reply: false,
        drop_now: false,
        etx,
    };
    let mut next = madsim::rand::thread_rng().gen_range(0..c.servers.len().max(1));
    let mut first = true;
    loop {
        if !first {
            // ClientCnxn sleeps a random 0-1 s before every reconnect.
            let ms = madsim::rand::thread_rng().gen_range(0..1000);
            madsim::time::sleep(Duration::from_millis(ms)).await;
        }
        first = false;
        let server = c.servers[next % c.servers.len()];
        next += 1;
        tracing::debug!(client = c.shared.id, server, queued = c.queued.len(), "connecting");
        match c.session(server, &mut rx).await {
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
    pending: VecDeque<Call>,
    watches: ClientWatches,
    last_zxid: Zxid,
    generation: u64,
    lose_next_write_reply: bool,
    drop_now: bool,
    etx: mpsc::UnboundedSender<Ev>,
}

impl Cnxn {
    fn timeout(&self) -> Duration {
        Duration::from_millis(self.shared.timeout_ms().max(1) as u64)
    }

    /// One connection: connect, handshake, then serve until it is lost.
    async fn session(&mut self, server: ServerId, rx: &mut mpsc::UnboundedReceiver<Ev>) -> Outcome {
        let t = self.timeout();
        let connect_timeout = t / self.servers.len().max(1) as u32;
        self.generation += 1;
        let gen = self.generation;
        let stream = match madsim::time::timeout(connect_timeout, TcpStream::connect(client_addr(server))).await {
            Ok(Ok(s)) => s,
            _ => return self.connect_failed(rx),
        };
        let (mut r, w) = tokio::io::split(stream);
        let (wtx, wrx) = mpsc::unbounded();
        let writing = madsim::task::spawn(writer(w, wrx));
        let etx = self.etx.clone();
        let reading = madsim::task::spawn(async move {
            let mut buf = Vec::new();
            while let Some(m) = read_frame::<ToClient>(&mut r, &mut buf).await {
                if etx.unbounded_send(Ev::Frame(gen, m)).is_err() {
                    return;
                }
            }
            let _ = etx.unbounded_send(Ev::Eof(gen));
        });
        let guard = TaskGuard(vec![writing, reading]);
        let session = self.shared.session_id();
        let _ = wtx.unbounded_send(encoded(&ToServer::Connect {
            session,
            last_zxid: self.last_zxid,
            timeout_ms: self.shared.requested_timeout_ms(),
        }));
        // Handshake.
        let deadline = Instant::now() + connect_timeout.max(Duration::from_millis(1));
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match madsim::time::timeout(left, rx.next()).await {
                Err(_) | Ok(None) => {
                    drop(guard);
                    return self.connect_failed(rx);
                }
                Ok(Some(Ev::Cmd(cmd))) => {
                    if let Some(o) = self.command(cmd, None) {
                        return o;
                    }
                }
                Ok(Some(Ev::Frame(
                    g,
                    ToClient::Connected {
                        session: sid,
                        timeout_ms,
                        server,
                    },
                ))) if g == gen => {
                    if timeout_ms <= 0 {
                        drop(guard);
                        return self.end(SessionState::Expired);
                    }
                    self.shared.connected(sid, timeout_ms, server);
                    self.watches.session_event(SessionState::SyncConnected);
                    break;
                }
                Ok(Some(Ev::Eof(g))) if g == gen => {
                    drop(guard);
                    return self.connect_failed(rx);
                }
                Ok(Some(_)) => {}
            }
        }
        // Re-register watches, then send what waited.
        if !self.watches.is_empty() {
            let (data, exist, child, persistent, persistent_recursive) = self.watches.for_set_watches();
            let _ = wtx.unbounded_send(encoded(&ToServer::SetWatches {
                relative_zxid: self.last_zxid,
                data,
                exist,
                child,
                persistent,
                persistent_recursive,
            }));
        }
        while let Some(call) = self.queued.pop_front() {
            self.send(&wtx, call);
        }
        let t = self.timeout();
        let ping_every = t / 3;
        let read_timeout = t * 2 / 3;
        let mut last_send = Instant::now();
        let mut last_recv = Instant::now();
        loop {
            let now = Instant::now();
            let ping_at = last_send + ping_every;
            let dead_at = last_recv + read_timeout;
            let wake = ping_at.min(dead_at);
            match madsim::time::timeout(wake.saturating_duration_since(now), rx.next()).await {
                Ok(None) => return self.end(SessionState::Closed),
                Err(_) => {
                    let now = Instant::now();
                    if now >= dead_at {
                        return self.lost(guard);
                    }
                    if now >= ping_at {
                        let _ = wtx.unbounded_send(encoded(&ToServer::Ping));
                        last_send = now;
                    }
                }
                Ok(Some(Ev::Cmd(cmd))) => {
                    let before = self.pending.len();
                    if let Some(o) = self.command(cmd, Some(&wtx)) {
                        drop(guard);
                        return o;
                    }
                    if self.pending.len() != before {
                        last_send = Instant::now();
                    }
                    if self.drop_now {
                        self.drop_now = false;
                        return self.lost(guard);
                    }
                }
                Ok(Some(Ev::Frame(g, msg))) if g == gen => {
                    last_recv = Instant::now();
                    match msg {
                        ToClient::Reply { xid, zxid, response } => {
                            let Some(call) = self.pending.pop_front() else {
                                return self.lost(guard);
                            };
                            if call.xid != xid {
                                // Out-of-order reply: the protocol is broken; drop the connection.
                                self.pending.push_front(call);
                                return self.lost(guard);
                            }
                            if self.lose_next_write_reply && call.request.is_write() {
                                // The server applied it; the reply is lost.
                                self.lose_next_write_reply = false;
                                self.pending.push_front(call);
                                return self.lost(guard);
                            }
                            if zxid > 0 {
                                self.last_zxid = self.last_zxid.max(zxid);
                            }
                            self.complete(call, response, zxid);
                            if self.shared.state() == SessionState::Closed {
                                drop(guard);
                                return self.end(SessionState::Closed);
                            }
                        }
                        ToClient::Event { event_type, path, .. } => {
                            self.shared.record_watch(event_type, &path);
                            self.watches.deliver(event_type, &path);
                        }
                        ToClient::Pong { .. } | ToClient::Connected { .. } => {}
                    }
                }
                Ok(Some(Ev::Eof(g))) if g == gen => return self.lost(guard),
                Ok(Some(_)) => {}
            }
        }
    }

    /// Handles a command; `Some` ends the connection attempt with that outcome.
    fn command(&mut self, cmd: Cmd, wtx: Option<&mpsc::UnboundedSender<WriteCmd>>) -> Option<Outcome> {
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
                    Some(w) => self.send(w, call),
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
            Cmd::Shutdown => Some(self.end(SessionState::Closed)),
        }
    }

    fn send(&mut self, w: &mpsc::UnboundedSender<WriteCmd>, call: Call) {
        let _ = w.unbounded_send(encoded(&ToServer::Request {
            xid: call.xid,
            request: call.request.clone(),
        }));
        self.pending.push_back(call);
    }

    fn complete(&mut self, mut call: Call, response: Response, zxid: Zxid) {
        if let Some(reg) = call.watch.take() {
            match (&response, reg) {
                (Response::Exists(Some(_)), WatchReg::Exists(w)) => {
                    self.watches.add(WatchKind::Data, call.request_path(), w)
                }
                (Response::Exists(None), WatchReg::Exists(w)) => {
                    self.watches.add(WatchKind::Exist, call.request_path(), w)
                }
                (Response::GetData { .. }, WatchReg::Data(w)) => {
                    self.watches.add(WatchKind::Data, call.request_path(), w)
                }
                (Response::GetChildren { .. }, WatchReg::Child(w)) => {
                    self.watches.add(WatchKind::Child, call.request_path(), w)
                }
                (Response::AddWatch, WatchReg::Persistent(mode, w)) => {
                    self.watches.add_persistent(call.request_path(), mode, w)
                }
                _ => {}
            }
        }
        if matches!(response, Response::CloseSession) {
            self.shared.set_state(SessionState::Closed);
        }
        let _ = call.reply.send(Ok((response, zxid)));
    }

    /// A connection attempt failed: like ClientCnxn's cleanup, everything
    /// waiting fails with ConnectionLoss.
    fn connect_failed(&mut self, rx: &mut mpsc::UnboundedReceiver<Ev>) -> Outcome {
        // Calls issued while disconnected wait for a connection; each failed
        // attempt fails them (ClientCnxn's cleanup), so take them in first.
        while let Ok(ev) = rx.try_recv() {
            if let Ev::Cmd(cmd) = ev {
                if let Some(o) = self.command(cmd, None) {
                    return o;
                }
            }
        }
        self.fail_all(ZkError::ConnectionLoss);
        Outcome::Lost
    }

    /// An established connection was lost: in-flight calls fail with
    /// ConnectionLoss (they may or may not have been applied).
    fn lost(&mut self, guard: TaskGuard) -> Outcome {
        drop(guard);
        self.fail_all(ZkError::ConnectionLoss);
        self.shared.set_state(SessionState::Disconnected);
        self.watches.session_event(SessionState::Disconnected);
        Outcome::Lost
    }

    fn fail_all(&mut self, e: ZkError) {
        for call in self.pending.drain(..).chain(self.queued.drain(..)) {
            let _ = call.reply.send(Err(e.clone()));
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

impl Call {
    fn request_path(&self) -> &str {
        match &self.request {
            Request::Create { path, .. }
            | Request::Delete { path, .. }
            | Request::SetData { path, .. }
            | Request::Exists { path, .. }
            | Request::GetData { path, .. }
            | Request::GetChildren { path, .. }
            | Request::Sync { path }
            | Request::AddWatch { path, .. } => path,
            Request::Multi(_) | Request::CloseSession => "",
        }
    }
}

/// Aborts the connection's reader and writer when dropped.
struct TaskGuard(Vec<madsim::task::JoinHandle<()>>);

impl Drop for TaskGuard {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}
