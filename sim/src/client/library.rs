//! Sessions of a real client library — zookeeper-client speaking jute to
//! the simulated servers' wire port (see wiresim/) — recorded in the history
//! as [`SimClient`](super::SimClient)'s calls are: invocation once the
//! session id is known, completion with the outcome, session state changes
//! and delivered node events.
//!
//! The main workspace cannot name zookeeper-client's simulated build (its
//! runtime crates are patched only in wiresim/), so the library enters
//! through [`install`]: a connect function returning a [`DynZk`], the
//! object-safe form of `ZkClient`. Reply zxids are not exposed by client
//! libraries, so completions carry none.

use std::any::Any;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use madsim::task::NodeId;
use zkdst_history::{FaultKind, Op as HOp, Outcome, Value};
use zkdst_recipes::zk::{
    AddWatchMode, CreateMode, MultiError, OneshotWatch, Op, OpResult, PersistentWatch, ReadOp, ReadResult, SessionId,
    SessionState, Stat, StateFanout, StateWatch, WatchedEvent, ZkClient, ZkError, ZkResult,
};

use super::library_lock::{LibraryHold, LockFn, LockPrefix};
use super::{record, ClientConfig};
use crate::proto::{Request, Response};
use crate::recorder::Recorder;

/// `ZkClient`, object-safe: what a client library's adapter provides.
pub trait DynZk: Send + Sync + 'static {
    fn session_id(&self) -> SessionId;
    fn session_timeout(&self) -> Duration;
    fn state_watch(&self) -> StateWatch;
    fn create<'a>(&'a self, path: &'a str, data: &'a [u8], mode: CreateMode)
        -> BoxFuture<'a, ZkResult<(String, Stat)>>;
    fn delete<'a>(&'a self, path: &'a str, version: i32) -> BoxFuture<'a, ZkResult<()>>;
    fn exists<'a>(
        &'a self,
        path: &'a str,
        watch: bool,
    ) -> BoxFuture<'a, ZkResult<(Option<Stat>, Option<OneshotWatch>)>>;
    fn get_data<'a>(
        &'a self,
        path: &'a str,
        watch: bool,
    ) -> BoxFuture<'a, ZkResult<(Vec<u8>, Stat, Option<OneshotWatch>)>>;
    fn get_children<'a>(
        &'a self,
        path: &'a str,
        watch: bool,
    ) -> BoxFuture<'a, ZkResult<(Vec<String>, Stat, Option<OneshotWatch>)>>;
    fn set_data<'a>(&'a self, path: &'a str, data: &'a [u8], version: i32) -> BoxFuture<'a, ZkResult<Stat>>;
    fn multi(&self, ops: Vec<Op>) -> BoxFuture<'_, Result<Vec<OpResult>, MultiError>>;
    fn multi_read(&self, ops: Vec<ReadOp>) -> BoxFuture<'_, ZkResult<Vec<ReadResult>>>;
    fn sync<'a>(&'a self, path: &'a str) -> BoxFuture<'a, ZkResult<()>>;
    fn add_watch<'a>(&'a self, path: &'a str, mode: AddWatchMode) -> BoxFuture<'a, ZkResult<PersistentWatch>>;
    fn close(&self) -> BoxFuture<'_, ()>;
    /// The adapter itself, for the library's own recipes ([`Library::lock`]).
    fn as_any(&self) -> &(dyn Any + Send + Sync);
}

