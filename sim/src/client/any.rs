//! The client a workload runs its recipes on: the simulated client, or a
//! real client library's session through the wire ([`LibraryClient`]).
//! A scenario picks one (`[ensemble] client`); recipes see `ZkClient`.

use std::time::Duration;

use zkdst_history::ClientId;
use zkdst_recipes::zk::{
    AddWatchMode, CreateMode, MultiError, OneshotWatch, Op, OpResult, PersistentWatch, ReadOp, ReadResult, SessionId,
    SessionState, Stat, StateWatch, ZkClient, ZkResult,
};

use super::library::{Library, LibraryClient};
use super::{ClientConfig, SimClient};
use crate::recorder::Recorder;

#[derive(Clone)]
pub enum AnyClient {
    Sim(SimClient),
    Library(LibraryClient),
}

/// Which client a run's sessions use.
#[derive(Clone, Copy, Default)]
pub enum ClientKind {
    /// zkdst's simulated client (typed requests, no bytes).
    #[default]
    Sim,
    /// A client library over the wire protocol.
    Library(&'static Library),
}

impl std::fmt::Debug for ClientKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientKind::Sim => f.write_str("Sim"),
            ClientKind::Library(l) => write!(f, "Library({})", l.name),
        }
    }
}

/// Calls `$call` on whichever client this is.
macro_rules! each {
    ($self:ident, $c:ident => $call:expr) => {
        match $self {
            AnyClient::Sim($c) => $call,
            AnyClient::Library($c) => $call,
        }
    };
}

impl AnyClient {
    /// Starts connecting a session of `kind`.
    pub fn connect(kind: ClientKind, cfg: ClientConfig, recorder: Recorder) -> AnyClient {
        match kind {
            ClientKind::Sim => AnyClient::Sim(SimClient::connect(cfg, recorder)),
            ClientKind::Library(library) => AnyClient::Library(LibraryClient::connect(library, cfg, recorder)),
        }
    }

    pub fn id(&self) -> ClientId {
        each!(self, c => c.id())
    }

    pub fn recorder(&self) -> &Recorder {
        each!(self, c => c.recorder())
    }

    pub fn drop_connection(&self) {
        each!(self, c => c.drop_connection())
    }

    pub fn lose_next_write_reply(&self) {
        each!(self, c => c.lose_next_write_reply())
    }

    /// Arms expire-after-read (see `SimClient::expire_after_next_read`);
    /// false for a library's client, whose connection the simulator does
    /// not hold.
    pub fn expire_after_next_read(&self) -> bool {
        match self {
            AnyClient::Sim(c) => {
                c.expire_after_next_read();
                true
            }
            AnyClient::Library(_) => false,
        }
    }

    /// Starts flap-connection (see `SimClient::flap_connection`); false for
    /// a library's client, whose connection the simulator does not hold,
    /// and for a session already over (nothing left to flap).
    pub fn flap_connection(&self) -> bool {
        match self {
            AnyClient::Sim(c) if !c.state().is_terminal() => {
                c.flap_connection();
                true
            }
            _ => false,
        }
    }

    /// Ends flap-connection.
    pub fn stop_flapping(&self) {
        if let AnyClient::Sim(c) = self {
            c.stop_flapping()
        }
    }

    /// Starts lose-reply-then-flap (see `SimClient::lose_reply_then_flap`);
    /// false where flap-connection could not start.
    pub fn lose_reply_then_flap(&self) -> bool {
        match self {
            AnyClient::Sim(c) if !c.state().is_terminal() => {
                c.lose_reply_then_flap();
                true
            }
            _ => false,
        }
    }

    /// Ends lose-reply-then-flap.
    pub fn stop_flapping_after_loss(&self) {
        if let AnyClient::Sim(c) = self {
            c.stop_flapping_after_loss()
        }
    }

    /// Waits until connected (or the session ended); false on timeout.
    pub async fn wait_connected(&self, within: Duration) -> bool {
        super::wait_connected(self, within).await
    }
}

impl ZkClient for AnyClient {
    fn session_id(&self) -> SessionId {
        each!(self, c => c.session_id())
    }
    fn session_timeout(&self) -> Duration {
        each!(self, c => c.session_timeout())
    }
    fn state(&self) -> SessionState {
        each!(self, c => c.state())
    }
    fn state_watch(&self) -> StateWatch {
        each!(self, c => c.state_watch())
    }
    async fn create(&self, path: &str, data: &[u8], mode: CreateMode) -> ZkResult<(String, Stat)> {
        each!(self, c => c.create(path, data, mode).await)
    }
    async fn delete(&self, path: &str, version: i32) -> ZkResult<()> {
        each!(self, c => c.delete(path, version).await)
    }
    async fn exists(&self, path: &str) -> ZkResult<Option<Stat>> {
        each!(self, c => c.exists(path).await)
    }
    async fn exists_watch(&self, path: &str) -> ZkResult<(Option<Stat>, OneshotWatch)> {
        each!(self, c => c.exists_watch(path).await)
    }
    async fn get_data(&self, path: &str) -> ZkResult<(Vec<u8>, Stat)> {
        each!(self, c => c.get_data(path).await)
    }
    async fn get_data_watch(&self, path: &str) -> ZkResult<(Vec<u8>, Stat, OneshotWatch)> {
        each!(self, c => c.get_data_watch(path).await)
    }
    async fn get_children(&self, path: &str) -> ZkResult<(Vec<String>, Stat)> {
        each!(self, c => c.get_children(path).await)
    }
    async fn get_children_watch(&self, path: &str) -> ZkResult<(Vec<String>, Stat, OneshotWatch)> {
        each!(self, c => c.get_children_watch(path).await)
    }
    async fn set_data(&self, path: &str, data: &[u8], version: i32) -> ZkResult<Stat> {
        each!(self, c => c.set_data(path, data, version).await)
    }
    async fn multi(&self, ops: Vec<Op>) -> Result<Vec<OpResult>, MultiError> {
        each!(self, c => c.multi(ops).await)
    }
    async fn multi_read(&self, ops: Vec<ReadOp>) -> ZkResult<Vec<ReadResult>> {
        each!(self, c => c.multi_read(ops).await)
    }
    async fn sync(&self, path: &str) -> ZkResult<()> {
        each!(self, c => c.sync(path).await)
    }
    async fn add_watch(&self, path: &str, mode: AddWatchMode) -> ZkResult<PersistentWatch> {
        each!(self, c => c.add_watch(path, mode).await)
    }
    async fn close(&self) {
        each!(self, c => c.close().await)
    }
}
