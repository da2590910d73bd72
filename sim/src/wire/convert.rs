//! Between the jute records of `zkdst-wire` and the simulator's own types:
//! create flags, error codes, events, and the requests a typed
//! server core executes.

use zkdst_recipes::zk::{AddWatchMode, CreateMode, EventType, Op, OpResult, ReadOp, ReadResult, ZkError};
use zkdst_wire as w;
use zkdst_wire::records::multi::{ReadOp as WReadOp, WriteOp};
use zkdst_wire::{ErrorCode, MultiResult};

use crate::proto::{Request, Response};

/// The wire code of an error (both tables are `KeeperException.Code`).
pub fn code(e: &ZkError) -> ErrorCode {
    e.keeper_code().unwrap_or(ErrorCode::SystemError)
}

pub fn event_type(t: EventType) -> w::EventType {
    w::EventType::from_i32(t.code()).unwrap_or(w::EventType::None)
}

/// `CreateMode.fromFlag`: the flags a create carries, with the TTL of a
/// createTTL. An unknown flag is what the server answers BadArguments to.
pub fn create_mode(flags: i32, ttl: Option<i64>) -> Result<CreateMode, ZkError> {
    Ok(match (flags, ttl) {
        (0, None) => CreateMode::Persistent,
        (1, None) => CreateMode::Ephemeral,
        (2, None) => CreateMode::PersistentSequential,
        (3, None) => CreateMode::EphemeralSequential,
        (4, _) => CreateMode::Container,
        (5, Some(ttl_ms)) => CreateMode::PersistentWithTtl { ttl_ms },
        (6, Some(ttl_ms)) => CreateMode::PersistentSequentialWithTtl { ttl_ms },
        _ => return Err(ZkError::BadArguments),
    })
}

/// The ACLs the simulator models: `world:anyone` with every permission
/// (`OPEN_ACL_UNSAFE`), which is all it enforces. An empty ACL is refused as
/// a 3.8 server refuses it (InvalidACL); any other ACL would restrict
/// someone, which the simulator cannot honour, so it is refused loudly with
/// Unimplemented rather than accepted and ignored.
fn check_acl(acl: &[w::Acl]) -> Result<(), ZkError> {
    if acl.is_empty() {
        return Err(ZkError::InvalidAcl);
    }
    if acl
        .iter()
        .all(|a| a.perms == 31 && a.id.scheme == "world" && a.id.id == "anyone")
    {
        Ok(())
    } else {
        Err(ZkError::Unimplemented)
    }
}

/// The ACL every node has in the simulation (`ZooDefs.Ids.OPEN_ACL_UNSAFE`).
pub fn open_acl() -> Vec<w::Acl> {
    vec![w::Acl {
        perms: 31,
        id: w::Id {
            scheme: "world".into(),
            id: "anyone".into(),
        },
    }]
}

fn data(d: &Option<Vec<u8>>) -> Vec<u8> {
    d.clone().unwrap_or_default()
}

/// A multi's write op as the simulator's `Op`.
pub fn write_op(op: &WriteOp) -> Result<Op, ZkError> {
    Ok(match op {
        WriteOp::Create(c) | WriteOp::Create2(c) => {
            check_acl(&c.acl)?;
            Op::Create {
                path: c.path.clone(),
                data: data(&c.data),
                mode: create_mode(c.flags, None)?,
            }
        }
        WriteOp::CreateContainer(c) => {
            check_acl(&c.acl)?;
            Op::Create {
                path: c.path.clone(),
                data: data(&c.data),
                mode: CreateMode::Container,
            }
        }
        WriteOp::CreateTtl(c) => {
            check_acl(&c.acl)?;
            Op::Create {
                path: c.path.clone(),
                data: data(&c.data),
                mode: create_mode(c.flags, Some(c.ttl))?,
            }
        }
        WriteOp::Delete(d) => Op::Delete {
            path: d.path.clone(),
            version: d.version,
        },
        WriteOp::SetData(s) => Op::SetData {
            path: s.path.clone(),
            data: data(&s.data),
            version: s.version,
        },
        WriteOp::Check(c) => Op::Check {
            path: c.path.clone(),
            version: c.version,
        },
    })
}

pub fn read_op(op: &WReadOp) -> ReadOp {
    match op {
        WReadOp::GetData(g) => ReadOp::GetData { path: g.path.clone() },
        WReadOp::GetChildren(g) => ReadOp::GetChildren { path: g.path.clone() },
    }
}

