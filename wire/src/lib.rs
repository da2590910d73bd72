//! A jute codec for the ZooKeeper 3.8 client protocol, written for the
//! server side of zkdst's simulated ensemble and usable by a test client:
//! bytes in, typed values out, and back.
//!
//! The authority is apache/zookeeper:
//! `zookeeper-jute/src/main/resources/zookeeper.jute` (records),
//! `ZooDefs.java` (opcodes), `ClientCnxn.java` (fixed xids),
//! `KeeperException.Code` (error codes), `MultiOperationRecord` /
//! `MultiResponse` (multi framing) and `BinaryInputArchive` (primitives and
//! length checks).
//!
//! Layers, each in its own module:
//! - [`frame`]: 4-byte length + payload, bounded by `jute.maxbuffer`;
//! - [`primitives`]: jute's int, long, boolean, buffer, ustring, vector,
//!   with every length checked before anything is allocated;
//! - [`records`]: the records of `zookeeper.jute` a client and server trade;
//! - [`request`] / [`response`]: whole packets, typed by opcode.
//!
//! Decoding never panics on any input; every failure is a [`WireError`]
//! that names the field and its offset.

pub mod code;
pub mod error;
pub mod frame;
mod int_enum;
pub mod opcode;
pub mod primitives;
pub mod records;
pub mod request;
pub mod response;

/// Frames written out as hex in the unit tests, as captured on the wire.
#[cfg(test)]
mod test_hex {
    pub fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }
}

pub use code::ErrorCode;
pub use error::WireError;
pub use frame::{FrameDecoder, FrameStatus, Limits};
pub use opcode::{xid, OpCode};
pub use records::data::{Acl, Id, Stat};
pub use records::multi::{MultiResult, ReadOp, WriteOp};
pub use records::requests::{
    CreateRequest, CreateTtlRequest, PathRequest, ReconfigRequest, SetAclRequest, SetDataRequest, VersionedPath,
    WatchRequest,
};
pub use records::responses::{Create2Response, GetAclResponse, GetChildren2Response, GetDataResponse};
pub use records::session::{
    peek_xid, AuthPacket, ConnectRequest, ConnectResponse, ReplyHeader, RequestHeader, SaslToken,
};
pub use records::watch::{
    AddWatchRequest, EventType, KeeperState, RemoveWatchesRequest, SetWatches, SetWatches2, WatcherEvent,
};
pub use request::{
    decode_connect_request, decode_request, encode_connect_request, encode_request, ClientRequest, Request,
};
pub use response::{
    decode_connect_response, decode_server_message, encode_connect_response, encode_notification, encode_reply,
    Response, ServerMessage, ServerReply,
};
