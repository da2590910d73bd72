//! Hand-built histories that keep and that break each leadership promise.

use crate::history::SessionState;
use crate::history::{History, Op, Outcome, TxnRecord, Value};
use crate::properties::election::check;
use crate::properties::leadership::POLLED_PREFIX;
use crate::properties::testkit::Builder;
use crate::properties::{Params, Verdict};

const A: i64 = 0xa;
const B: i64 = 0xb;

fn camp() -> Op {
    Op::Campaign { election: "e".into() }
}
fn act(t: i64) -> Op {
    Op::LeaderAct {
        election: "e".into(),
        token: t,
    }
}
fn lost(t: i64) -> Op {
    Op::LeadershipLost {
        election: "e".into(),
        token: t,
        reason: "session ended".into(),
    }
}
fn resign() -> Op {
    Op::Resign { election: "e".into() }
}
fn ok(b: &mut Builder, t0: u64, t1: u64, client: u32, session: i64, op: Op, v: Value) {
    let id = b.invoke_s(t0, client, Some(session), op);
    b.complete(id, t1, Outcome::Ok { value: v });
}
fn stale() -> Value {
    Value::Error {
        code: "StaleToken".into(),
        results: Vec::new(),
    }
}
/// The ensemble expires `session` at `t` ms.
fn expire(b: &mut Builder, t: u64, session: i64) {
    b.commit(
        t,
        0x100 + t as i64,
        TxnRecord::CloseSession {
            session,
            expired: true,
            deleted: Vec::new(),
        },
    );
}
fn grace(ms: u64) -> Params {
    Params {
        leader_grace_ms: Some(ms),
        ..Params::default()
    }
}

/// Client 1 leads 10–100 ms and hands over; client 2 leads from 120 ms.
fn handover() -> Builder {
    let mut b = Builder::new();
    b.session(0, 1, A, SessionState::SyncConnected);
    b.session(0, 2, B, SessionState::SyncConnected);
    ok(&mut b, 0, 10, 1, A, camp(), Value::Token { token: 5 });
    ok(&mut b, 20, 22, 1, A, act(5), Value::Unit);
    ok(&mut b, 100, 110, 1, A, resign(), Value::Unit);
    ok(&mut b, 5, 120, 2, B, camp(), Value::Token { token: 9 });
    ok(&mut b, 130, 132, 2, B, act(9), Value::Unit);
    b
}

#[test]
fn successive_leaderships_pass() {
    let r = check(&handover().build(), &grace(0));
    assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
    assert_eq!(r.figures["stale_acts_rejected"], 0.0);
}

#[test]
fn a_loss_report_ends_a_leadership() {
    let mut b = Builder::new();
    ok(&mut b, 0, 10, 1, A, camp(), Value::Token { token: 5 });
    ok(&mut b, 50, 50, 1, A, lost(5), Value::Unit);
    ok(&mut b, 5, 60, 2, B, camp(), Value::Token { token: 9 });
    ok(&mut b, 200, 201, 1, A, resign(), Value::Unit);
    assert_eq!(check(&b.build(), &grace(0)).verdict, Verdict::Pass);
}

#[test]
fn overlapping_leaderships_fail() {
    let mut b = handover();
    // Client 3 is told it leads while client 1 still does.
    ok(&mut b, 30, 40, 3, 0xc, camp(), Value::Token { token: 7 });
    ok(&mut b, 50, 51, 3, 0xc, resign(), Value::Unit);
    let r = check(&b.build(), &grace(0));
    assert_eq!(r.kinds(), vec!["leaders-overlap"], "{r:#?}");
    assert_eq!(r.violations[0].clients, vec![1, 3]);
}

#[test]
fn an_overlap_is_excused_when_the_older_leader_could_not_know() {
    // Client 1 is paused (it records nothing) while the ensemble expires
    // its session and elects client 2; on resume its act is rejected.
    let mut b = Builder::new();
    b.session(0, 1, A, SessionState::SyncConnected);
    ok(&mut b, 0, 10, 1, A, camp(), Value::Token { token: 5 });
    b.fault_on(20, "pause-client", "client1");
    expire(&mut b, 50, A);
    ok(&mut b, 5, 60, 2, B, camp(), Value::Token { token: 9 });
    ok(&mut b, 70, 71, 2, B, act(9), Value::Unit);
    b.fault_on(80, "resume", "client1");
    ok(&mut b, 80, 81, 1, A, act(5), stale());
    ok(&mut b, 82, 82, 1, A, lost(5), Value::Unit);
    let r = check(&b.build(), &grace(0));
    assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
    assert_eq!(r.figures["overlaps_excused"], 1.0);
    assert_eq!(r.figures["stale_acts_rejected"], 1.0);
}

