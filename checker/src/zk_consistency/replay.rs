//! Replays the writes in zxid order through the data-tree model and checks
//! every write reply and every read against it.
//!
//! The witness for the order is the zxids the history records. With Commit
//! events (the servers' committed txns) the commit stream is the truth: it
//! is applied as is, acknowledged writes must appear in it at their reply
//! zxid with the result the model derives, and indeterminate writes are
//! matched to otherwise unclaimed txns. Without Commit events the
//! acknowledged writes are applied at their reply zxids, up to `bound` (the
//! last zxid no unknown write can precede).

use std::collections::{BTreeMap, BTreeSet};
use zkdst_model::ErrorCode;

use crate::history::{Event, History, Op, OpId, Operation, Outcome, SessionId, Time, TxnRecord, Value, Zxid};
use crate::properties::ViolationKind;
use crate::properties::{CheckResult, Violation};

use super::compare::{expected_read, read_differs, seen_zxid, write_reply_differs};
use super::op_text::describe;
use super::tree::{same_txn, DataTree};

/// One committed txn, deduplicated over servers.
#[derive(Debug, Clone)]
pub struct CommitInfo {
    pub txn: TxnRecord,
    /// The earliest time any server committed it.
    pub first_time: Time,
    /// The request it came from (session, xid), when the history says.
    pub origin: Option<(SessionId, i64)>,
}

/// The commit stream by zxid. Servers that committed different txns at one
/// zxid are a violation (`divergent-commit`).
pub fn collect_commits(h: &History, r: &mut CheckResult) -> BTreeMap<Zxid, CommitInfo> {
    let mut out: BTreeMap<Zxid, CommitInfo> = BTreeMap::new();
    let mut reported = BTreeSet::new();
    for e in &h.events {
        if let Event::Commit {
            time,
            server,
            zxid,
            txn,
            session,
            xid,
        } = e
        {
            match out.get_mut(zxid) {
                Some(c) => {
                    if c.txn != *txn && reported.insert(*zxid) {
                        r.violation(
                            Violation::new(ViolationKind::DivergentCommit, format!("server {server} committed {txn:?} at zxid {zxid:#x} but another server committed {:?} there", c.txn)).times([*time]),
                        );
                    }
                    c.first_time = c.first_time.min(*time);
                }
                None => {
                    out.insert(
                        *zxid,
                        CommitInfo {
                            txn: txn.clone(),
                            first_time: *time,
                            origin: session.zip(*xid),
                        },
                    );
                }
            }
        }
    }
    out
}

/// Error replies the data-tree model cannot decide: they depend on the
/// leader's session tracker.
const SESSION_ERRORS: [&str; 2] = [ErrorCode::SessionMoved.name(), ErrorCode::SessionExpired.name()];

pub fn is_write(op: &Op) -> bool {
    matches!(
        op,
        Op::Create { .. } | Op::Delete { .. } | Op::SetData { .. } | Op::Check { .. } | Op::Multi { .. }
    )
}

pub fn is_read(op: &Op) -> bool {
    matches!(
        op,
        Op::GetData { .. } | Op::Exists { .. } | Op::GetChildren { .. } | Op::MultiRead { .. }
    )
}

fn ok_value(o: &Operation) -> Option<&Value> {
    match &o.outcome {
        Some(Outcome::Ok { value }) => Some(value),
        _ => None,
    }
}

fn is_error(v: &Value) -> bool {
    matches!(v, Value::Error { .. })
}

/// What the replay learned, for the order checks.
#[derive(Debug, Default)]
pub struct Replayed {
    /// The zxid of every write known to have committed: acknowledged writes
    /// and indeterminate writes matched to a committed txn.
    pub write_zxids: BTreeMap<OpId, Zxid>,
    pub checked_writes: usize,
    pub checked_reads: usize,
    pub unchecked: usize,
}

struct Sweep<'a> {
    tree: DataTree,
    r: &'a mut CheckResult,
    out: Replayed,
}

