//! Server → client packets: the handshake answer, replies
//! (`ReplyHeader` + body) and watch notifications.
//!
//! A reply carries a body only when `err` is 0 (the server sends the header
//! alone for a failed request, and the Java client reads a body only on
//! success); a failed `multi` is a success at this level, its per-op
//! failures are [`MultiResult::Error`](crate::records::multi::MultiResult).
//! A reply does not say which request it answers: the client looks its
//! opcode up by xid, so [`decode_server_message`] asks for it.

use crate::code::ErrorCode;
use crate::error::WireError;
use crate::frame::Limits;
use crate::opcode::{xid, OpCode};
use crate::primitives::{Reader, Record, Writer};
use crate::records::data::Stat;
use crate::records::multi::{self, MultiResult};
use crate::records::responses::{Create2Response, GetAclResponse, GetChildren2Response, GetDataResponse};
use crate::records::session::{ConnectResponse, ReplyHeader, SaslToken};
use crate::records::watch::WatcherEvent;

/// A successful reply's body, one variant per request it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// `CreateResponse` (opcode 1).
    Create {
        path: String,
    },
    /// `Create2Response` (create2, createContainer, createTTL).
    Create2(Create2Response),
    Delete,
    Exists {
        stat: Stat,
    },
    GetData(GetDataResponse),
    SetData {
        stat: Stat,
    },
    GetAcl(GetAclResponse),
    SetAcl {
        stat: Stat,
    },
    GetChildren {
        children: Vec<String>,
    },
    GetChildren2(GetChildren2Response),
    Sync {
        path: String,
    },
    Ping,
    Check,
    Multi(Vec<MultiResult>),
    MultiRead(Vec<MultiResult>),
    /// The new configuration, as a `GetDataResponse`.
    Reconfig(GetDataResponse),
    CheckWatches,
    RemoveWatches,
    Auth,
    /// Answers both SetWatches and SetWatches2.
    SetWatches,
    Sasl(SaslToken),
    GetEphemerals {
        ephemerals: Vec<String>,
    },
    GetAllChildrenNumber {
        total_number: i32,
    },
    AddWatch,
    CloseSession,
}

impl Response {
    /// An opcode this body answers (for create2-style bodies, `Create2`).
    pub fn opcode(&self) -> OpCode {
        match self {
            Response::Create { .. } => OpCode::Create,
            Response::Create2(_) => OpCode::Create2,
            Response::Delete => OpCode::Delete,
            Response::Exists { .. } => OpCode::Exists,
            Response::GetData(_) => OpCode::GetData,
            Response::SetData { .. } => OpCode::SetData,
            Response::GetAcl(_) => OpCode::GetAcl,
            Response::SetAcl { .. } => OpCode::SetAcl,
            Response::GetChildren { .. } => OpCode::GetChildren,
            Response::GetChildren2(_) => OpCode::GetChildren2,
            Response::Sync { .. } => OpCode::Sync,
            Response::Ping => OpCode::Ping,
            Response::Check => OpCode::Check,
            Response::Multi(_) => OpCode::Multi,
            Response::MultiRead(_) => OpCode::MultiRead,
            Response::Reconfig(_) => OpCode::Reconfig,
            Response::CheckWatches => OpCode::CheckWatches,
            Response::RemoveWatches => OpCode::RemoveWatches,
            Response::Auth => OpCode::Auth,
            Response::SetWatches => OpCode::SetWatches,
            Response::Sasl(_) => OpCode::Sasl,
            Response::GetEphemerals { .. } => OpCode::GetEphemerals,
            Response::GetAllChildrenNumber { .. } => OpCode::GetAllChildrenNumber,
            Response::AddWatch => OpCode::AddWatch,
            Response::CloseSession => OpCode::CloseSession,
        }
    }

