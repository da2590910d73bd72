//! The interface over a real ZooKeeper: [`RealClient`] implements
//! [`ZkClient`] with the `zookeeper-client` crate (kezhuw, 0.11).
//!
//! It runs wherever zookeeper-client can spawn its tasks (the session, and
//! here one forwarding task per watch) through `asyncs`: inside a tokio
//! runtime with feature `tokio`, or on the spawner a simulation entered
//! (wiresim/ runs this adapter, unmodified, against the simulated ensemble).
//! Timeouts use async-io's `Timer`, as zookeeper-client itself does.
//!
//! How it differs from the Java client — and so, possibly, from the
//! simulator (the conformance suite is where this is checked):
//! - A request is sent when its future is first polled (the adapter clones
//!   the session handle into the future so that `close` can end the session).
//!   Requests are still applied in the order they are sent.
//! - `zookeeper-client` declares the connection lost after 2/5 of the session
//!   timeout without a reply (Java: 2/3), and gives up reconnecting — and so
//!   reports `Expired` on its own — after 7/5 of the session timeout without
//!   hearing from a server (Java waits for the server to say so).
//! - State transitions come through a watch channel: two transitions in very
//!   quick succession (Disconnected then SyncConnected) may reach a
//!   `StateWatch` as the second one only.
//! - One-shot watches receive only terminal session events (`Expired`,
//!   `Closed`, `AuthFailed`), never `Disconnected` (watches survive
//!   reconnects through SetWatches).
//! - A failed `multi` reports only the failing op's index and error; the
//!   per-op results (`OK` before it, `RuntimeInconsistency` after it) are
//!   rebuilt from that, which is what ZooKeeper sends.
//! - Operations after `close` fail with `Closed` (Java: `SessionExpired`).

mod convert;
#[cfg(feature = "tokio")]
mod runtime;
mod watch;

pub use convert::error as error_of;
#[cfg(feature = "tokio")]
pub use runtime::TokioRuntime;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use zookeeper_client as zkc;

use zkdst_recipes::zk::{
    validate_path, AddWatchMode, CreateMode, MultiError, OneshotWatch, Op, OpResult, PersistentWatch, ReadOp,
    ReadResult, SessionId, SessionState, Stat, StateFanout, StateWatch, ZkClient, ZkError, ZkResult,
};

/// Options for [`RealClient::connect_with`].
#[derive(Debug, Clone)]
pub struct RealOptions {
    /// Requested session timeout; the server clamps it to
    /// [2, 20] × tickTime.
    pub session_timeout: Duration,
    /// How long `connect` may take before it fails with `ConnectionLoss`.
    pub connect_timeout: Duration,
}

