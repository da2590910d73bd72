//! Queues: every acknowledged enqueue is delivered (exactly once or at least
//! once, as the recipe declares); nothing is delivered that was never
//! enqueued (an ambiguous enqueue may be delivered, at most once under
//! exactly-once); FIFO where promised; priority order for priority queues.
//! A take that reports its item's priority reports the one the item was
//! enqueued with (`wrong-priority`): the priority lives in the node's name,
//! so a recipe that encodes it one way and decodes it another hands the
//! application a different one.
//!
//! At-least-once consumers also record `Complete`: after one returned Ok
//! the item is never handed out again, and once the queue drained every
//! delivered item has a complete that returned Ok (or may have: unknown),
//! since only a complete removes an item. A complete that failed
//! definitely (the claim was lost) leaves the item for another consumer.
//!
//! A queue the scenario drains (`drained`) must end empty: every item node
//! still under `{queue}/items/` when the commit log ends is an item no
//! consumer will ever process (`left-in-queue`): a claim left behind by a
//! consumer that gave the item back, or a complete that gave up without
//! removing the item while its claim lived on. Judged from the commit log,
//! so a run's own drain is not taken on trust.
//!
//! A take that finds nothing had nothing to find (`missed-item`): an
//! at-most-once take (exactly-once delivery) recorded as [`NOTHING_TO_TAKE`]
//! must have read the queue (a `sync` or `getChildren` of `{queue}/items`
//! by its client within its span), and none of its listings may show an
//! item whose node then stayed (by the commit log) until after the take
//! returned: an item listed and left alone was there to take. A blocking
//! take cut by its time limit before its listing returned found nothing
//! rightly. At-least-once takes are judged by their claims
//! ([`super::missed_claim`]): an item another consumer claims is rightly
//! skipped.
//!
//! A `len()` or `is_empty()` answer is its own listing's count of items
//! ([`super::queue_len`]).
//!
//! Loss is decided only when the queue is known to be drained: the
//! scenario says so (`drained`), or a dequeue found it empty after the
//! item's enqueue completed. Each unknown (Info) dequeue may have consumed
//! one item, so loss is reported only beyond that many.

use std::collections::BTreeMap;

use crate::history::{Data, History, Op, Operation, Outcome, Time, TxnRecord, Value};

use super::client_states::SessionStates;
use super::common::{connected_throughout, describe, has_commit_log, ok_value, succeeded, with_operations};
use super::result::{ms, CheckResult, Violation};
use super::ViolationKind;
use super::{Delivery, Params};

pub const NAME: &str = "queue";

/// The failure a workload records for a take that found no item (a
/// definite failure: it took nothing).
pub const NOTHING_TO_TAKE: &str = "nothing to take";

/// Items are compared as strings; a recipe's workload should make them
/// unique (the same item enqueued twice is counted twice).
struct Q<'a> {
    enqueues: BTreeMap<&'a str, Vec<&'a Operation>>,
    deliveries: BTreeMap<&'a str, Vec<&'a Operation>>,
    completes: BTreeMap<&'a str, Vec<&'a Operation>>,
    empty_dequeues: Vec<&'a Operation>,
    unknown_dequeues: usize,
    priority: BTreeMap<&'a str, i64>,
}

fn dequeued(o: &Operation) -> Option<Option<&str>> {
    match ok_value(o)? {
        Value::Item { item, .. } => Some(item.as_deref()),
        Value::Str { value } => Some(Some(value.as_str())),
        _ => None,
    }
}

pub fn check(h: &History, p: &Params) -> CheckResult {
    with_operations(h, NAME, p, check_ops)
}