impl Sweep<'_> {
    /// Checks a write reply against the state the tree is in now (not
    /// changing it); returns the model's effect.
    fn check_write(&mut self, o: &Operation, zxid: Zxid, reply: &Value) -> Option<(DataTree, Option<TxnRecord>, bool)> {
        let mut scratch = self.tree.clone();
        let applied = scratch.apply_op(&o.op, o.session.unwrap_or(0), zxid)?;
        self.out.checked_writes += 1;
        let differs = write_reply_differs(reply, &applied.reply, o.session.is_some());
        if let Some(why) = &differs {
            self.r.violation(
                Violation::new(
                    ViolationKind::WriteResultMismatch,
                    format!("{} got its reply at zxid {zxid:#x}: {why}", describe(o)),
                )
                .ops([o.id])
                .clients([o.client])
                .times([o.invoked, o.completed.unwrap_or(o.invoked)]),
            );
        }
        Some((scratch, applied.txn, differs.is_none()))
    }

    fn check_read(&mut self, o: &Operation, zxid: Zxid, reply: &Value) {
        let Some(expected) = expected_read(&self.tree, &o.op) else {
            return;
        };
        self.out.checked_reads += 1;
        if let Some(why) = read_differs(&o.op, reply, &expected) {
            let seen = seen_zxid(reply);
            let (kind, extra) = if seen > zxid {
                (
                    ViolationKind::ReadFromFuture,
                    format!("; it reflects zxid {seen:#x}, later than its own reply zxid {zxid:#x}"),
                )
            } else {
                (ViolationKind::ReadMismatch, String::new())
            };
            self.r.violation(
                Violation::new(
                    kind,
                    format!("{} answered at zxid {zxid:#x}: {why}{extra}", describe(o)),
                )
                .ops([o.id])
                .clients([o.client])
                .times([o.invoked, o.completed.unwrap_or(o.invoked)]),
            );
        }
    }

    fn check_after(&mut self, o: &Operation, zxid: Zxid) {
        let Some(reply) = ok_value(o) else { return };
        if is_read(&o.op) {
            self.check_read(o, zxid, reply);
        } else {
            self.check_write(o, zxid, reply);
        }
    }
}