impl<C: ZkClient> DynZk for C {
    fn session_id(&self) -> SessionId {
        ZkClient::session_id(self)
    }
    fn session_timeout(&self) -> Duration {
        ZkClient::session_timeout(self)
    }
    fn state_watch(&self) -> StateWatch {
        ZkClient::state_watch(self)
    }
    fn create<'a>(
        &'a self,
        path: &'a str,
        data: &'a [u8],
        mode: CreateMode,
    ) -> BoxFuture<'a, ZkResult<(String, Stat)>> {
        Box::pin(ZkClient::create(self, path, data, mode))
    }
    fn delete<'a>(&'a self, path: &'a str, version: i32) -> BoxFuture<'a, ZkResult<()>> {
        Box::pin(ZkClient::delete(self, path, version))
    }
    fn exists<'a>(
        &'a self,
        path: &'a str,
        watch: bool,
    ) -> BoxFuture<'a, ZkResult<(Option<Stat>, Option<OneshotWatch>)>> {
        Box::pin(async move {
            if watch {
                ZkClient::exists_watch(self, path).await.map(|(s, w)| (s, Some(w)))
            } else {
                ZkClient::exists(self, path).await.map(|s| (s, None))
            }
        })
    }
    fn get_data<'a>(
        &'a self,
        path: &'a str,
        watch: bool,
    ) -> BoxFuture<'a, ZkResult<(Vec<u8>, Stat, Option<OneshotWatch>)>> {
        Box::pin(async move {
            if watch {
                ZkClient::get_data_watch(self, path)
                    .await
                    .map(|(d, s, w)| (d, s, Some(w)))
            } else {
                ZkClient::get_data(self, path).await.map(|(d, s)| (d, s, None))
            }
        })
    }
    fn get_children<'a>(
        &'a self,
        path: &'a str,
        watch: bool,
    ) -> BoxFuture<'a, ZkResult<(Vec<String>, Stat, Option<OneshotWatch>)>> {
        Box::pin(async move {
            if watch {
                ZkClient::get_children_watch(self, path)
                    .await
                    .map(|(c, s, w)| (c, s, Some(w)))
            } else {
                ZkClient::get_children(self, path).await.map(|(c, s)| (c, s, None))
            }
        })
    }
    fn set_data<'a>(&'a self, path: &'a str, data: &'a [u8], version: i32) -> BoxFuture<'a, ZkResult<Stat>> {
        Box::pin(ZkClient::set_data(self, path, data, version))
    }
    fn multi(&self, ops: Vec<Op>) -> BoxFuture<'_, Result<Vec<OpResult>, MultiError>> {
        Box::pin(ZkClient::multi(self, ops))
    }
    fn multi_read(&self, ops: Vec<ReadOp>) -> BoxFuture<'_, ZkResult<Vec<ReadResult>>> {
        Box::pin(ZkClient::multi_read(self, ops))
    }
    fn sync<'a>(&'a self, path: &'a str) -> BoxFuture<'a, ZkResult<()>> {
        Box::pin(ZkClient::sync(self, path))
    }
    fn add_watch<'a>(&'a self, path: &'a str, mode: AddWatchMode) -> BoxFuture<'a, ZkResult<PersistentWatch>> {
        Box::pin(ZkClient::add_watch(self, path, mode))
    }
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(ZkClient::close(self))
    }
    fn as_any(&self) -> &(dyn Any + Send + Sync) {
        self
    }
}

/// A client library, as the simulation runs it.
pub struct Library {
    /// Prepares a seed's runtime for the library (its spawner, its random
    /// source): called once per seed, inside the runtime, before any client.
    pub enter: fn(),
    /// Opens a session against the ensemble's wire ports (servers
    /// `cfg.servers`); resolves once the session is established.
    pub connect: fn(&ClientConfig) -> BoxFuture<'static, ZkResult<Arc<dyn DynZk>>>,
    /// Its name in messages and reports ("zookeeper-client 0.11").
    pub name: &'static str,
    /// The command that runs scenarios with it (`zkdst-wire`): replay lines name it.
    pub command: &'static str,
    /// The library's own lock recipe, if it ships one (workload recipe
    /// `library-lock`).
    pub lock: Option<LockFn>,
}

static LIBRARY: OnceLock<Library> = OnceLock::new();

/// Installs the client library for this process (once; false if one was
/// installed already).
pub fn install(library: Library) -> bool {
    LIBRARY.set(library).is_ok()
}