/// [`check`] over the history's operations, already paired.
pub fn check_ops(h: &History, ops: &[Operation], p: &Params) -> CheckResult {
    let mut r = CheckResult::new(NAME);
    let mut queues: BTreeMap<&str, Q> = BTreeMap::new();
    fn q<'a>(qs: &mut BTreeMap<&'a str, Q<'a>>, name: &'a str) {
        qs.entry(name).or_insert_with(|| Q {
            enqueues: BTreeMap::new(),
            deliveries: BTreeMap::new(),
            completes: BTreeMap::new(),
            empty_dequeues: vec![],
            unknown_dequeues: 0,
            priority: BTreeMap::new(),
        });
    }
    for o in ops {
        match &o.op {
            Op::Enqueue { queue, item, priority } => {
                q(&mut queues, queue.as_str());
                let e = queues.get_mut(queue.as_str());
                if let (true, Some(e)) = (o.may_have_happened(), e) {
                    e.enqueues.entry(item).or_default().push(o);
                    e.priority.insert(item, *priority);
                }
            }
            Op::Dequeue { queue } => {
                q(&mut queues, queue.as_str());
                let Some(e) = queues.get_mut(queue.as_str()) else {
                    continue;
                };
                match dequeued(o) {
                    Some(Some(item)) => e.deliveries.entry(item).or_default().push(o),
                    Some(None) => e.empty_dequeues.push(o),
                    None if o.is_indeterminate() => e.unknown_dequeues += 1,
                    None => {}
                }
            }
            Op::Complete { queue, item } => {
                q(&mut queues, queue.as_str());
                if let Some(e) = queues.get_mut(queue.as_str()) {
                    e.completes.entry(item).or_default().push(o);
                }
            }
            _ => {}
        }
    }
    let (mut acked, mut delivered) = (0usize, 0usize);
    for (name, q) in &queues {
        acked += q.enqueues.values().flatten().filter(|o| succeeded(o)).count();
        delivered += q.deliveries.values().map(Vec::len).sum::<usize>();
        check_deliveries(name, q, p, &mut r);
        check_loss(name, q, p, &mut r);
        check_order(name, q, p, &mut r);
        if p.delivery == Delivery::AtLeastOnce {
            check_completion(name, q, p, &mut r);
        }
        if p.drained {
            check_left(h, name, q, &mut r);
        }
        super::queue_len::check_into(h, name, ops, &mut r);
        match p.delivery {
            Delivery::ExactlyOnce => check_missed(h, name, ops, &mut r),
            Delivery::AtLeastOnce => super::missed_claim::check_claims(h, name, ops, &mut r),
        }
    }
    // A claim follows its connection as a lock guard does.
    super::hold_state::check_into(ops, &SessionStates::of(h), &mut r);
    r.figure("acknowledged_enqueues", acked as f64);
    r.figure("deliveries", delivered as f64);
    r
}

fn check_deliveries(name: &str, q: &Q, p: &Params, r: &mut CheckResult) {
    for (item, ds) in &q.deliveries {
        let es = q.enqueues.get(item).map(Vec::as_slice).unwrap_or(&[]);
        let first = ds.iter().min_by_key(|d| d.completed).copied();
        if es.is_empty() {
            r.violation(
                Violation::new(
                    ViolationKind::PhantomItem,
                    format!(
                        "queue {name} delivered {item:?}, which no enqueue ever carried: {}",
                        ds.iter().map(|d| describe(d)).collect::<Vec<_>>().join("; ")
                    ),
                )
                .ops(ds.iter().map(|d| d.id))
                .clients(ds.iter().map(|d| d.client)),
            );
            continue;
        }
        if p.delivery == Delivery::ExactlyOnce && ds.len() > es.len() {
            r.violation(
                Violation::new(
                    ViolationKind::DuplicateDelivery,
                    format!(
                        "queue {name} promised exactly-once but delivered {item:?} {} times for {} enqueue(s): {}",
                        ds.len(),
                        es.len(),
                        ds.iter().map(|d| describe(d)).collect::<Vec<_>>().join("; ")
                    ),
                )
                .ops(es.iter().chain(ds.iter()).map(|o| o.id))
                .clients(ds.iter().map(|d| d.client)),
            );
        }
        check_reported_priority(name, item, es, ds, r);
        if let (Some(d), Some(e)) = (first, es.iter().min_by_key(|e| e.invoked)) {
            if d.completed.is_some_and(|t| t < e.invoked) {
                r.violation(
                    Violation::new(
                        ViolationKind::DeliveredBeforeEnqueued,
                        format!(
                            "queue {name}: {} returned {item:?} before {} was even invoked",
                            describe(d),
                            describe(e)
                        ),
                    )
                    .ops([d.id, e.id])
                    .clients([d.client, e.client]),
                );
            }
        }
    }
}

