//! How many items a queue holds, as its `len()` / `is_empty()` reports it
//! (`QueueLen`). The answer may be stale by the time it returns, but it is
//! the answer of a read: the number of item nodes (`p{priority}-{id}-item-
//! {sequence}`) in the last listing of `{queue}/items` the call made (the
//! listing itself is checked against the servers' state by
//! `zk-consistency`); a directory that does not exist holds none. An
//! answer that disagrees with its own listing is `queue-len-misreported`:
//! a producer pacing itself on it floods or starves the queue, a consumer
//! draining until it is empty stops early or never.
//!
//! Judged when the history records the recipes' calls (not meta
//! [`RECIPE_CALLS`] = `unrecorded`): an answer with no listing of its own
//! behind it was made up.

use crate::history::{History, Op, Operation, Value};

use super::gave_up::RECIPE_CALLS;

use super::common::{by_client, describe, listed, ok_value};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// An item's name as the queue writes it: `p`, then `-item-` and the
/// sequence as ZooKeeper appends it (`%010d`: ten digits; once the counter
/// has wrapped, a minus sign and at least nine).
fn is_item(name: &str) -> bool {
    let Some((head, seq)) = name.rsplit_once("-item-") else {
        return false;
    };
    let (digits, least) = match seq.strip_prefix('-') {
        Some(d) => (d, 9),
        None => (seq, 10),
    };
    head.starts_with('p') && (least..=10).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The items a listing answer shows (`None`: not a listing's answer).
fn items_listed(v: &Value) -> Option<usize> {
    listed(v).map(|names| names.iter().filter(|c| is_item(c)).count())
}

/// Adds a `queue-len-misreported` violation to `r` for each `QueueLen` in
/// `ops` on `queue` whose answer is not its own last listing's count.
pub fn check_into(h: &History, queue: &str, ops: &[Operation], r: &mut CheckResult) {
    if h.meta.get(RECIPE_CALLS).is_some_and(|v| v == "unrecorded") {
        return;
    }
    let items = format!("{}/items", queue.trim_end_matches('/'));
    let calls = by_client(
        ops.iter()
            .filter(|o| matches!(&o.op, Op::GetChildren { path, .. } if *path == items)),
    );
    let mut judged = 0u64;
    for q in ops {
        let Op::QueueLen { queue: name } = &q.op else { continue };
        let (true, Some(done), Some(answer)) = (name == queue, q.completed, ok_value(q)) else {
            continue;
        };
        let listed = calls
            .get(&q.client)
            .into_iter()
            .flatten()
            .filter(|x| x.invoked >= q.invoked && x.completed.is_some_and(|t| t <= done))
            .filter_map(|x| Some((x, items_listed(ok_value(x)?)?)))
            .max_by_key(|(x, _)| x.completed);
        let said = match answer {
            Value::Int { value } => value.to_string(),
            Value::Bool { value } => format!("empty: {value}"),
            _ => continue,
        };
        judged += 1;
        let Some((listing, count)) = listed else {
            r.violation(
                Violation::new(
                    ViolationKind::QueueLenMisreported,
                    format!(
                        "queue {queue}: {} answered {said} without an answered listing of {items}",
                        describe(q)
                    ),
                )
                .ops([q.id])
                .clients([q.client])
                .times(q.completed),
            );
            continue;
        };
        let agrees = match answer {
            Value::Int { value } => *value == count as i64,
            _ => matches!(answer, Value::Bool { value } if *value == (count == 0)),
        };
        if !agrees {
            r.violation(
                Violation::new(
                    ViolationKind::QueueLenMisreported,
                    format!(
                        "queue {queue}: {} answered {said}, but its own listing of {items} showed {count} item(s): {}",
                        describe(q),
                        describe(listing)
                    ),
                )
                .ops([q.id, listing.id])
                .clients([q.client])
                .times(q.completed),
            );
        }
    }
    r.figure("queue_len_answers_judged", judged as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Outcome;
    use crate::properties::testkit::Builder;

    const Q: &str = "/queues/q";

    fn item(seq: u32) -> String {
        format!("p2147483648-g0300-item-{seq:010}")
    }

    /// A `QueueLen` answering `answer`, whose listing showed `children`.
    fn judged(children: Vec<String>, answer: Value) -> Vec<ViolationKind> {
        let mut b = Builder::new();
        let q = b.invoke_s(10, 0, Some(0x10), Op::QueueLen { queue: Q.into() });
        let l = b.invoke_s(
            11,
            0,
            Some(0x10),
            Op::GetChildren {
                path: format!("{Q}/items"),
                watch: false,
            },
        );
        b.complete(
            l,
            12,
            Outcome::Ok {
                value: Value::ChildNames {
                    children: children.into(),
                },
            },
        );
        b.complete(q, 13, Outcome::Ok { value: answer });
        kinds(b.build())
    }

    fn kinds(h: History) -> Vec<ViolationKind> {
        let mut r = CheckResult::new("t");
        check_into(&h, Q, &h.operations().unwrap(), &mut r);
        r.violations.iter().map(|v| v.kind).collect()
    }

    #[test]
    fn an_answer_without_a_listing_fails_where_calls_are_recorded() {
        let mut b = Builder::new();
        b.ok(10, 13, 0, Op::QueueLen { queue: Q.into() }, Value::Int { value: 1 });
        let h = b.build();
        assert_eq!(kinds(h.clone()), vec![ViolationKind::QueueLenMisreported]);
        let mut unrecorded = h;
        unrecorded.meta.insert(RECIPE_CALLS.into(), "unrecorded".into());
        assert!(kinds(unrecorded).is_empty());
    }

    #[test]
    fn an_answer_other_than_its_listing_fails() {
        let two = || vec![item(1), item(2)];
        assert_eq!(
            judged(two(), Value::Int { value: 1 }),
            vec![ViolationKind::QueueLenMisreported]
        );
        assert_eq!(
            judged(two(), Value::Bool { value: true }),
            vec![ViolationKind::QueueLenMisreported]
        );
        assert_eq!(
            judged(vec![], Value::Bool { value: false }),
            vec![ViolationKind::QueueLenMisreported]
        );
    }

    #[test]
    fn its_listing_counted_without_strays_passes() {
        let listed = vec![item(1), "lock-0000000001".into(), item(2)];
        assert!(judged(listed.clone(), Value::Int { value: 2 }).is_empty());
        assert!(judged(listed, Value::Bool { value: false }).is_empty());
        assert!(judged(vec![], Value::Int { value: 0 }).is_empty());
        assert!(is_item(&item(7)) && is_item("p2147483650-g01-item--000000069"));
        assert!(is_item("p2147483648-g01-item--2147483120") && !is_item("p1-item-00000000012"));
        assert!(!is_item("p1-item-12") && !is_item("x-item-0000000001") && !is_item("p1-item---00000001"));
    }
}
