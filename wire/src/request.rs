//! Client → server packets: the handshake and every request a
//! zookeeper-client 0.11 (or the Java client) sends to a 3.8 server.
//!
//! Server side: [`decode_connect_request`] for a connection's first frame,
//! [`decode_request`] for every later one. Client side (for test harnesses):
//! [`encode_connect_request`], [`encode_request`].

use crate::error::WireError;
use crate::frame::Limits;
use crate::opcode::{xid, OpCode};
use crate::primitives::{Reader, Record, Writer};
use crate::records::multi::{self, ReadOp, WriteOp};
use crate::records::requests::{
    CreateRequest, CreateTtlRequest, PathRequest, ReconfigRequest, SetAclRequest, SetDataRequest, VersionedPath,
    WatchRequest,
};
use crate::records::session::{AuthPacket, ConnectRequest, RequestHeader, SaslToken};
use crate::records::watch::{AddWatchRequest, RemoveWatchesRequest, SetWatches, SetWatches2};

/// A request body, typed by its opcode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Opcode 1 (only clients for servers older than 3.5 send it).
    Create(CreateRequest),
    Create2(CreateRequest),
    CreateContainer(CreateRequest),
    CreateTtl(CreateTtlRequest),
    Delete(VersionedPath),
    Exists(WatchRequest),
    GetData(WatchRequest),
    SetData(SetDataRequest),
    GetAcl(PathRequest),
    SetAcl(SetAclRequest),
    GetChildren(WatchRequest),
    GetChildren2(WatchRequest),
    Sync(PathRequest),
    /// Xid -2, no body.
    Ping,
    Check(VersionedPath),
    Multi(Vec<WriteOp>),
    MultiRead(Vec<ReadOp>),
    Reconfig(ReconfigRequest),
    CheckWatches(RemoveWatchesRequest),
    RemoveWatches(RemoveWatchesRequest),
    /// Xid -4.
    Auth(AuthPacket),
    /// Xid -8.
    SetWatches(SetWatches),
    Sasl(SaslToken),
    GetEphemerals(PathRequest),
    GetAllChildrenNumber(PathRequest),
    /// Xid -8.
    SetWatches2(SetWatches2),
    AddWatch(AddWatchRequest),
    /// No body.
    CloseSession,
}

/// A decoded request: the xid the reply must carry, and the typed body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRequest {
    pub xid: i32,
    pub request: Request,
}

impl ClientRequest {
    pub fn opcode(&self) -> OpCode {
        self.request.opcode()
    }

    /// A ping with its fixed xid.
    pub fn ping() -> Self {
        ClientRequest {
            xid: xid::PING,
            request: Request::Ping,
        }
    }
}

impl Request {
    pub fn opcode(&self) -> OpCode {
        match self {
            Request::Create(_) => OpCode::Create,
            Request::Create2(_) => OpCode::Create2,
            Request::CreateContainer(_) => OpCode::CreateContainer,
            Request::CreateTtl(_) => OpCode::CreateTtl,
            Request::Delete(_) => OpCode::Delete,
            Request::Exists(_) => OpCode::Exists,
            Request::GetData(_) => OpCode::GetData,
            Request::SetData(_) => OpCode::SetData,
            Request::GetAcl(_) => OpCode::GetAcl,
            Request::SetAcl(_) => OpCode::SetAcl,
            Request::GetChildren(_) => OpCode::GetChildren,
            Request::GetChildren2(_) => OpCode::GetChildren2,
            Request::Sync(_) => OpCode::Sync,
            Request::Ping => OpCode::Ping,
            Request::Check(_) => OpCode::Check,
            Request::Multi(_) => OpCode::Multi,
            Request::MultiRead(_) => OpCode::MultiRead,
            Request::Reconfig(_) => OpCode::Reconfig,
            Request::CheckWatches(_) => OpCode::CheckWatches,
            Request::RemoveWatches(_) => OpCode::RemoveWatches,
            Request::Auth(_) => OpCode::Auth,
            Request::SetWatches(_) => OpCode::SetWatches,
            Request::Sasl(_) => OpCode::Sasl,
            Request::GetEphemerals(_) => OpCode::GetEphemerals,
            Request::GetAllChildrenNumber(_) => OpCode::GetAllChildrenNumber,
            Request::SetWatches2(_) => OpCode::SetWatches2,
            Request::AddWatch(_) => OpCode::AddWatch,
            Request::CloseSession => OpCode::CloseSession,
        }
    }