#[test]
fn an_expiry_excuses_only_a_leader_that_could_not_know() {
    let base = || {
        let mut b = Builder::new();
        b.session(0, 1, A, SessionState::SyncConnected);
        ok(&mut b, 0, 10, 1, A, camp(), Value::Token { token: 5 });
        ok(&mut b, 5, 60, 2, B, camp(), Value::Token { token: 9 });
        b
    };
    // No session end: the overlap is the recipe's.
    assert_eq!(check(&base().build(), &grace(0)).kinds(), vec!["leaders-overlap"]);
    // Disconnected at 20 ms, expired at 50 ms, still leading at 60 ms: with
    // no grace it should have stepped down at 20 ms.
    let mut b = base();
    b.session(20, 1, A, SessionState::Disconnected);
    expire(&mut b, 50, A);
    let h: History = b.build();
    assert_eq!(check(&h, &grace(0)).kinds(), vec!["leaders-overlap"]);
    // With a 40 ms grace it could still lead when the session ended.
    let r = check(&h, &grace(40));
    assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
    // Another session's expiry excuses nothing.
    let mut b = base();
    expire(&mut b, 50, B);
    assert_eq!(check(&b.build(), &grace(0)).kinds(), vec!["leaders-overlap"]);
}

#[test]
fn acting_past_the_grace_after_disconnected_fails() {
    let mut b = handover();
    b.session(40, 1, A, SessionState::Disconnected);
    ok(&mut b, 45, 46, 1, A, act(5), Value::Unit);
    // Within a 10 ms grace: fine.
    assert_eq!(check(&b.clone_build(), &grace(10)).verdict, Verdict::Pass);
    // With none, the act 5 ms after Disconnected breaks the promise.
    let r = check(&b.clone_build(), &grace(0));
    assert_eq!(r.kinds(), vec!["acted-past-grace"], "{r:#?}");
    // The grace the application recorded applies without a parameter.
    let mut h = b.clone_build();
    h.meta.insert("leader_grace_ms".into(), "2".into());
    assert_eq!(check(&h, &Params::default()).kinds(), vec!["acted-past-grace"]);
    // A reconnect before the act makes it fine again.
    b.session(44, 1, A, SessionState::SyncConnected);
    assert_eq!(check(&b.build(), &grace(0)).verdict, Verdict::Pass);
}

#[test]
fn acting_the_instant_the_disconnection_is_seen_is_fine() {
    let mut b = handover();
    b.session(40, 1, A, SessionState::Disconnected);
    ok(&mut b, 40, 41, 1, A, act(5), Value::Unit);
    assert_eq!(check(&b.build(), &grace(0)).verdict, Verdict::Pass);
}

#[test]
fn acting_after_the_session_ended_fails() {
    let mut b = handover();
    b.session(40, 1, A, SessionState::Expired);
    ok(&mut b, 60, 61, 1, A, act(5), Value::Unit);
    let r = check(&b.build(), &grace(1000));
    assert_eq!(r.kinds(), vec!["acted-after-session-end"], "{r:#?}");
}

#[test]
fn without_a_recorded_grace_disconnected_acts_are_not_judged() {
    let mut b = handover();
    b.session(40, 1, A, SessionState::Disconnected);
    ok(&mut b, 90, 91, 1, A, act(5), Value::Unit);
    let r = check(&b.build(), &Params::default());
    assert_eq!(r.verdict, Verdict::Pass);
    assert!(r.notes.iter().any(|n| n.contains("leader_grace_ms")), "{r:#?}");
}

#[test]
fn a_rejected_act_without_an_excuse_fails_and_is_counted() {
    let mut b = handover();
    // Client 1 campaigns again and is rejected although its session never
    // ended.
    ok(&mut b, 140, 150, 1, A, camp(), Value::Token { token: 7 });
    ok(&mut b, 151, 152, 1, A, act(7), stale());
    let r = check(&b.build(), &grace(0));
    assert!(r.kinds().contains(&"stale-act-rejected"), "{r:#?}");
    assert_eq!(r.figures["stale_acts_rejected"], 1.0);
}

