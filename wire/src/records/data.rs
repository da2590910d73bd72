//! `module org.apache.zookeeper.data`: `Stat`, `Id`, `ACL`.

use crate::error::WireError;
use crate::primitives::{Reader, Record, Writer};

/// A znode's metadata as the client sees it (68 bytes on the wire): the
/// workspace's one `Stat`, read and written in jute's field order.
pub use zkdst_model::Stat;

impl Record for Stat {
    const MIN_SIZE: usize = 68;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Stat {
            czxid: r.i64("Stat.czxid")?,
            mzxid: r.i64("Stat.mzxid")?,
            ctime: r.i64("Stat.ctime")?,
            mtime: r.i64("Stat.mtime")?,
            version: r.i32("Stat.version")?,
            cversion: r.i32("Stat.cversion")?,
            aversion: r.i32("Stat.aversion")?,
            ephemeral_owner: r.i64("Stat.ephemeralOwner")?,
            data_length: r.i32("Stat.dataLength")?,
            num_children: r.i32("Stat.numChildren")?,
            pzxid: r.i64("Stat.pzxid")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i64(self.czxid);
        w.i64(self.mzxid);
        w.i64(self.ctime);
        w.i64(self.mtime);
        w.i32(self.version);
        w.i32(self.cversion);
        w.i32(self.aversion);
        w.i64(self.ephemeral_owner);
        w.i32(self.data_length);
        w.i32(self.num_children);
        w.i64(self.pzxid);
    }
}

/// An identity: `scheme` (`world`, `auth`, `digest`, `ip`, ...) and its id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Id {
    pub scheme: String,
    pub id: String,
}

impl Record for Id {
    const MIN_SIZE: usize = 8;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Id {
            scheme: r.string("Id.scheme")?,
            id: r.string("Id.id")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.string(&self.scheme);
        w.string(&self.id);
    }
}

/// A permission grant: `perms` is the `ZooDefs.Perms` bit set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Acl {
    pub perms: i32,
    pub id: Id,
}

impl Acl {
    pub const READ: i32 = 1;
    pub const WRITE: i32 = 2;
    pub const CREATE: i32 = 4;
    pub const DELETE: i32 = 8;
    pub const ADMIN: i32 = 16;
    pub const ALL: i32 = 31;
}

impl Record for Acl {
    const MIN_SIZE: usize = 4 + Id::MIN_SIZE;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Acl {
            perms: r.i32("ACL.perms")?,
            id: Id::read(r)?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i32(self.perms);
        self.id.write(w);
    }
}
