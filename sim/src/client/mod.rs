//! The simulated ZooKeeper client: a handle implementing `ZkClient` and a
//! connection task on the client's node. Every call is recorded in the
//! run's history (invocation, completion, reply zxid), as are session state
//! changes and delivered watch events.

mod any;
mod api;
mod conn;
pub mod library;
pub mod library_lock;
mod record;
mod relay;
mod watches;

pub use any::{AnyClient, ClientKind};
pub use library::LibraryClient;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::channel::{mpsc, oneshot};
use zkdst_history::{ClientId, FaultEnd, FaultKind, Outcome};
use zkdst_recipes::zk::{
    validate_path, EventType, SessionId, SessionState, StateFanout, ZkClient, ZkError, ZkResult, Zxid,
};

use crate::proto::{Request, Response};
use crate::recorder::Recorder;
use crate::zab::ServerId;
use conn::{Cmd, WatchReg};

/// How a simulated client connects.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The client's number in the history (Jepsen's process).
    pub id: ClientId,
    pub servers: Vec<ServerId>,
    /// The session timeout asked for (the server clamps it).
    pub session_timeout_ms: i32,
}

struct SharedState {
    session: SessionId,
    timeout_ms: i32,
    states: StateFanout,
    server: Option<ServerId>,
    /// `close` was called (also on an already expired session): every
    /// later call fails with `Closed`, as with the real adapter.
    closed: bool,
}

/// State shared by the handle and its connection task.
pub(crate) struct Shared {
    id: ClientId,
    requested_timeout_ms: i32,
    recorder: Recorder,
    inner: Mutex<SharedState>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, SharedState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
    pub(crate) fn session_id(&self) -> SessionId {
        self.lock().session
    }
    pub(crate) fn timeout_ms(&self) -> i32 {
        let s = self.lock();
        if s.timeout_ms > 0 {
            s.timeout_ms
        } else {
            self.requested_timeout_ms
        }
    }
    pub(crate) fn requested_timeout_ms(&self) -> i32 {
        self.requested_timeout_ms
    }
    pub(crate) fn state(&self) -> SessionState {
        self.lock().states.state()
    }
    pub(crate) fn connected(&self, session: SessionId, timeout_ms: i32, server: ServerId) {
        {
            let mut s = self.lock();
            s.session = session;
            s.timeout_ms = timeout_ms;
            s.server = Some(server);
        }
        self.set_state(SessionState::SyncConnected);
    }
    pub(crate) fn set_state(&self, state: SessionState) {
        let (session, server) = {
            let mut s = self.lock();
            if !s.states.publish(state) {
                return;
            }
            (s.session, s.server)
        };
        self.recorder.session_event(self.id, session, state, server);
    }
    pub(crate) fn record_watch(&self, event_type: EventType, path: &str) {
        let session = self.session_id();
        self.recorder
            .watch_event(self.id, session, &format!("{event_type:?}"), Some(path.to_string()));
    }
}

/// Waits until `zk` is connected (or its session ended); false on timeout.
pub(crate) async fn wait_connected(zk: &impl ZkClient, within: Duration) -> bool {
    let mut w = zk.state_watch();
    let deadline = madsim::time::Instant::now() + within;
    loop {
        let s = zk.state();
        if s.is_connected() {
            return true;
        }
        if s.is_terminal() {
            return false;
        }
        let left = deadline.saturating_duration_since(madsim::time::Instant::now());
        if madsim::time::timeout(left, w.changed()).await.is_err() {
            return false;
        }
    }
}

/// A simulated ZooKeeper session handle. Create it on the node that runs
/// the client code: the connection task lives there, so pausing or killing
/// that node pauses or kills the client.
#[derive(Clone)]
pub struct SimClient {
    shared: Arc<Shared>,
    tx: mpsc::UnboundedSender<Cmd>,
}

impl SimClient {
    /// Starts connecting (asynchronously, like ZooKeeper's constructor).
    pub fn connect(cfg: ClientConfig, recorder: Recorder) -> SimClient {
        let shared = Arc::new(Shared {
            id: cfg.id,
            requested_timeout_ms: cfg.session_timeout_ms,
            recorder,
            inner: Mutex::new(SharedState {
                session: 0,
                timeout_ms: 0,
                states: StateFanout::new(SessionState::Disconnected),
                server: None,
                closed: false,
            }),
        });
        let (tx, rx) = mpsc::unbounded();
        madsim::task::spawn(conn::run(shared.clone(), cfg.servers, rx));
        SimClient { shared, tx }
    }

    /// The client's number in the history.
    pub fn id(&self) -> ClientId {
        self.shared.id
    }

    pub fn recorder(&self) -> &Recorder {
        &self.shared.recorder
    }

    /// The server this client is (or was last) connected to.
    pub fn server(&self) -> Option<ServerId> {
        self.shared.lock().server
    }

    /// Waits until connected (or the session ended); false on timeout.
    pub async fn wait_connected(&self, within: Duration) -> bool {
        wait_connected(self, within).await
    }

    async fn wait_for_session(&self) {
        // The common case, without registering a state watcher per call.
        if self.session_id() != 0 || self.state().is_terminal() {
            return;
        }
        let mut w = self.state_watch();
        while self.session_id() == 0 && !self.state().is_terminal() {
            w.changed().await;
        }
    }

