//! Write requests as the server receives them, before preparation.

use serde::{Deserialize, Serialize};
use zkdst_recipes::zk::{CreateMode, Op};

/// ZooKeeper's default `jute.maxbuffer` (0xfffff bytes): a larger request
/// packet makes the server close the connection (the client sees
/// ConnectionLoss); it never becomes a txn.
pub const JUTE_MAX_BUFFER: usize = 0xfffff;

/// A write request (everything that goes through the leader).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteRequest {
    Create {
        path: String,
        data: Vec<u8>,
        mode: CreateMode,
    },
    Delete {
        path: String,
        version: i32,
    },
    SetData {
        path: String,
        data: Vec<u8>,
        version: i32,
    },
    Multi(Vec<Op>),
    CreateSession {
        timeout_ms: i32,
    },
    CloseSession,
    /// Issued by the leader's container/TTL reaper (session 0), never by a
    /// client (`deleteContainer`).
    DeleteContainer {
        path: String,
    },
}

impl WriteRequest {
    /// The request packet's length as the jute encoding would make it
    /// (length prefix, request header, record with the default world:anyone
    /// ACL), to compare against `JUTE_MAX_BUFFER` at the connection layer.
    pub fn packet_len(&self) -> usize {
        const HEADER: usize = 4 + 4 + 4; // length prefix, xid, type
        HEADER + self.record_len()
    }

    fn record_len(&self) -> usize {
        const ACL: usize = 4 + (4 + (4 + 5) + (4 + 6)); // one ACL: perms, "world", "anyone"
        let s = |x: &str| 4 + x.len();
        let b = |x: &[u8]| 4 + x.len();
        match self {
            WriteRequest::Create { path, data, mode } => {
                s(path) + b(data) + ACL + 4 + if mode.ttl_ms().is_some() { 8 } else { 0 }
            }
            WriteRequest::Delete { path, .. } => s(path) + 4,
            WriteRequest::SetData { path, data, .. } => s(path) + b(data) + 4,
            WriteRequest::Multi(ops) => {
                const MULTI_HEADER: usize = 4 + 1 + 4; // type, done, err
                let ops_len: usize = ops
                    .iter()
                    .map(|op| {
                        MULTI_HEADER
                            + match op {
                                Op::Create { path, data, mode } => WriteRequest::Create {
                                    path: path.clone(),
                                    data: data.clone(),
                                    mode: *mode,
                                }
                                .record_len(),
                                Op::Delete { path, .. } | Op::Check { path, .. } => s(path) + 4,
                                Op::SetData { path, data, .. } => s(path) + b(data) + 4,
                            }
                    })
                    .sum();
                ops_len + MULTI_HEADER
            }
            WriteRequest::CreateSession { .. } => 4 + 8 + 4 + 8 + 4 + 16,
            WriteRequest::CloseSession => 0,
            WriteRequest::DeleteContainer { path } => s(path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_len_grows_with_data() {
        let small = WriteRequest::Create {
            path: "/a".into(),
            data: vec![0; 10],
            mode: CreateMode::Persistent,
        };
        let big = WriteRequest::Create {
            path: "/a".into(),
            data: vec![0; JUTE_MAX_BUFFER],
            mode: CreateMode::Persistent,
        };
        assert!(small.packet_len() < 100);
        assert!(big.packet_len() > JUTE_MAX_BUFFER);
        let ok = WriteRequest::SetData {
            path: "/a".into(),
            data: vec![0; 1_000_000],
            version: -1,
        };
        assert!(ok.packet_len() <= JUTE_MAX_BUFFER);
        let multi = WriteRequest::Multi(vec![
            Op::SetData {
                path: "/a".into(),
                data: vec![0; 600_000],
                version: -1
            };
            2
        ]);
        assert!(multi.packet_len() > JUTE_MAX_BUFFER);
    }
}