    /// Reads the body of a request with `op`, which the caller has checked
    /// with [`OpCode::is_client_request`].
    fn read(op: OpCode, r: &mut Reader<'_>) -> Result<Request, WireError> {
        fn rec<T: Record>(r: &mut Reader<'_>, f: fn(T) -> Request) -> Result<Request, WireError> {
            T::read(r).map(f)
        }
        match op {
            OpCode::Create => rec(r, Request::Create),
            OpCode::Create2 => rec(r, Request::Create2),
            OpCode::CreateContainer => rec(r, Request::CreateContainer),
            OpCode::CreateTtl => rec(r, Request::CreateTtl),
            OpCode::Delete => rec(r, Request::Delete),
            OpCode::Exists => rec(r, Request::Exists),
            OpCode::GetData => rec(r, Request::GetData),
            OpCode::SetData => rec(r, Request::SetData),
            OpCode::GetAcl => rec(r, Request::GetAcl),
            OpCode::SetAcl => rec(r, Request::SetAcl),
            OpCode::GetChildren => rec(r, Request::GetChildren),
            OpCode::GetChildren2 => rec(r, Request::GetChildren2),
            OpCode::Sync => rec(r, Request::Sync),
            OpCode::Ping => Ok(Request::Ping),
            OpCode::Check => rec(r, Request::Check),
            OpCode::Multi => multi::read_write_ops(r).map(Request::Multi),
            OpCode::MultiRead => multi::read_read_ops(r).map(Request::MultiRead),
            OpCode::Reconfig => rec(r, Request::Reconfig),
            OpCode::CheckWatches => rec(r, Request::CheckWatches),
            OpCode::RemoveWatches => rec(r, Request::RemoveWatches),
            OpCode::Auth => rec(r, Request::Auth),
            OpCode::SetWatches => rec(r, Request::SetWatches),
            OpCode::Sasl => rec(r, Request::Sasl),
            OpCode::GetEphemerals => rec(r, Request::GetEphemerals),
            OpCode::GetAllChildrenNumber => rec(r, Request::GetAllChildrenNumber),
            OpCode::SetWatches2 => rec(r, Request::SetWatches2),
            OpCode::AddWatch => rec(r, Request::AddWatch),
            OpCode::CloseSession => Ok(Request::CloseSession),
            OpCode::Notification | OpCode::DeleteContainer | OpCode::WhoAmI | OpCode::CreateSession | OpCode::Error => {
                Err(WireError::UnknownValue {
                    what: "RequestHeader.type",
                    offset: 4,
                    value: op.as_i32(),
                })
            }
        }
    }

    fn write(&self, w: &mut Writer) {
        match self {
            Request::Create(c) | Request::Create2(c) | Request::CreateContainer(c) => c.write(w),
            Request::CreateTtl(c) => c.write(w),
            Request::Delete(v) | Request::Check(v) => v.write(w),
            Request::Exists(g) | Request::GetData(g) | Request::GetChildren(g) | Request::GetChildren2(g) => g.write(w),
            Request::SetData(s) => s.write(w),
            Request::GetAcl(p) | Request::Sync(p) | Request::GetEphemerals(p) | Request::GetAllChildrenNumber(p) => {
                p.write(w)
            }
            Request::SetAcl(s) => s.write(w),
            Request::Ping | Request::CloseSession => {}
            Request::Multi(ops) => multi::write_write_ops(ops, w),
            Request::MultiRead(ops) => multi::write_read_ops(ops, w),
            Request::Reconfig(rc) => rc.write(w),
            Request::CheckWatches(rw) | Request::RemoveWatches(rw) => rw.write(w),
            Request::Auth(a) => a.write(w),
            Request::SetWatches(s) => s.write(w),
            Request::Sasl(t) => t.write(w),
            Request::SetWatches2(s) => s.write(w),
            Request::AddWatch(a) => a.write(w),
        }
    }
}

/// Decodes a connection's first frame payload (no request header).
pub fn decode_connect_request(payload: &[u8]) -> Result<ConnectRequest, WireError> {
    decode_connect_request_with(payload, &Limits::default())
}

pub fn decode_connect_request_with(payload: &[u8], limits: &Limits) -> Result<ConnectRequest, WireError> {
    ConnectRequest::read(&mut Reader::with_max_field(payload, limits.max_field()))
}

/// Decodes any later frame payload. Bytes after the body are ignored, as the
/// server ignores them.
pub fn decode_request(payload: &[u8]) -> Result<ClientRequest, WireError> {
    decode_request_with(payload, &Limits::default())
}

pub fn decode_request_with(payload: &[u8], limits: &Limits) -> Result<ClientRequest, WireError> {
    let mut r = Reader::with_max_field(payload, limits.max_field());
    let RequestHeader { xid, op_type } = RequestHeader::read(&mut r)?;
    let opcode = OpCode::from_i32(op_type).ok_or(WireError::UnknownOpcode { xid, code: op_type })?;
    if !opcode.is_client_request() {
        return Err(WireError::UnsupportedOpcode { xid, opcode });
    }
    match Request::read(opcode, &mut r) {
        Ok(request) => Ok(ClientRequest { xid, request }),
        Err(source) => Err(WireError::RequestBody {
            xid,
            opcode,
            source: Box::new(source),
        }),
    }
}