/// The installed client library, if any.
pub fn library() -> Option<&'static Library> {
    LIBRARY.get()
}

/// The command a replay line should name: this build's.
pub fn command() -> &'static str {
    library().map_or("zkdst", |l| l.command)
}

struct State {
    session: Option<Arc<dyn DynZk>>,
    session_id: SessionId,
    timeout: Duration,
    states: StateFanout,
    /// `close` was called: later calls fail with `Closed`.
    closed: bool,
}

struct Shared {
    cfg: ClientConfig,
    library: &'static Library,
    node: NodeId,
    recorder: Recorder,
    inner: Mutex<State>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_state(&self, state: SessionState) {
        let session = {
            let mut s = self.lock();
            if !s.states.publish(state) {
                return;
            }
            s.session_id
        };
        self.recorder.session_event(self.cfg.id, session, state, None);
    }
}

/// A session of the installed client library, on the node that created it.
#[derive(Clone)]
pub struct LibraryClient {
    shared: Arc<Shared>,
}

impl LibraryClient {
    /// Starts connecting through `library` (asynchronously, like
    /// ZooKeeper's constructor); calls wait for the session.
    pub fn connect(library: &'static Library, cfg: ClientConfig, recorder: Recorder) -> LibraryClient {
        let shared = Arc::new(Shared {
            library,
            node: madsim::plugin::node(),
            recorder,
            inner: Mutex::new(State {
                session: None,
                session_id: 0,
                timeout: Duration::from_millis(cfg.session_timeout_ms.max(0) as u64),
                states: StateFanout::new(SessionState::Disconnected),
                closed: false,
            }),
            cfg,
        });
        madsim::task::spawn(establish(shared.clone(), library.connect));
        LibraryClient { shared }
    }

    pub fn id(&self) -> u32 {
        self.shared.cfg.id
    }

    pub fn recorder(&self) -> &Recorder {
        &self.shared.recorder
    }

    /// The library this session runs on.
    pub fn library(&self) -> &'static Library {
        self.shared.library
    }

    /// Fault: reset this client node's connections now.
    pub fn drop_connection(&self) {
        self.shared
            .recorder
            .fault(FaultKind::DropConnection, vec![format!("client{}", self.id())], "");
        crate::wire::reset_connections(self.shared.node);
    }

    /// Fault: the next write is applied, its reply lost, the connection reset.
    pub fn lose_next_write_reply(&self) {
        self.shared.recorder.fault(
            FaultKind::LoseReply,
            vec![format!("client{}", self.id())],
            "the next write applies; its reply is lost",
        );
        crate::wire::lose_next_write_reply(self.shared.node);
    }

    /// The session, once established (closed or not); an error if the
    /// handle was closed, or the session ended, before it was.
    pub(super) async fn session(&self) -> ZkResult<Arc<dyn DynZk>> {
        let mut w = ZkClient::state_watch(self);
        loop {
            {
                let s = self.shared.lock();
                // A closed session still answers: the library decides what
                // a call after close gets (a bad path is still InvalidPath).
                if let Some(z) = &s.session {
                    return Ok(z.clone());
                }
                if s.closed {
                    return Err(ZkError::Closed);
                }
                match s.states.state() {
                    SessionState::Expired => return Err(ZkError::SessionExpired),
                    SessionState::Closed => return Err(ZkError::Closed),
                    _ => {}
                }
            }
            w.changed().await;
        }
    }

    /// Runs one call through the library, recording it as `op`.
    async fn call<T, F: Future<Output = ZkResult<T>>>(
        &self,
        op: HOp,
        run: impl FnOnce(Arc<dyn DynZk>) -> F,
        reply: impl FnOnce(&T) -> Response,
    ) -> ZkResult<T> {
        let session = self.session().await;
        let id = self
            .shared
            .recorder
            .invoke(self.id(), Some(ZkClient::session_id(self)).filter(|s| *s != 0), op);
        let result = match session {
            Ok(z) => run(z).await,
            Err(e) => Err(e),
        };
        self.noticed(&result);
        let outcome = match &result {
            Ok(v) => Outcome::Ok {
                value: record::value_of(&reply(v)),
            },
            Err(e) => error_outcome(e),
        };
        self.shared.recorder.complete(id, self.id(), outcome, None);
        result
    }

    /// The library may tell a call its session ended before its state
    /// watcher says so (zookeeper-client expires a session on its own
    /// after 7/5 of the timeout without a server): the client knew it by
    /// this reply, so the history has it before the call's completion.
    pub(super) fn noticed<T>(&self, result: &ZkResult<T>) {
        match result {
            Err(ZkError::SessionExpired) => self.shared.set_state(SessionState::Expired),
            Err(ZkError::Closed) => self.shared.set_state(SessionState::Closed),
            _ => {}
        }
    }

    /// A node event of a watch set by this client, recorded on delivery
    /// (see [`super::relay`]).
    fn recorded(&self, watch: Option<OneshotWatch>) -> OneshotWatch {
        let Some(watch) = watch else {
            return OneshotWatch::channel().1;
        };
        let shared = self.shared.clone();
        super::relay::relay(watch, move |event| record_event(&shared, event))
    }
}