/// Every take of `item` that reports a priority reports one that an
/// enqueue of it carried.
fn check_reported_priority(name: &str, item: &str, es: &[&Operation], ds: &[&Operation], r: &mut CheckResult) {
    let enqueued: Vec<i64> = es
        .iter()
        .filter_map(|e| match e.op {
            Op::Enqueue { priority, .. } => Some(priority),
            _ => None,
        })
        .collect();
    for d in ds {
        let Some(Value::Item {
            priority: Some(reported),
            ..
        }) = ok_value(d)
        else {
            continue;
        };
        if !enqueued.contains(reported) {
            r.violation(
                Violation::new(
                    ViolationKind::WrongPriority,
                    format!(
                        "queue {name}: {} returned {item:?} with priority {reported}, but it was enqueued with \
                         priority {enqueued:?}",
                        describe(d)
                    ),
                )
                .ops(es.iter().chain([d]).map(|o| o.id))
                .clients([d.client]),
            );
        }
    }
}

/// At-least-once completion: a completed item is not handed out again;
/// once drained, every delivered item was completed (or may have been).
/// Judged only for a queue whose consumers record completes.
fn check_completion(name: &str, q: &Q, p: &Params, r: &mut CheckResult) {
    if q.completes.is_empty() {
        return;
    }
    for (item, ds) in &q.deliveries {
        let cs = q.completes.get(item).map(Vec::as_slice).unwrap_or(&[]);
        if let Some(c) = cs.iter().filter(|c| succeeded(c)).min_by_key(|c| c.completed) {
            let done = c.completed.unwrap_or(c.invoked);
            for d in ds.iter().filter(|d| d.invoked > done) {
                r.violation(
                    Violation::new(
                        ViolationKind::RedeliveredAfterComplete,
                        format!(
                            "queue {name}: {} returned {item:?} after {} had completed it",
                            describe(d),
                            describe(c)
                        ),
                    )
                    .ops([c.id, d.id])
                    .clients([c.client, d.client]),
                );
            }
        }
        let acked = q.enqueues.get(item).is_some_and(|es| es.iter().any(|e| succeeded(e)));
        if p.drained && acked && !cs.iter().any(|c| c.may_have_happened()) {
            r.violation(
                Violation::new(
                    ViolationKind::NeverCompleted,
                    format!(
                        "queue {name}: {item:?} was delivered ({}) but no complete of it returned Ok or an unknown outcome{}",
                        ds.iter().map(|d| describe(d)).collect::<Vec<_>>().join("; "),
                        if cs.is_empty() {
                            String::new()
                        } else {
                            format!(
                                " ({})",
                                cs.iter().map(|c| describe(c)).collect::<Vec<_>>().join("; ")
                            )
                        }
                    ),
                )
                .ops(ds.iter().chain(cs.iter()).map(|o| o.id))
                .clients(ds.iter().map(|d| d.client)),
            );
        }
    }
}

/// Empty takes that had something to find (see the module doc). A take's
/// own reads are the client's `sync` / `getChildren` of the items directory
/// inside its span; an item's stay is from its create's commit to its
/// delete's (a path may be reused once its directory was deleted and made
/// again: each stay counts apart).
fn check_missed(h: &History, name: &str, ops: &[Operation], r: &mut CheckResult) {
    // Judged by the take's own reads: only where they are recorded.
    if !has_commit_log(h) || super::gave_up::calls_unrecorded(h) {
        return;
    }
    let items = format!("{}/items", name.trim_end_matches('/'));
    let mut open: BTreeMap<&str, Time> = BTreeMap::new();
    let mut stays: BTreeMap<&str, Vec<(Time, Time)>> = BTreeMap::new();
    for (t, _, txn) in h.committed_parts() {
        match txn {
            TxnRecord::Create { path, .. } if path.strip_prefix(&items).is_some_and(|p| p.starts_with('/')) => {
                open.insert(path, t);
            }
            TxnRecord::Delete { path } => {
                if let Some(s) = open.remove(path.as_str()) {
                    stays.entry(path).or_default().push((s, t));
                }
            }
            _ => {}
        }
    }
    for (p, s) in open {
        stays.entry(p).or_default().push((s, Time::MAX));
    }
    // Each client's reads of the items directory.
    let mut reads: BTreeMap<_, Vec<&Operation>> = BTreeMap::new();
    for x in ops {
        if matches!(&x.op, Op::Sync { path } | Op::GetChildren { path, .. } if *path == items) {
            reads.entry(x.client).or_default().push(x);
        }
    }
    let mut missed = 0;
    for o in ops.iter().filter(|o| {
        matches!(&o.op, Op::Dequeue { queue } if queue == name)
            && matches!(&o.outcome, Some(Outcome::Fail { error }) if error == NOTHING_TO_TAKE)
    }) {
        let Some(done) = o.completed else { continue };
        let mine: Vec<&Operation> = reads
            .get(&o.client)
            .into_iter()
            .flatten()
            .filter(|x| x.invoked >= o.invoked && x.invoked <= done)
            .copied()
            .collect();
        // Without a read, judged only if it had a connected session
        // throughout (a read cannot be sent while connecting: the time
        // limit may rightly cut the wait for a connection).
        let why = if mine.is_empty() {
            connected_throughout(h, o).then(|| format!("without reading {items}, its session connected throughout"))
        } else {
            // A listing of ours, returned to the take before it returned,
            // showed an item that stayed until it did.
            mine.iter().find_map(|l| {
                let (Some(at), Some(Value::Children { children, .. })) = (l.completed, ok_value(l)) else {
                    return None;
                };
                if at > done {
                    return None;
                }
                children.iter().find_map(|c| {
                    let path = format!("{items}/{c}");
                    let (s, e) = stays.get(path.as_str())?.iter().find(|(s, e)| *s <= at && *e > done)?;
                    Some(format!(
                        "though its listing (op {}) showed {path}, which sat in the queue from {} (committed) to {} — past the take's return",
                        l.id,
                        ms(*s),
                        if *e == Time::MAX { "the end of the run".to_string() } else { ms(*e) }
                    ))
                })
            })
        };
        let Some(why) = why else { continue };
        missed += 1;
        r.violation(
            Violation::new(
                ViolationKind::MissedItem,
                format!("queue {name}: {} found nothing to take {why}", describe(o)),
            )
            .ops([o.id])
            .clients([o.client])
            .times([o.invoked, done]),
        );
    }
    r.figure("missed_items", missed as f64);
}

