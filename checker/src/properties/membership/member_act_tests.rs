//! Tests of `member_act`, run through the `membership` checker that owns it: a
//! child of `membership`, so the sub-check does not import its family.

use crate::history::{Op, SessionState, Value};
use crate::properties::membership::check_membership;
use crate::properties::testkit::Builder;
use crate::properties::{Params, Verdict};

const G: &str = "/groups/g";
const S: i64 = 0x51;

fn act(b: &mut Builder, t: u64) {
    let id = b.invoke_s(
        t,
        1,
        Some(S),
        Op::MemberAct {
            group: G.into(),
            member: "m1".into(),
        },
    );
    b.complete(id, t, crate::history::Outcome::Ok { value: Value::Unit });
}

fn kinds(b: &Builder) -> Vec<String> {
    let h = b.clone_build();
    check_membership(&h, &Params::default())
        .violations
        .iter()
        .map(|v| v.kind.to_string())
        .collect()
}

/// Connected at 0, an act at 10 ms.
fn connected() -> Builder {
    let mut b = Builder::new();
    b.session(0, 1, S, SessionState::SyncConnected);
    act(&mut b, 10);
    b
}

#[test]
fn acting_while_connected_passes() {
    let b = connected();
    let r = check_membership(&b.build(), &Params::default());
    assert!(r.violations.is_empty(), "{r:#?}");
    assert_eq!(r.figures["member_acts_judged"], 1.0);
}

#[test]
fn acts_of_every_group_are_counted() {
    let mut b = connected();
    let id = b.invoke_s(
        20,
        1,
        Some(S),
        Op::MemberAct {
            group: "/groups/other".into(),
            member: "m1".into(),
        },
    );
    b.complete(id, 20, crate::history::Outcome::Ok { value: Value::Unit });
    let r = check_membership(&b.build(), &Params::default());
    assert!(r.violations.is_empty(), "{r:#?}");
    assert_eq!(r.figures["member_acts_judged"], 2.0);
}

#[test]
fn acting_while_disconnected_fails() {
    let mut b = connected();
    b.session(20, 1, S, SessionState::Disconnected);
    act(&mut b, 30);
    assert_eq!(kinds(&b), vec!["member-acted-suspended"]);
    // A reconnect before the act: standing again.
    b.session(25, 1, S, SessionState::SyncConnected);
    assert!(kinds(&b).is_empty());
}

#[test]
fn acting_after_the_session_ended_fails() {
    let mut b = connected();
    b.session(20, 1, S, SessionState::Expired);
    act(&mut b, 30);
    assert_eq!(kinds(&b), vec!["member-acted-suspended"]);
}

#[test]
fn acting_the_instant_the_disconnection_is_seen_is_fine() {
    let mut b = connected();
    b.session(20, 1, S, SessionState::Disconnected);
    act(&mut b, 20);
    assert!(kinds(&b).is_empty());
}

#[test]
fn a_paused_client_may_act_once_as_it_wakes() {
    let mut b = connected();
    b.fault_on(15, "pause-client", "client1");
    b.session(20, 1, S, SessionState::Disconnected);
    b.fault_on(40, "resume", "client1");
    act(&mut b, 40);
    assert!(kinds(&b).is_empty());
    // Later than its wake-up, it had time to hear.
    act(&mut b, 50);
    assert_eq!(kinds(&b), vec!["member-acted-suspended"]);
}

#[test]
fn an_act_is_judged_under_its_own_group() {
    let mut b = connected();
    b.session(20, 1, S, SessionState::Disconnected);
    let id = b.invoke_s(
        30,
        1,
        Some(S),
        Op::MemberAct {
            group: "/groups/other".into(),
            member: "m1".into(),
        },
    );
    b.complete(id, 30, crate::history::Outcome::Ok { value: Value::Unit });
    let h = b.build();
    let r = check_membership(&h, &Params::default());
    // Judged under its own group, where it breaks the promise.
    assert_eq!(r.verdict, Verdict::Violation, "{r:#?}");
    assert!(r.violations[0].explanation.contains("/groups/other"));
}
