//! Multi requests and responses (`MultiOperationRecord`, `MultiResponse`):
//! a sequence of `MultiHeader{type, done, err}` each followed by one op's
//! record, ended by the header `{-1, true, -1}`. A reader stops at the first
//! header with `done` set, whatever its type, as jute does.
//!
//! Jute refuses to mix read and write ops in one record; here the opcode of
//! the enclosing request decides the kind (`multi` holds [`WriteOp`]s,
//! `multiRead` [`ReadOp`]s), so a read inside `multi` is refused too.

use crate::code::ErrorCode;
use crate::error::WireError;
use crate::opcode::OpCode;
use crate::primitives::{Reader, Record, Writer};
use crate::records::data::Stat;
use crate::records::requests::{CreateRequest, CreateTtlRequest, SetDataRequest, VersionedPath, WatchRequest};
use crate::records::responses::{Create2Response, GetDataResponse};

/// `MultiHeader`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MultiHeader {
    pub op_type: i32,
    pub done: bool,
    pub err: i32,
}

impl MultiHeader {
    /// The header that ends every multi request and response.
    pub const END: MultiHeader = MultiHeader {
        op_type: -1,
        done: true,
        err: -1,
    };
}

impl Record for MultiHeader {
    const MIN_SIZE: usize = 9;
    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(MultiHeader {
            op_type: r.i32("MultiHeader.type")?,
            done: r.bool("MultiHeader.done")?,
            err: r.i32("MultiHeader.err")?,
        })
    }
    fn write(&self, w: &mut Writer) {
        w.i32(self.op_type);
        w.bool(self.done);
        w.i32(self.err);
    }
}

/// One op of a `multi` (a transaction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    Create(CreateRequest),
    Create2(CreateRequest),
    CreateContainer(CreateRequest),
    CreateTtl(CreateTtlRequest),
    Delete(VersionedPath),
    SetData(SetDataRequest),
    Check(VersionedPath),
}

impl WriteOp {
    pub fn opcode(&self) -> OpCode {
        match self {
            WriteOp::Create(_) => OpCode::Create,
            WriteOp::Create2(_) => OpCode::Create2,
            WriteOp::CreateContainer(_) => OpCode::CreateContainer,
            WriteOp::CreateTtl(_) => OpCode::CreateTtl,
            WriteOp::Delete(_) => OpCode::Delete,
            WriteOp::SetData(_) => OpCode::SetData,
            WriteOp::Check(_) => OpCode::Check,
        }
    }

    fn write_body(&self, w: &mut Writer) {
        match self {
            WriteOp::Create(c) | WriteOp::Create2(c) | WriteOp::CreateContainer(c) => c.write(w),
            WriteOp::CreateTtl(c) => c.write(w),
            WriteOp::Delete(d) | WriteOp::Check(d) => d.write(w),
            WriteOp::SetData(s) => s.write(w),
        }
    }
}

/// One op of a `multiRead`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOp {
    GetChildren(WatchRequest),
    GetData(WatchRequest),
}

impl ReadOp {
    pub fn opcode(&self) -> OpCode {
        match self {
            ReadOp::GetChildren(_) => OpCode::GetChildren,
            ReadOp::GetData(_) => OpCode::GetData,
        }
    }
}

