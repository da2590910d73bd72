//! ZooKeeper calls in words, for the consistency checkers' reports:
//! "create /a d Persistent", "op 7 (client 2, session 0x100, create /a,
//! 10–12 ms)". Below the tree model, the path checks and the comparisons
//! that all quote calls.

use crate::history::{Op, Operation};
use crate::properties::ms;

/// A compact rendering of an op.
pub fn short_op(op: &Op) -> String {
    match op {
        Op::Create { path, data, mode } => format!("create {path} {data} {mode:?}"),
        Op::Delete { path, version } => format!("delete {path} v{version}"),
        Op::SetData { path, data, version } => format!("setData {path} {data} v{version}"),
        Op::Check { path, version } => format!("check {path} v{version}"),
        Op::GetData { path, .. } => format!("getData {path}"),
        Op::Exists { path, .. } => format!("exists {path}"),
        Op::GetChildren { path, .. } => format!("getChildren {path}"),
        Op::Sync { path } => format!("sync {path}"),
        Op::Multi { ops } => format!("multi[{}]", ops.iter().map(short_op).collect::<Vec<_>>().join("; ")),
        Op::MultiRead { ops } => format!("multiRead[{}]", ops.iter().map(short_op).collect::<Vec<_>>().join("; ")),
        other => format!("{other:?}"),
    }
}

/// "op 7 (client 2, session 0x100, create /a, 10–12 ms)".
pub fn describe(o: &Operation) -> String {
    let session = o.session.map(|s| format!(", session {s:#x}")).unwrap_or_default();
    let done = o.completed.map(ms).unwrap_or_else(|| "pending".into());
    format!(
        "op {} (client {}{session}, {}, {}–{})",
        o.id,
        o.client,
        short_op(&o.op),
        ms(o.invoked),
        done
    )
}
