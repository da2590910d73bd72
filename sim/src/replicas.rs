//! Every replica checked, not only the first to apply (TigerBeetle's state
//! checker): each server's applied sequence is folded into a chain hash,
//! `chain' = H(chain, zxid, digest of the txn)`, and compared with the
//! canonical sequence — the first server to apply each zxid defines it.
//!
//! Memory is bounded: the canonical sequence is kept once, as zxid →
//! (txn digest, chain after it, tree digest after it), for the last
//! `CANON_WINDOW` zxids; per server only its position (last zxid, chain,
//! highest zxid ever applied, counters). A server that applies zxid `z`
//! is checked against the canonical entry at `z`: same txn, same chain
//! (its whole sequence so far), same tree. A server whose tree is replaced
//! by a snapshot (restart, SNAP sync) is checked against the canonical
//! tree at the snapshot's zxid and goes on from the canonical chain there;
//! when it next applies, every committed zxid between must have been
//! applied — if it skipped one it had applied before, a committed
//! transaction was rolled back. Truncating uncommitted proposals is not
//! seen here: only applied (committed) transactions count.
//!
//! Pure: the recorder feeds it and turns findings into history events.

use std::collections::BTreeMap;

use zkdst_history::ReplicaCheck;

use crate::proto::LoggedTxn;
use crate::tree::{Hash64, Txn};
use crate::zab::{ServerId, Zxid};

/// Canonical entries kept (about 40 bytes each). A server whose position
/// fell below the window is re-anchored, unverified, at its next apply.
pub const CANON_WINDOW: usize = 1 << 16;
/// Disagreements recorded per server; later ones are only counted.
pub const MAX_FINDINGS_PER_SERVER: u32 = 4;

/// What happened to a server's applied tree, in order.
#[derive(Debug, Clone)]
pub enum TreeChange {
    /// A committed txn applied; `tree` is the tree digest after it.
    Applied {
        zxid: Zxid,
        logged: crate::disk::LogTxn,
        result: crate::tree::TxnResult,
        tree: u64,
    },
    /// The tree replaced by a snapshot at `zxid` (a restart's recovery, a
    /// SNAP sync, a rebuild).
    Loaded { zxid: Zxid, tree: u64 },
}

/// A disagreement with the canonical sequence, or a final position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub server: ServerId,
    pub check: ReplicaCheck,
    pub zxid: Zxid,
    pub chain: u64,
    pub expected: Option<u64>,
    pub missing: Option<Zxid>,
    pub applied: Option<u64>,
    pub detail: String,
}

#[derive(Debug, Clone, Copy)]
struct Canon {
    txn: u64,
    chain: u64,
    tree: u64,
}

#[derive(Debug, Clone, Default)]
struct Replica {
    last: Zxid,
    chain: u64,
    high: Zxid,
    applied: u64,
    loads: u64,
    /// The chain is not known (re-anchored below the window).
    unverified: bool,
    /// The tree already disagreed (or must, after a gap): not compared
    /// again until the next snapshot load.
    tree_off: bool,
    findings: u32,
    suppressed: u64,
}

/// The canonical sequence and every server's position on it.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    canon: BTreeMap<Zxid, Canon>,
    /// Canonical entries at or below this were dropped from the window.
    floor: Zxid,
    /// The newest canonical entry: zxid and chain.
    last: (Zxid, u64),
    servers: BTreeMap<ServerId, Replica>,
}

fn fold(chain: u64, zxid: Zxid, txn: u64) -> u64 {
    Hash64::new().u64(chain).i64(zxid).u64(txn).finish()
}

impl Ledger {
    pub fn new() -> Self {
        Ledger::default()
    }

    /// `server` applied `zxid`: `txn` is the digest of the txn, `tree` the
    /// tree digest after it.
    pub fn applied(&mut self, server: ServerId, zxid: Zxid, txn: u64, tree: u64) -> Option<Finding> {
        let r = self.servers.entry(server).or_default().clone();
        let mine = fold(r.chain, zxid, txn);
        let mut found: Option<(ReplicaCheck, Option<u64>, Option<Zxid>, String)> = None;
        let next_chain;
        if let Some(c) = self.canon.get(&zxid).copied() {
            if r.unverified {
                if c.txn != txn {
                    found = Some((
                        ReplicaCheck::Diverged,
                        Some(c.chain),
                        None,
                        "applied a different txn".into(),
                    ));
                }
            } else if c.txn != txn {
                found = Some((
                    ReplicaCheck::Diverged,
                    Some(c.chain),
                    None,
                    "applied a different txn".into(),
                ));
            } else if c.chain != mine {
                found = Some(self.skipped(&r, zxid, c.chain));
            } else if c.tree != tree && !r.tree_off {
                found = Some((
                    ReplicaCheck::Diverged,
                    Some(c.chain),
                    None,
                    "same txns, different tree".into(),
                ));
            }
            next_chain = c.chain;
        } else if zxid <= self.last.0 {
            if zxid > self.floor {
                found = Some((
                    ReplicaCheck::Diverged,
                    None,
                    None,
                    "applied a zxid the canonical sequence does not have".into(),
                ));
            }
            next_chain = mine;
        } else {
            let chain = fold(self.last.1, zxid, txn);
            if !r.unverified && mine != chain {
                found = Some(self.skipped(&r, zxid, chain));
            }
            self.canon.insert(zxid, Canon { txn, chain, tree });
            self.last = (zxid, chain);
            while self.canon.len() > CANON_WINDOW {
                if let Some((z, _)) = self.canon.pop_first() {
                    self.floor = z;
                }
            }
            next_chain = chain;
        }
        let r = self.servers.entry(server).or_default();
        r.last = zxid;
        r.chain = next_chain;
        r.high = r.high.max(zxid);
        r.applied += 1;
        r.unverified = false;
        let (check, expected, missing, detail) = found?;
        r.tree_off = true;
        report(server, r, check, zxid, mine, expected, missing, detail)
    }

