//! The `ZkClient` API of `SimClient`: each call checks its arguments as
//! the real client does, sends one request and maps the reply.

use std::time::Duration;

use zkdst_recipes::zk::{
    AddWatchMode, CreateMode, MultiError, OneshotWatch, Op, OpResult, PersistentWatch, ReadOp, ReadResult, SessionId,
    SessionState, Stat, StateWatch, ZkClient, ZkError, ZkResult,
};

use super::conn::{Cmd, WatchReg};
use super::SimClient;
use crate::proto::{Request, Response};

fn unexpected(r: Response) -> ZkError {
    match r {
        Response::Error(e) => e,
        _ => ZkError::MarshallingError,
    }
}

impl ZkClient for SimClient {
    fn session_id(&self) -> SessionId {
        self.shared.session_id()
    }

    fn session_timeout(&self) -> Duration {
        Duration::from_millis(self.shared.timeout_ms().max(0) as u64)
    }

    fn state(&self) -> SessionState {
        self.shared.state()
    }

    fn state_watch(&self) -> StateWatch {
        self.shared.lock().states.subscribe()
    }

    async fn create(&self, path: &str, data: &[u8], mode: CreateMode) -> ZkResult<(String, Stat)> {
        let request = Request::Create {
            path: path.to_string(),
            data: data.to_vec(),
            mode,
        };
        if let Err(e) = Self::check(path, mode.is_sequential()) {
            return self.reject(request, e);
        }
        if let Some(ttl) = mode.ttl_ms() {
            if ttl <= 0 || ttl > CreateMode::MAX_TTL_MS {
                let e = ZkError::InvalidArgument(format!(
                    "ttl must be positive and cannot be larger than: {}",
                    CreateMode::MAX_TTL_MS
                ));
                return self.reject(request, e);
            }
        }
        match self.call(request, None).await? {
            (Response::Create { path, stat }, _) => Ok((path, stat)),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn delete(&self, path: &str, version: i32) -> ZkResult<()> {
        let request = Request::Delete {
            path: path.to_string(),
            version,
        };
        if let Err(e) = Self::check(path, false) {
            return self.reject(request, e);
        }
        match self.call(request, None).await? {
            (Response::Delete, _) => Ok(()),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn exists(&self, path: &str) -> ZkResult<Option<Stat>> {
        let request = Request::Exists {
            path: path.to_string(),
            watch: false,
        };
        if let Err(e) = Self::check(path, false) {
            return self.reject(request, e);
        }
        match self.call(request, None).await? {
            (Response::Exists(s), _) => Ok(s),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn exists_watch(&self, path: &str) -> ZkResult<(Option<Stat>, OneshotWatch)> {
        let request = Request::Exists {
            path: path.to_string(),
            watch: true,
        };
        if let Err(e) = Self::check(path, false) {
            return self.reject(request, e);
        }
        let (tx, w) = OneshotWatch::channel();
        match self.call(request, Some(WatchReg::Exists(tx))).await? {
            (Response::Exists(s), _) => Ok((s, w)),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn get_data(&self, path: &str) -> ZkResult<(Vec<u8>, Stat)> {
        let request = Request::GetData {
            path: path.to_string(),
            watch: false,
        };
        if let Err(e) = Self::check(path, false) {
            return self.reject(request, e);
        }
        match self.call(request, None).await? {
            (Response::GetData { data, stat }, _) => Ok((data, stat)),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn get_data_watch(&self, path: &str) -> ZkResult<(Vec<u8>, Stat, OneshotWatch)> {
        let request = Request::GetData {
            path: path.to_string(),
            watch: true,
        };
        if let Err(e) = Self::check(path, false) {
            return self.reject(request, e);
        }
        let (tx, w) = OneshotWatch::channel();
        match self.call(request, Some(WatchReg::Data(tx))).await? {
            (Response::GetData { data, stat }, _) => Ok((data, stat, w)),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn get_children(&self, path: &str) -> ZkResult<(Vec<String>, Stat)> {
        let request = Request::GetChildren {
            path: path.to_string(),
            watch: false,
        };
        if let Err(e) = Self::check(path, false) {
            return self.reject(request, e);
        }
        match self.call(request, None).await? {
            (Response::GetChildren { children, stat, .. }, _) => Ok((children, stat)),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn get_children_watch(&self, path: &str) -> ZkResult<(Vec<String>, Stat, OneshotWatch)> {
        let request = Request::GetChildren {
            path: path.to_string(),
            watch: true,
        };
        if let Err(e) = Self::check(path, false) {
            return self.reject(request, e);
        }
        let (tx, w) = OneshotWatch::channel();
        match self.call(request, Some(WatchReg::Child(tx))).await? {
            (Response::GetChildren { children, stat, .. }, _) => Ok((children, stat, w)),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn set_data(&self, path: &str, data: &[u8], version: i32) -> ZkResult<Stat> {
        let request = Request::SetData {
            path: path.to_string(),
            data: data.to_vec(),
            version,
        };
        if let Err(e) = Self::check(path, false) {
            return self.reject(request, e);
        }
        match self.call(request, None).await? {
            (Response::SetData { stat }, _) => Ok(stat),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn multi(&self, ops: Vec<Op>) -> Result<Vec<OpResult>, MultiError> {
        let request = Request::Multi(ops.clone());
        for op in &ops {
            let seq = matches!(op, Op::Create { mode, .. } if mode.is_sequential());
            if let Err(e) = Self::check(op.path(), seq) {
                return self.reject(request, e).map_err(MultiError::whole);
            }
        }
        if ops.is_empty() {
            // Nothing to send: ZooKeeper's Java client (and zookeeper-client)
            // answer an empty multi locally, also on an expired session.
            if self.shared.lock().closed {
                return Err(MultiError::whole(ZkError::Closed));
            }
            return Ok(Vec::new());
        }
        match self.call(request, None).await.map_err(MultiError::whole)? {
            (Response::Multi(results), _) => Ok(results),
            (Response::MultiFailed(e), _) => Err(e),
            (r, _) => Err(MultiError::whole(unexpected(r))),
        }
    }

    async fn multi_read(&self, ops: Vec<ReadOp>) -> ZkResult<Vec<ReadResult>> {
        let request = Request::MultiRead(ops.clone());
        for op in &ops {
            if let Err(e) = Self::check(op.path(), false) {
                return self.reject(request, e);
            }
        }
        if ops.is_empty() {
            // Answered locally, as zookeeper-client does.
            if self.shared.lock().closed {
                return Err(ZkError::Closed);
            }
            return Ok(Vec::new());
        }
        match self.call(request, None).await? {
            (Response::MultiRead(results), _) => Ok(results),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn sync(&self, path: &str) -> ZkResult<()> {
        let request = Request::Sync { path: path.to_string() };
        if let Err(e) = Self::check(path, false) {
            return self.reject(request, e);
        }
        match self.call(request, None).await? {
            (Response::Sync, _) => Ok(()),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn add_watch(&self, path: &str, mode: AddWatchMode) -> ZkResult<PersistentWatch> {
        let request = Request::AddWatch {
            path: path.to_string(),
            mode,
        };
        if let Err(e) = Self::check(path, false) {
            return self.reject(request, e);
        }
        let (tx, w) = PersistentWatch::channel();
        match self.call(request, Some(WatchReg::Persistent(mode, tx))).await? {
            (Response::AddWatch, _) => Ok(w),
            (r, _) => Err(unexpected(r)),
        }
    }

    async fn close(&self) {
        if self.state().is_terminal() {
            self.shared.lock().closed = true;
            return;
        }
        if self.state().is_connected() {
            let t = self.session_timeout().max(Duration::from_millis(1));
            let _ = madsim::time::timeout(t, self.call(Request::CloseSession, None)).await;
        }
        let _ = self.tx.unbounded_send(Cmd::Shutdown);
        self.shared.set_state(SessionState::Closed);
        self.shared.lock().closed = true;
    }
}
