//! Mutations of a valid history: a response moved earlier, an op dropped —
//! what the differential test expects the engine to refute.

use super::*;

pub(super) fn move_response_earlier<I, O>(ops: &mut [LinOp<I, O>], at: usize) {
    let i = at % ops.len();
    if ops[i].ret.is_some() {
        ops[i].ret = Some(ops[i].call);
    }
}

/// The first operation, from position `at` on (wrapping), whose output matches.
pub(super) fn first_from<I, O>(ops: &[LinOp<I, O>], at: usize, pred: impl Fn(&Option<O>) -> bool) -> Option<usize> {
    (0..ops.len())
        .map(|j| (j + at) % ops.len())
        .find(|&j| pred(&ops[j].output))
}

pub(super) fn drop_op<I, O>(ops: &mut Vec<LinOp<I, O>>, at: usize, is_target: impl Fn(&I) -> bool) {
    if let Some(i) = (0..ops.len())
        .map(|j| (j + at) % ops.len())
        .find(|&j| is_target(&ops[j].input))
    {
        ops.remove(i);
    }
}

pub(super) fn mutate_register(ops: &mut Ops<Register>, mutation: u8, at: usize) {
    match mutation % 3 {
        0 => {
            // flip a read value
            if let Some(Some(RegisterOutput::Read(o))) =
                first_from(ops, at, |o| matches!(o, Some(RegisterOutput::Read(_)))).map(|j| &mut ops[j].output)
            {
                *o = match *o {
                    None => Some(0),
                    Some(x) if x % 2 == 0 => Some(x + 1),
                    Some(_) => None,
                };
            }
        }
        1 => drop_op(ops, at, |i| matches!(i, RegisterInput::Write { .. })),
        _ => move_response_earlier(ops, at),
    }
}

pub(super) fn mutate_kv(ops: &mut Ops<Kv>, mutation: u8, at: usize) {
    match mutation % 3 {
        0 => {
            // a get sees a value cut short (or one never written)
            if let Some(Some(KvOutput::Got(o))) =
                first_from(ops, at, |o| matches!(o, Some(KvOutput::Got(_)))).map(|j| &mut ops[j].output)
            {
                if o.pop().is_none() {
                    o.push_str("v9");
                }
            }
        }
        1 => drop_op(ops, at, |i| !matches!(i, KvInput::Get { .. })),
        _ => move_response_earlier(ops, at),
    }
}

pub(super) fn mutate_queue(ops: &mut Ops<Queue>, mutation: u8, at: usize) {
    match mutation % 3 {
        0 => {
            // a dequeue sees another item (or none)
            if let Some(Some(QueueOutput::Dequeued(o))) =
                first_from(ops, at, |o| matches!(o, Some(QueueOutput::Dequeued(_)))).map(|j| &mut ops[j].output)
            {
                *o = match o.take() {
                    None => Some("i0".to_string()),
                    Some(_) => None,
                };
            }
        }
        1 => drop_op(ops, at, |i| matches!(i, QueueInput::Enqueue { .. })),
        _ => move_response_earlier(ops, at),
    }
}

pub(super) fn mutate_mutex(ops: &mut Ops<Mutex>, mutation: u8, at: usize) {
    match mutation % 3 {
        // the lock granted twice: a release vanishes, so the next grant
        // happens while the lock is held
        0 => drop_op(ops, at, |i| matches!(i, MutexInput::Release { .. })),
        // a token reused
        1 => {
            if let Some(Some(MutexOutput::Acquired(Some(t)))) =
                first_from(ops, at, |o| matches!(o, Some(MutexOutput::Acquired(Some(_))))).map(|j| &mut ops[j].output)
            {
                *t = 1;
            }
        }
        _ => move_response_earlier(ops, at),
    }
}
