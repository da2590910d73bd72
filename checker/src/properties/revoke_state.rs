//! A revocable holder hears only real requests. Another client asks a
//! holder to release by writing the revoke marker to the holder's node;
//! the holder's guard reports it (`revoke_requested()`, and the future
//! `revocation_requested()`). The promise (`revoke-misreported`), for each
//! `RevokeState` report:
//! - a guard that says requested, or heard a request, does so after a
//!   setData of the marker on its node (the node the token's czxid names)
//!   committed;
//! - a guard that heard a request says requested from then on.
//!
//! Judged only with the servers' commit log. A request not yet heard is
//! not judged: the holder learns of it through a watch, at no fixed time.

use std::collections::BTreeMap;

use zkdst_model::REVOKE;

use crate::history::{History, Op, Operation, Time, TxnRecord, Zxid};

use super::common::{describe, has_commit_log};
use super::result::{ms, CheckResult, Violation};
use super::ViolationKind;

/// Per node, by czxid: when the first revocation request on it committed.
fn first_requests(h: &History) -> BTreeMap<Zxid, Time> {
    let mut czxid = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (time, zxid, txn) in h.committed_parts() {
        match txn {
            TxnRecord::Create { path, .. } => {
                czxid.insert(path.as_str(), zxid);
            }
            TxnRecord::SetData { path, data, .. } if data.0 == REVOKE => {
                if let Some(&c) = czxid.get(path.as_str()) {
                    out.entry(c).or_insert(time);
                }
            }
            _ => {}
        }
    }
    out
}

/// Flags each `RevokeState` report no committed request explains.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    if !has_commit_log(h) {
        return;
    }
    let requests = first_requests(h);
    for o in ops {
        let Op::RevokeState {
            lock,
            token,
            requested,
            heard,
        } = &o.op
        else {
            continue;
        };
        let asked = requests.get(token).filter(|&&t| t <= o.invoked);
        let why = if (*requested || *heard) && asked.is_none() {
            let what = if *heard {
                "heard a revocation request"
            } else {
                "said revocation was requested"
            };
            format!("{what}, but no request had been written to its node")
        } else if *heard && !*requested {
            "heard a revocation request, but its guard said none was made".to_string()
        } else {
            continue;
        };
        r.violation(Violation::of_op(
            ViolationKind::RevokeMisreported,
            format!(
                "lock {lock}: client {}'s holder (token {token}) {why} at {}: {}",
                o.client,
                ms(o.invoked),
                describe(o)
            ),
            o,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Data, Outcome, Value};
    use crate::properties::testkit::{kinds_found, Builder};

    const NODE: &str = "/r/g0a-write-0000000003";

    /// Client 1's node (czxid 7); a request on it commits at `asked` ms
    /// (if any), and the holder reports at 20 ms.
    fn history(asked: Option<u64>, requested: bool, heard: bool) -> History {
        let mut b = Builder::new();
        b.commit(
            1,
            7,
            TxnRecord::Create {
                path: NODE.into(),
                data: Default::default(),
                ephemeral_owner: 0xa,
                session: 0xa,
            },
        );
        if let Some(t) = asked {
            b.commit(
                t,
                9,
                TxnRecord::SetData {
                    path: NODE.into(),
                    data: Data(REVOKE.to_vec()),
                    version: 1,
                },
            );
        }
        let op = Op::RevokeState {
            lock: "/r".into(),
            token: 7,
            requested,
            heard,
        };
        let id = b.invoke_s(20, 1, Some(0xa), op);
        b.complete(id, 20, Outcome::Ok { value: Value::Unit });
        b.build()
    }

    fn kinds(h: &History) -> Vec<String> {
        kinds_found(h, check_into)
    }

    #[test]
    fn a_holder_hearing_a_real_request_passes() {
        assert!(kinds(&history(Some(10), true, true)).is_empty());
        assert!(kinds(&history(Some(10), true, false)).is_empty());
        // Not heard yet: not judged.
        assert!(kinds(&history(Some(10), false, false)).is_empty());
        assert!(kinds(&history(None, false, false)).is_empty());
    }

    #[test]
    fn a_holder_hearing_what_nobody_asked_fails() {
        assert_eq!(kinds(&history(None, true, false)), vec!["revoke-misreported"]);
        assert_eq!(kinds(&history(None, true, true)), vec!["revoke-misreported"]);
        // The request came after the holder heard it.
        assert_eq!(kinds(&history(Some(30), true, true)), vec!["revoke-misreported"]);
        // Heard, then denied.
        assert_eq!(kinds(&history(Some(10), false, true)), vec!["revoke-misreported"]);
    }
}