impl Default for RealOptions {
    fn default() -> Self {
        RealOptions {
            session_timeout: Duration::from_secs(6),
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// A session with a real ZooKeeper. Clones share the session.
#[derive(Clone)]
pub struct RealClient {
    inner: Arc<Inner>,
}

struct Inner {
    /// `None` once `close` was called: dropping the last `zookeeper-client`
    /// handle is how that crate closes a session.
    client: Mutex<Option<zkc::Client>>,
    session_id: SessionId,
    session_timeout: Duration,
    state: Arc<Mutex<StateFanout>>,
    forwarder: watch::Forwarder,
}

impl std::fmt::Debug for RealClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealClient")
            .field("session_id", &format_args!("{:#x}", self.inner.session_id))
            .field("session_timeout", &self.inner.session_timeout)
            .field("state", &self.state())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl RealClient {
    /// Connects to `connect_string` (`host:port[,host:port...]`) with the
    /// default options (6 s session timeout).
    pub async fn connect(connect_string: &str) -> ZkResult<RealClient> {
        Self::connect_with(connect_string, RealOptions::default()).await
    }

    /// Connects with explicit options.
    pub async fn connect_with(connect_string: &str, options: RealOptions) -> ZkResult<RealClient> {
        let connecting = zkc::Client::connector()
            .with_session_timeout(options.session_timeout)
            .connect(connect_string);
        let client = match within(options.connect_timeout, connecting).await {
            None => return Err(ZkError::ConnectionLoss),
            Some(result) => result.map_err(convert::error)?,
        };
        let mut states = client.state_watcher();
        let state = Arc::new(Mutex::new(StateFanout::new(convert::session_state(
            states.peek_state(),
        ))));
        let fanout = Arc::clone(&state);
        asyncs::spawn(async move {
            loop {
                let now = convert::session_state(states.changed().await);
                lock(&fanout).publish(now);
                if now.is_terminal() {
                    return;
                }
            }
        });
        Ok(RealClient {
            inner: Arc::new(Inner {
                session_id: client.session_id().0,
                session_timeout: client.session_timeout(),
                client: Mutex::new(Some(client)),
                state,
                forwarder: watch::Forwarder::start(),
            }),
        })
    }

    /// The `zookeeper-client` handle, for what the interface does not cover.
    /// `None` after `close`.
    pub fn raw(&self) -> Option<zkc::Client> {
        lock(&self.inner.client).clone()
    }

    fn handle(&self) -> ZkResult<zkc::Client> {
        self.raw().ok_or(ZkError::Closed)
    }
}

/// `fut`'s output, or `None` if `limit` passes first.
async fn within<T>(limit: Duration, fut: impl std::future::Future<Output = T>) -> Option<T> {
    match futures::future::select(std::pin::pin!(fut), async_io::Timer::after(limit)).await {
        futures::future::Either::Left((out, _)) => Some(out),
        futures::future::Either::Right(_) => None,
    }
}

/// Java's `PathUtils` rules, before zookeeper-client sees the path: its own
/// check (0.11.2) sends a trailing `.` or `..` component (`/a/.`) and
/// characters outside the BMP, which Java's client refuses (the ensemble
/// scenario's `path-validation` finds both through the wire when this
/// check is taken out).
fn check_path(path: &str, sequential: bool) -> ZkResult<()> {
    validate_path(path, sequential).map_err(ZkError::InvalidPath)
}

/// Per-op results of a multi that failed at `index`, as ZooKeeper reports
/// them: OK before the failing op, its error, `RuntimeInconsistency` after.
fn failed_multi(len: usize, index: usize, error: ZkError) -> MultiError {
    let results = (0..len)
        .map(|i| match i.cmp(&index) {
            std::cmp::Ordering::Less => OpResult::Error(None),
            std::cmp::Ordering::Equal => OpResult::Error(Some(error.clone())),
            std::cmp::Ordering::Greater => OpResult::Error(Some(ZkError::RuntimeInconsistency)),
        })
        .collect();
    MultiError { error, index, results }
}

impl ZkClient for RealClient {
    fn session_id(&self) -> SessionId {
        self.inner.session_id
    }

    fn session_timeout(&self) -> Duration {
        self.inner.session_timeout
    }

    fn state(&self) -> SessionState {
        lock(&self.inner.state).state()
    }

    fn state_watch(&self) -> StateWatch {
        lock(&self.inner.state).subscribe()
    }

    async fn create(&self, path: &str, data: &[u8], mode: CreateMode) -> ZkResult<(String, Stat)> {
        check_path(path, mode.is_sequential())?;
        let options = convert::create_options(mode)?;
        let client = self.handle()?;
        let (stat, sequence) = client.create(path, data, &options).await.map_err(convert::error)?;
        let created = if mode.is_sequential() {
            format!("{path}{sequence}")
        } else {
            path.to_string()
        };
        Ok((created, convert::stat(&stat)))
    }

    async fn delete(&self, path: &str, version: i32) -> ZkResult<()> {
        check_path(path, false)?;
        let client = self.handle()?;
        client.delete(path, Some(version)).await.map_err(convert::error)
    }

    async fn exists(&self, path: &str) -> ZkResult<Option<Stat>> {
        check_path(path, false)?;
        let client = self.handle()?;
        let stat = client.check_stat(path).await.map_err(convert::error)?;
        Ok(stat.as_ref().map(convert::stat))
    }

    async fn exists_watch(&self, path: &str) -> ZkResult<(Option<Stat>, OneshotWatch)> {
        check_path(path, false)?;
        let client = self.handle()?;
        let (stat, watcher) = client.check_and_watch_stat(path).await.map_err(convert::error)?;
        Ok((stat.as_ref().map(convert::stat), self.inner.forwarder.oneshot(watcher)))
    }

    async fn get_data(&self, path: &str) -> ZkResult<(Vec<u8>, Stat)> {
        check_path(path, false)?;
        let client = self.handle()?;
        let (data, stat) = client.get_data(path).await.map_err(convert::error)?;
        Ok((data, convert::stat(&stat)))
    }

    async fn get_data_watch(&self, path: &str) -> ZkResult<(Vec<u8>, Stat, OneshotWatch)> {
        check_path(path, false)?;
        let client = self.handle()?;
        let (data, stat, watcher) = client.get_and_watch_data(path).await.map_err(convert::error)?;
        Ok((data, convert::stat(&stat), self.inner.forwarder.oneshot(watcher)))
    }

    async fn get_children(&self, path: &str) -> ZkResult<(Vec<String>, Stat)> {
        check_path(path, false)?;
        let client = self.handle()?;
        let (children, stat) = client.get_children(path).await.map_err(convert::error)?;
        Ok((children, convert::stat(&stat)))
    }

    async fn get_children_watch(&self, path: &str) -> ZkResult<(Vec<String>, Stat, OneshotWatch)> {
        check_path(path, false)?;
        let client = self.handle()?;
        let (children, stat, watcher) = client.get_and_watch_children(path).await.map_err(convert::error)?;
        Ok((children, convert::stat(&stat), self.inner.forwarder.oneshot(watcher)))
    }

    async fn set_data(&self, path: &str, data: &[u8], version: i32) -> ZkResult<Stat> {
        check_path(path, false)?;
        let client = self.handle()?;
        let stat = client
            .set_data(path, data, Some(version))
            .await
            .map_err(convert::error)?;
        Ok(convert::stat(&stat))
    }

    async fn multi(&self, ops: Vec<Op>) -> Result<Vec<OpResult>, MultiError> {
        for op in &ops {
            let sequential = matches!(op, Op::Create { mode, .. } if mode.is_sequential());
            check_path(op.path(), sequential)?;
        }
        let client = self.handle()?;
        let mut writer = client.new_multi_writer();
        for op in &ops {
            let added = match op {
                Op::Create { path, data, mode } => {
                    let options = convert::create_options(*mode)?;
                    writer.add_create(path, data, &options)
                }
                Op::Delete { path, version } => writer.add_delete(path, Some(*version)),
                Op::SetData { path, data, version } => writer.add_set_data(path, data, Some(*version)),
                Op::Check { path, version } => writer.add_check_version(path, *version),
            };
            added.map_err(convert::error)?;
        }
        match writer.commit().await {
            Ok(results) => results
                .into_iter()
                .map(|r| match r {
                    zkc::MultiWriteResult::Check => Ok(OpResult::Check),
                    zkc::MultiWriteResult::Delete => Ok(OpResult::Delete),
                    zkc::MultiWriteResult::Create { path, stat } => Ok(OpResult::Create {
                        path,
                        stat: convert::stat(&stat),
                    }),
                    zkc::MultiWriteResult::SetData { stat } => Ok(OpResult::SetData {
                        stat: convert::stat(&stat),
                    }),
                    other => {
                        tracing::warn!(result = ?other, "unknown multi result");
                        Err(MultiError::whole(ZkError::SystemError))
                    }
                })
                .collect(),
            Err(zkc::MultiWriteError::RequestFailed { source }) => Err(MultiError::whole(convert::error(source))),
            Err(zkc::MultiWriteError::OperationFailed { index, source }) => {
                Err(failed_multi(ops.len(), index, convert::error(source)))
            }
        }
    }

    async fn multi_read(&self, ops: Vec<ReadOp>) -> ZkResult<Vec<ReadResult>> {
        for op in &ops {
            check_path(op.path(), false)?;
        }
        let client = self.handle()?;
        let mut reader = client.new_multi_reader();
        for op in &ops {
            match op {
                ReadOp::GetData { path } => reader.add_get_data(path),
                ReadOp::GetChildren { path } => reader.add_get_children(path),
            }
            .map_err(convert::error)?;
        }
        let results = reader.commit().await.map_err(convert::error)?;
        Ok(results
            .into_iter()
            .map(|r| match r {
                zkc::MultiReadResult::Data { data, stat } => ReadResult::Data {
                    data,
                    stat: convert::stat(&stat),
                },
                zkc::MultiReadResult::Children { children } => ReadResult::Children { children },
                zkc::MultiReadResult::Error { err } => ReadResult::Error(convert::error(err)),
                other => {
                    tracing::warn!(result = ?other, "unknown multiRead result");
                    ReadResult::Error(ZkError::SystemError)
                }
            })
            .collect())
    }

    async fn sync(&self, path: &str) -> ZkResult<()> {
        check_path(path, false)?;
        let client = self.handle()?;
        client.sync(path).await.map_err(convert::error)
    }

    async fn add_watch(&self, path: &str, mode: AddWatchMode) -> ZkResult<PersistentWatch> {
        check_path(path, false)?;
        let client = self.handle()?;
        let watcher = client
            .watch(path, convert::watch_mode(mode))
            .await
            .map_err(convert::error)?;
        Ok(watch::persistent(watcher))
    }

    /// Drops this adapter's `zookeeper-client` handle, which sends
    /// CloseSession once no request of this session is in flight, and waits
    /// (at most one session timeout) until the session is closed.
    async fn close(&self) {
        let client = lock(&self.inner.client).take();
        let Some(client) = client else {
            return;
        };
        let mut states = client.state_watcher();
        drop(client);
        let wait = async {
            loop {
                if states.peek_state().is_terminated() {
                    return;
                }
                states.changed().await;
            }
        };
        let bound = self.inner.session_timeout.max(Duration::from_secs(1));
        if within(bound, wait).await.is_none() {
            tracing::warn!(
                session = self.inner.session_id,
                "close: no Closed state within the session timeout"
            );
        }
        lock(&self.inner.state).publish(SessionState::Closed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_multi_results_follow_zookeeper() {
        let e = failed_multi(4, 1, ZkError::NodeExists);
        assert_eq!(e.index, 1);
        assert_eq!(
            e.results,
            vec![
                OpResult::Error(None),
                OpResult::Error(Some(ZkError::NodeExists)),
                OpResult::Error(Some(ZkError::RuntimeInconsistency)),
                OpResult::Error(Some(ZkError::RuntimeInconsistency)),
            ]
        );
    }
}
