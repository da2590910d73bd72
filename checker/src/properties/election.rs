//! Leader election. The promise, by tokens: at most one leader per epoch
//! (token); tokens strictly increase over time (an election that began
//! after another ended has a larger token); the resource never accepts a
//! leader's act with a stale token after a newer leader acted. And by the
//! recipe's own reports of when leadership began and ended (see
//! [`super::leadership`]): one leader at a time outside pauses, a leader that
//! lost contact stops acting within its grace, and a rejected act has a
//! pause to explain it. An epoch is the leader's candidate node's czxid:
//! a campaign's token is the zxid of a create its session committed under
//! the election's directory before the campaign returned
//! (`token-not-candidate-node`; judged when the history records creates).
//! A campaign that gave up waiting must have queued ([`super::gave_up`]);
//! a `leader()` answer is its own listing's head ([`super::leader_query`]);
//! a leadership names its candidate node truly ([`super::hold_node`]).

use std::collections::BTreeMap;

use crate::history::{History, Op, Operation, Zxid};

use super::common::{creates, describe, stale_tokens_by, succeeded, token, with_operations, Created};
use super::leadership;
use super::result::{CheckResult, Violation};
use super::Params;
use super::ViolationKind;

pub const NAME: &str = "election";

type Accepted<'a> = Vec<(&'a Operation, i64)>;

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let mut campaigns: BTreeMap<&str, Accepted> = BTreeMap::new();
    let mut acts: BTreeMap<&str, Accepted> = BTreeMap::new();
    for o in ops {
        match &o.op {
            Op::Campaign { election } if succeeded(o) => {
                if let Some(t) = token(o) {
                    campaigns.entry(election).or_default().push((o, t));
                }
            }
            Op::LeaderAct { election, token } if succeeded(o) => acts.entry(election).or_default().push((o, *token)),
            _ => {}
        }
    }
    let items = |v: &Accepted| {
        v.iter()
            .map(|(o, t)| (o.invoked, o.completed.unwrap_or(o.invoked), *t))
            .collect::<Vec<_>>()
    };
    let mut leaders = 0;
    for (election, cs) in &campaigns {
        leaders += cs.len();
        let mut by_token: BTreeMap<i64, Vec<&Operation>> = BTreeMap::new();
        for (o, t) in cs {
            by_token.entry(*t).or_default().push(o);
        }
        for (t, os) in &by_token {
            let first = os[0];
            if let Some(other) = os.iter().find(|o| o.client != first.client) {
                r.violation(
                    Violation::new(
                        ViolationKind::TwoLeadersOneEpoch,
                        format!(
                            "election {election}: epoch {t} has two leaders: {} and {}",
                            describe(first),
                            describe(other)
                        ),
                    )
                    .ops([first.id, other.id])
                    .clients([first.client, other.client]),
                );
            }
        }
        for (a, b) in stale_tokens_by(&items(cs), true) {
            let ((oa, ta), (ob, tb)) = (cs[a], cs[b]);
            if ta == tb {
                // Different clients: already reported as two leaders in one
                // epoch. The same client: its leadership of that epoch goes
                // on (a latch keeps its node across a reconnect), which is
                // one leader per epoch, not a step back.
                continue;
            }
            r.violation(
                Violation::new(
                    ViolationKind::TokenNotIncreasing,
                    format!(
                        "election {election}: {} was elected with token {tb} after {} had been elected with token {ta}",
                        describe(ob),
                        describe(oa)
                    ),
                )
                .ops([oa.id, ob.id])
                .clients([oa.client, ob.client]),
            );
        }
    }
    for (election, xs) in &acts {
        for (a, b) in stale_tokens_by(&items(xs), false) {
            let ((oa, ta), (ob, tb)) = (xs[a], xs[b]);
            r.violation(
                Violation::new(ViolationKind::StaleLeaderActed, format!("election {election}: {} acted as leader with token {tb} after {} had acted with the newer token {ta}", describe(ob), describe(oa)))
                    .ops([oa.id, ob.id])
                    .clients([oa.client, ob.client])
                    .times([oa.completed.unwrap_or(oa.invoked), ob.invoked]),
            );
        }
    }
    r.figure("leaders_elected", leaders as f64);
    check_candidate_nodes(h, &campaigns, &mut r);
    leadership::check_into(h, p, ops, &mut r);
    super::gave_up::check_unqueued(h, ops, &mut r);
    super::leader_query::check_into(h, ops, &mut r);
    super::hold_node::check_into(h, ops, &mut r);
    super::hold_polls::check_into(h, ops, &mut r);
    super::latch_quit::check_into(h, ops, &mut r);
    r
}