fn record_event(shared: &Shared, event: &WatchedEvent) {
    if event.is_session_event() {
        // A watch may hear of its session's end before the state watcher
        // (the library tells every outstanding watcher): the client knew.
        if event.state.is_terminal() {
            shared.set_state(event.state);
        }
        return;
    }
    let session = shared.lock().session_id;
    shared.recorder.watch_event(
        shared.cfg.id,
        session,
        &format!("{:?}", event.event_type),
        event.path.clone(),
    );
}

/// How an error the library returned appears in the history, as
/// `record::outcome_of` has it for the simulated client: a lost connection
/// is unknown, an error raised by the client itself is a failure, an error
/// the server replied with is an Ok whose value is the error.
fn error_outcome(e: &ZkError) -> Outcome {
    match e {
        e if e.is_ambiguous() => Outcome::Info { error: e.name().into() },
        ZkError::SessionExpired
        | ZkError::Closed
        | ZkError::InvalidPath(_)
        | ZkError::InvalidArgument(_)
        | ZkError::MarshallingError
        | ZkError::AuthFailed => Outcome::Fail { error: e.name().into() },
        e => Outcome::Ok {
            value: Value::Error {
                code: e.name().into(),
                results: Vec::new(),
            },
        },
    }
}

/// Connects through the library until a session is established or the
/// handle is closed, then follows the session's state.
async fn establish(shared: Arc<Shared>, connect: fn(&ClientConfig) -> BoxFuture<'static, ZkResult<Arc<dyn DynZk>>>) {
    let session = loop {
        if shared.lock().closed {
            return;
        }
        match connect(&shared.cfg).await {
            Ok(z) => break z,
            // Nothing answered in time: try again, as ZooKeeper's client does.
            Err(e) if e.is_ambiguous() => continue,
            Err(_) => {
                shared.set_state(SessionState::Closed);
                return;
            }
        }
    };
    let mut states = session.state_watch();
    let closed = {
        let mut s = shared.lock();
        if !s.closed {
            s.session_id = session.session_id();
            s.timeout = session.session_timeout();
            s.session = Some(session.clone());
        }
        s.closed
    };
    if closed {
        session.close().await;
        return;
    }
    let mut now = states.state();
    loop {
        shared.set_state(now);
        if now.is_terminal() {
            return;
        }
        now = states.changed().await;
    }
}

impl ZkClient for LibraryClient {
    fn session_id(&self) -> SessionId {
        self.shared.lock().session_id
    }

