//! Replica agreement. The promise: every server's applied sequence is a
//! prefix of one canonical sequence of committed transactions (at each
//! zxid, every server that applied it applied the same txn and reached the
//! same tree), and committed transactions are never rolled back, across
//! restarts included — a server that restarts rebuilds from its snapshot
//! and log, and must go on along the same sequence.
//!
//! The simulator's recorder folds each server's applied sequence into a
//! chain hash and compares it, at every zxid the server applies or loads a
//! snapshot at, with the canonical chain (that of the first server to apply
//! each zxid). It records `Event::Replica` on a disagreement (`diverged`,
//! `gap`, `rolled-back`) and each server's final position (`final`). This
//! checker judges those records: every disagreement is a violation, and
//! the final positions must lie on the canonical sequence — a final chain
//! other than the canonical one at its zxid, two servers at one zxid with
//! different chains, or a final zxid that nobody committed (when the
//! history has commits) is a divergence.
//!
//! A rollback is seen when the server applies past the lost transaction; a
//! server that lost a committed txn and applied nothing after it looks
//! like a lagging one. Histories without replica records (recorded before
//! replicas were checked, or from elsewhere) pass vacuously, with a note.

use std::collections::{BTreeMap, BTreeSet};

use crate::history::{Event, History, ReplicaCheck, Time, TxnRecord, Zxid};

use super::result::{CheckResult, Violation};
use super::Params;
use super::ViolationKind;

pub const NAME: &str = "replicas";

/// Two servers applied different transactions (or reached different trees) at one zxid.
pub const DIVERGENCE: ViolationKind = ViolationKind::ReplicaDivergence;
/// A server's sequence skipped a committed transaction it never applied.
pub const GAP: ViolationKind = ViolationKind::ReplicaGap;
/// A server lost a committed transaction it had applied (restart, snapshot load).
pub const ROLLED_BACK: ViolationKind = ViolationKind::CommitRolledBack;

struct Record<'a> {
    time: Time,
    server: u32,
    check: ReplicaCheck,
    zxid: Zxid,
    chain: u64,
    expected: Option<u64>,
    missing: Option<Zxid>,
    detail: &'a str,
}

fn records(h: &History) -> Vec<Record<'_>> {
    h.events
        .iter()
        .filter_map(|e| match e {
            Event::Replica {
                time,
                server,
                check,
                zxid,
                chain,
                expected,
                missing,
                detail,
                ..
            } => Some(Record {
                time: *time,
                server: *server,
                check: *check,
                zxid: *zxid,
                chain: *chain,
                expected: *expected,
                missing: *missing,
                detail,
            }),
            _ => None,
        })
        .collect()
}

/// The committed txns, by zxid (the first commit recorded for each).
fn commits(h: &History) -> BTreeMap<Zxid, &TxnRecord> {
    let mut m = BTreeMap::new();
    for e in &h.events {
        if let Event::Commit { zxid, txn, .. } = e {
            m.entry(*zxid).or_insert(txn);
        }
    }
    m
}

fn committed(commits: &BTreeMap<Zxid, &TxnRecord>, zxid: Zxid) -> String {
    match commits.get(&zxid) {
        Some(t) => format!("{zxid:#x} ({})", describe_txn(t)),
        None => format!("{zxid:#x}"),
    }
}

fn describe_txn(t: &TxnRecord) -> String {
    let s = format!("{t:?}");
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

fn detail(r: &Record) -> String {
    if r.detail.is_empty() {
        String::new()
    } else {
        format!(": {}", r.detail)
    }
}

pub fn check(h: &History, _p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let recs = records(h);
    if recs.is_empty() {
        r.note("no replica records in this history: replica agreement not judged");
        return r;
    }
    let commits = commits(h);
    let mut servers = BTreeSet::new();
    // Final chains by zxid: servers that ended at one zxid must agree.
    let mut finals: BTreeMap<Zxid, Vec<&Record>> = BTreeMap::new();
    for rec in &recs {
        servers.insert(rec.server);
        let at = committed(&commits, rec.zxid);
        let v = match rec.check {
            ReplicaCheck::Diverged => Some(Violation::new(
                DIVERGENCE,
                format!(
                    "zk{} diverged from the canonical sequence at zxid {at}{}",
                    rec.server,
                    detail(rec)
                ),
            )),
            ReplicaCheck::Gap => Some(Violation::new(
                GAP,
                format!(
                    "zk{} applied zxid {:#x} without the committed txn {}{}",
                    rec.server,
                    rec.zxid,
                    rec.missing.map_or("?".into(), |m| committed(&commits, m)),
                    detail(rec)
                ),
            )),
            ReplicaCheck::RolledBack => Some(Violation::new(
                ROLLED_BACK,
                format!(
                    "zk{} had applied the committed txn {}, then went on to zxid {:#x} without it{}",
                    rec.server,
                    rec.missing.map_or("?".into(), |m| committed(&commits, m)),
                    rec.zxid,
                    detail(rec)
                ),
            )),
            ReplicaCheck::Final => {
                finals.entry(rec.zxid).or_default().push(rec);
                final_violation(rec, &commits)
            }
        };
        if let Some(v) = v {
            r.violation(v.times([rec.time]));
        }
    }
    for (zxid, at) in &finals {
        if let Some(other) = at.iter().find(|o| o.chain != at[0].chain) {
            r.violation(
                Violation::new(
                    DIVERGENCE,
                    format!(
                        "zk{} and zk{} both ended at zxid {zxid:#x} with different applied sequences (chains {:016x} and {:016x})",
                        at[0].server, other.server, at[0].chain, other.chain
                    ),
                )
                .times([at[0].time]),
            );
        }
    }
    r.figure("servers", servers.len() as f64);
    r.figure(
        "disagreements",
        recs.iter().filter(|x| x.check != ReplicaCheck::Final).count() as f64,
    );
    let unverified = finals
        .values()
        .flatten()
        .filter(|x| x.expected.is_none() && x.zxid != 0)
        .count();
    if unverified > 0 {
        r.note(format!(
            "{unverified} server(s) ended at a zxid the recorder no longer kept (bounded window): final position not verified"
        ));
    }
    r
}

/// A final position off the canonical sequence.
fn final_violation(rec: &Record, commits: &BTreeMap<Zxid, &TxnRecord>) -> Option<Violation> {
    if let Some(e) = rec.expected.filter(|e| *e != rec.chain) {
        return Some(Violation::new(
            DIVERGENCE,
            format!(
                "zk{} ended at zxid {:#x} with chain {:016x}, the canonical sequence has {e:016x} there{}",
                rec.server,
                rec.zxid,
                rec.chain,
                detail(rec)
            ),
        ));
    }
    if rec.zxid != 0 && !commits.is_empty() && !commits.contains_key(&rec.zxid) {
        return Some(Violation::new(
            DIVERGENCE,
            format!(
                "zk{} ended at zxid {:#x}, which no server committed first{}",
                rec.server,
                rec.zxid,
                detail(rec)
            ),
        ));
    }
    None
}

#[cfg(test)]
#[path = "replicas_tests.rs"]
mod tests;