/// Items still in the queue when the commit log ends (by their node's
/// data, the item), though the scenario drained it.
fn check_left(h: &History, name: &str, q: &Q, r: &mut CheckResult) {
    if !has_commit_log(h) {
        return;
    }
    let dir = format!("{}/items/", name.trim_end_matches('/'));
    let mut left: BTreeMap<&str, &Data> = BTreeMap::new();
    for (_, _, txn) in h.committed_parts() {
        match txn {
            TxnRecord::Create { path, data, .. } if path.starts_with(&dir) => {
                left.insert(path, data);
            }
            TxnRecord::Delete { path } => {
                left.remove(path.as_str());
            }
            _ => {}
        }
    }
    r.figure("left_in_queue", left.len() as f64);
    if left.is_empty() {
        return;
    }
    let items: Vec<String> = left.values().map(|d| d.to_string()).collect();
    // The deliveries and completes of the items left: where to look.
    let related = left
        .values()
        .filter_map(|d| std::str::from_utf8(d.as_bytes()).ok())
        .flat_map(|i| {
            let ds = q.deliveries.get(i).into_iter().flatten();
            ds.chain(q.completes.get(i).into_iter().flatten()).copied()
        });
    let related: Vec<&Operation> = related.collect();
    r.violation(
        Violation::new(
            ViolationKind::LeftInQueue,
            format!(
                "queue {name} was drained, yet {} item(s) were still in it when the run ended: {} ({})",
                left.len(),
                items.join(", "),
                left.keys().copied().collect::<Vec<_>>().join(", ")
            ),
        )
        .ops(related.iter().map(|o| o.id))
        .clients(related.iter().map(|o| o.client)),
    );
}

fn check_loss(name: &str, q: &Q, p: &Params, r: &mut CheckResult) {
    let mut missing = Vec::new();
    let mut undecided = 0;
    for (item, es) in &q.enqueues {
        let acked: Vec<&&Operation> = es.iter().filter(|e| succeeded(e)).collect();
        let got = q.deliveries.get(item).map_or(0, Vec::len);
        for e in acked.iter().skip(got) {
            let done = e.completed.unwrap_or(e.invoked);
            if p.drained || q.empty_dequeues.iter().any(|d| d.invoked > done) {
                missing.push((*item, **e));
            } else {
                undecided += 1;
            }
        }
    }
    if undecided > 0 {
        r.note(format!("queue {name}: {undecided} acknowledged item(s) undelivered, but the queue was never seen empty afterwards: not counted as lost"));
    }
    if missing.len() > q.unknown_dequeues {
        let list = missing
            .iter()
            .map(|(i, e)| format!("{i:?} ({})", describe(e)))
            .collect::<Vec<_>>()
            .join("; ");
        let lost = missing.len() - q.unknown_dequeues;
        r.violation(
            Violation::new(
                ViolationKind::LostItem,
                format!("queue {name}: {} acknowledged item(s) were never delivered ({} unknown dequeue(s) may account for some), so at least {lost} lost: {list}", missing.len(), q.unknown_dequeues),
            )
            .ops(missing.iter().map(|(_, e)| e.id))
            .clients(missing.iter().map(|(_, e)| e.client))
            .times(missing.iter().filter_map(|(_, e)| e.completed)),
        );
    }
}