/// One result of a successful multi, shaped as a 3.8 server shapes it: a
/// `create` or `create2` op gets the path only (verified byte for byte by
/// conformance/tests/bytes.rs), container and TTL creates a stat too.
pub fn op_result(op: Option<&WriteOp>, r: &OpResult) -> MultiResult {
    match r {
        OpResult::Create { path, stat: s } => match op {
            Some(WriteOp::Create(_)) | Some(WriteOp::Create2(_)) => MultiResult::Create { path: path.clone() },
            _ => MultiResult::Create2(w::Create2Response {
                path: path.clone(),
                stat: *s,
            }),
        },
        OpResult::Delete => MultiResult::Delete,
        OpResult::SetData { stat: s } => MultiResult::SetData { stat: *s },
        OpResult::Check => MultiResult::Check,
        OpResult::Error(None) => MultiResult::Error(ErrorCode::Ok),
        OpResult::Error(Some(e)) => MultiResult::Error(code(e)),
    }
}

pub fn read_result(r: &ReadResult) -> MultiResult {
    match r {
        ReadResult::Data { data, stat: s } => MultiResult::GetData(w::GetDataResponse {
            data: Some(data.clone()),
            stat: *s,
        }),
        ReadResult::Children { children } => MultiResult::GetChildren {
            children: children.clone(),
        },
        ReadResult::Error(e) => MultiResult::Error(code(e)),
    }
}

/// `addWatch`'s mode: 0 persistent, 1 persistent recursive (`AddWatchMode`).
pub fn add_watch_mode(mode: i32) -> Result<AddWatchMode, ZkError> {
    match mode {
        0 => Ok(AddWatchMode::Persistent),
        1 => Ok(AddWatchMode::PersistentRecursive),
        _ => Err(ZkError::BadArguments),
    }
}

/// A wire request the server core executes: how to shape its reply, and
/// the typed request (or why it is refused). None for the requests the
/// connection answers itself (conn.rs).
pub fn core_request(r: &w::Request) -> Option<(Shape, Result<Request, ZkError>)> {
    use w::Request as R;
    let shape = match r {
        R::Create(_) => Shape::Create,
        R::Create2(_) | R::CreateContainer(_) | R::CreateTtl(_) => Shape::Create2,
        R::Delete(_) => Shape::Delete,
        R::Exists(_) => Shape::Exists,
        R::GetAcl(_) => Shape::GetAcl,
        R::GetData(_) => Shape::GetData,
        R::SetData(_) => Shape::SetData,
        R::GetChildren(_) => Shape::GetChildren,
        R::GetChildren2(_) => Shape::GetChildren2,
        R::Sync(p) => Shape::Sync(p.path.clone()),
        R::Check(_) => Shape::Check,
        R::Multi(ops) => Shape::Multi(ops.clone()),
        R::MultiRead(_) => Shape::MultiRead,
        R::AddWatch(_) => Shape::AddWatch,
        R::CloseSession => Shape::CloseSession,
        _ => return None,
    };
    let request = match r {
        R::Create(c) | R::Create2(c) => check_acl(&c.acl).and_then(|()| {
            Ok(Request::Create {
                path: c.path.clone(),
                data: data(&c.data),
                mode: create_mode(c.flags, None)?,
            })
        }),
        R::CreateContainer(c) => check_acl(&c.acl).map(|()| Request::Create {
            path: c.path.clone(),
            data: data(&c.data),
            mode: CreateMode::Container,
        }),
        R::CreateTtl(c) => check_acl(&c.acl).and_then(|()| {
            Ok(Request::Create {
                path: c.path.clone(),
                data: data(&c.data),
                mode: create_mode(c.flags, Some(c.ttl))?,
            })
        }),
        R::Delete(d) => Ok(Request::Delete {
            path: d.path.clone(),
            version: d.version,
        }),
        R::SetData(s) => Ok(Request::SetData {
            path: s.path.clone(),
            data: data(&s.data),
            version: s.version,
        }),
        R::Exists(g) => Ok(Request::Exists {
            path: g.path.clone(),
            watch: g.watch,
        }),
        // getACL is answered from the node's stat: every node is world:anyone.
        R::GetAcl(p) => Ok(Request::Exists {
            path: p.path.clone(),
            watch: false,
        }),
        R::GetData(g) => Ok(Request::GetData {
            path: g.path.clone(),
            watch: g.watch,
        }),
        R::GetChildren(g) | R::GetChildren2(g) => Ok(Request::GetChildren {
            path: g.path.clone(),
            watch: g.watch,
        }),
        R::Sync(p) => Ok(Request::Sync { path: p.path.clone() }),
        // A lone check is a one-op multi to the server (PrepRequestProcessor
        // runs it through the same version check).
        R::Check(c) => Ok(Request::Multi(vec![Op::Check {
            path: c.path.clone(),
            version: c.version,
        }])),
        R::Multi(ops) => ops
            .iter()
            .map(write_op)
            .collect::<Result<Vec<_>, _>>()
            .map(Request::Multi),
        R::MultiRead(ops) => Ok(Request::MultiRead(ops.iter().map(read_op).collect())),
        R::AddWatch(a) => add_watch_mode(a.mode).map(|mode| Request::AddWatch {
            path: a.path.clone(),
            mode,
        }),
        R::CloseSession => Ok(Request::CloseSession),
        R::Ping
        | R::SetAcl(_)
        | R::Reconfig(_)
        | R::CheckWatches(_)
        | R::RemoveWatches(_)
        | R::Auth(_)
        | R::SetWatches(_)
        | R::SetWatches2(_)
        | R::Sasl(_)
        | R::GetEphemerals(_)
        | R::GetAllChildrenNumber(_) => return None,
    };
    Some((shape, request))
}