/// Every elected campaign's token is the czxid of a candidate node its
/// session created under the election's directory before it returned.
fn check_candidate_nodes(h: &History, campaigns: &BTreeMap<&str, Accepted>, r: &mut CheckResult) {
    let by_zxid: BTreeMap<Zxid, Created> = creates(h).map(|c| (c.zxid, c)).collect();
    // Hand-built histories may record no creates at all.
    if by_zxid.is_empty() {
        r.note("no creates recorded: campaign tokens not matched with candidate nodes");
        return;
    }
    for (election, cs) in campaigns {
        for (o, t) in cs {
            if by_zxid.get(t).is_some_and(|c| c.is_under(election) && c.made_by(o)) {
                continue;
            }
            r.violation(
                Violation::new(
                    ViolationKind::TokenNotCandidateNode,
                    format!(
                        "election {election}: {} was elected with token {t}, which is not the czxid of a candidate node its session created under {election}",
                        describe(o)
                    ),
                )
                .ops([o.id])
                .clients([o.client]),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Value;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

    fn camp() -> Op {
        Op::Campaign { election: "e".into() }
    }
    fn act(t: i64) -> Op {
        Op::LeaderAct {
            election: "e".into(),
            token: t,
        }
    }
    fn tok(t: i64) -> Value {
        Value::Token { token: t }
    }

    #[test]
    fn successive_leaders_pass() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, camp(), tok(1));
        b.ok(2, 3, 1, act(1), Value::Unit);
        b.ok(4, 5, 1, Op::Resign { election: "e".into() }, Value::Unit);
        b.ok(0, 10, 2, camp(), tok(2));
        b.ok(11, 12, 2, act(2), Value::Unit);
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }

    #[test]
    fn a_leader_resuming_its_own_epoch_passes() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, camp(), tok(5));
        b.ok(2, 3, 1, act(5), Value::Unit);
        b.ok(4, 5, 1, camp(), tok(5));
        b.ok(6, 7, 1, act(5), Value::Unit);
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }

    #[test]
    fn two_leaders_and_stale_acts_fail() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, camp(), tok(1));
        b.ok(0, 2, 2, camp(), tok(1));
        b.ok(5, 6, 3, camp(), tok(0));
        b.ok(10, 11, 2, act(2), Value::Unit);
        b.ok(12, 13, 1, act(1), Value::Unit);
        let r = check(&b.build(), &Params::default());
        // The token rules, then the leaderships (none ended, so they overlap).
        assert_eq!(
            r.kinds(),
            vec![
                "two-leaders-one-epoch",
                "token-not-increasing",
                "stale-leader-acted",
                "leaders-overlap",
                "leaders-overlap"
            ],
            "{r:#?}"
        );
    }

    /// A campaign's token names its own candidate node: the czxid of a
    /// create its session committed under the election's directory before
    /// the campaign returned.
    #[test]
    fn a_token_is_the_czxid_of_the_campaigns_own_candidate_node() {
        use crate::history::{Outcome, TxnRecord};
        let run = |path: &str, owner: i64, created: u64, token: i64| {
            let mut b = Builder::new();
            b.commit(
                created,
                40,
                TxnRecord::Create {
                    path: path.into(),
                    data: Default::default(),
                    ephemeral_owner: owner,
                    session: owner,
                },
            );
            let c = b.invoke_s(0, 1, Some(7), camp());
            b.complete(
                c,
                10,
                Outcome::Ok {
                    value: Value::Token { token },
                },
            );
            check(&b.build(), &Params::default())
                .kinds()
                .into_iter()
                .filter(|k| *k == "token-not-candidate-node")
                .count()
        };
        assert_eq!(run("e/g1-n-0000000001", 7, 5, 40), 0);
        assert_eq!(run("e/g1-n-0000000001", 7, 5, 41), 1, "another zxid");
        assert_eq!(run("e/g1-n-0000000001", 8, 5, 40), 1, "another session's node");
        assert_eq!(run("x/g1-n-0000000001", 7, 5, 40), 1, "outside the election");
        assert_eq!(
            run("e/g1-n-0000000001", 7, 12, 40),
            1,
            "created after the campaign returned"
        );
    }
}
