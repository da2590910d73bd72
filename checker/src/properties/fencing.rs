//! Fencing at the protected resource: once the resource accepted a write
//! with token t, accepting a later write (invoked after that one completed)
//! with a token older than t is a violation. Also: two different clients
//! handed the same fencing token by the same lock; and a token that does
//! not name the hold — the czxid of a lock node the acquiring session
//! created under the lock's directory before the acquire returned
//! (`token-not-lock-node`; judged when the history records creates).

use std::collections::BTreeMap;

use crate::history::{History, Op, Operation, Zxid};

use super::common::{creates, describe, stale_tokens, succeeded, token, with_operations, Created};
use super::result::{ms, CheckResult, Violation};
use super::Params;
use super::ViolationKind;

pub const NAME: &str = "fencing";

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(h: &History, ops: &[Operation], _p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let mut per_resource: BTreeMap<&str, Vec<(&Operation, i64)>> = BTreeMap::new();
    for o in ops {
        if let Op::FencedWrite { resource, token } = &o.op {
            if succeeded(o) && o.completed.is_some() {
                per_resource.entry(resource).or_default().push((o, *token));
            }
        }
    }
    let mut accepted = 0;
    for (resource, ws) in &per_resource {
        accepted += ws.len();
        let items: Vec<_> = ws
            .iter()
            .map(|(o, t)| (o.invoked, o.completed.unwrap_or(o.invoked), *t))
            .collect();
        for (a, b) in stale_tokens(&items) {
            let ((oa, ta), (ob, tb)) = (ws[a], ws[b]);
            r.violation(
                Violation::new(
                    ViolationKind::StaleTokenAccepted,
                    format!(
                        "resource {resource} accepted token {tb} from {} although it had already accepted the newer token {ta} from {} (completed at {})",
                        describe(ob),
                        describe(oa),
                        ms(oa.completed.unwrap_or(oa.invoked))
                    ),
                )
                .ops([oa.id, ob.id])
                .clients([oa.client, ob.client])
                .times([oa.completed.unwrap_or(oa.invoked), ob.invoked]),
            );
        }
    }
    let mut issued: BTreeMap<(&str, i64), &Operation> = BTreeMap::new();
    for o in ops {
        let Op::Acquire { lock, shared: false } = &o.op else {
            continue;
        };
        let Some(t) = token(o).filter(|_| succeeded(o)) else {
            continue;
        };
        match issued.get(&(lock.as_str(), t)) {
            Some(first) if first.client != o.client => r.violation(
                Violation::new(
                    ViolationKind::DuplicateToken,
                    format!(
                        "lock {lock} handed the same fencing token {t} to {} and to {}",
                        describe(first),
                        describe(o)
                    ),
                )
                .ops([first.id, o.id])
                .clients([first.client, o.client]),
            ),
            Some(_) => {}
            None => {
                issued.insert((lock, t), o);
            }
        }
    }
    r.figure("fenced_writes_accepted", accepted as f64);
    check_lock_nodes(h, ops, &mut r);
    r
}

/// Every granted acquire's token is the czxid of a lock node its session
/// created under the lock's directory before the acquire returned.
fn check_lock_nodes(h: &History, ops: &[Operation], r: &mut CheckResult) {
    let by_zxid: BTreeMap<Zxid, Created> = creates(h).map(|c| (c.zxid, c)).collect();
    // Hand-built and third-party histories may record no creates at all.
    if by_zxid.is_empty() {
        r.note("no creates recorded: acquire tokens not matched with lock nodes");
        return;
    }
    for o in ops {
        let Op::Acquire { lock, .. } = &o.op else {
            continue;
        };
        let Some(t) = token(o).filter(|_| succeeded(o)) else {
            continue;
        };
        if by_zxid.get(&t).is_some_and(|c| c.is_under(lock) && c.made_by(o)) {
            continue;
        }
        r.violation(
            Violation::new(
                ViolationKind::TokenNotLockNode,
                format!(
                    "lock {lock}: {} was granted token {t}, which is not the czxid of a lock node its session created under {lock}",
                    describe(o)
                ),
            )
            .ops([o.id])
            .clients([o.client]),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Value;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

    fn w(t: i64) -> Op {
        Op::FencedWrite {
            resource: "db".into(),
            token: t,
        }
    }

    #[test]
    fn increasing_tokens_and_concurrent_reorders_pass() {
        let mut b = Builder::new();
        b.ok(0, 5, 1, w(1), Value::Unit);
        b.ok(10, 20, 2, w(3), Value::Unit);
        b.ok(12, 18, 1, w(2), Value::Unit); // concurrent with token 3: fine
        b.fail(30, 31, 1, w(1)); // rejected: fine
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }

    #[test]
    fn stale_token_after_newer_fails() {
        let mut b = Builder::new();
        b.ok(10, 20, 2, w(3), Value::Unit);
        b.ok(25, 26, 1, w(2), Value::Unit);
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["stale-token-accepted"]);
        assert!(
            r.violations[0].explanation.contains("token 2") && r.violations[0].explanation.contains("newer token 3")
        );
    }

    #[test]
    fn duplicate_token_fails() {
        let mut b = Builder::new();
        b.ok(
            0,
            1,
            1,
            Op::Acquire {
                lock: "l".into(),
                shared: false,
            },
            Value::Token { token: 4 },
        );
        b.ok(
            5,
            6,
            2,
            Op::Acquire {
                lock: "l".into(),
                shared: false,
            },
            Value::Token { token: 4 },
        );
        assert_eq!(check(&b.build(), &Params::default()).kinds(), vec!["duplicate-token"]);
    }

    /// Client 1 (session 0xa) creates a node under `dir` with czxid 7 at
    /// 1 ms and is granted lock `lock` with `token` at 2 ms.
    fn granted(dir: &str, lock: &str, token: i64) -> Builder {
        let mut b = Builder::new();
        b.commit(
            1,
            7,
            crate::history::TxnRecord::Create {
                path: format!("{dir}/lock-0000000001"),
                data: Default::default(),
                ephemeral_owner: 0xa,
                session: 0xa,
            },
        );
        let id = b.invoke_s(
            0,
            1,
            Some(0xa),
            Op::Acquire {
                lock: lock.into(),
                shared: false,
            },
        );
        b.complete(
            id,
            2,
            crate::history::Outcome::Ok {
                value: Value::Token { token },
            },
        );
        b
    }

    #[test]
    fn a_token_naming_the_hold_passes() {
        assert_eq!(
            check(&granted("/locks/l", "/locks/l", 7).build(), &Params::default()).verdict,
            Verdict::Pass
        );
    }

    #[test]
    fn a_token_that_is_not_the_lock_node_fails() {
        // Not the czxid of the session's lock node.
        let r = check(&granted("/locks/l", "/locks/l", 8).build(), &Params::default());
        assert_eq!(r.kinds(), vec!["token-not-lock-node"]);
        // The node is not under the directory the acquire names.
        let r = check(&granted("/locks/l", "xyzzy", 7).build(), &Params::default());
        assert_eq!(r.kinds(), vec!["token-not-lock-node"]);
        // Another session's node.
        let mut b = granted("/locks/l", "/locks/l", 7);
        let id = b.invoke_s(
            3,
            2,
            Some(0xb),
            Op::Acquire {
                lock: "/locks/l".into(),
                shared: false,
            },
        );
        b.complete(
            id,
            4,
            crate::history::Outcome::Ok {
                value: Value::Token { token: 7 },
            },
        );
        let r = check(&b.build(), &Params::default());
        assert!(r.kinds().contains(&"token-not-lock-node"), "{:?}", r.kinds());
    }
}
