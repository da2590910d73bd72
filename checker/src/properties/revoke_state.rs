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
//!
//! And a request the guard knows of is heard (`revoke-unheard`): the guard
//! sets its requested flag and wakes `revocation_requested()` in one step,
//! so two reports of one hold that say requested but not heard, a
//! scheduling step apart, mean the application's wait (one future across
//! the hold, as the revocable workload waits) was never woken.

use std::collections::BTreeMap;

use zkdst_model::REVOKE;

use crate::history::{ClientId, History, Op, Operation, Time, TxnRecord, Zxid};

use super::client_states::STEP;
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

/// A `RevokeState` report: (lock, token, requested, heard).
fn report_of(o: &Operation) -> Option<(&str, i64, bool, bool)> {
    match &o.op {
        Op::RevokeState {
            lock,
            token,
            requested,
            heard,
        } => Some((lock, *token, *requested, *heard)),
        _ => None,
    }
}

/// Flags each `RevokeState` report no committed request explains, and
/// each hold whose guard knew of a request its waiter never heard.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    unheard(ops, r);
    if !has_commit_log(h) {
        return;
    }
    let requests = first_requests(h);
    for o in ops {
        let Some((lock, token, requested, heard)) = report_of(o) else {
            continue;
        };
        let asked = requests.get(&token).filter(|&&t| t <= o.invoked);
        let why = if (requested || heard) && asked.is_none() {
            let what = if heard {
                "heard a revocation request"
            } else {
                "said revocation was requested"
            };
            format!("{what}, but no request had been written to its node")
        } else if heard && !requested {
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

/// Where a hold's guard stands on a request it knows of.
#[derive(Clone, Copy)]
enum Unheard<'a> {
    /// No unheard request reported since the last heard one.
    No,
    /// The first report saying requested, not heard.
    Since(&'a Operation),
    /// Flagged already (once per hold).
    Flagged,
}

/// `revoke-unheard`: per hold (client and token), a report saying
/// requested but not heard at least [`STEP`] after another such report,
/// with no heard report between.
fn unheard(ops: &[Operation], r: &mut CheckResult) {
    let mut reports: Vec<&Operation> = ops.iter().filter(|o| report_of(o).is_some()).collect();
    reports.sort_by_key(|o| (o.invoked, o.id));
    let mut holds: BTreeMap<(ClientId, i64), Unheard> = BTreeMap::new();
    for o in reports {
        let Some((lock, token, requested, heard)) = report_of(o) else {
            continue;
        };
        let hold = holds.entry((o.client, token)).or_insert(Unheard::No);
        match (*hold, heard, requested) {
            (Unheard::Flagged, ..) | (_, false, false) => {}
            (_, true, _) => *hold = Unheard::No,
            (Unheard::No, false, true) => *hold = Unheard::Since(o),
            (Unheard::Since(f), false, true) if o.invoked >= f.invoked + STEP => {
                *hold = Unheard::Flagged;
                r.violation(Violation::of_pair(
                    ViolationKind::RevokeUnheard,
                    format!(
                        "lock {lock}: client {}'s guard (token {token}) said revocation was requested at {} and \
                         again at {}, but its revocation_requested() had not resolved: {}",
                        o.client,
                        ms(f.invoked),
                        ms(o.invoked),
                        describe(o)
                    ),
                    f,
                    o,
                    f.invoked,
                    o.invoked,
                ));
            }
            (Unheard::Since(_), false, true) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Data, Outcome, Value};
    use crate::properties::testkit::{kinds_found, Builder};

    const NODE: &str = "/r/g0a-write-0000000003";

    /// Client 1's node (session 0xa) created at zxid 7.
    fn node() -> Builder {
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
        b
    }

    /// A revocation request on the node commits at `t` ms.
    fn request(b: &mut Builder, t: u64) {
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

    /// The holder's report at `t` ms.
    fn report(b: &mut Builder, t: u64, requested: bool, heard: bool) {
        let op = Op::RevokeState {
            lock: "/r".into(),
            token: 7,
            requested,
            heard,
        };
        let id = b.invoke_s(t, 1, Some(0xa), op);
        b.complete(id, t, Outcome::Ok { value: Value::Unit });
    }

    /// A request at `asked` ms (if any), and the holder reports at 20 ms.
    fn history(asked: Option<u64>, requested: bool, heard: bool) -> History {
        let mut b = node();
        if let Some(t) = asked {
            request(&mut b, t);
        }
        report(&mut b, 20, requested, heard);
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

    /// A request at 10 ms, then the holder's reports `(ms, requested,
    /// heard)`.
    fn reports(rs: &[(u64, bool, bool)]) -> History {
        let mut b = node();
        request(&mut b, 10);
        for &(t, requested, heard) in rs {
            report(&mut b, t, requested, heard);
        }
        b.build()
    }

    #[test]
    fn a_request_the_guard_knows_of_is_heard() {
        // Said requested at a slice's end, heard the same instant.
        assert!(kinds(&reports(&[(5, false, false), (20, true, false), (20, true, true)])).is_empty());
        // Heard, then reported again (the hold goes on): one request, heard.
        assert!(kinds(&reports(&[(20, true, true), (30, true, false), (30, true, true)])).is_empty());
        assert!(kinds(&reports(&[(20, false, false), (30, false, false)])).is_empty());
    }

    #[test]
    fn a_request_known_but_never_heard_fails_once_per_hold() {
        let h = reports(&[(20, true, false), (30, true, false), (40, true, false)]);
        assert_eq!(kinds(&h), vec!["revoke-unheard"]);
        // Heard between the two: each unheard once, not twice.
        let h = reports(&[(20, true, false), (20, true, true), (30, true, false)]);
        assert!(kinds(&h).is_empty());
    }
}
