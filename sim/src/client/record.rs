//! How client calls appear in the history.

use zkdst_history::{Data, MultiOpResult, Op as HOp, Outcome, Value};
use zkdst_recipes::zk::{Op, OpResult, ReadOp, ReadResult, ZkError, Zxid};

use crate::proto::{Request, Response};

fn multi_op(op: &Op) -> HOp {
    match op {
        Op::Create { path, data, mode } => HOp::Create {
            path: path.clone(),
            data: Data(data.clone()),
            mode: *mode,
        },
        Op::Delete { path, version } => HOp::Delete {
            path: path.clone(),
            version: *version,
        },
        Op::SetData { path, data, version } => HOp::SetData {
            path: path.clone(),
            data: Data(data.clone()),
            version: *version,
        },
        Op::Check { path, version } => HOp::Check {
            path: path.clone(),
            version: *version,
        },
    }
}

pub fn op_of(r: &Request) -> HOp {
    match r {
        Request::Create { path, data, mode } => HOp::Create {
            path: path.clone(),
            data: Data(data.clone()),
            mode: *mode,
        },
        Request::Delete { path, version } => HOp::Delete {
            path: path.clone(),
            version: *version,
        },
        Request::SetData { path, data, version } => HOp::SetData {
            path: path.clone(),
            data: Data(data.clone()),
            version: *version,
        },
        Request::Multi(ops) => HOp::Multi {
            ops: ops.iter().map(multi_op).collect(),
        },
        Request::MultiRead(ops) => HOp::MultiRead {
            ops: ops
                .iter()
                .map(|o| match o {
                    ReadOp::GetData { path } => HOp::GetData {
                        path: path.clone(),
                        watch: false,
                    },
                    ReadOp::GetChildren { path } => HOp::GetChildren {
                        path: path.clone(),
                        watch: false,
                    },
                })
                .collect(),
        },
        Request::Exists { path, watch } => HOp::Exists {
            path: path.clone(),
            watch: *watch,
        },
        Request::GetData { path, watch } => HOp::GetData {
            path: path.clone(),
            watch: *watch,
        },
        Request::GetChildren { path, watch } => HOp::GetChildren {
            path: path.clone(),
            watch: *watch,
        },
        Request::Sync { path } => HOp::Sync { path: path.clone() },
        Request::AddWatch { path, mode } => HOp::AddWatch {
            path: path.clone(),
            recursive: *mode == zkdst_recipes::zk::AddWatchMode::PersistentRecursive,
        },
        Request::CloseSession => HOp::CloseSession,
    }
}

fn multi_result(r: &OpResult) -> MultiOpResult {
    match r {
        OpResult::Create { path, stat } => MultiOpResult::Create {
            path: path.clone(),
            stat: *stat,
        },
        OpResult::Delete => MultiOpResult::Delete,
        OpResult::SetData { stat } => MultiOpResult::SetData { stat: *stat },
        OpResult::Check => MultiOpResult::Check,
        OpResult::Error(None) => MultiOpResult::Error { code: "Ok".into() },
        OpResult::Error(Some(e)) => MultiOpResult::Error { code: e.name().into() },
    }
}

fn read_result(r: &ReadResult) -> Value {
    match r {
        ReadResult::Data { data, stat } => Value::Data {
            data: Data(data.clone()),
            stat: *stat,
        },
        ReadResult::Children { children } => {
            let mut children = children.clone();
            children.sort_unstable();
            Value::ChildNames {
                children: children.into(),
            }
        }
        ReadResult::Error(e) => Value::Error {
            code: e.name().into(),
            results: Vec::new(),
        },
    }
}

/// The outcome of a call and the reply zxid. ConnectionLoss is unknown
/// (Info); a session already gone on the client is a definite failure; a
/// server's error reply is an Ok whose value is the error.
pub fn outcome_of(r: &Result<(Response, Zxid), ZkError>) -> (Outcome, Option<Zxid>) {
    match r {
        Err(e) if e.is_ambiguous() => (Outcome::Info { error: e.name().into() }, None),
        Err(e) => (Outcome::Fail { error: e.name().into() }, None),
        Ok((resp, zxid)) => (Outcome::Ok { value: value_of(resp) }, Some(*zxid)),
    }
}

/// A reply as the history's value.
pub fn value_of(resp: &Response) -> Value {
    match resp {
        Response::Create { path, stat } => Value::Created {
            path: path.clone(),
            stat: *stat,
        },
        Response::Delete | Response::Sync | Response::AddWatch | Response::CloseSession => Value::Unit,
        Response::SetData { stat } => Value::Stat { stat: Some(*stat) },
        Response::Multi(results) => Value::Multi {
            results: results.iter().map(multi_result).collect(),
        },
        Response::MultiFailed(m) => Value::Error {
            code: m.error.name().into(),
            results: m.results.iter().map(multi_result).collect(),
        },
        Response::MultiRead(results) => Value::Reads {
            results: results.iter().map(read_result).collect(),
        },
        Response::Exists(s) => Value::Stat { stat: *s },
        Response::GetData { data, stat } => Value::Data {
            data: Data(data.clone()),
            stat: *stat,
        },
        // Order is unspecified: record the canonical (sorted) form.
        Response::GetChildren { sorted, stat, .. } => Value::Children {
            children: sorted.clone(),
            stat: *stat,
        },
        Response::Error(e) => Value::Error {
            code: e.name().into(),
            results: Vec::new(),
        },
    }
}