    fn session_timeout(&self) -> Duration {
        self.shared.lock().timeout
    }

    fn state(&self) -> SessionState {
        self.shared.lock().states.state()
    }

    fn state_watch(&self) -> StateWatch {
        self.shared.lock().states.subscribe()
    }

    async fn create(&self, path: &str, data: &[u8], mode: CreateMode) -> ZkResult<(String, Stat)> {
        let op = record::op_of(&Request::Create {
            path: path.to_string(),
            data: data.to_vec(),
            mode,
        });
        self.call(
            op,
            |z| async move { z.create(path, data, mode).await },
            |(path, stat)| Response::Create {
                path: path.clone(),
                stat: *stat,
            },
        )
        .await
    }

    async fn delete(&self, path: &str, version: i32) -> ZkResult<()> {
        let op = record::op_of(&Request::Delete {
            path: path.to_string(),
            version,
        });
        self.call(
            op,
            |z| async move { z.delete(path, version).await },
            |_| Response::Delete,
        )
        .await
    }

    async fn exists(&self, path: &str) -> ZkResult<Option<Stat>> {
        let op = HOp::Exists {
            path: path.to_string(),
            watch: false,
        };
        let (stat, _) = self
            .call(
                op,
                |z| async move { z.exists(path, false).await },
                |(s, _)| Response::Exists(*s),
            )
            .await?;
        Ok(stat)
    }

    async fn exists_watch(&self, path: &str) -> ZkResult<(Option<Stat>, OneshotWatch)> {
        let op = HOp::Exists {
            path: path.to_string(),
            watch: true,
        };
        let (stat, w) = self
            .call(
                op,
                |z| async move { z.exists(path, true).await },
                |(s, _)| Response::Exists(*s),
            )
            .await?;
        Ok((stat, self.recorded(w)))
    }

    async fn get_data(&self, path: &str) -> ZkResult<(Vec<u8>, Stat)> {
        let op = HOp::GetData {
            path: path.to_string(),
            watch: false,
        };
        let (data, stat, _) = self
            .call(op, |z| async move { z.get_data(path, false).await }, data_reply)
            .await?;
        Ok((data, stat))
    }

    async fn get_data_watch(&self, path: &str) -> ZkResult<(Vec<u8>, Stat, OneshotWatch)> {
        let op = HOp::GetData {
            path: path.to_string(),
            watch: true,
        };
        let (data, stat, w) = self
            .call(op, |z| async move { z.get_data(path, true).await }, data_reply)
            .await?;
        Ok((data, stat, self.recorded(w)))
    }

    async fn get_children(&self, path: &str) -> ZkResult<(Vec<String>, Stat)> {
        let op = HOp::GetChildren {
            path: path.to_string(),
            watch: false,
        };
        let (children, stat, _) = self
            .call(op, |z| async move { z.get_children(path, false).await }, children_reply)
            .await?;
        Ok((children, stat))
    }

    async fn get_children_watch(&self, path: &str) -> ZkResult<(Vec<String>, Stat, OneshotWatch)> {
        let op = HOp::GetChildren {
            path: path.to_string(),
            watch: true,
        };
        let (children, stat, w) = self
            .call(op, |z| async move { z.get_children(path, true).await }, children_reply)
            .await?;
        Ok((children, stat, self.recorded(w)))
    }

    async fn set_data(&self, path: &str, data: &[u8], version: i32) -> ZkResult<Stat> {
        let op = record::op_of(&Request::SetData {
            path: path.to_string(),
            data: data.to_vec(),
            version,
        });
        self.call(
            op,
            |z| async move { z.set_data(path, data, version).await },
            |stat| Response::SetData { stat: *stat },
        )
        .await
    }

