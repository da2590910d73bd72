//! A watched configuration's wait for a change (`ConfigGet` with
//! `newer_than: Some(n)`, the version the client last saw) promises:
//! - returned: a version newer than `n` (`change-not-newer`);
//! - gave up (a definite `Fail`, the caller's timeout): the watcher held
//!   nothing newer while it waited. Its client's read just before the wait
//!   (a plain `ConfigGet`, the watcher's value) returning a version above
//!   `n` shows that it did: a wait begun while the watcher already holds a
//!   newer value must return at once (`missed-change`). The workload makes
//!   such a read after a wait times out, then waits again briefly.

use crate::history::{Op, Operation, Outcome, Value};

use super::common::{by_client, describe, ok_value};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// The version a plain read (no `newer_than`) returned.
fn read_version(o: &Operation) -> Option<i64> {
    match (&o.op, ok_value(o)) {
        (Op::ConfigGet { newer_than: None, .. }, Some(Value::Versioned { version, .. })) => Some(*version),
        _ => None,
    }
}

pub fn check(ops: &[Operation], r: &mut CheckResult) {
    let mut gets_by_client = by_client(ops.iter().filter(|o| matches!(o.op, Op::ConfigGet { .. })));
    for gets in gets_by_client.values_mut() {
        gets.sort_by_key(|o| (o.invoked, o.id));
        for (i, w) in gets.iter().enumerate() {
            let Op::ConfigGet {
                key,
                newer_than: Some(n),
            } = &w.op
            else {
                continue;
            };
            match (&w.outcome, ok_value(w)) {
                (_, Some(Value::Versioned { version, .. })) if version <= n => r.violation(
                    Violation::new(
                        ViolationKind::ChangeNotNewer,
                        format!(
                            "key {key}: {} waited for a change after version {n}, and returned version {version}",
                            describe(w)
                        ),
                    )
                    .ops([w.id])
                    .clients([w.client]),
                ),
                (Some(Outcome::Fail { .. }), _) => {
                    let before = gets[..i]
                        .iter()
                        .rev()
                        .find(|o| o.completed.is_some_and(|c| c <= w.invoked));
                    let Some((read, version)) = before.and_then(|o| read_version(o).map(|v| (o, v))) else {
                        continue;
                    };
                    if version > *n {
                        r.violation(
                            Violation::new(
                                ViolationKind::MissedChange,
                                format!(
                                    "key {key}: {} gave up waiting for a change after version {n}, though its watcher already held version {version} ({})",
                                    describe(w),
                                    describe(read)
                                ),
                            )
                            .ops([read.id, w.id])
                            .clients([w.client]),
                        );
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::properties::membership::check_config;
    use crate::properties::testkit::Builder;
    use crate::properties::{Params, Verdict};

    fn get() -> Op {
        Op::ConfigGet {
            key: "k".into(),
            newer_than: None,
        }
    }
    fn wait(after: i64) -> Op {
        Op::ConfigGet {
            key: "k".into(),
            newer_than: Some(after),
        }
    }
    fn ver(v: &str, version: i64) -> Value {
        Value::Versioned {
            value: Some(v.into()),
            version,
        }
    }

    #[test]
    fn a_wait_for_a_change_that_returns_no_newer_version_is_flagged() {
        let mut b = Builder::new();
        b.ok(0, 1, 2, get(), ver("x", 1));
        b.ok(2, 3, 2, wait(1), ver("y", 2));
        assert_eq!(
            check_config(&b.clone_build(), &Params::default()).verdict,
            Verdict::Pass
        );
        b.ok(4, 5, 2, wait(2), ver("y", 2));
        let r = check_config(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["change-not-newer"], "{r:#?}");
    }

    #[test]
    fn a_wait_that_gives_up_while_its_watcher_holds_a_newer_value_is_flagged() {
        let mut b = Builder::new();
        b.ok(0, 1, 2, get(), ver("x", 1));
        // Nothing newer came: giving up is right.
        b.fail(2, 1002, 2, wait(1));
        b.ok(1002, 1002, 2, get(), ver("x", 1));
        // Another client's read of a newer version is no evidence about
        // this client's watcher.
        b.ok(1003, 1003, 3, get(), ver("y", 2));
        b.fail(1003, 1013, 2, wait(1));
        let r = check_config(&b.clone_build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        // Its own watcher showed version 2 just before it waited again.
        b.ok(2000, 2000, 2, get(), ver("y", 2));
        b.fail(2000, 2010, 2, wait(1));
        let r = check_config(&b.clone_build(), &Params::default());
        assert_eq!(r.kinds(), vec!["missed-change"], "{r:#?}");
        // Returning it instead keeps the promise.
        let mut b = Builder::new();
        b.ok(0, 1, 2, get(), ver("y", 2));
        b.ok(1, 1, 2, wait(1), ver("y", 2));
        assert_eq!(check_config(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }
}
