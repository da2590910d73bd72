//! An at-least-once take that found nothing to claim had nothing it could
//! claim (`missed-item`, the at-least-once half; the at-most-once half is in
//! the queue checker). A take recorded as [`NOTHING_TO_CLAIM`] promises that
//! every item it saw was claimed by another consumer, or went before it
//! could claim it. So:
//! - it read `{queue}/items` (a `getChildren` by its client within its
//!   span), when its session was connected throughout;
//! - each listing of `{queue}/items` it made, followed by its listing of
//!   `{queue}/claims` (both returned before the take did), leaves no item
//!   unclaimed in those listings that it did not try to claim: a create of
//!   `{queue}/claims/{item}` by its client, after the claims listing.
//!
//! An item another consumer claims may rightly be skipped; one nobody
//! claimed was there to take. Judged from the client's own calls alone.

use std::collections::BTreeSet;

use crate::history::{History, Op, Operation, Outcome, Value};

use super::common::{by_client, connected_throughout, describe, ok_value};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// The failure a workload records for an at-least-once take that found no
/// item to claim.
pub const NOTHING_TO_CLAIM: &str = "nothing to claim";

/// Listed names, if `x` is a successful `getChildren` of `dir`.
fn listed<'a>(x: &'a Operation, dir: &str) -> Option<&'a [String]> {
    match (&x.op, ok_value(x)) {
        (Op::GetChildren { path, .. }, Some(Value::Children { children, .. })) if path == dir => Some(children),
        _ => None,
    }
}

/// Adds a `missed-item` violation to `r` for each at-least-once take of
/// queue `name` in `ops` that found nothing though it had an item to claim.
pub fn check_claims(h: &History, name: &str, ops: &[Operation], r: &mut CheckResult) {
    // Judged by the take's own calls: only where they are recorded.
    if super::gave_up::calls_unrecorded(h) {
        return;
    }
    let root = name.trim_end_matches('/');
    let (items, claims) = (format!("{root}/items"), format!("{root}/claims"));
    let calls = by_client(ops);
    let mut missed = 0;
    for o in ops.iter().filter(|o| {
        matches!(&o.op, Op::Dequeue { queue } if queue == name)
            && matches!(&o.outcome, Some(Outcome::Fail { error }) if error == NOTHING_TO_CLAIM)
    }) {
        let Some(done) = o.completed else { continue };
        // The take's own calls, in invocation order.
        let mine: Vec<&Operation> = calls[&o.client]
            .iter()
            .filter(|x| x.invoked >= o.invoked && x.invoked <= done && x.id != o.id)
            .copied()
            .collect();
        let read = mine
            .iter()
            .any(|x| matches!(&x.op, Op::GetChildren { path, .. } if *path == items));
        let connected = || connected_throughout(h, o);
        let why = if !read {
            connected().then(|| format!("without reading {items}, its session connected throughout"))
        } else {
            unclaimed_skipped(&mine, done, &items, &claims, connected)
        };
        let Some(why) = why else { continue };
        missed += 1;
        r.violation(
            Violation::new(
                ViolationKind::MissedItem,
                format!("queue {name}: {} found nothing to claim {why}", describe(o)),
            )
            .ops([o.id])
            .clients([o.client])
            .times([o.invoked, done]),
        );
    }
    r.figure("missed_claims", missed as f64);
}

