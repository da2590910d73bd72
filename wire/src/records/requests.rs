//! Request bodies from `zookeeper.jute`. Records with the same fields share
//! one type; each type's doc names the jute classes it stands for.

use crate::error::WireError;
use crate::primitives::{Reader, Record, Writer};
use crate::records::data::Acl;

/// `GetACLRequest`, `SyncRequest`, `GetAllChildrenNumberRequest`,
/// `GetEphemeralsRequest` (whose field is `prefixPath`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathRequest {
    pub path: String,
}

impl Record for PathRequest {
    const MIN_SIZE: usize = 4;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(PathRequest {
            path: r.string("request.path")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.path);
    }
}

/// `ExistsRequest`, `GetDataRequest`, `GetChildrenRequest`,
/// `GetChildren2Request`: a path and whether to leave a watch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchRequest {
    pub path: String,
    pub watch: bool,
}

impl Record for WatchRequest {
    const MIN_SIZE: usize = 5;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(WatchRequest {
            path: r.string("request.path")?,
            watch: r.bool("request.watch")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.path);
        w.bool(self.watch);
    }
}

/// `DeleteRequest`, `CheckVersionRequest`: a path and an expected version
/// (-1 matches any).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionedPath {
    pub path: String,
    pub version: i32,
}

impl Record for VersionedPath {
    const MIN_SIZE: usize = 8;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(VersionedPath {
            path: r.string("request.path")?,
            version: r.i32("request.version")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.path);
        w.i32(self.version);
    }
}

/// `CreateRequest` (create, create2, createContainer). `flags` is the
/// `CreateMode` integer; `data` keeps jute's null apart from empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreateRequest {
    pub path: String,
    pub data: Option<Vec<u8>>,
    pub acl: Vec<Acl>,
    pub flags: i32,
}

impl Record for CreateRequest {
    const MIN_SIZE: usize = 16;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(CreateRequest {
            path: r.string("CreateRequest.path")?,
            data: r.opt_buffer("CreateRequest.data")?,
            acl: r.vector("CreateRequest.acl")?,
            flags: r.i32("CreateRequest.flags")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.path);
        w.opt_bytes(self.data.as_deref());
        w.vector(&self.acl);
        w.i32(self.flags);
    }
}

/// `CreateTTLRequest`: [`CreateRequest`] plus a time-to-live in ms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreateTtlRequest {
    pub path: String,
    pub data: Option<Vec<u8>>,
    pub acl: Vec<Acl>,
    pub flags: i32,
    pub ttl: i64,
}

impl Record for CreateTtlRequest {
    const MIN_SIZE: usize = 24;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(CreateTtlRequest {
            path: r.string("CreateTTLRequest.path")?,
            data: r.opt_buffer("CreateTTLRequest.data")?,
            acl: r.vector("CreateTTLRequest.acl")?,
            flags: r.i32("CreateTTLRequest.flags")?,
            ttl: r.i64("CreateTTLRequest.ttl")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.path);
        w.opt_bytes(self.data.as_deref());
        w.vector(&self.acl);
        w.i32(self.flags);
        w.i64(self.ttl);
    }
}

/// `SetDataRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetDataRequest {
    pub path: String,
    pub data: Option<Vec<u8>>,
    pub version: i32,
}

impl Record for SetDataRequest {
    const MIN_SIZE: usize = 12;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(SetDataRequest {
            path: r.string("SetDataRequest.path")?,
            data: r.opt_buffer("SetDataRequest.data")?,
            version: r.i32("SetDataRequest.version")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.path);
        w.opt_bytes(self.data.as_deref());
        w.i32(self.version);
    }
}

/// `SetACLRequest`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetAclRequest {
    pub path: String,
    pub acl: Vec<Acl>,
    pub version: i32,
}

impl Record for SetAclRequest {
    const MIN_SIZE: usize = 12;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(SetAclRequest {
            path: r.string("SetACLRequest.path")?,
            acl: r.vector("SetACLRequest.acl")?,
            version: r.i32("SetACLRequest.version")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.path);
        w.vector(&self.acl);
        w.i32(self.version);
    }
}

/// `ReconfigRequest`: server lists are null when not given (an incremental
/// reconfig leaves `new_members` null, a non-incremental one the others).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReconfigRequest {
    pub joining_servers: Option<String>,
    pub leaving_servers: Option<String>,
    pub new_members: Option<String>,
    pub cur_config_id: i64,
}

impl Record for ReconfigRequest {
    const MIN_SIZE: usize = 20;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(ReconfigRequest {
            joining_servers: r.opt_string("ReconfigRequest.joiningServers")?,
            leaving_servers: r.opt_string("ReconfigRequest.leavingServers")?,
            new_members: r.opt_string("ReconfigRequest.newMembers")?,
            cur_config_id: r.i64("ReconfigRequest.curConfigId")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.opt_string(self.joining_servers.as_deref());
        w.opt_string(self.leaving_servers.as_deref());
        w.opt_string(self.new_members.as_deref());
        w.i64(self.cur_config_id);
    }
}