/// Runs the replay. `bound`: without Commit events, the last zxid whose
/// state is certain (`None` = no limit); `sequence_base`: see
/// [`DataTree::with_sequence_base`].
pub fn replay(
    ops: &[Operation],
    commits: &BTreeMap<Zxid, CommitInfo>,
    bound: Option<Zxid>,
    sequence_base: i32,
    r: &mut CheckResult,
) -> Replayed {
    let has_commits = !commits.is_empty();
    let mut own: BTreeMap<Zxid, Vec<&Operation>> = BTreeMap::new();
    let mut after: Vec<(Zxid, &Operation)> = Vec::new();
    let mut indeterminate: Vec<&Operation> = Vec::new();
    for o in ops {
        let acked_zxid = ok_value(o).and(o.zxid);
        let writeish = is_write(&o.op) || matches!(o.op, Op::CloseSession);
        match (acked_zxid, ok_value(o)) {
            (Some(z), Some(v)) if writeish && !is_error(v) => own.entry(z).or_default().push(o),
            (Some(z), Some(_)) if writeish => {
                // An error reply: it owns its zxid only if the server logged
                // an error txn there; otherwise it was decided on the state
                // at that zxid.
                let owns = commits
                    .get(&z)
                    .is_some_and(|c| matches!(c.txn, TxnRecord::Error { .. }));
                if owns {
                    own.entry(z).or_default().push(o)
                } else {
                    after.push((z, o))
                }
            }
            (Some(z), _) if is_read(&o.op) => after.push((z, o)),
            _ if writeish && o.is_indeterminate() => indeterminate.push(o),
            _ => {}
        }
    }
    after.sort_by_key(|(z, o)| (*z, o.completed));
    let keys: BTreeSet<Zxid> = if has_commits {
        commits.keys().copied().collect()
    } else {
        own.keys().copied().collect()
    };

    let mut s = Sweep {
        tree: DataTree::with_sequence_base(sequence_base),
        r,
        out: Replayed::default(),
    };
    let mut next_after = 0;
    let mut matched: BTreeSet<OpId> = BTreeSet::new();
    let mut closed: BTreeSet<SessionId> = BTreeSet::new();
    let mut stopped_at: Option<Zxid> = None;

    for &z in &keys {
        if bound.is_some_and(|b| z > b) {
            stopped_at = Some(z);
            break;
        }
        while next_after < after.len() && after[next_after].0 < z {
            let (az, o) = after[next_after];
            s.check_after(o, az);
            next_after += 1;
        }
        let claimants = own.get(&z).map(Vec::as_slice).unwrap_or(&[]);
        let non_error: Vec<&&Operation> = claimants
            .iter()
            .filter(|o| ok_value(o).is_some_and(|v| !is_error(v)))
            .collect();
        if non_error.len() > 1 {
            let ids: Vec<OpId> = non_error.iter().map(|o| o.id).collect();
            s.r.violation(
                Violation::new(
                    ViolationKind::DuplicateZxid,
                    format!(
                        "{} writes were acknowledged with the same zxid {z:#x}: {}",
                        ids.len(),
                        non_error.iter().map(|o| describe(o)).collect::<Vec<_>>().join("; ")
                    ),
                )
                .ops(ids)
                .clients(non_error.iter().map(|o| o.client)),
            );
        }
        for o in &non_error {
            s.out.write_zxids.insert(o.id, z);
        }
        if has_commits {
            let c = &commits[&z];
            let mut model_tree = None;
            let session_error = claimants.first().is_some_and(|o| {
                matches!((ok_value(o), &c.txn), (Some(Value::Error { code, .. }), TxnRecord::Error { code: committed })
                    if code == committed && SESSION_ERRORS.contains(&code.as_str()))
            });
            if session_error {
                // Decided by the leader's session tracker (the session
                // moved to another server, or is gone), not by the tree:
                // the reply matches the committed error txn; nothing changed.
            } else if let Some(o) = claimants.first() {
                let reply = ok_value(o).cloned().unwrap_or(Value::Unit);
                if let Some((scratch, txn, _)) = s.check_write(o, z, &reply) {
                    match txn {
                        Some(t) if !same_txn(&t, &c.txn) => s.r.violation(
                            Violation::new(
                                ViolationKind::LostAckWrite,
                                format!("{} was acknowledged at zxid {z:#x}, but the txn committed at {z:#x} is {:?}, not its {:?}: the acknowledged write is lost", describe(o), c.txn, t),
                            )
                            .ops([o.id])
                            .clients([o.client])
                            .times([o.completed.unwrap_or(o.invoked), c.first_time]),
                        ),
                        Some(_) => model_tree = Some(scratch),
                        None => {}
                    }
                }
            } else if !matches!(
                c.txn,
                TxnRecord::CreateSession { .. } | TxnRecord::CloseSession { .. } | TxnRecord::Error { .. }
            ) {
                // Which indeterminate write (if any) produced this txn? The
                // commit's (session, xid) names it exactly when recorded.
                let exact = c.origin.and_then(|(sess, xid)| {
                    indeterminate
                        .iter()
                        .find(|o| o.session == Some(sess) && o.id as i64 == xid && !matched.contains(&o.id))
                });
                if let Some(o) = exact {
                    matched.insert(o.id);
                    s.out.write_zxids.insert(o.id, z);
                }
                for o in indeterminate.iter().filter(|_| exact.is_none() && c.origin.is_none()) {
                    if matched.contains(&o.id) || o.invoked > c.first_time {
                        continue;
                    }
                    let mut scratch = s.tree.clone();
                    if let Some(a) = scratch.apply_op(&o.op, o.session.unwrap_or(0), z) {
                        if a.txn.as_ref().is_some_and(|t| same_txn(t, &c.txn)) {
                            matched.insert(o.id);
                            s.out.write_zxids.insert(o.id, z);
                            break;
                        }
                    }
                }
            }
            match &c.txn {
                TxnRecord::CloseSession { session, deleted, expired } => {
                    let owned = s.tree.ephemerals_of(*session);
                    let mut del = deleted.clone();
                    del.sort();
                    if del != owned {
                        let how = if *expired { "expired" } else { "closed" };
                        s.r.violation(
                            Violation::new(
                                ViolationKind::ExpiryEphemerals,
                                format!("session {session:#x} {how} at zxid {z:#x} deleting [{}], but it owned [{}]: its ephemerals must all go in that one txn", del.join(", "), owned.join(", ")),
                            )
                            .times([c.first_time]),
                        );
                    }
                    closed.insert(*session);
                }
                TxnRecord::Create { path, ephemeral_owner, .. } if closed.contains(ephemeral_owner) => s.r.violation(
                    Violation::new(ViolationKind::EphemeralAfterClose, format!("{path} was created at zxid {z:#x} owned by session {ephemeral_owner:#x}, which had already ended")).times([c.first_time]),
                ),
                _ => {}
            }
            match model_tree {
                Some(t) => s.tree = t,
                None => {
                    if let Err(why) = s.tree.apply_txn(&c.txn, z) {
                        s.r.violation(
                            Violation::new(
                                ViolationKind::CommitStreamInconsistent,
                                format!("the txn committed at zxid {z:#x} cannot apply: {why}"),
                            )
                            .times([c.first_time]),
                        );
                    }
                }
            }
        } else if let Some(o) = claimants.first() {
            if matches!(o.op, Op::CloseSession) {
                s.tree.close_session(o.session.unwrap_or(0), z);
                continue;
            }
            let reply = ok_value(o).cloned().unwrap_or(Value::Unit);
            match s.check_write(o, z, &reply) {
                Some((scratch, _, true)) => {
                    if !is_error(&reply) {
                        s.tree = scratch;
                    }
                }
                Some((_, _, false)) => {
                    // The model and the history disagree: later states are
                    // not known, so stop here rather than cascade.
                    stopped_at = Some(z);
                    break;
                }
                None => {}
            }
        }
    }
    let max_commit = commits.keys().next_back().copied();
    while next_after < after.len() {
        let (az, o) = after[next_after];
        next_after += 1;
        if stopped_at.is_some_and(|st| az >= st) || bound.is_some_and(|b| az > b) {
            s.out.unchecked += 1;
            continue;
        }
        if let Some(m) = max_commit.filter(|m| az > *m) {
            s.r.violation(
                Violation::new(
                    ViolationKind::ReadFromFuture,
                    format!(
                        "{} answered with zxid {az:#x}, beyond the last zxid any server committed ({m:#x})",
                        describe(o)
                    ),
                )
                .ops([o.id])
                .clients([o.client]),
            );
            continue;
        }
        s.check_after(o, az);
    }
    if let Some(st) = stopped_at {
        s.out.unchecked += own.range(st..).map(|(_, v)| v.len()).sum::<usize>();
        s.r.note(format!(
            "replay stopped at zxid {st:#x}: later writes and reads were not compared with the model"
        ));
    }
    if has_commits {
        for (z, claim) in &own {
            if commits.contains_key(z) {
                continue;
            }
            for o in claim {
                if ok_value(o).is_some_and(is_error) {
                    continue;
                }
                s.r.violation(
                    Violation::new(
                        ViolationKind::LostAckWrite,
                        format!(
                            "{} was acknowledged with zxid {z:#x}, but no server ever committed a txn at {z:#x}",
                            describe(o)
                        ),
                    )
                    .ops([o.id])
                    .clients([o.client])
                    .times([o.completed.unwrap_or(o.invoked)]),
                );
            }
        }
        s.r.figure("indeterminate_writes_committed", matched.len() as f64);
        s.r.figure(
            "indeterminate_writes_not_committed",
            (indeterminate.len() - matched.len()) as f64,
        );
    }
    s.out
}