#[test]
fn a_pause_over_the_grace_deadline_excuses_only_the_act_on_waking() {
    let mut b = handover();
    b.session(40, 1, A, SessionState::Disconnected);
    // Grace 10 ms: due to step down at 50 ms, but paused 45–70 ms.
    b.fault_on(45, "pause-client", "client1");
    b.fault_on(70, "resume", "client1");
    ok(&mut b, 70, 71, 1, A, act(5), Value::Unit);
    assert_eq!(check(&b.clone_build(), &grace(10)).verdict, Verdict::Pass);
    ok(&mut b, 75, 76, 1, A, act(5), Value::Unit);
    assert_eq!(check(&b.build(), &grace(10)).kinds(), vec!["acted-past-grace"]);
}

#[test]
fn a_pause_from_the_grace_deadline_to_the_expiry_excuses_an_overlap() {
    let mut b = Builder::new();
    b.session(0, 1, A, SessionState::SyncConnected);
    ok(&mut b, 0, 10, 1, A, camp(), Value::Token { token: 5 });
    b.session(20, 1, A, SessionState::Disconnected);
    // Grace 10 ms: due at 30 ms; paused 25–90 ms, expired at 50 ms.
    b.fault_on(25, "pause-client", "client1");
    expire(&mut b, 50, A);
    ok(&mut b, 5, 60, 2, B, camp(), Value::Token { token: 9 });
    b.fault_on(90, "resume", "client1");
    ok(&mut b, 90, 90, 1, A, lost(5), Value::Unit);
    assert_eq!(check(&b.clone_build(), &grace(10)).verdict, Verdict::Pass);
    // Had it resumed at 40 ms, it should have stepped down before 50 ms.
    let mut h = b.build();
    for e in &mut h.events {
        if let crate::history::Event::Fault(crate::history::FaultEvent { time, kind, .. }) = e {
            if kind.name() == "resume" {
                *time = 40 * crate::properties::testkit::MS;
            }
        }
    }
    h.events.sort_by_key(crate::history::Event::time);
    assert_eq!(check(&h, &grace(10)).kinds(), vec!["leaders-overlap"]);
}

#[test]
fn acting_after_the_reported_loss_fails() {
    let mut b = Builder::new();
    ok(&mut b, 0, 10, 1, A, camp(), Value::Token { token: 5 });
    ok(&mut b, 20, 20, 1, A, lost(5), Value::Unit);
    ok(&mut b, 20, 21, 1, A, act(5), Value::Unit);
    // The act in the same step as the report is a race, not a violation.
    assert_eq!(check(&b.clone_build(), &grace(0)).verdict, Verdict::Pass);
    ok(&mut b, 30, 31, 1, A, act(5), Value::Unit);
    assert_eq!(check(&b.build(), &grace(0)).kinds(), vec!["acted-after-loss"]);
}

/// Client 1 leads with token 5 (its candidate node, czxid 5) from 10 ms,
/// is Disconnected at 100 ms, and the recipe reports the leadership lost
/// at `lost_at`; the grace is 1000 ms.
fn blip(lost_at: u64) -> Builder {
    let mut b = Builder::new();
    b.session(0, 1, A, SessionState::SyncConnected);
    b.commit(
        5,
        5,
        TxnRecord::Create {
            path: "e/n-0000000001".into(),
            data: Default::default(),
            ephemeral_owner: A,
            session: A,
        },
    );
    ok(&mut b, 0, 10, 1, A, camp(), Value::Token { token: 5 });
    b.session(100, 1, A, SessionState::Disconnected);
    ok(&mut b, lost_at, lost_at, 1, A, lost(5), Value::Unit);
    b
}

#[test]
fn a_leadership_given_up_within_the_grace_of_a_disconnection_fails() {
    let r = check(&blip(110).build(), &grace(1000));
    assert_eq!(r.kinds(), vec!["lost-within-grace"], "{r:#?}");
    assert!(r.violations[0].explanation.contains("grace of 1000 ms"), "{r:#?}");
}

#[test]
fn a_leadership_given_up_when_the_grace_ran_out_passes() {
    assert_eq!(check(&blip(1100).build(), &grace(1000)).verdict, Verdict::Pass);
    // With no grace, giving up at once is what was asked for.
    assert_eq!(check(&blip(100).build(), &grace(0)).verdict, Verdict::Pass);
}

#[test]
fn an_early_loss_the_recipe_could_have_learned_of_passes() {
    // The session ended on the servers before the report.
    let mut b = blip(300);
    expire(&mut b, 200, A);
    assert_eq!(check(&b.build(), &grace(1000)).verdict, Verdict::Pass);
    // The candidate node was deleted before the report.
    let mut b = blip(300);
    b.commit(
        250,
        9,
        TxnRecord::Delete {
            path: "e/n-0000000001".into(),
        },
    );
    assert_eq!(check(&b.build(), &grace(1000)).verdict, Verdict::Pass);
    // A delete of another node is no excuse.
    let mut b = blip(300);
    b.commit(
        250,
        9,
        TxnRecord::Delete {
            path: "e/n-0000000002".into(),
        },
    );
    assert_eq!(check(&b.build(), &grace(1000)).kinds(), vec!["lost-within-grace"]);
}

