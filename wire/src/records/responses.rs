//! Response bodies from `zookeeper.jute` that hold more than one field.
//! Single-field responses (`CreateResponse`, `ExistsResponse`,
//! `SetDataResponse`, `SetACLResponse`, `GetChildrenResponse`,
//! `SyncResponse`, `GetEphemeralsResponse`, `GetAllChildrenNumberResponse`,
//! `SetSASLResponse`) have no record here: the reply decoder reads their one
//! field inline into a `Response` variant.

use crate::error::WireError;
use crate::primitives::{Reader, Record, Writer};
use crate::records::data::{Acl, Stat};

/// `Create2Response` (create2, createContainer, createTTL).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Create2Response {
    pub path: String,
    pub stat: Stat,
}

impl Record for Create2Response {
    const MIN_SIZE: usize = 4 + Stat::MIN_SIZE;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Create2Response {
            path: r.string("Create2Response.path")?,
            stat: Stat::read(r)?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.path);
        self.stat.write(w);
    }
}

/// `GetDataResponse` (getData, and reconfig, which returns the new config).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetDataResponse {
    pub data: Option<Vec<u8>>,
    pub stat: Stat,
}

impl Record for GetDataResponse {
    const MIN_SIZE: usize = 4 + Stat::MIN_SIZE;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(GetDataResponse {
            data: r.opt_buffer("GetDataResponse.data")?,
            stat: Stat::read(r)?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.opt_bytes(self.data.as_deref());
        self.stat.write(w);
    }
}

/// `GetChildren2Response`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetChildren2Response {
    pub children: Vec<String>,
    pub stat: Stat,
}

impl Record for GetChildren2Response {
    const MIN_SIZE: usize = 4 + Stat::MIN_SIZE;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(GetChildren2Response {
            children: r.vector("GetChildren2Response.children")?,
            stat: Stat::read(r)?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.vector(&self.children);
        self.stat.write(w);
    }
}

/// `GetACLResponse`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GetAclResponse {
    pub acl: Vec<Acl>,
    pub stat: Stat,
}

impl Record for GetAclResponse {
    const MIN_SIZE: usize = 4 + Stat::MIN_SIZE;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(GetAclResponse {
            acl: r.vector("GetACLResponse.acl")?,
            stat: Stat::read(r)?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.vector(&self.acl);
        self.stat.write(w);
    }
}