/// Encodes the handshake as a whole frame (length included).
pub fn encode_connect_request(req: &ConnectRequest) -> Vec<u8> {
    let mut w = Writer::frame();
    req.write(&mut w);
    w.finish_frame()
}

/// Encodes a request as a whole frame (length, header, body).
pub fn encode_request(req: &ClientRequest) -> Vec<u8> {
    let mut w = Writer::frame();
    RequestHeader {
        xid: req.xid,
        op_type: req.opcode().as_i32(),
    }
    .write(&mut w);
    req.request.write(&mut w);
    w.finish_frame()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::data::{Acl, Id};
    use crate::test_hex::hex;

    #[test]
    fn connect_request_as_zookeeper_client_writes_it() {
        // A new session: no zxid seen, 6 s timeout, empty password, not read-only.
        let frame = hex("0000001d 00000000 0000000000000000 00001770 0000000000000000 00000000 00");
        let req = ConnectRequest {
            time_out: 6000,
            read_only: Some(false),
            ..Default::default()
        };
        assert_eq!(encode_connect_request(&req), frame);
        assert_eq!(decode_connect_request(&frame[4..]), Ok(req.clone()));
        // An old client without the read-only byte.
        let old = decode_connect_request(&frame[4..frame.len() - 1]).unwrap();
        assert_eq!(old, ConnectRequest { read_only: None, ..req });
    }

    #[test]
    fn create2_request_bytes() {
        let frame = hex("00000032 00000001 0000000f  00000002 2f61  00000001 78
             00000001 0000001f 00000005 776f726c64 00000006 616e796f6e65  00000000");
        let acl = vec![Acl {
            perms: Acl::ALL,
            id: Id {
                scheme: "world".into(),
                id: "anyone".into(),
            },
        }];
        let create = CreateRequest {
            path: "/a".into(),
            data: Some(b"x".to_vec()),
            acl,
            flags: 0,
        };
        let req = ClientRequest {
            xid: 1,
            request: Request::Create2(create),
        };
        assert_eq!(encode_request(&req), frame);
        assert_eq!(decode_request(&frame[4..]), Ok(req));
    }

    #[test]
    fn ping_and_close_have_no_body() {
        assert_eq!(
            encode_request(&ClientRequest::ping()),
            hex("00000008 fffffffe 0000000b")
        );
        let close = ClientRequest {
            xid: 7,
            request: Request::CloseSession,
        };
        assert_eq!(encode_request(&close), hex("00000008 00000007 fffffff5"));
    }

    #[test]
    fn failures_keep_what_the_server_needs_to_answer() {
        // Unknown type: the xid survives, so the server can answer Unimplemented.
        assert_eq!(
            decode_request(&hex("00000009 00000063")),
            Err(WireError::UnknownOpcode { xid: 9, code: 99 })
        );
        // whoAmI is 3.9.
        assert_eq!(
            decode_request(&hex("00000009 0000006b")),
            Err(WireError::UnsupportedOpcode {
                xid: 9,
                opcode: OpCode::WhoAmI
            })
        );
        // A truncated body: xid and opcode survive for a MarshallingError reply.
        let err = decode_request(&hex("00000005 00000004 00000002 2f")).unwrap_err();
        let WireError::RequestBody {
            xid: 5,
            opcode: OpCode::GetData,
            source,
        } = err
        else {
            panic!("{err:?}")
        };
        assert!(matches!(
            *source,
            WireError::BadLength {
                what: "request.path",
                offset: 8,
                len: 2,
                limit: 1
            }
        ));
        // A read op inside multi.
        let err = decode_request(&hex("00000003 0000000e 00000004 00 ffffffff 00000000 00")).unwrap_err();
        let WireError::RequestBody { source, .. } = err else {
            panic!("{err:?}")
        };
        assert_eq!(
            *source,
            WireError::BadMultiOp {
                what: "multi op",
                offset: 8,
                code: 4
            }
        );
    }

    #[test]
    fn multi_ends_with_the_done_header() {
        let check = WriteOp::Check(VersionedPath {
            path: "/l".into(),
            version: 3,
        });
        let req = ClientRequest {
            xid: 2,
            request: Request::Multi(vec![check]),
        };
        let frame = encode_request(&req);
        let expected =
            hex("00000024 00000002 0000000e  0000000d 00 ffffffff 00000002 2f6c 00000003  ffffffff 01 ffffffff");
        assert_eq!(frame, expected);
        assert_eq!(decode_request(&frame[4..]), Ok(req));
    }
}
