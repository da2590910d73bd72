//! Tests of `barrier_wait`, run through the `barrier` checker that owns it: a
//! child of `barrier` (barrier/), so the sub-check does not import its family.

use crate::history::{Op, Outcome, SessionState, Value};
use crate::properties::barrier::check;
use crate::properties::testkit::Builder;
use crate::properties::{Params, Verdict};

use crate::properties::gave_up::GAVE_UP;

fn set() -> Op {
    Op::BarrierSet { barrier: "b".into() }
}
fn remove() -> Op {
    Op::BarrierRemove { barrier: "b".into() }
}
fn wait() -> Op {
    Op::BarrierWait { barrier: "b".into() }
}
/// Client 0 sets at 0-1 and removes at 10-11; client 1 is connected
/// from 0 with session 7.
fn base() -> Builder {
    let mut b = Builder::new();
    b.session(0, 1, 7, SessionState::SyncConnected);
    b.ok(0, 1, 0, set(), Value::Unit);
    b.ok(10, 11, 0, remove(), Value::Unit);
    b
}
fn waiting(b: &mut Builder, t0: u64, t1: u64, outcome: Outcome) {
    let id = b.invoke_s(t0, 1, Some(7), wait());
    b.complete(id, t1, outcome);
}
fn gave_up() -> Outcome {
    Outcome::Fail { error: GAVE_UP.into() }
}
fn kinds(b: Builder) -> Vec<String> {
    let r = check(&b.build(), &Params::default());
    r.kinds().into_iter().map(String::from).collect()
}

#[test]
fn a_wait_that_fails_while_connected_is_flagged() {
    let mut b = base();
    waiting(
        &mut b,
        2,
        3,
        Outcome::Info {
            error: "zookeeper: NoNode (-101)".into(),
        },
    );
    assert_eq!(kinds(b), vec!["wait-failed"]);
    // Disconnected mid-wait: the error may be the connection's.
    let mut b = base();
    b.session(2, 1, 7, SessionState::Disconnected);
    waiting(
        &mut b,
        2,
        3,
        Outcome::Info {
            error: "session lost (expired or closed)".into(),
        },
    );
    assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
}

#[test]
fn a_timed_wait_that_gives_up_after_the_removal_is_flagged() {
    // Gave up while the barrier was up: its word kept.
    let mut b = base();
    waiting(&mut b, 2, 9, gave_up());
    assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
    // Began after the removal completed, and gave up anyway.
    let mut b = base();
    waiting(&mut b, 12, 20, gave_up());
    assert_eq!(kinds(b), vec!["missed-removal"]);
    // Set again before it ended: it may have waited on that.
    let mut b = base();
    b.ok(13, 14, 0, set(), Value::Unit);
    waiting(&mut b, 12, 20, gave_up());
    assert_eq!(check(&b.build(), &Params::default()).verdict, Verdict::Pass);
}