    /// Fault: drop the current connection now.
    pub fn drop_connection(&self) {
        self.shared
            .recorder
            .fault(FaultKind::DropConnection, vec![format!("client{}", self.shared.id)], "");
        let _ = self.tx.unbounded_send(Cmd::DropConnection);
    }

    /// Fault: the next write is applied but its reply is lost and the
    /// connection dropped (ConnectionLoss with the write applied).
    pub fn lose_next_write_reply(&self) {
        self.shared.recorder.fault(
            FaultKind::LoseReply,
            vec![format!("client{}", self.shared.id)],
            "the next write applies; its reply is lost",
        );
        let _ = self.tx.unbounded_send(Cmd::LoseNextWriteReply);
    }

    /// Fault: the connection fails as the next read's reply arrives, and
    /// the client stays away until its session has expired — what it sends
    /// after that read fails with SessionExpired.
    pub fn expire_after_next_read(&self) {
        self.shared.recorder.fault(
            FaultKind::ExpireAfterRead,
            vec![format!("client{}", self.shared.id)],
            "after its next read reply, away until the session expires",
        );
        let _ = self.tx.unbounded_send(Cmd::ExpireAfterNextRead);
    }

    /// Fault: from now until [`SimClient::stop_flapping`], each connection
    /// drops as soon as a request has gone out on it — the request may or
    /// may not reach the server, and every call fails with ConnectionLoss
    /// while the client keeps reconnecting.
    pub fn flap_connection(&self) {
        self.shared.recorder.fault(
            FaultKind::FlapConnection,
            vec![format!("client{}", self.shared.id)],
            "each connection drops as a request goes out on it",
        );
        let _ = self.tx.unbounded_send(Cmd::Flap(true));
    }

    /// Fault: the next write is applied and its reply lost; from the next
    /// reply read after that, the connection flaps as under
    /// [`SimClient::flap_connection`], until
    /// [`SimClient::stop_flapping_after_loss`]. The retry of the write is
    /// answered, and the read that would learn its fate fails.
    pub fn lose_reply_then_flap(&self) {
        self.shared.recorder.fault(
            FaultKind::LoseReplyThenFlap,
            vec![format!("client{}", self.shared.id)],
            "the next write applies, its reply is lost; flapping from the next reply",
        );
        let _ = self.tx.unbounded_send(Cmd::LoseReplyThenFlap(true));
    }

    /// Ends [`SimClient::lose_reply_then_flap`].
    pub fn stop_flapping_after_loss(&self) {
        self.shared
            .recorder
            .fault(FaultEnd::StopFlapping, vec![format!("client{}", self.shared.id)], "");
        let _ = self.tx.unbounded_send(Cmd::LoseReplyThenFlap(false));
    }

    /// Ends [`SimClient::flap_connection`].
    pub fn stop_flapping(&self) {
        self.shared
            .recorder
            .fault(FaultEnd::StopFlapping, vec![format!("client{}", self.shared.id)], "");
        let _ = self.tx.unbounded_send(Cmd::Flap(false));
    }

    /// Sends a request and waits for its reply, recording both.
    async fn call(&self, request: Request, watch: Option<WatchReg>) -> Result<(Response, Zxid), ZkError> {
        // Nothing is sent before the session exists, so the operation is
        // invoked (and recorded) once its session id is known.
        self.wait_for_session().await;
        let op = record::op_of(&request);
        let session = self.session_id();
        let id = self
            .shared
            .recorder
            .invoke(self.shared.id, (session != 0).then_some(session), op);
        let result = self.send(id as i64, request, watch).await;
        // A reply was recorded by the connection as it read it; a call that
        // got none is recorded as it ends.
        if result.is_err() {
            let (outcome, zxid) = record::outcome_of(&result);
            self.shared.recorder.complete(id, self.shared.id, outcome, zxid);
        }
        result
    }

    async fn send(&self, xid: i64, request: Request, watch: Option<WatchReg>) -> Result<(Response, Zxid), ZkError> {
        if self.shared.lock().closed {
            return Err(ZkError::Closed);
        }
        match self.state() {
            SessionState::Expired => return Err(ZkError::SessionExpired),
            SessionState::Closed => return Err(ZkError::Closed),
            _ => {}
        }
        let (reply, rx) = oneshot::channel();
        if self
            .tx
            .unbounded_send(Cmd::Call {
                xid,
                request,
                reply,
                watch,
            })
            .is_err()
        {
            return Err(self.terminal_error());
        }
        rx.await.unwrap_or_else(|_| Err(self.terminal_error()))
    }

    fn terminal_error(&self) -> ZkError {
        if self.shared.lock().closed {
            return ZkError::Closed;
        }
        match self.state() {
            SessionState::Expired => ZkError::SessionExpired,
            _ => ZkError::Closed,
        }
    }

    /// Records a call rejected before sending (bad path) and returns the error.
    fn reject<T>(&self, request: Request, e: ZkError) -> ZkResult<T> {
        let session = self.session_id();
        let id = self.shared.recorder.invoke(
            self.shared.id,
            (session != 0).then_some(session),
            record::op_of(&request),
        );
        self.shared
            .recorder
            .complete(id, self.shared.id, Outcome::Fail { error: e.name().into() }, None);
        Err(e)
    }

    fn check(path: &str, sequential: bool) -> ZkResult<()> {
        validate_path(path, sequential).map_err(ZkError::InvalidPath)
    }
}
