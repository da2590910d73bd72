//! Needless ambiguity: a recipe answers "ambiguous outcome" only when it
//! cannot tell what happened, and it can tell unless one of its own writes
//! may or may not have been applied — a reply lost to ConnectionLoss or a
//! timeout. The queue's enqueue and take, the counter's add, the config's
//! conditional publish and the at-least-once complete all promise that
//! much: any other error means nothing was done, and a write the server
//! answered (applied, or refused — SessionExpired, NoNode, BadVersion) is
//! known. A recipe that says Ambiguous after writes that were all decided
//! (a take whose multi the server refused as SessionExpired, an add whose
//! set was refused) hands its caller a doubt it did not have: an item
//! given up for lost, an increment counted twice or never. No other check
//! sees it, since Ambiguous is always an allowed answer.
//!
//! The queue promises more: its enqueue and its at-most-once take resolve
//! a lost reply by reading their own marker, so they answer Ambiguous only
//! when the session ended before they could read it, or when their
//! retries ran out. Where the history records the retry budget (meta
//! [`RETRY_MAX_ATTEMPTS`]), an ambiguous enqueue or take whose session
//! lived past the call and which made fewer lost-reply calls than that
//! budget gave up on a doubt it could have settled.
//!
//! Judged on recipe operations recorded as unknown with the recipes'
//! `RecipeError::Ambiguous` message, against the ZooKeeper calls their
//! client sent during the call. A call with no recorded write is not
//! judged: its client's calls may not be recorded.

use crate::history::{History, Op, Operation, Outcome};

use super::common::{by_client, describe};
use super::progress::is_recipe_op;
use super::result::{ms, CheckResult, Violation};
use super::sessions::SessionIndex;
use super::ViolationKind;

/// History meta: the attempts a recipe call's retry policy allows one
/// request (absent: the queue's resolve rule is not judged).
pub const RETRY_MAX_ATTEMPTS: &str = "retry_max_attempts";

/// How a recorded error says "ambiguous outcome": the start of the
/// recipes' `RecipeError::Ambiguous` message (a scenarios test pins the
/// two together).
pub const AMBIGUOUS_PREFIX: &str = "ambiguous outcome: ";

fn claims_ambiguous(o: &Operation) -> bool {
    matches!(&o.outcome, Some(Outcome::Info { error }) if error.starts_with(AMBIGUOUS_PREFIX))
}

fn is_write(op: &Op) -> bool {
    matches!(
        op,
        Op::Create { .. } | Op::Delete { .. } | Op::SetData { .. } | Op::Multi { .. }
    )
}