    async fn multi(&self, ops: Vec<Op>) -> Result<Vec<OpResult>, MultiError> {
        let op = record::op_of(&Request::Multi(ops.clone()));
        // A failed multi's per-op results ride in the error: an Ok of the
        // call (the server's verdict), recorded as the simulated client does.
        let result = self
            .call(
                op,
                |z| async move {
                    z.multi(ops)
                        .await
                        .map(Ok)
                        .or_else(|e| if e.results.is_empty() { Err(e.error) } else { Ok(Err(e)) })
                },
                |r| match r {
                    Ok(results) => Response::Multi(results.clone()),
                    Err(e) => Response::MultiFailed(e.clone()),
                },
            )
            .await;
        match result {
            Ok(r) => r,
            Err(e) => Err(MultiError::whole(e)),
        }
    }

    async fn multi_read(&self, ops: Vec<ReadOp>) -> ZkResult<Vec<ReadResult>> {
        let op = record::op_of(&Request::MultiRead(ops.clone()));
        self.call(
            op,
            |z| async move { z.multi_read(ops).await },
            |r| Response::MultiRead(r.clone()),
        )
        .await
    }

    async fn sync(&self, path: &str) -> ZkResult<()> {
        let op = HOp::Sync { path: path.to_string() };
        self.call(op, |z| async move { z.sync(path).await }, |_| Response::Sync)
            .await
    }

    async fn add_watch(&self, path: &str, mode: AddWatchMode) -> ZkResult<PersistentWatch> {
        let op = record::op_of(&Request::AddWatch {
            path: path.to_string(),
            mode,
        });
        let inner = self
            .call(
                op,
                |z| async move { z.add_watch(path, mode).await },
                |_| Response::AddWatch,
            )
            .await?;
        Ok(self.recorded_persistent(inner))
    }

    async fn close(&self) {
        let session = {
            let mut s = self.shared.lock();
            if s.closed {
                return;
            }
            s.closed = true;
            s.session.clone()
        };
        if let Some(z) = session {
            if !ZkClient::state(self).is_terminal() {
                let id = self
                    .shared
                    .recorder
                    .invoke(self.id(), Some(z.session_id()), HOp::CloseSession);
                z.close().await;
                self.shared
                    .recorder
                    .complete(id, self.id(), Outcome::Ok { value: Value::Unit }, None);
            } else {
                // Ended already: nothing to send, but the library's handle
                // closes too (later calls get Closed, not SessionExpired).
                z.close().await;
            }
        }
        self.shared.set_state(SessionState::Closed);
    }
}

impl LibraryClient {
    fn recorded_persistent(&self, mut inner: PersistentWatch) -> PersistentWatch {
        let (tx, rx) = PersistentWatch::channel();
        let shared = self.shared.clone();
        madsim::task::spawn(async move {
            loop {
                let event = inner.changed().await;
                record_event(&shared, &event);
                let terminal = event.is_session_event() && event.state.is_terminal();
                if !tx.send(event) || terminal {
                    return;
                }
            }
        });
        rx
    }
}

fn data_reply((data, stat, _): &(Vec<u8>, Stat, Option<OneshotWatch>)) -> Response {
    Response::GetData {
        data: data.clone(),
        stat: *stat,
    }
}

fn children_reply((children, stat, _): &(Vec<String>, Stat, Option<OneshotWatch>)) -> Response {
    let mut sorted = children.clone();
    sorted.sort_unstable();
    Response::GetChildren {
        children: children.clone(),
        sorted: sorted.into(),
        stat: *stat,
    }
}

impl LibraryClient {
    /// Takes the library's own lock in `dir` (see [`LockFn`], in
    /// `library_lock`); not recorded as calls: the workload records the
    /// acquire.
    pub async fn lock(&self, dir: &str, prefix: LockPrefix) -> ZkResult<Box<dyn LibraryHold>> {
        let lock = self.library().lock.ok_or(zkdst_recipes::zk::ZkError::Unimplemented)?;
        let session = self.session().await?;
        let hold = lock(session.as_any(), dir, prefix).await;
        self.noticed(&hold);
        hold
    }
}