/// Reads headers and bodies until the `done` header; `body` reads one op
/// given its type, or refuses it. Each header consumes 9 bytes, so the
/// sequence cannot grow past the input.
fn read_sequence<T>(
    r: &mut Reader<'_>,
    mut body: impl FnMut(&mut Reader<'_>, MultiHeader, usize) -> Result<T, WireError>,
) -> Result<Vec<T>, WireError> {
    let mut items = Vec::new();
    loop {
        let offset = r.offset();
        let header = MultiHeader::read(r)?;
        if header.done {
            return Ok(items);
        }
        items.push(body(r, header, offset)?);
    }
}

fn bad_op(what: &'static str, offset: usize, code: i32) -> WireError {
    WireError::BadMultiOp { what, offset, code }
}

/// The ops of a `multi` request body.
pub fn read_write_ops(r: &mut Reader<'_>) -> Result<Vec<WriteOp>, WireError> {
    read_sequence(r, |r, h, offset| {
        Ok(match OpCode::from_i32(h.op_type) {
            Some(OpCode::Create) => WriteOp::Create(CreateRequest::read(r)?),
            Some(OpCode::Create2) => WriteOp::Create2(CreateRequest::read(r)?),
            Some(OpCode::CreateContainer) => WriteOp::CreateContainer(CreateRequest::read(r)?),
            Some(OpCode::CreateTtl) => WriteOp::CreateTtl(CreateTtlRequest::read(r)?),
            Some(OpCode::Delete) => WriteOp::Delete(VersionedPath::read(r)?),
            Some(OpCode::SetData) => WriteOp::SetData(SetDataRequest::read(r)?),
            Some(OpCode::Check) => WriteOp::Check(VersionedPath::read(r)?),
            _ => return Err(bad_op("multi op", offset, h.op_type)),
        })
    })
}

/// The ops of a `multiRead` request body.
pub fn read_read_ops(r: &mut Reader<'_>) -> Result<Vec<ReadOp>, WireError> {
    read_sequence(r, |r, h, offset| {
        Ok(match OpCode::from_i32(h.op_type) {
            Some(OpCode::GetChildren) => ReadOp::GetChildren(WatchRequest::read(r)?),
            Some(OpCode::GetData) => ReadOp::GetData(WatchRequest::read(r)?),
            _ => return Err(bad_op("multiRead op", offset, h.op_type)),
        })
    })
}

fn op_header(op: OpCode) -> MultiHeader {
    MultiHeader {
        op_type: op.as_i32(),
        done: false,
        err: -1,
    }
}

pub fn write_write_ops(ops: &[WriteOp], w: &mut Writer) {
    for op in ops {
        op_header(op.opcode()).write(w);
        op.write_body(w);
    }
    MultiHeader::END.write(w);
}

pub fn write_read_ops(ops: &[ReadOp], w: &mut Writer) {
    for op in ops {
        op_header(op.opcode()).write(w);
        match op {
            ReadOp::GetChildren(g) | ReadOp::GetData(g) => g.write(w),
        }
    }
    MultiHeader::END.write(w);
}

/// One result of a `multi` or `multiRead` (`OpResult`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiResult {
    /// Type `create`: the path only.
    Create {
        path: String,
    },
    /// Type `create2` (any create that returns a stat).
    Create2(Create2Response),
    Delete,
    Check,
    SetData {
        stat: Stat,
    },
    GetChildren {
        children: Vec<String>,
    },
    GetData(GetDataResponse),
    /// `ErrorResult`: the op failed, or was rolled back
    /// (`RuntimeInconsistency`) or not reached (`Ok`) when another failed.
    Error(ErrorCode),
}

impl MultiResult {
    fn header(&self) -> MultiHeader {
        let (op, err) = match self {
            MultiResult::Create { .. } => (OpCode::Create, 0),
            MultiResult::Create2(_) => (OpCode::Create2, 0),
            MultiResult::Delete => (OpCode::Delete, 0),
            MultiResult::Check => (OpCode::Check, 0),
            MultiResult::SetData { .. } => (OpCode::SetData, 0),
            MultiResult::GetChildren { .. } => (OpCode::GetChildren, 0),
            MultiResult::GetData(_) => (OpCode::GetData, 0),
            MultiResult::Error(code) => (OpCode::Error, code.as_i32()),
        };
        MultiHeader {
            op_type: op.as_i32(),
            done: false,
            err,
        }
    }
}

/// A `MultiResponse` body. The error code is taken from the `ErrorResponse`
/// record, not the header, as the Java client does.
pub fn read_results(r: &mut Reader<'_>) -> Result<Vec<MultiResult>, WireError> {
    read_sequence(r, |r, h, offset| {
        Ok(match OpCode::from_i32(h.op_type) {
            Some(OpCode::Create) => MultiResult::Create {
                path: r.string("CreateResponse.path")?,
            },
            Some(OpCode::Create2) => MultiResult::Create2(Create2Response::read(r)?),
            Some(OpCode::Delete) => MultiResult::Delete,
            Some(OpCode::Check) => MultiResult::Check,
            Some(OpCode::SetData) => MultiResult::SetData { stat: Stat::read(r)? },
            Some(OpCode::GetChildren) => MultiResult::GetChildren {
                children: r.vector("GetChildrenResponse.children")?,
            },
            Some(OpCode::GetData) => MultiResult::GetData(GetDataResponse::read(r)?),
            Some(OpCode::Error) => {
                let offset = r.offset();
                let value = r.i32("ErrorResponse.err")?;
                let code = ErrorCode::from_i32(value);
                MultiResult::Error(code.ok_or(WireError::UnknownValue {
                    what: "ErrorResponse.err",
                    offset,
                    value,
                })?)
            }
            _ => return Err(bad_op("multi result", offset, h.op_type)),
        })
    })
}

pub fn write_results(results: &[MultiResult], w: &mut Writer) {
    for result in results {
        result.header().write(w);
        match result {
            MultiResult::Create { path } => w.string(path),
            MultiResult::Create2(c) => c.write(w),
            MultiResult::Delete | MultiResult::Check => {}
            MultiResult::SetData { stat } => stat.write(w),
            MultiResult::GetChildren { children } => w.vector(children),
            MultiResult::GetData(g) => g.write(w),
            MultiResult::Error(code) => w.i32(code.as_i32()),
        }
    }
    MultiHeader::END.write(w);
}