/// FIFO: an item acknowledged before another was enqueued must not be
/// dequeued after it (by non-overlapping dequeues). Priority: a dequeue must
/// not return an item while a definitely-present item of higher priority
/// (lower value) waits.
fn check_order(name: &str, q: &Q, p: &Params, r: &mut CheckResult) {
    struct It<'a> {
        item: &'a str,
        enq: &'a Operation,
        deq: &'a Operation,
        prio: i64,
    }
    let items: Vec<It> = q
        .deliveries
        .iter()
        .filter_map(|(item, ds)| {
            let enq = q.enqueues.get(item)?.iter().find(|e| succeeded(e))?;
            let deq = ds.iter().min_by_key(|d| d.invoked)?;
            Some(It {
                item,
                enq,
                deq,
                prio: q.priority.get(item).copied().unwrap_or(0),
            })
        })
        .collect();
    let before = |a: &Operation, b: &Operation| a.completed.is_some_and(|t| t < b.invoked);
    for a in &items {
        for b in &items {
            if !before(a.enq, b.enq) || !before(b.deq, a.deq) {
                continue;
            }
            // b was enqueued after a was acknowledged, yet dequeued first.
            if p.fifo && (!p.priority || a.prio == b.prio) {
                r.violation(
                    Violation::new(
                        ViolationKind::FifoOrder,
                        format!("queue {name}: {:?} was enqueued and acknowledged at {} before {:?} was enqueued, but {} took {:?} before {} took {:?}", a.item, ms(a.enq.completed.unwrap_or(0)), b.item, describe(b.deq), b.item, describe(a.deq), a.item),
                    )
                    .ops([a.enq.id, b.enq.id, b.deq.id, a.deq.id])
                    .clients([a.deq.client, b.deq.client]),
                );
            }
        }
        if p.priority {
            for b in &items {
                // b (higher priority) was present while a's dequeue ran and
                // was taken only after it.
                if b.prio < a.prio && before(b.enq, a.deq) && before(a.deq, b.deq) {
                    r.violation(
                        Violation::new(ViolationKind::PriorityOrder, format!("queue {name}: {} returned {:?} (priority {}) while {:?} (priority {}) was waiting since {}", describe(a.deq), a.item, a.prio, b.item, b.prio, ms(b.enq.completed.unwrap_or(0))))
                            .ops([a.deq.id, b.enq.id, b.deq.id])
                            .clients([a.deq.client]),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::SessionState;
    use crate::properties::testkit::Builder;
    use crate::properties::Verdict;

    fn enq(item: &str) -> Op {
        Op::Enqueue {
            queue: "q".into(),
            item: item.into(),
            priority: 0,
        }
    }
    fn enq_p(item: &str, priority: i64) -> Op {
        Op::Enqueue {
            queue: "q".into(),
            item: item.into(),
            priority,
        }
    }
    fn deq() -> Op {
        Op::Dequeue { queue: "q".into() }
    }
    fn item(i: Option<&str>) -> Value {
        Value::Item {
            item: i.map(String::from),
            priority: None,
        }
    }

    fn complete(i: &str) -> Op {
        Op::Complete {
            queue: "q".into(),
            item: i.into(),
        }
    }

    fn at_least_once() -> Params {
        Params {
            delivery: Delivery::AtLeastOnce,
            fifo: false,
            drained: true,
            ..Params::default()
        }
    }

    #[test]
    fn a_completed_item_is_not_handed_out_again() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq("a"), Value::Unit);
        b.ok(2, 3, 2, deq(), item(Some("a")));
        // A second claim before the complete is allowed (at least once).
        b.ok(3, 4, 3, deq(), item(Some("a")));
        b.ok(4, 5, 2, complete("a"), Value::Unit);
        assert_eq!(check(&b.clone_build(), &at_least_once()).verdict, Verdict::Pass);
        b.ok(6, 7, 3, deq(), item(Some("a")));
        let r = check(&b.build(), &at_least_once());
        assert_eq!(r.kinds(), vec!["redelivered-after-complete"], "{r:#?}");
    }

    #[test]
    fn a_drained_queue_accounts_for_every_delivered_item() {
        // Delivered, then a complete that says "not removed, the claim was
        // lost" and no one else completed it: yet the queue drained.
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq("a"), Value::Unit);
        b.ok(2, 3, 2, deq(), item(Some("a")));
        b.fail(4, 5, 2, complete("a"));
        let r = check(&b.clone_build(), &at_least_once());
        assert_eq!(r.kinds(), vec!["never-completed"], "{r:#?}");
        // Not judged unless the queue is known drained.
        let not_drained = Params {
            drained: false,
            ..at_least_once()
        };
        assert_eq!(check(&b.clone_build(), &not_drained).verdict, Verdict::Pass);
        // Redelivered and completed by another consumer: accounted for; so
        // is a complete whose outcome is unknown.
        b.ok(6, 7, 3, deq(), item(Some("a")));
        b.info(8, 9, 3, complete("a"));
        assert_eq!(check(&b.build(), &at_least_once()).verdict, Verdict::Pass);
        // A history without completes (older workloads) is not judged.
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq("a"), Value::Unit);
        b.ok(2, 3, 2, deq(), item(Some("a")));
        assert_eq!(check(&b.build(), &at_least_once()).verdict, Verdict::Pass);
    }

    #[test]
    fn a_drained_queue_must_end_empty_by_the_commit_log() {
        let item_node = |n: u32, item: &str| TxnRecord::Create {
            path: format!("q/items/qn-{n:010}"),
            data: item.into(),
            ephemeral_owner: 0,
            session: 7,
        };
        let claim = |n: u32| TxnRecord::Create {
            path: format!("q/claims/qn-{n:010}"),
            data: Default::default(),
            ephemeral_owner: 8,
            session: 8,
        };
        let mut b = Builder::new();
        b.commit(1, 1, item_node(1, "a"));
        b.ok(0, 2, 1, enq("a"), Value::Unit);
        b.commit(3, 2, item_node(2, "b"));
        b.ok(2, 4, 1, enq("b"), Value::Unit);
        b.commit(5, 3, claim(1));
        b.ok(4, 6, 2, deq(), item(Some("a")));
        b.commit(
            7,
            4,
            TxnRecord::Multi {
                txns: vec![
                    TxnRecord::Delete {
                        path: "q/claims/qn-0000000001".into(),
                    },
                    TxnRecord::Delete {
                        path: "q/items/qn-0000000001".into(),
                    },
                ],
            },
        );
        b.ok(6, 8, 2, complete("a"), Value::Unit);
        b.commit(9, 5, claim(2));
        b.ok(8, 10, 3, deq(), item(Some("b")));
        // b's consumer gave it back, but its claim stayed while its session
        // lived; the session's end freed it, and nobody took it again.
        b.commit(
            11,
            6,
            TxnRecord::CloseSession {
                session: 8,
                expired: false,
                deleted: vec!["q/claims/qn-0000000002".into()],
            },
        );
        let r = check(&b.clone_build(), &at_least_once());
        assert_eq!(r.kinds(), vec!["never-completed", "left-in-queue"], "{r:#?}");
        assert!(r.violations[1].explanation.contains("\"b\""), "{r:#?}");
        // Not judged unless the scenario drains the queue.
        let not_drained = Params {
            drained: false,
            ..at_least_once()
        };
        assert_eq!(check(&b.clone_build(), &not_drained).verdict, Verdict::Pass);
        // Taken again and completed: the queue ends empty.
        b.commit(13, 7, claim(2));
        b.ok(12, 14, 2, deq(), item(Some("b")));
        b.commit(
            15,
            8,
            TxnRecord::Multi {
                txns: vec![
                    TxnRecord::Delete {
                        path: "q/claims/qn-0000000002".into(),
                    },
                    TxnRecord::Delete {
                        path: "q/items/qn-0000000002".into(),
                    },
                ],
            },
        );
        b.ok(14, 16, 2, complete("b"), Value::Unit);
        let r = check(&b.build(), &at_least_once());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        // Only the commit log sees an enqueue whose reply was lost, applied,
        // and never delivered: no other check can call it lost.
        let mut b = Builder::new();
        b.commit(1, 1, item_node(1, "a"));
        b.info(0, 2, 1, enq("a"));
        b.ok(3, 4, 2, deq(), item(None));
        let drained = Params {
            drained: true,
            ..Params::default()
        };
        let r = check(&b.build(), &drained);
        assert_eq!(r.kinds(), vec!["left-in-queue"], "{r:#?}");
    }

    #[test]
    fn a_take_that_found_nothing_had_nothing_to_find() {
        let created = TxnRecord::Create {
            path: "q/items/qn-0000000001".into(),
            data: "a".into(),
            ephemeral_owner: 0,
            session: 7,
        };
        let deleted = TxnRecord::Delete {
            path: "q/items/qn-0000000001".into(),
        };
        let list = || Op::GetChildren {
            path: "q/items".into(),
            watch: false,
        };
        let children = |names: &[&str]| Value::Children {
            children: names.iter().map(|n| n.to_string()).collect::<Vec<_>>().into(),
            stat: Default::default(),
        };
        let nothing = |b: &mut Builder, error: &str| {
            b.session(15, 2, 9, SessionState::SyncConnected);
            let id = b.invoke_s(20, 2, Some(9), deq());
            b.complete(id, 40, Outcome::Fail { error: error.into() });
        };
        // "a" is in the queue from 10 until its delete commits at `gone`.
        let base = |gone: u64| {
            let mut b = Builder::new();
            b.commit(10, 1, created.clone());
            b.ok(5, 12, 1, enq("a"), Value::Unit);
            b.commit(gone, 2, deleted.clone());
            b.ok(gone - 5, gone + 2, 3, deq(), item(Some("a")));
            b
        };
        // Our listing showed "a" and it stayed past our return: missed.
        let mut b = base(50);
        b.ok(25, 30, 2, list(), children(&["qn-0000000001"]));
        nothing(&mut b, NOTHING_TO_TAKE);
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["missed-item"], "{r:#?}");
        assert!(r.violations[0].explanation.contains("q/items/qn-0000000001"), "{r:#?}");
        // Nothing read at all (a wait that gave up without looking).
        let mut b = base(50);
        nothing(&mut b, NOTHING_TO_TAKE);
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.kinds(), vec!["missed-item"], "{r:#?}");
        assert!(r.violations[0].explanation.contains("without reading"), "{r:#?}");
        // Not judged where the take's reads are not recorded (an external
        // workload's record: kazoo-queue's empty takes were this false alarm).
        let mut b = base(50);
        nothing(&mut b, NOTHING_TO_TAKE);
        let mut h = b.build();
        h.meta
            .insert(super::super::gave_up::RECIPE_CALLS.into(), "unrecorded".into());
        assert_eq!(check(&h, &Params::default()).verdict, Verdict::Pass);
        // Unless the session was not connected throughout.
        let mut b = base(50);
        nothing(&mut b, NOTHING_TO_TAKE);
        b.session(30, 2, 9, SessionState::Disconnected);
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
        // Taken by another before we returned; or our listing was empty,
        // cut by the time limit (a read, no result), returned after we
        // did, or another client's.
        let passes = |gone: u64, reads: &dyn Fn(&mut Builder)| {
            let mut b = base(gone);
            reads(&mut b);
            nothing(&mut b, NOTHING_TO_TAKE);
            let r = check(&b.build(), &Params::default());
            assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
        };
        passes(35, &|b| {
            b.ok(25, 30, 2, list(), children(&["qn-0000000001"]));
        });
        passes(50, &|b| {
            b.ok(25, 30, 2, list(), children(&[]));
        });
        passes(50, &|b| {
            b.invoke(25, 2, list());
        });
        passes(50, &|b| {
            b.ok(25, 41, 2, list(), children(&["qn-0000000001"]));
        });
        passes(50, &|b| {
            b.ok(25, 30, 4, list(), children(&["qn-0000000001"]));
            b.invoke(26, 2, list());
        });
        // A take that failed for another reason took nothing either; an
        // at-least-once take is judged by its claims (`missed_claim`).
        let mut b = base(50);
        nothing(&mut b, "session lost");
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
        let mut b = base(50);
        nothing(&mut b, NOTHING_TO_TAKE);
        let p = Params {
            delivery: Delivery::AtLeastOnce,
            ..Params::default()
        };
        assert_eq!(check(&b.build(), &p).verdict, Verdict::Pass);
    }

    #[test]
    fn ambiguous_enqueue_delivered_once_passes() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq("a"), Value::Unit);
        b.info(2, 3, 1, enq("b"));
        b.ok(4, 5, 2, deq(), item(Some("a")));
        b.ok(6, 7, 2, deq(), item(Some("b")));
        b.ok(8, 9, 2, deq(), item(None));
        let r = check(&b.build(), &Params::default());
        assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
    }

    #[test]
    fn lost_item_fails_once_the_queue_is_seen_empty() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq("a"), Value::Unit);
        b.ok(2, 3, 1, enq("b"), Value::Unit);
        b.ok(4, 5, 2, deq(), item(Some("b")));
        let undecided = check(&b.clone_build(), &Params::default());
        assert_eq!(undecided.verdict, Verdict::Pass);
        assert!(!undecided.notes.is_empty());
        b.ok(6, 7, 2, deq(), item(None));
        let r = check(
            &b.build(),
            &Params {
                fifo: false,
                ..Params::default()
            },
        );
        assert_eq!(r.kinds(), vec!["lost-item"]);
        assert!(r.violations[0].explanation.contains("\"a\""));
    }

    #[test]
    fn unknown_dequeue_excuses_one_missing_item() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq("a"), Value::Unit);
        b.info(2, 3, 2, deq());
        b.ok(6, 7, 2, deq(), item(None));
        assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    }

    #[test]
    fn duplicates_and_phantoms_fail_under_exactly_once() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq("a"), Value::Unit);
        b.ok(4, 5, 2, deq(), item(Some("a")));
        b.ok(6, 7, 3, deq(), item(Some("a")));
        b.ok(8, 9, 3, deq(), item(Some("zz")));
        let h = b.build();
        let r = check(&h, &Params::default());
        assert_eq!(r.kinds(), vec!["duplicate-delivery", "phantom-item"]);
        let r = check(
            &h,
            &Params {
                delivery: Delivery::AtLeastOnce,
                ..Params::default()
            },
        );
        assert_eq!(r.kinds(), vec!["phantom-item"]);
    }

    #[test]
    fn fifo_violation_fails() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq("a"), Value::Unit);
        b.ok(2, 3, 1, enq("b"), Value::Unit);
        b.ok(4, 5, 2, deq(), item(Some("b")));
        b.ok(6, 7, 2, deq(), item(Some("a")));
        let h = b.build();
        assert_eq!(check(&h, &Params::default()).kinds(), vec!["fifo-order"]);
        assert_eq!(
            check(
                &h,
                &Params {
                    fifo: false,
                    ..Params::default()
                }
            )
            .verdict,
            Verdict::Pass
        );
    }

    #[test]
    fn priority_order() {
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq_p("low", 5), Value::Unit);
        b.ok(2, 3, 1, enq_p("high", 1), Value::Unit);
        b.ok(4, 5, 2, deq(), item(Some("high")));
        b.ok(6, 7, 2, deq(), item(Some("low")));
        let p = Params {
            priority: true,
            ..Params::default()
        };
        assert_eq!(check(&b.clone_build(), &p).verdict, Verdict::Pass);
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq_p("low", 5), Value::Unit);
        b.ok(2, 3, 1, enq_p("high", 1), Value::Unit);
        b.ok(4, 5, 2, deq(), item(Some("low")));
        b.ok(6, 7, 2, deq(), item(Some("high")));
        assert_eq!(check(&b.build(), &p).kinds(), vec!["priority-order"]);
    }

    #[test]
    fn a_take_reports_the_priority_its_item_was_enqueued_with() {
        let taken = |priority| Value::Item {
            item: Some("a".into()),
            priority: Some(priority),
        };
        let p = Params {
            priority: true,
            ..Params::default()
        };
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq_p("a", -2), Value::Unit);
        b.ok(2, 3, 2, deq(), taken(-2));
        assert_eq!(check(&b.build(), &p).verdict, Verdict::Pass);
        // Decoded with the sign bit set, as a mis-decoding recipe would.
        let mut b = Builder::new();
        b.ok(0, 1, 1, enq_p("a", 2), Value::Unit);
        b.ok(2, 3, 2, deq(), taken(2 - (1 << 31)));
        assert_eq!(check(&b.build(), &p).kinds(), vec!["wrong-priority"]);
    }
}
