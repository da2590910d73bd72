//! A znode's Stat: what `exists`/`getData`/`setData` report, and what a
//! history records of them (the JSON field names are the history's).

use serde::{Deserialize, Serialize};

use crate::{SessionId, Zxid};

/// A znode's metadata, as `getData`/`exists` report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Stat {
    /// zxid of the create.
    pub czxid: Zxid,
    /// zxid of the last data change.
    pub mzxid: Zxid,
    /// ms since the epoch of the create (leader clock).
    pub ctime: i64,
    /// ms since the epoch of the last data change.
    pub mtime: i64,
    /// number of data changes (wraps as a Java int).
    pub version: i32,
    /// client view of the child version: child creates + child deletes.
    pub cversion: i32,
    /// number of ACL changes.
    pub aversion: i32,
    /// owning session for ephemerals, else 0 (containers and TTL nodes too).
    pub ephemeral_owner: SessionId,
    pub data_length: i32,
    pub num_children: i32,
    /// zxid of the last child create or delete.
    pub pzxid: Zxid,
}