    /// Reads the body answering `op` (the request `xid` had).
    fn read(op: OpCode, xid: i32, r: &mut Reader<'_>) -> Result<Response, WireError> {
        Ok(match op {
            OpCode::Create => Response::Create {
                path: r.string("CreateResponse.path")?,
            },
            OpCode::Create2 | OpCode::CreateContainer | OpCode::CreateTtl => {
                Response::Create2(Create2Response::read(r)?)
            }
            OpCode::Delete => Response::Delete,
            OpCode::Exists => Response::Exists { stat: Stat::read(r)? },
            OpCode::GetData => Response::GetData(GetDataResponse::read(r)?),
            OpCode::SetData => Response::SetData { stat: Stat::read(r)? },
            OpCode::GetAcl => Response::GetAcl(GetAclResponse::read(r)?),
            OpCode::SetAcl => Response::SetAcl { stat: Stat::read(r)? },
            OpCode::GetChildren => Response::GetChildren {
                children: r.vector("GetChildrenResponse.children")?,
            },
            OpCode::GetChildren2 => Response::GetChildren2(GetChildren2Response::read(r)?),
            OpCode::Sync => Response::Sync {
                path: r.string("SyncResponse.path")?,
            },
            OpCode::Ping => Response::Ping,
            OpCode::Check => Response::Check,
            OpCode::Multi => Response::Multi(multi::read_results(r)?),
            OpCode::MultiRead => Response::MultiRead(multi::read_results(r)?),
            OpCode::Reconfig => Response::Reconfig(GetDataResponse::read(r)?),
            OpCode::CheckWatches => Response::CheckWatches,
            OpCode::RemoveWatches => Response::RemoveWatches,
            OpCode::Auth => Response::Auth,
            OpCode::SetWatches | OpCode::SetWatches2 => Response::SetWatches,
            OpCode::Sasl => Response::Sasl(SaslToken::read(r)?),
            OpCode::GetEphemerals => Response::GetEphemerals {
                ephemerals: r.vector("GetEphemeralsResponse.ephemerals")?,
            },
            OpCode::GetAllChildrenNumber => Response::GetAllChildrenNumber {
                total_number: r.i32("GetAllChildrenNumberResponse.totalNumber")?,
            },
            OpCode::AddWatch => Response::AddWatch,
            OpCode::CloseSession => Response::CloseSession,
            OpCode::Notification | OpCode::DeleteContainer | OpCode::WhoAmI | OpCode::CreateSession | OpCode::Error => {
                return Err(WireError::UnsupportedOpcode { xid, opcode: op })
            }
        })
    }

    fn write(&self, w: &mut Writer) {
        match self {
            Response::Create { path } | Response::Sync { path } => w.string(path),
            Response::Create2(c) => c.write(w),
            Response::Exists { stat } | Response::SetData { stat } | Response::SetAcl { stat } => stat.write(w),
            Response::GetData(g) | Response::Reconfig(g) => g.write(w),
            Response::GetAcl(g) => g.write(w),
            Response::GetChildren { children } => w.vector(children),
            Response::GetChildren2(g) => g.write(w),
            Response::Multi(results) | Response::MultiRead(results) => multi::write_results(results, w),
            Response::Sasl(t) => t.write(w),
            Response::GetEphemerals { ephemerals } => w.vector(ephemerals),
            Response::GetAllChildrenNumber { total_number } => w.i32(*total_number),
            Response::Delete
            | Response::Ping
            | Response::Check
            | Response::CheckWatches
            | Response::RemoveWatches
            | Response::Auth
            | Response::SetWatches
            | Response::AddWatch
            | Response::CloseSession => {}
        }
    }
}

/// A reply: the request's xid, the zxid the server had reached, and either
/// a body or an error code. `Err(ErrorCode::Ok)` encodes a header-only
/// success (no decoder produces it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerReply {
    pub xid: i32,
    pub zxid: i64,
    pub result: Result<Response, ErrorCode>,
}

/// Anything the server sends after the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerMessage {
    /// Xid -1; ZooKeeper 3.8 sends zxid -1.
    Notification {
        zxid: i64,
        event: WatcherEvent,
    },
    Reply(ServerReply),
}

/// The zxid a 3.8 server puts in a notification's header.
pub const NOTIFICATION_ZXID: i64 = -1;

/// Encodes the handshake answer as a whole frame.
pub fn encode_connect_response(rsp: &ConnectResponse) -> Vec<u8> {
    let mut w = Writer::frame();
    rsp.write(&mut w);
    w.finish_frame()
}

pub fn decode_connect_response(payload: &[u8]) -> Result<ConnectResponse, WireError> {
    ConnectResponse::read(&mut Reader::new(payload))
}

/// Encodes a reply as a whole frame (length, header, body if any).
pub fn encode_reply(reply: &ServerReply) -> Vec<u8> {
    let mut w = Writer::frame();
    let err = reply.result.as_ref().err().map_or(0, |code| code.as_i32());
    ReplyHeader {
        xid: reply.xid,
        zxid: reply.zxid,
        err,
    }
    .write(&mut w);
    if let Ok(body) = &reply.result {
        body.write(&mut w);
    }
    w.finish_frame()
}

/// Encodes a watch notification as a whole frame, as a 3.8 server does.
pub fn encode_notification(event: &WatcherEvent) -> Vec<u8> {
    encode_server_message(&ServerMessage::Notification {
        zxid: NOTIFICATION_ZXID,
        event: event.clone(),
    })
}

