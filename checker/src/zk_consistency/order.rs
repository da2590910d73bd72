//! Order checks that need only zxids and times: writes in real-time order,
//! sessions never going back in time and applying their writes FIFO, reads
//! never reflecting writes invoked after they returned, and `sync` then read
//! seeing everything completed before the sync.

use std::collections::BTreeMap;

use crate::history::{ClientId, Event, History, OpId, Operation, Outcome, SessionId, Time, Zxid};
use crate::properties::ViolationKind;
use crate::properties::{ms, CheckResult, Violation};

use super::op_text::describe;
use super::replay::{is_read, CommitInfo};

/// A session, or a client whose ops carry no session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum SessionKey {
    Session(SessionId),
    Client(ClientId),
}

fn key(o: &Operation) -> SessionKey {
    o.session.map_or(SessionKey::Client(o.client), SessionKey::Session)
}

fn who(k: SessionKey) -> String {
    match k {
        SessionKey::Session(s) => format!("session {s:#x}"),
        SessionKey::Client(c) => format!("client {c} (no session id)"),
    }
}

/// A write with a known zxid.
struct W<'a> {
    o: &'a Operation,
    zxid: Zxid,
    done: Time,
}

fn writes<'a>(ops: &'a BTreeMap<OpId, &'a Operation>, write_zxids: &BTreeMap<OpId, Zxid>) -> Vec<W<'a>> {
    write_zxids
        .iter()
        .filter_map(|(id, z)| {
            ops.get(id).map(|o| W {
                o,
                zxid: *z,
                // An indeterminate write may take effect at any time after
                // its invocation, even after the client saw ConnectionLoss.
                done: if o.is_indeterminate() {
                    Time::MAX
                } else {
                    o.completed.unwrap_or(Time::MAX)
                },
            })
        })
        .collect()
}

/// A write that completed before another was invoked has a smaller zxid.
pub fn writes_in_real_time_order(
    ops: &BTreeMap<OpId, &Operation>,
    write_zxids: &BTreeMap<OpId, Zxid>,
    r: &mut CheckResult,
) {
    let mut by_done = writes(ops, write_zxids);
    by_done.sort_by_key(|w| w.done);
    // prefix[i] = index of the max-zxid write among by_done[..=i]
    let mut prefix: Vec<usize> = Vec::with_capacity(by_done.len());
    for i in 0..by_done.len() {
        let best = match prefix.last() {
            Some(&p) if by_done[p].zxid >= by_done[i].zxid => p,
            _ => i,
        };
        prefix.push(best);
    }
    for b in &by_done {
        let n = by_done.partition_point(|w| w.done < b.o.invoked);
        if n == 0 {
            continue;
        }
        let a = &by_done[prefix[n - 1]];
        if a.zxid >= b.zxid {
            r.violation(
                Violation::new(
                    ViolationKind::WriteOrder,
                    format!(
                        "{} completed at {} with zxid {:#x}, before {} was invoked at {}, yet the later write has the smaller-or-equal zxid {:#x}: writes are not linearizable",
                        describe(a.o),
                        ms(a.done),
                        a.zxid,
                        describe(b.o),
                        ms(b.o.invoked),
                        b.zxid
                    ),
                )
                .ops([a.o.id, b.o.id])
                .clients([a.o.client, b.o.client])
                .times([a.done, b.o.invoked]),
            );
        }
    }
}

/// Zxids a session sees never go backwards (in the order its replies
/// arrived, across reconnects), and a session's writes commit in the order
/// it sent them.
///
/// ZooKeeper answers a session FIFO, so its replies arrive in the order its
/// requests were sent: invocation order. The completions' recorded times
/// are not that order for pipelined requests: a recorder notes a
/// completion when its caller resumes, and callers woken by one batch of
/// replies resume in any order, nanoseconds apart. (For requests that do
/// not overlap, invocation and completion order agree.)
pub fn sessions_monotonic(
    h: &History,
    ops: &BTreeMap<OpId, &Operation>,
    write_zxids: &BTreeMap<OpId, Zxid>,
    r: &mut CheckResult,
) {
    let mut seen: Vec<(Time, OpId, Zxid)> = Vec::new();
    for e in &h.events {
        let Event::Complete {
            id,
            zxid: Some(z),
            outcome,
            ..
        } = e
        else {
            continue;
        };
        if matches!(outcome, Outcome::Ok { .. }) {
            if let Some(o) = ops.get(id) {
                seen.push((o.invoked, *id, *z));
            }
        }
    }
    seen.sort_by_key(|&(invoked, id, _)| (invoked, id));
    let mut last: BTreeMap<SessionKey, (Zxid, OpId)> = BTreeMap::new();
    for (_, id, z) in &seen {
        let Some(o) = ops.get(id) else { continue };
        let k = key(o);
        if let Some((prev, prev_id)) = last.get(&k).copied() {
            if *z < prev {
                let p = ops.get(&prev_id).map(|p| describe(p)).unwrap_or_default();
                r.violation(
                    Violation::new(
                        ViolationKind::SessionTimeTravel,
                        format!(
                            "{} went back in time: {} saw zxid {prev:#x}, then {} saw the older zxid {z:#x}",
                            who(k),
                            p,
                            describe(o)
                        ),
                    )
                    .ops([prev_id, o.id])
                    .clients([o.client])
                    .times([o.completed.unwrap_or(o.invoked)]),
                );
            }
        }
        let entry = last.entry(k).or_insert((*z, *id));
        if *z >= entry.0 {
            *entry = (*z, *id);
        }
    }
    // FIFO: per session, writes in invocation order have increasing zxids.
    let mut per: BTreeMap<SessionKey, Vec<W>> = BTreeMap::new();
    for w in writes(ops, write_zxids) {
        per.entry(key(w.o)).or_default().push(w);
    }
    for (k, mut ws) in per {
        ws.sort_by_key(|w| (w.o.invoked, w.o.id));
        for pair in ws.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            if a.zxid > b.zxid {
                r.violation(
                    Violation::new(
                        ViolationKind::SessionFifo,
                        format!(
                            "{} sent {} before {}, but they committed in the other order (zxid {:#x} > {:#x})",
                            who(k),
                            describe(a.o),
                            describe(b.o),
                            a.zxid,
                            b.zxid
                        ),
                    )
                    .ops([a.o.id, b.o.id])
                    .clients([a.o.client]),
                );
            }
        }
    }
}

