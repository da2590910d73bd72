//! A configuration's conditional set (`ConfigSet` with an expected version,
//! compare-and-set on the key's znode version) promises:
//! - acknowledged: the value was written once, over the expected version
//!   (the committed `SetData` made version expected + 1), and the version
//!   returned is that one;
//! - failed (a definite `Fail`): the value was never written. A conditional
//!   write whose reply was lost must be resolved (re-read) or reported as
//!   maybe applied, never as failed.
//!
//! Judged against the servers' commit log, where each set's value (unique per
//! set) names its writes. Without a commit log nothing is judged.

use std::collections::BTreeMap;

use crate::history::{History, Op, Operation, Outcome, TxnRecord, Value};

use super::common::{describe, has_commit_log, ok_value};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// Every committed write of `key`: its data and the version it made.
fn writes<'h>(h: &'h History, key: &str) -> BTreeMap<&'h [u8], Vec<i64>> {
    let mut out: BTreeMap<&[u8], Vec<i64>> = BTreeMap::new();
    for (_, _, t) in h.committed_parts() {
        match t {
            TxnRecord::Create { path, data, .. } if path == key => out.entry(data.as_bytes()).or_default().push(0),
            TxnRecord::SetData { path, data, version } if path == key => {
                out.entry(data.as_bytes()).or_default().push(*version as i64)
            }
            _ => {}
        }
    }
    out
}

pub fn check(h: &History, ops: &[Operation], r: &mut CheckResult) {
    let conditional = |o: &&Operation| {
        matches!(
            o.op,
            Op::ConfigSet {
                expected_version: Some(_),
                ..
            }
        )
    };
    if !ops.iter().any(|o| conditional(&o)) {
        return;
    }
    if !has_commit_log(h) {
        r.note("no commit log: conditional sets were not judged");
        return;
    }
    let mut by_key: BTreeMap<&str, BTreeMap<&[u8], Vec<i64>>> = BTreeMap::new();
    let (mut acked, mut failed) = (0, 0);
    for o in ops.iter().filter(conditional) {
        let Op::ConfigSet {
            key,
            value,
            expected_version: Some(expected),
        } = &o.op
        else {
            continue;
        };
        let written = by_key.entry(key).or_insert_with(|| writes(h, key));
        let made = written.get(value.as_bytes()).map(Vec::as_slice).unwrap_or(&[]);
        let wrong = match (&o.outcome, ok_value(o)) {
            (Some(Outcome::Ok { .. }), Some(Value::Versioned { version, .. })) => {
                acked += 1;
                if made != [expected + 1] {
                    Some(format!(
                        "it was acknowledged, but its writes made versions {made:?} (expected [{}])",
                        expected + 1
                    ))
                } else if *version != expected + 1 {
                    Some(format!(
                        "it returned version {version}, but wrote version {}",
                        expected + 1
                    ))
                } else {
                    None
                }
            }
            (Some(Outcome::Ok { .. }), other) => Some(format!("it was acknowledged with {other:?}, not a version")),
            (Some(Outcome::Fail { .. }), _) => {
                failed += 1;
                (!made.is_empty()).then(|| format!("it failed, yet it was written (versions {made:?})"))
            }
            _ => None,
        };
        if let Some(why) = wrong {
            r.violation(
                Violation::new(
                    ViolationKind::ConditionalSetBroken,
                    format!(
                        "key {key}: {} set {value:?} over version {expected}: {why}",
                        describe(o)
                    ),
                )
                .ops([o.id])
                .clients([o.client]),
            );
        }
    }
    r.figure("conditional_sets_acknowledged", acked as f64);
    r.figure("conditional_sets_failed", failed as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Data;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

    fn cas(value: &str, expected: i64) -> Op {
        Op::ConfigSet {
            key: "/k".into(),
            value: value.into(),
            expected_version: Some(expected),
        }
    }
    /// A committed write of `value`, making `version`.
    fn set_data(b: &mut Builder, t: u64, zxid: i64, value: &str, version: i32) {
        b.commit(
            t,
            zxid,
            TxnRecord::SetData {
                path: "/k".into(),
                data: Data::from(value),
                version,
            },
        );
    }
    fn run(b: &Builder) -> CheckResult {
        let h = b.clone_build();
        let ops = h.operations().unwrap();
        let mut r = CheckResult::new("config");
        check(&h, &ops, &mut r);
        r
    }
    fn versioned(v: &str, version: i64) -> Value {
        Value::Versioned {
            value: Some(v.into()),
            version,
        }
    }

    #[test]
    fn acknowledged_and_failed_sets_that_keep_their_word_pass() {
        let mut b = Builder::new();
        b.ok(0, 2, 1, cas("a", 3), versioned("a", 4));
        set_data(&mut b, 1, 10, "a", 4);
        b.fail(3, 4, 2, cas("b", 3));
        let r = run(&b);
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        assert_eq!(r.figures["conditional_sets_acknowledged"], 1.0);
        assert_eq!(r.figures["conditional_sets_failed"], 1.0);
    }

    #[test]
    fn a_failed_set_that_was_written_is_flagged() {
        let mut b = Builder::new();
        b.fail(0, 2, 1, cas("a", 3));
        set_data(&mut b, 1, 10, "a", 4);
        assert_eq!(run(&b).kinds(), vec!["conditional-set-broken"]);
    }

    #[test]
    fn an_acknowledged_set_written_over_another_version_or_twice_or_never_is_flagged() {
        for writes in [vec![6], vec![4, 5], vec![]] {
            let mut b = Builder::new();
            b.ok(0, 2, 1, cas("a", 3), versioned("a", 4));
            set_data(&mut b, 1, 9, "b", 4);
            for (i, v) in writes.iter().enumerate() {
                set_data(&mut b, 1, 10 + i as i64, "a", *v);
            }
            assert_eq!(run(&b).kinds(), vec!["conditional-set-broken"], "{writes:?}");
        }
        // Written right, but the version it returned is not the one it made.
        let mut b = Builder::new();
        b.ok(0, 2, 1, cas("a", 3), versioned("a", 5));
        set_data(&mut b, 1, 10, "a", 4);
        assert_eq!(run(&b).kinds(), vec!["conditional-set-broken"]);
    }

    #[test]
    fn a_set_with_an_unknown_outcome_is_not_judged() {
        let mut b = Builder::new();
        b.info(0, 2, 1, cas("a", 3));
        set_data(&mut b, 1, 10, "a", 7);
        assert_eq!(run(&b).verdict, Verdict::Pass);
    }
}
