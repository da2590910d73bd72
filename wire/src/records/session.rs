//! The session's envelope: the handshake (`ConnectRequest` /
//! `ConnectResponse`, sent without a header), the headers every later
//! packet carries (`RequestHeader`, `ReplyHeader`), and authentication
//! (`AuthPacket`, SASL tokens).

use crate::error::WireError;
use crate::primitives::{Reader, Record, Writer};

/// The first packet of a connection. `read_only` is the trailing byte a 3.8
/// client appends; the server reads it in a try/catch (absent = an old
/// client, which also gets no read-only byte back).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectRequest {
    pub protocol_version: i32,
    pub last_zxid_seen: i64,
    pub time_out: i32,
    pub session_id: i64,
    pub passwd: Vec<u8>,
    pub read_only: Option<bool>,
}

impl ConnectRequest {
    /// What a 3.8 client sends to open a new session: protocol 0, nothing
    /// seen yet, session 0 with a zero password, not read-only.
    pub fn new_session(time_out: i32) -> ConnectRequest {
        ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            time_out,
            session_id: 0,
            passwd: vec![0; 16],
            read_only: Some(false),
        }
    }
}

impl Record for ConnectRequest {
    const MIN_SIZE: usize = 28;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(ConnectRequest {
            protocol_version: r.i32("ConnectRequest.protocolVersion")?,
            last_zxid_seen: r.i64("ConnectRequest.lastZxidSeen")?,
            time_out: r.i32("ConnectRequest.timeOut")?,
            session_id: r.i64("ConnectRequest.sessionId")?,
            passwd: r.buffer("ConnectRequest.passwd")?,
            read_only: optional_bool(r, "ConnectRequest.readOnly")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i32(self.protocol_version);
        w.i64(self.last_zxid_seen);
        w.i32(self.time_out);
        w.i64(self.session_id);
        w.bytes(&self.passwd);
        if let Some(ro) = self.read_only {
            w.bool(ro);
        }
    }
}

/// The server's answer to [`ConnectRequest`]. An invalid or expired session
/// gets `time_out` 0, `session_id` 0 and a zero password.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectResponse {
    pub protocol_version: i32,
    pub time_out: i32,
    pub session_id: i64,
    pub passwd: Vec<u8>,
    /// Whether the server is read-only; written only to clients that sent
    /// the byte themselves.
    pub read_only: Option<bool>,
}

impl Record for ConnectResponse {
    const MIN_SIZE: usize = 20;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(ConnectResponse {
            protocol_version: r.i32("ConnectResponse.protocolVersion")?,
            time_out: r.i32("ConnectResponse.timeOut")?,
            session_id: r.i64("ConnectResponse.sessionId")?,
            passwd: r.buffer("ConnectResponse.passwd")?,
            read_only: optional_bool(r, "ConnectResponse.readOnly")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i32(self.protocol_version);
        w.i32(self.time_out);
        w.i64(self.session_id);
        w.bytes(&self.passwd);
        if let Some(ro) = self.read_only {
            w.bool(ro);
        }
    }
}

fn optional_bool(r: &mut Reader<'_>, what: &'static str) -> Result<Option<bool>, WireError> {
    if r.is_empty() {
        Ok(None)
    } else {
        r.bool(what).map(Some)
    }
}

/// Precedes every request after the handshake. `op_type` stays an integer
/// here so an unknown type can be reported together with its xid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestHeader {
    pub xid: i32,
    pub op_type: i32,
}

impl Record for RequestHeader {
    const MIN_SIZE: usize = 8;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(RequestHeader {
            xid: r.i32("RequestHeader.xid")?,
            op_type: r.i32("RequestHeader.type")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i32(self.xid);
        w.i32(self.op_type);
    }
}

impl RequestHeader {
    /// The header at the start of a request payload, body left undecoded.
    pub fn peek(payload: &[u8]) -> Option<RequestHeader> {
        RequestHeader::read(&mut Reader::new(payload)).ok()
    }
}

/// The xid a request or reply payload starts with (both headers lead with it).
pub fn peek_xid(payload: &[u8]) -> Option<i32> {
    Reader::new(payload).i32("xid").ok()
}

/// Precedes every reply and notification. `err` stays an integer so a reply
/// with an unknown code still parses; [`crate::ErrorCode::from_i32`] types it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplyHeader {
    pub xid: i32,
    pub zxid: i64,
    pub err: i32,
}

impl Record for ReplyHeader {
    const MIN_SIZE: usize = 16;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(ReplyHeader {
            xid: r.i32("ReplyHeader.xid")?,
            zxid: r.i64("ReplyHeader.zxid")?,
            err: r.i32("ReplyHeader.err")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i32(self.xid);
        w.i64(self.zxid);
        w.i32(self.err);
    }
}

/// `addauth`: sent with xid -4; `auth_type` is always 0 in practice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthPacket {
    pub auth_type: i32,
    pub scheme: String,
    pub auth: Vec<u8>,
}

impl Record for AuthPacket {
    const MIN_SIZE: usize = 12;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(AuthPacket {
            auth_type: r.i32("AuthPacket.type")?,
            scheme: r.string("AuthPacket.scheme")?,
            auth: r.buffer("AuthPacket.auth")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i32(self.auth_type);
        w.string(&self.scheme);
        w.bytes(&self.auth);
    }
}

/// A SASL token, both ways (`GetSASLRequest` / `SetSASLResponse`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SaslToken {
    pub token: Vec<u8>,
}

impl Record for SaslToken {
    const MIN_SIZE: usize = 4;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(SaslToken {
            token: r.buffer("SASL.token")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.bytes(&self.token);
    }
}