/// Client 1 leads with token 5 from 10 ms, connected throughout, and the
/// recipe reports the leadership lost at 300 ms.
fn steady() -> Builder {
    let mut b = blip(300);
    b.h.events.retain(|e| {
        !matches!(
            e,
            crate::history::Event::Session {
                state: SessionState::Disconnected,
                ..
            }
        )
    });
    b
}

#[test]
fn a_leadership_reported_lost_while_nothing_happened_fails() {
    for g in [0, 1000] {
        let r = check(&steady().build(), &grace(g));
        assert_eq!(r.kinds(), vec!["lost-while-connected"], "grace {g}: {r:#?}");
    }
}

#[test]
fn a_loss_after_a_disconnection_or_an_end_is_not_lost_while_connected() {
    // Disconnected at 100 ms, back at 150 ms: with no grace, the loss
    // may come from that disconnection.
    let mut b = blip(300);
    b.session(150, 1, A, SessionState::SyncConnected);
    assert_eq!(check(&b.build(), &grace(0)).verdict, Verdict::Pass);
    // The session ended on the servers before the report.
    let mut b = steady();
    expire(&mut b, 200, A);
    assert_eq!(check(&b.build(), &grace(0)).verdict, Verdict::Pass);
    // The candidate node was deleted before the report.
    let mut b = steady();
    b.commit(
        250,
        9,
        TxnRecord::Delete {
            path: "e/n-0000000001".into(),
        },
    );
    assert_eq!(check(&b.build(), &grace(0)).verdict, Verdict::Pass);
    // Disconnected in the same step as the report: the recipe heard first.
    let mut b = steady();
    b.session(300, 1, A, SessionState::Disconnected);
    let mut h = b.build();
    h.events.sort_by_key(crate::history::Event::time);
    assert_eq!(check(&h, &grace(0)).verdict, Verdict::Pass);
}

/// Client 1 leads from 10 ms and acts at 20 ms; client 2 is elected at
/// 120 ms; client 1 records its loss at 150 ms with `reason`.
fn late_loss(reason: &str) -> History {
    let mut b = Builder::new();
    b.session(0, 1, A, SessionState::SyncConnected);
    b.session(0, 2, B, SessionState::SyncConnected);
    ok(&mut b, 0, 10, 1, A, camp(), Value::Token { token: 5 });
    ok(&mut b, 20, 22, 1, A, act(5), Value::Unit);
    ok(&mut b, 5, 120, 2, B, camp(), Value::Token { token: 9 });
    let lost = Op::LeadershipLost {
        election: "e".into(),
        token: 5,
        reason: reason.into(),
    };
    ok(&mut b, 150, 150, 1, A, lost, Value::Unit);
    b.build()
}

#[test]
fn a_polled_loss_ends_the_leadership_at_its_last_act() {
    // Reported by the recipe at 150 ms, the loss came too late.
    let r = check(&late_loss("session ended"), &grace(0));
    assert!(r.kinds().contains(&"leaders-overlap"), "{r:#?}");
    // Seen by a poll at 150 ms, it happened after the act at 20 ms.
    let r = check(&late_loss(&format!("{POLLED_PREFIX}has_leadership() false")), &grace(0));
    assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
}

#[test]
fn a_polled_leadership_still_acting_when_another_leads_fails() {
    let mut b = Builder::new();
    b.session(0, 1, A, SessionState::SyncConnected);
    b.session(0, 2, B, SessionState::SyncConnected);
    ok(&mut b, 0, 10, 1, A, camp(), Value::Token { token: 5 });
    ok(&mut b, 5, 120, 2, B, camp(), Value::Token { token: 9 });
    // A poll said "you lead" at 130 ms, after client 2 was elected.
    ok(&mut b, 130, 131, 1, A, act(5), Value::Unit);
    let lost = Op::LeadershipLost {
        election: "e".into(),
        token: 5,
        reason: format!("{POLLED_PREFIX}has_leadership() false"),
    };
    ok(&mut b, 150, 150, 1, A, lost, Value::Unit);
    let r = check(&b.build(), &grace(0));
    assert!(r.kinds().contains(&"leaders-overlap"), "{r:#?}");
}