/// A read answered at zxid z cannot reflect a write invoked (or first
/// committed) after the read returned.
pub fn no_reads_from_future(
    ops: &BTreeMap<OpId, &Operation>,
    write_zxids: &BTreeMap<OpId, Zxid>,
    commits: &BTreeMap<Zxid, CommitInfo>,
    r: &mut CheckResult,
) {
    let mut ws = writes(ops, write_zxids);
    ws.sort_by_key(|w| w.zxid);
    let mut prefix: Vec<usize> = Vec::with_capacity(ws.len());
    for i in 0..ws.len() {
        let best = match prefix.last() {
            Some(&p) if ws[p].o.invoked >= ws[i].o.invoked => p,
            _ => i,
        };
        prefix.push(best);
    }
    let commit_list: Vec<(Zxid, Time)> = commits.iter().map(|(z, c)| (*z, c.first_time)).collect();
    let mut commit_prefix: Vec<usize> = Vec::with_capacity(commit_list.len());
    for i in 0..commit_list.len() {
        let best = match commit_prefix.last() {
            Some(&p) if commit_list[p].1 >= commit_list[i].1 => p,
            _ => i,
        };
        commit_prefix.push(best);
    }
    for o in ops.values() {
        let (Some(z), Some(done), Some(Outcome::Ok { .. })) = (o.zxid, o.completed, &o.outcome) else {
            continue;
        };
        if !is_read(&o.op) {
            continue;
        }
        let n = ws.partition_point(|w| w.zxid <= z);
        if n > 0 {
            let w = &ws[prefix[n - 1]];
            if w.o.invoked > done {
                r.violation(
                    Violation::new(
                        ViolationKind::ReadFromFuture,
                        format!(
                            "{} returned at {} with zxid {z:#x}, which includes {} (zxid {:#x}), invoked only at {}",
                            describe(o),
                            ms(done),
                            describe(w.o),
                            w.zxid,
                            ms(w.o.invoked)
                        ),
                    )
                    .ops([o.id, w.o.id])
                    .clients([o.client, w.o.client])
                    .times([done, w.o.invoked]),
                );
                continue;
            }
        }
        let n = commit_list.partition_point(|(cz, _)| *cz <= z);
        if n > 0 {
            let (cz, ct) = commit_list[commit_prefix[n - 1]];
            if ct > done {
                r.violation(
                    Violation::new(ViolationKind::ReadFromFuture, format!("{} returned at {} with zxid {z:#x}, but zxid {cz:#x} was first committed by any server only at {}", describe(o), ms(done), ms(ct)))
                        .ops([o.id])
                        .clients([o.client])
                        .times([done, ct]),
                );
            }
        }
    }
}

/// After `sync` returns, the session's reads see at least every write that
/// completed before the sync was invoked.
pub fn sync_then_read(ops: &BTreeMap<OpId, &Operation>, write_zxids: &BTreeMap<OpId, Zxid>, r: &mut CheckResult) {
    // Writes by completion, with the running max-zxid write (ties go to the
    // later in `writes` order, as `max_by_key` picks); each session's Ok
    // reads with a zxid, in op order. Indexed once, not scanned per sync.
    let ws = writes(ops, write_zxids);
    let mut by_done: Vec<usize> = (0..ws.len()).collect();
    by_done.sort_by_key(|&i| ws[i].done);
    let mut best: Vec<usize> = Vec::with_capacity(by_done.len());
    for &i in &by_done {
        let b = match best.last() {
            Some(&p) if (ws[p].zxid, p) > (ws[i].zxid, i) => p,
            _ => i,
        };
        best.push(b);
    }
    let mut reads: BTreeMap<SessionKey, Vec<(&Operation, Zxid)>> = BTreeMap::new();
    for o in ops.values() {
        if let (true, Some(z), Some(Outcome::Ok { .. })) = (is_read(&o.op), o.zxid, &o.outcome) {
            reads.entry(key(o)).or_default().push((o, z));
        }
    }
    for s in ops.values() {
        let (crate::history::Op::Sync { .. }, Some(Outcome::Ok { .. }), Some(synced)) =
            (&s.op, &s.outcome, s.completed)
        else {
            continue;
        };
        let before = by_done.partition_point(|&i| ws[i].done < s.invoked);
        let Some(w) = before.checked_sub(1).map(|k| &ws[best[k]]) else {
            continue;
        };
        for &(o, z) in reads.get(&key(s)).map(Vec::as_slice).unwrap_or(&[]) {
            if o.invoked < synced {
                continue;
            }
            if z < w.zxid {
                r.violation(
                    Violation::new(
                        ViolationKind::StaleAfterSync,
                        format!("{} read at zxid {z:#x} after {} returned, but {} had completed before the sync with zxid {:#x}", describe(o), describe(s), describe(w.o), w.zxid),
                    )
                    .ops([o.id, s.id, w.o.id])
                    .clients([o.client, w.o.client])
                    .times([w.done, s.invoked, o.completed.unwrap_or(o.invoked)]),
                );
            }
        }
    }
}
