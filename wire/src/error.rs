//! Why a frame or record could not be decoded.
//!
//! Every variant names what was being read (a jute field such as
//! `"CreateRequest.path"`) and the byte offset inside the frame payload, so a
//! malformed packet from a client under test can be reported precisely and a
//! connection handler can decide how a ZooKeeper 3.8 server would react
//! (close the connection, or answer `MarshallingError` / `Unimplemented`).

use crate::opcode::OpCode;

/// A decoding failure. Encoding never fails: every typed value has a wire form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The 4-byte frame length is negative (the server closes the connection).
    #[error("frame length {len} is negative")]
    NegativeFrameLength { len: i32 },

    /// The frame length exceeds `jute.maxbuffer` (the server closes the connection).
    #[error("frame length {len} exceeds jute.maxbuffer ({max} bytes)")]
    FrameTooLong { len: i32, max: usize },

    /// The input ended inside a field.
    #[error("{what} at offset {offset}: needs {needed} bytes, only {available} left")]
    Truncated {
        what: &'static str,
        offset: usize,
        needed: usize,
        available: usize,
    },

    /// A length prefix (buffer, string or vector count) is below -1, larger
    /// than what is left of the input, or larger than jute's field bound.
    #[error("{what} at offset {offset}: length {len} is out of range (at most {limit})")]
    BadLength {
        what: &'static str,
        offset: usize,
        len: i32,
        limit: usize,
    },

    /// An integer that must be one of a closed set (event type, keeper state,
    /// error code, multi op type) is not.
    #[error("{what} at offset {offset}: unknown value {value}")]
    UnknownValue {
        what: &'static str,
        offset: usize,
        value: i32,
    },

    /// A request type this crate does not know. The xid is kept because a
    /// 3.8 server answers such a request with `Unimplemented` before closing.
    #[error("request xid {xid}: unknown opcode {code}")]
    UnknownOpcode { xid: i32, code: i32 },

    /// A known opcode that a client may not send to a 3.8 server (server
    /// internal types, or `whoAmI`, which only 3.9 implements).
    #[error("request xid {xid}: opcode {opcode:?} is not a client request a 3.8 server accepts")]
    UnsupportedOpcode { xid: i32, opcode: OpCode },

    /// A multi op of the wrong kind: a read inside `multi` or a write inside
    /// `multiRead` (jute refuses to mix kinds), or a type no multi may hold.
    #[error("{what} at offset {offset}: opcode {code} cannot appear here")]
    BadMultiOp {
        what: &'static str,
        offset: usize,
        code: i32,
    },

    /// The header parsed but the body did not. The server answers such a
    /// request with `MarshallingError` under the same xid.
    #[error("request xid {xid} ({opcode:?}): {source}")]
    RequestBody {
        xid: i32,
        opcode: OpCode,
        #[source]
        source: Box<WireError>,
    },

    /// A reply whose xid matches no outstanding request (client side).
    #[error("reply xid {xid} matches no outstanding request")]
    UnexpectedXid { xid: i32 },
}