pub fn encode_server_message(msg: &ServerMessage) -> Vec<u8> {
    match msg {
        ServerMessage::Reply(reply) => encode_reply(reply),
        ServerMessage::Notification { zxid, event } => {
            let mut w = Writer::frame();
            ReplyHeader {
                xid: xid::NOTIFICATION,
                zxid: *zxid,
                err: 0,
            }
            .write(&mut w);
            event.write(&mut w);
            w.finish_frame()
        }
    }
}

/// The opcode a reply with a fixed xid answers, if its xid is one.
pub fn opcode_of_special_xid(xid: i32) -> Option<OpCode> {
    match xid {
        xid::PING => Some(OpCode::Ping),
        xid::AUTH => Some(OpCode::Auth),
        xid::SET_WATCHES => Some(OpCode::SetWatches),
        _ => None,
    }
}

/// Decodes a frame payload from the server (client side). `pending` maps
/// an ordinary xid to the opcode of the outstanding request it answers;
/// notifications and the fixed xids need no lookup.
pub fn decode_server_message(
    payload: &[u8],
    pending: impl FnOnce(i32) -> Option<OpCode>,
) -> Result<ServerMessage, WireError> {
    decode_server_message_with(payload, &Limits::default(), pending)
}

pub fn decode_server_message_with(
    payload: &[u8],
    limits: &Limits,
    pending: impl FnOnce(i32) -> Option<OpCode>,
) -> Result<ServerMessage, WireError> {
    let mut r = Reader::with_max_field(payload, limits.max_field());
    let header = ReplyHeader::read(&mut r)?;
    if header.xid == xid::NOTIFICATION {
        return Ok(ServerMessage::Notification {
            zxid: header.zxid,
            event: WatcherEvent::read(&mut r)?,
        });
    }
    let opcode = opcode_of_special_xid(header.xid)
        .or_else(|| pending(header.xid))
        .ok_or(WireError::UnexpectedXid { xid: header.xid })?;
    let result = if header.err == 0 {
        Ok(Response::read(opcode, header.xid, &mut r)?)
    } else {
        let code = ErrorCode::from_i32(header.err);
        Err(code.ok_or(WireError::UnknownValue {
            what: "ReplyHeader.err",
            offset: 12,
            value: header.err,
        })?)
    };
    Ok(ServerMessage::Reply(ServerReply {
        xid: header.xid,
        zxid: header.zxid,
        result,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::watch::{EventType, KeeperState};
    use crate::test_hex::hex;

    #[test]
    fn notification_bytes() {
        let event = WatcherEvent {
            event_type: EventType::NodeDataChanged,
            state: KeeperState::SyncConnected,
            path: "/a".into(),
        };
        let frame = hex("0000001e ffffffff ffffffffffffffff 00000000  00000003 00000003 00000002 2f61");
        assert_eq!(encode_notification(&event), frame);
        let msg = decode_server_message(&frame[4..], |_| None).unwrap();
        assert_eq!(msg, ServerMessage::Notification { zxid: -1, event });
    }

    #[test]
    fn an_error_reply_is_the_header_alone() {
        let reply = ServerReply {
            xid: 4,
            zxid: 0x10,
            result: Err(ErrorCode::NoNode),
        };
        let frame = hex("00000010 00000004 0000000000000010 ffffff9b");
        assert_eq!(encode_reply(&reply), frame);
        let msg = decode_server_message(&frame[4..], |x| (x == 4).then_some(OpCode::GetData));
        assert_eq!(msg, Ok(ServerMessage::Reply(reply)));
    }

    #[test]
    fn replies_need_a_known_xid_unless_fixed() {
        let ping = hex("fffffffe 0000000000000005 00000000");
        let msg = decode_server_message(&ping, |_| None).unwrap();
        assert_eq!(
            msg,
            ServerMessage::Reply(ServerReply {
                xid: -2,
                zxid: 5,
                result: Ok(Response::Ping)
            })
        );
        let other = hex("00000011 0000000000000005 00000000");
        assert_eq!(
            decode_server_message(&other, |_| None),
            Err(WireError::UnexpectedXid { xid: 17 })
        );
    }

    #[test]
    fn connect_response_with_read_only_byte() {
        let rsp = ConnectResponse {
            protocol_version: 0,
            time_out: 4000,
            session_id: 0x0100_0000_0000_0001,
            passwd: vec![0xaa; 16],
            read_only: Some(false),
        };
        let frame = encode_connect_response(&rsp);
        assert_eq!(&frame[..4], &[0, 0, 0, 37]);
        assert_eq!(decode_connect_response(&frame[4..]), Ok(rsp));
    }
}