/// Adds a `needless-ambiguity` violation to `r` for each ambiguous recipe
/// call whose writes were all decided, and for each ambiguous enqueue or
/// take that gave up while its session lived and its retries lasted.
/// `ops`: every operation.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    // Runs on every seed; most have no ambiguous call, so index nothing then.
    let ambiguous: Vec<&Operation> = ops
        .iter()
        .filter(|o| is_recipe_op(&o.op) && claims_ambiguous(o))
        .collect();
    let mut judged = 0u64;
    if ambiguous.is_empty() {
        r.figure("ambiguous_calls_judged", 0.0);
        return;
    }
    let calls = by_client(ops.iter().filter(|o| o.op.is_zookeeper_call()));
    let budget: Option<usize> = h.meta.get(RETRY_MAX_ATTEMPTS).and_then(|v| v.trim().parse().ok());
    let sessions = budget.map(|_| SessionIndex::new(h, ops));
    for o in ambiguous {
        let Some(end) = o.completed else { continue };
        let made: Vec<&Operation> = calls
            .get(&o.client)
            .into_iter()
            .flatten()
            .copied()
            .filter(|w| w.invoked >= o.invoked && w.invoked <= end)
            .collect();
        let sent: Vec<&Operation> = made.iter().copied().filter(|w| is_write(&w.op)).collect();
        if sent.is_empty() {
            continue;
        }
        judged += 1;
        if sent.iter().any(|w| w.is_indeterminate()) {
            if let (Some(budget), Some(sessions), Op::Enqueue { .. } | Op::Dequeue { .. }) = (budget, &sessions, &o.op)
            {
                let lost = made.iter().filter(|c| c.is_indeterminate()).count();
                if !sessions.over_by(o.client, o.session, end) && lost < budget {
                    r.violation(
                        Violation::new(
                            ViolationKind::NeedlessAmbiguity,
                            format!(
                                "{} answered 'ambiguous outcome' at {}, though its session lived and only {lost} of its calls lost their reply (retries allow {budget} per request): it could still have read its marker",
                                describe(o),
                                ms(end),
                            ),
                        )
                        .ops([o.id])
                        .clients([o.client])
                        .times(o.completed),
                    );
                }
            }
            continue;
        }
        r.violation(
            Violation::new(
                ViolationKind::NeedlessAmbiguity,
                format!(
                    "{} answered 'ambiguous outcome' at {}, though every write it sent was decided: {}",
                    describe(o),
                    ms(end),
                    sent.iter().map(|w| describe(w)).collect::<Vec<_>>().join("; "),
                ),
            )
            .ops(std::iter::once(o.id).chain(sent.iter().map(|w| w.id)))
            .clients([o.client])
            .times(o.completed),
        );
    }
    r.figure("ambiguous_calls_judged", judged as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{CreateMode, Data, SessionState, Value};
    use crate::properties::testkit::Builder;

    fn take() -> Op {
        Op::Dequeue { queue: "/q".into() }
    }

    fn multi() -> Op {
        Op::Multi {
            ops: vec![
                Op::Delete {
                    path: "/q/items/i-1".into(),
                    version: -1,
                },
                Op::Create {
                    path: "/q/taken/i-1".into(),
                    data: Data::default(),
                    mode: CreateMode::Ephemeral,
                },
            ],
        }
    }

    fn ambiguous() -> Outcome {
        Outcome::Info {
            error: format!("{AMBIGUOUS_PREFIX}item i-1 may have been removed"),
        }
    }

    /// A take on client 0 whose one multi ended with `multi_outcome`, and
    /// which answered `outcome`.
    fn judged(multi_outcome: Outcome, outcome: Outcome) -> Vec<ViolationKind> {
        let mut b = Builder::new();
        let t = b.invoke_s(10, 0, Some(0x10), take());
        let m = b.invoke_s(12, 0, Some(0x10), multi());
        b.complete(m, 15, multi_outcome);
        b.complete(t, 20, outcome);
        let h = b.build();
        let ops = h.operations().unwrap();
        let mut r = CheckResult::new("t");
        check_into(&h, &ops, &mut r);
        r.violations.iter().map(|v| v.kind).collect()
    }

    fn refused(code: &str) -> Outcome {
        Outcome::Ok {
            value: Value::Error {
                code: code.into(),
                results: vec![],
            },
        }
    }

    #[test]
    fn ambiguity_after_decided_writes_fails() {
        for decided in [
            refused("SessionExpired"),
            Outcome::Fail {
                error: "SessionExpired".into(),
            },
            Outcome::Ok {
                value: Value::Multi { results: vec![] },
            },
        ] {
            assert_eq!(
                judged(decided.clone(), ambiguous()),
                vec![ViolationKind::NeedlessAmbiguity],
                "{decided:?}"
            );
        }
    }

    #[test]
    fn ambiguity_after_a_lost_reply_passes() {
        let lost = Outcome::Info {
            error: "ConnectionLoss".into(),
        };
        assert!(judged(lost, ambiguous()).is_empty());
    }

    /// A take on client 0 whose one multi lost its reply, ambiguous at 100;
    /// the history allows `budget` attempts; `then` adds to it.
    fn gave_up(budget: Option<&str>, then: impl FnOnce(&mut Builder)) -> Vec<ViolationKind> {
        let mut b = Builder::new();
        let t = b.invoke_s(10, 0, Some(0x10), take());
        let m = b.invoke_s(12, 0, Some(0x10), multi());
        b.complete(
            m,
            15,
            Outcome::Info {
                error: "ConnectionLoss".into(),
            },
        );
        then(&mut b);
        b.complete(t, 100, ambiguous());
        let mut h = b.build();
        if let Some(n) = budget {
            h.meta.insert(RETRY_MAX_ATTEMPTS.into(), n.into());
        }
        let mut r = CheckResult::new("t");
        check_into(&h, &h.operations().unwrap(), &mut r);
        r.violations.iter().map(|v| v.kind).collect()
    }

    #[test]
    fn a_queue_call_giving_up_on_a_live_session_with_retries_left_fails() {
        assert_eq!(gave_up(Some("20"), |_| {}), vec![ViolationKind::NeedlessAmbiguity]);
    }

    #[test]
    fn a_queue_call_whose_session_ended_or_whose_retries_ran_out_passes() {
        let expired = |b: &mut Builder| b.session(18, 0, 0x10, SessionState::Expired);
        assert!(gave_up(Some("20"), expired).is_empty());
        let retries = |b: &mut Builder| {
            for i in 0..19 {
                b.info(
                    16 + i,
                    16 + i,
                    0,
                    Op::Exists {
                        path: "/q/taken/i-1".into(),
                        watch: false,
                    },
                );
            }
        };
        assert!(gave_up(Some("20"), retries).is_empty());
        // No budget recorded: only the decided-writes rule applies.
        assert!(gave_up(None, |_| {}).is_empty());
    }

    #[test]
    fn other_errors_and_calls_without_writes_are_not_judged() {
        let other = Outcome::Info {
            error: "zookeeper: connection loss".into(),
        };
        assert!(judged(refused("SessionExpired"), other).is_empty());
        // Without a recorded write (its client's calls unrecorded, or it
        // wrote nothing), and a write of another client or after the call.
        let mut b = Builder::new();
        let t = b.invoke_s(10, 0, Some(0x10), take());
        let m = b.invoke_s(12, 1, Some(0x11), multi());
        b.complete(m, 15, refused("SessionExpired"));
        b.complete(t, 20, ambiguous());
        let m = b.invoke_s(21, 0, Some(0x10), multi());
        b.complete(m, 25, refused("SessionExpired"));
        let h = b.build();
        let mut r = CheckResult::new("t");
        check_into(&h, &h.operations().unwrap(), &mut r);
        assert!(r.violations.is_empty());
        assert_eq!(r.figures.get("ambiguous_calls_judged"), Some(&0.0));
    }
}