/// The first item one of `mine`'s listings showed unclaimed that no create
/// of its claim followed, described.
fn unclaimed_skipped(
    mine: &[&Operation],
    done: u64,
    items: &str,
    claims: &str,
    connected: impl Fn() -> bool,
) -> Option<String> {
    let returned = |x: &Operation| x.completed.is_some_and(|t| t <= done);
    for (i, l1) in mine.iter().enumerate() {
        let Some(listed_items) = listed(l1, items).filter(|_| returned(l1)) else {
            continue;
        };
        // This round ends where the next listing of the items begins.
        let after = l1.completed.unwrap_or(done);
        let round: Vec<&Operation> = mine[i + 1..]
            .iter()
            .take_while(|x| !matches!(&x.op, Op::GetChildren { path, .. } if path == items))
            .filter(|x| x.invoked >= after)
            .copied()
            .collect();
        let Some((l2, claimed)) = round
            .iter()
            .filter(|x| returned(x))
            .filter_map(|x| Some((*x, listed(x, claims)?)))
            .last()
        else {
            // The claims are listed as soon as the items return (the same
            // poll): items seen and no claims listing sent is a take that
            // stopped looking.
            let asked = round
                .iter()
                .any(|x| matches!(&x.op, Op::GetChildren { path, .. } if path == claims));
            if !listed_items.is_empty() && !asked && connected() {
                return Some(format!(
                    "though its listing (op {}) showed {} item(s) and it never listed {claims}, its session connected throughout",
                    l1.id,
                    listed_items.len()
                ));
            }
            continue;
        };
        let claimed: BTreeSet<&str> = claimed.iter().map(String::as_str).collect();
        let from = l2.completed.unwrap_or(done);
        for item in listed_items.iter().filter(|c| !claimed.contains(c.as_str())) {
            let path = format!("{claims}/{item}");
            let tried = mine
                .iter()
                .any(|x| x.invoked >= from && matches!(&x.op, Op::Create { path: p, .. } if *p == path));
            if !tried {
                return Some(format!(
                    "though its listing (op {}) showed {items}/{item} and its claims listing (op {}) no claim of it, and it never tried to claim it",
                    l1.id, l2.id
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{CreateMode, SessionState, Stat};
    use crate::properties::testkit::Builder;

    fn list(dir: &str) -> Op {
        Op::GetChildren {
            path: dir.into(),
            watch: true,
        }
    }

    fn children(names: &[&str]) -> Value {
        Value::Children {
            children: names.iter().map(|n| n.to_string()).collect::<Vec<_>>().into(),
            stat: Stat::default(),
        }
    }

    fn claim(item: &str) -> Op {
        Op::Create {
            path: format!("q/claims/{item}"),
            data: Default::default(),
            mode: CreateMode::Ephemeral,
        }
    }

    /// Client 2 (session 9, connected at 15) takes from 20 to 40 and finds
    /// nothing to claim, after `calls`.
    fn take(calls: impl FnOnce(&mut Builder)) -> Vec<String> {
        let mut b = Builder::new();
        b.session(15, 2, 9, SessionState::SyncConnected);
        let id = b.invoke_s(20, 2, Some(9), Op::Dequeue { queue: "q".into() });
        calls(&mut b);
        b.complete(
            id,
            40,
            Outcome::Fail {
                error: NOTHING_TO_CLAIM.into(),
            },
        );
        let h = b.build();
        let ops = h.operations().unwrap();
        let mut r = CheckResult::new("t");
        check_claims(&h, "q", &ops, &mut r);
        r.kinds().into_iter().map(String::from).collect()
    }

    #[test]
    fn a_claim_take_that_skipped_an_unclaimed_item_fails() {
        // Item b was listed, unclaimed, and never tried.
        let skipped = take(|b| {
            b.ok(21, 22, 2, list("q/items"), children(&["a", "b"]));
            b.ok(23, 24, 2, list("q/claims"), children(&["a"]));
        });
        assert_eq!(skipped, vec!["missed-item"]);
        // Nothing read at all.
        assert_eq!(take(|_| {}), vec!["missed-item"]);
        // A create of its claim before the claims listing does not count.
        let early = take(|b| {
            b.fail(21, 22, 2, claim("b"));
            b.ok(23, 24, 2, list("q/items"), children(&["b"]));
            b.ok(25, 26, 2, list("q/claims"), children(&[]));
        });
        assert_eq!(early, vec!["missed-item"]);
        // Items listed, and the claims never even asked for.
        let unasked = take(|b| {
            b.ok(21, 22, 2, list("q/items"), children(&["a"]));
        });
        assert_eq!(unasked, vec!["missed-item"]);
    }

    #[test]
    fn a_claim_take_that_tried_every_unclaimed_item_passes() {
        let tried = take(|b| {
            b.ok(21, 22, 2, list("q/items"), children(&["a", "b"]));
            b.ok(23, 24, 2, list("q/claims"), children(&["a"]));
            b.fail(25, 26, 2, claim("b"));
        });
        assert!(tried.is_empty(), "{tried:?}");
        // Every listed item claimed by another; or nothing listed.
        let all_claimed = take(|b| {
            b.ok(21, 22, 2, list("q/items"), children(&["a"]));
            b.ok(23, 24, 2, list("q/claims"), children(&["a"]));
        });
        assert!(all_claimed.is_empty());
        // The claims listing cut by the time limit: nothing to judge.
        let cut = take(|b| {
            b.ok(21, 22, 2, list("q/items"), children(&["a"]));
            b.invoke(23, 2, list("q/claims"));
        });
        assert!(cut.is_empty());
        // Another client's listings; and a disconnected take that read nothing.
        let others = take(|b| {
            b.ok(21, 22, 3, list("q/items"), children(&["a"]));
            b.ok(23, 24, 3, list("q/claims"), children(&[]));
            b.session(25, 2, 9, SessionState::Disconnected);
        });
        assert!(others.is_empty());
        // An earlier round's listing, answered by a later round's claim.
        let rounds = take(|b| {
            b.ok(21, 22, 2, list("q/items"), children(&[]));
            b.ok(23, 24, 2, list("q/claims"), children(&[]));
            b.ok(30, 31, 2, list("q/items"), children(&["a"]));
            b.ok(32, 33, 2, list("q/claims"), children(&["a"]));
        });
        assert!(rounds.is_empty());
    }
}
