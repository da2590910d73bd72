//! Watches: the notification the server pushes (`WatcherEvent`), the
//! re-registration a client sends after reconnecting (`SetWatches`,
//! `SetWatches2`), and persistent-watch management (`AddWatchRequest`,
//! `RemoveWatchesRequest` / `CheckWatchesRequest`).

use crate::error::WireError;
use crate::primitives::{Reader, Record, Writer};

use crate::int_enum::int_enum;

int_enum!(
    /// `Watcher.Event.EventType`.
    EventType {
        None = -1,
        NodeCreated = 1,
        NodeDeleted = 2,
        NodeDataChanged = 3,
        NodeChildrenChanged = 4,
        DataWatchRemoved = 5,
        ChildWatchRemoved = 6,
        PersistentWatchRemoved = 7,
    }
);

int_enum!(
    /// `Watcher.Event.KeeperState` (including the deprecated values a
    /// server never sends but a peer could).
    KeeperState {
        Unknown = -1,
        Disconnected = 0,
        NoSyncConnected = 1,
        SyncConnected = 3,
        AuthFailed = 4,
        ConnectedReadOnly = 5,
        SaslAuthenticated = 6,
        Closed = 7,
        Expired = -112,
    }
);

fn read_enum<T>(r: &mut Reader<'_>, what: &'static str, parse: fn(i32) -> Option<T>) -> Result<T, WireError> {
    let offset = r.offset();
    let value = r.i32(what)?;
    parse(value).ok_or(WireError::UnknownValue { what, offset, value })
}

/// A watch firing, sent with xid -1 and (since 3.8) zxid -1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatcherEvent {
    pub event_type: EventType,
    pub state: KeeperState,
    pub path: String,
}

impl Record for WatcherEvent {
    const MIN_SIZE: usize = 12;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(WatcherEvent {
            event_type: read_enum(r, "WatcherEvent.type", EventType::from_i32)?,
            state: read_enum(r, "WatcherEvent.state", KeeperState::from_i32)?,
            path: r.string("WatcherEvent.path")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i32(self.event_type.as_i32());
        w.i32(self.state.as_i32());
        w.string(&self.path);
    }
}

/// Watches to re-register after a reconnect (opcode 101, xid -8).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetWatches {
    pub relative_zxid: i64,
    pub data_watches: Vec<String>,
    pub exist_watches: Vec<String>,
    pub child_watches: Vec<String>,
}

impl Record for SetWatches {
    const MIN_SIZE: usize = 20;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(SetWatches {
            relative_zxid: r.i64("SetWatches.relativeZxid")?,
            data_watches: r.vector("SetWatches.dataWatches")?,
            exist_watches: r.vector("SetWatches.existWatches")?,
            child_watches: r.vector("SetWatches.childWatches")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i64(self.relative_zxid);
        w.vector(&self.data_watches);
        w.vector(&self.exist_watches);
        w.vector(&self.child_watches);
    }
}

/// [`SetWatches`] plus persistent watches (opcode 105, xid -8).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetWatches2 {
    pub relative_zxid: i64,
    pub data_watches: Vec<String>,
    pub exist_watches: Vec<String>,
    pub child_watches: Vec<String>,
    pub persistent_watches: Vec<String>,
    pub persistent_recursive_watches: Vec<String>,
}

impl Record for SetWatches2 {
    const MIN_SIZE: usize = 28;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(SetWatches2 {
            relative_zxid: r.i64("SetWatches2.relativeZxid")?,
            data_watches: r.vector("SetWatches2.dataWatches")?,
            exist_watches: r.vector("SetWatches2.existWatches")?,
            child_watches: r.vector("SetWatches2.childWatches")?,
            persistent_watches: r.vector("SetWatches2.persistentWatches")?,
            persistent_recursive_watches: r.vector("SetWatches2.persistentRecursiveWatches")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i64(self.relative_zxid);
        w.vector(&self.data_watches);
        w.vector(&self.exist_watches);
        w.vector(&self.child_watches);
        w.vector(&self.persistent_watches);
        w.vector(&self.persistent_recursive_watches);
    }
}

/// `addWatch`: `mode` is `AddWatchMode` (0 persistent, 1 persistent
/// recursive); kept as the integer because the server validates it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddWatchRequest {
    pub path: String,
    pub mode: i32,
}

impl AddWatchRequest {
    pub const PERSISTENT: i32 = 0;
    pub const PERSISTENT_RECURSIVE: i32 = 1;
}

impl Record for AddWatchRequest {
    const MIN_SIZE: usize = 8;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(AddWatchRequest {
            path: r.string("AddWatchRequest.path")?,
            mode: r.i32("AddWatchRequest.mode")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.path);
        w.i32(self.mode);
    }
}

/// `removeWatches` / `checkWatches` (the records are identical):
/// `watcher_type` is `WatcherType` (1 children, 2 data, 3 any, 4 persistent,
/// 5 persistent recursive), kept as the integer the server validates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoveWatchesRequest {
    pub path: String,
    pub watcher_type: i32,
}

impl Record for RemoveWatchesRequest {
    const MIN_SIZE: usize = 8;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(RemoveWatchesRequest {
            path: r.string("RemoveWatchesRequest.path")?,
            watcher_type: r.i32("RemoveWatchesRequest.type")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.path);
        w.i32(self.watcher_type);
    }
}