    /// Why a server's chain at `zxid` is not the canonical one: the first
    /// committed zxid it skipped since its last position (rolled back if it
    /// had applied that far before), or else an earlier divergence.
    fn skipped(&self, r: &Replica, zxid: Zxid, expected: u64) -> (ReplicaCheck, Option<u64>, Option<Zxid>, String) {
        let lost = self.canon.range(r.last.saturating_add(1)..zxid).next().map(|(z, _)| *z);
        match lost {
            Some(m) if r.high >= m => (
                ReplicaCheck::RolledBack,
                Some(expected),
                Some(m),
                format!("after {} snapshot load(s); had applied up to {:#x}", r.loads, r.high),
            ),
            Some(m) => (ReplicaCheck::Gap, Some(expected), Some(m), String::new()),
            None => (
                ReplicaCheck::Diverged,
                Some(expected),
                None,
                "its applied sequence before this zxid differs".into(),
            ),
        }
    }

    /// `server`'s tree was replaced by a snapshot at `zxid`.
    pub fn loaded(&mut self, server: ServerId, zxid: Zxid, tree: u64) -> Option<Finding> {
        let canon = self.canon.get(&zxid).copied();
        let floor = self.floor;
        let r = self.servers.entry(server).or_default();
        r.loads += 1;
        r.last = zxid;
        r.tree_off = false;
        let mut found = None;
        match canon {
            _ if zxid == 0 => {
                r.chain = 0;
                r.unverified = false;
            }
            Some(c) => {
                r.chain = c.chain;
                r.unverified = false;
                if c.tree != tree {
                    found = Some((Some(c.chain), "loaded a snapshot whose tree is not the canonical one"));
                }
            }
            None => {
                r.chain = 0;
                r.unverified = true;
                if zxid > floor {
                    found = Some((None, "loaded a snapshot at a zxid the canonical sequence does not have"));
                }
            }
        }
        let (expected, detail) = found?;
        let chain = r.chain;
        report(
            server,
            r,
            ReplicaCheck::Diverged,
            zxid,
            chain,
            expected,
            None,
            detail.into(),
        )
    }

    /// Every server's final position.
    pub fn finals(&self) -> Vec<Finding> {
        self.servers
            .iter()
            .map(|(&server, r)| {
                let expected = if r.last == 0 {
                    Some(0)
                } else if r.unverified {
                    None
                } else {
                    self.canon.get(&r.last).map(|c| c.chain)
                };
                let mut detail = format!("{} snapshot load(s)", r.loads);
                if r.suppressed > 0 {
                    detail.push_str(&format!(", {} further disagreement(s) not recorded", r.suppressed));
                }
                Finding {
                    server,
                    check: ReplicaCheck::Final,
                    zxid: r.last,
                    chain: r.chain,
                    expected,
                    missing: None,
                    applied: Some(r.applied),
                    detail,
                }
            })
            .collect()
    }
}

#[allow(clippy::too_many_arguments)]
fn report(
    server: ServerId,
    r: &mut Replica,
    check: ReplicaCheck,
    zxid: Zxid,
    chain: u64,
    expected: Option<u64>,
    missing: Option<Zxid>,
    detail: String,
) -> Option<Finding> {
    if r.findings >= MAX_FINDINGS_PER_SERVER {
        r.suppressed += 1;
        return None;
    }
    r.findings += 1;
    Some(Finding {
        server,
        check,
        zxid,
        chain,
        expected,
        missing,
        applied: None,
        detail,
    })
}

/// The digest of a logged txn: its header and every field of the txn.
pub fn txn_digest(logged: &LoggedTxn) -> u64 {
    let mut h = Hash64::new();
    h.i64(logged.session).i64(logged.xid).i64(logged.time_ms);
    hash_txn(&mut h, &logged.txn);
    h.finish()
}

fn hash_txn(h: &mut Hash64, txn: &Txn) {
    match txn {
        Txn::CreateSession { session, timeout_ms } => h.u64(1).i64(*session).i64(i64::from(*timeout_ms)),
        Txn::CloseSession { session } => h.u64(2).i64(*session),
        Txn::Create {
            path,
            data,
            ephemeral_owner,
            parent_cversion,
        } => h
            .u64(3)
            .bytes(path.as_bytes())
            .bytes(data)
            .i64(*ephemeral_owner)
            .i64(i64::from(*parent_cversion)),
        Txn::Delete { path } => h.u64(4).bytes(path.as_bytes()),
        Txn::SetData { path, data, version } => h.u64(5).bytes(path.as_bytes()).bytes(data).i64(i64::from(*version)),
        Txn::Check { path, version } => h.u64(6).bytes(path.as_bytes()).i64(i64::from(*version)),
        Txn::Multi(txns) => {
            h.u64(7).u64(txns.len() as u64);
            for t in txns {
                hash_txn(h, t);
            }
            h
        }
        Txn::Error(e) => h.u64(8).bytes(e.name().as_bytes()),
        Txn::MultiError { index, error, op_count } => h
            .u64(9)
            .u64(*index as u64)
            .bytes(error.name().as_bytes())
            .u64(*op_count as u64),
        Txn::DeleteContainer { path } => h.u64(10).bytes(path.as_bytes()),
    };
}

#[cfg(test)]
#[path = "replicas_tests.rs"]
mod tests;