/// How to shape the core's reply to a request, by what the client asked.
#[derive(Debug, Clone)]
pub enum Shape {
    Create,
    Create2,
    Delete,
    Exists,
    GetAcl,
    GetData,
    SetData,
    GetChildren,
    GetChildren2,
    Sync(String),
    Check,
    Multi(Vec<WriteOp>),
    MultiRead,
    AddWatch,
    CloseSession,
    Ping,
}

/// The core's typed response, as the body the client's request expects.
pub fn shape_reply(shape: &Shape, response: Response) -> Result<w::Response, ErrorCode> {
    use w::Response as W;
    let mismatch = Err(ErrorCode::SystemError);
    match (shape, response) {
        (_, Response::Error(e)) => Err(code(&e)),
        (Shape::Create, Response::Create { path, .. }) => Ok(W::Create { path }),
        (Shape::Create2, Response::Create { path, stat }) => Ok(W::Create2(w::Create2Response { path, stat })),
        (Shape::Delete, Response::Delete) => Ok(W::Delete),
        (Shape::Exists, Response::Exists(Some(s))) => Ok(W::Exists { stat: s }),
        (Shape::Exists | Shape::GetAcl, Response::Exists(None)) => Err(ErrorCode::NoNode),
        (Shape::GetAcl, Response::Exists(Some(s))) => Ok(W::GetAcl(w::GetAclResponse {
            acl: open_acl(),
            stat: s,
        })),
        (Shape::GetData, Response::GetData { data, stat }) => {
            Ok(W::GetData(w::GetDataResponse { data: Some(data), stat }))
        }
        (Shape::SetData, Response::SetData { stat }) => Ok(W::SetData { stat }),
        (Shape::GetChildren, Response::GetChildren { children, .. }) => Ok(W::GetChildren { children }),
        (Shape::GetChildren2, Response::GetChildren { children, stat, .. }) => {
            Ok(W::GetChildren2(w::GetChildren2Response { children, stat }))
        }
        (Shape::Sync(path), Response::Sync) => Ok(W::Sync { path: path.clone() }),
        (Shape::Check, Response::Multi(_)) => Ok(W::Check),
        (Shape::Check, Response::MultiFailed(m)) => Err(code(&m.error)),
        (Shape::Multi(ops), Response::Multi(results)) => Ok(W::Multi(
            results
                .iter()
                .enumerate()
                .map(|(i, r)| op_result(ops.get(i), r))
                .collect(),
        )),
        // A failed multi is a success at the header: its results say which
        // op failed (RuntimeInconsistency after it, Ok before it).
        (Shape::Multi(_), Response::MultiFailed(m)) if m.results.is_empty() => Err(code(&m.error)),
        (Shape::Multi(ops), Response::MultiFailed(m)) => Ok(W::Multi(
            m.results
                .iter()
                .enumerate()
                .map(|(i, r)| op_result(ops.get(i), r))
                .collect(),
        )),
        (Shape::MultiRead, Response::MultiRead(results)) => Ok(W::MultiRead(results.iter().map(read_result).collect())),
        (Shape::AddWatch, Response::AddWatch) => Ok(W::AddWatch),
        (Shape::CloseSession, Response::CloseSession) => Ok(W::CloseSession),
        _ => mismatch,
    }
}
