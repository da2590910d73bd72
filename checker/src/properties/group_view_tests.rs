use super::*;
use crate::history::Data;
use crate::properties::membership::check_membership;
use crate::properties::testkit::Builder;
use crate::properties::{Params, Verdict};

const G: &str = "/groups/g";

fn read() -> Op {
    Op::Members {
        group: G.into(),
        newer_than: None,
    }
}
fn wait(after: i64) -> Op {
    Op::Members {
        group: G.into(),
        newer_than: Some(after),
    }
}
fn join(m: &str) -> Op {
    Op::Join {
        group: G.into(),
        member: m.into(),
    }
}
fn view(members: &[&str], zxid: i64) -> Value {
    Value::View {
        members: members.iter().map(|s| s.to_string()).collect(),
        zxid,
    }
}
fn create(path: &str, owner: i64) -> TxnRecord {
    TxnRecord::Create {
        path: path.into(),
        data: Data::default(),
        ephemeral_owner: owner,
        session: owner,
    }
}
/// The kinds [`check_into`] alone finds (the membership checker's
/// convergence rules are tested with it).
fn kinds(b: &Builder) -> Vec<String> {
    let h = b.clone_build();
    let ops = crate::properties::common::operations(&h, "t").unwrap();
    let mut r = CheckResult::new("t");
    check_into(&h, G, &ops.iter().collect::<Vec<_>>(), &mut r);
    r.kinds().into_iter().map(String::from).collect()
}

/// The group made at zxid 1; m1 joins at 2, m2 at 3 (inside a multi with
/// an unrelated create), m1's session closes at 4, m3 joins at 5.
fn log(b: &mut Builder) {
    b.commit(1, 1, create(G, 0));
    b.commit(2, 2, create("/groups/g/m1", 11));
    b.commit(
        3,
        3,
        TxnRecord::Multi {
            txns: vec![create("/groups/g/m2", 12), create("/elsewhere", 0)],
        },
    );
    b.commit(
        4,
        4,
        TxnRecord::CloseSession {
            session: 11,
            expired: true,
            deleted: vec!["/groups/g/m1".into()],
        },
    );
    b.commit(5, 5, create("/groups/g/m3/child", 0));
    b.commit(6, 6, create("/groups/g/m3", 13));
}

#[test]
fn a_view_must_be_a_state_the_group_was_in_at_its_zxid() {
    let mut b = Builder::new();
    log(&mut b);
    b.ok(10, 11, 1, read(), view(&[], 1));
    b.ok(12, 13, 1, read(), view(&["m1"], 2));
    b.ok(14, 15, 1, read(), view(&["m1", "m2"], 3));
    b.ok(16, 17, 1, read(), view(&["m2"], 4));
    b.ok(18, 19, 1, read(), view(&["m2", "m3"], 6));
    assert_eq!(kinds(&b), Vec::<String>::new());
    // m3 listed at zxid 4, before it joined.
    b.ok(20, 21, 2, read(), view(&["m2", "m3"], 4));
    assert_eq!(kinds(&b), vec!["view-never-held"]);
    // m1 still listed after its session's close deleted it.
    let mut b = Builder::new();
    log(&mut b);
    b.ok(20, 21, 2, read(), view(&["m1", "m2"], 4));
    assert_eq!(kinds(&b), vec!["view-never-held"]);
}

#[test]
fn without_a_commit_log_views_are_not_judged_against_it() {
    let mut b = Builder::new();
    b.ok(20, 21, 2, read(), view(&["m9"], 4));
    assert_eq!(kinds(&b), Vec::<String>::new());
}

#[test]
fn a_member_object_s_views_never_go_back() {
    let mut b = Builder::new();
    b.ok(0, 1, 1, join("m1"), Value::Unit);
    b.ok(2, 3, 1, read(), view(&["m1", "m2"], 3));
    b.ok(4, 5, 1, read(), view(&["m1", "m2"], 3));
    // Another client's older view is no regression of client 1's.
    b.ok(4, 5, 2, read(), view(&["m1"], 2));
    assert_eq!(kinds(&b), Vec::<String>::new());
    b.ok(6, 7, 1, read(), view(&["m1"], 2));
    assert_eq!(kinds(&b), vec!["view-went-back"]);
    // A new member object (after a new Join) may start from an older view.
    let mut b = Builder::new();
    b.ok(0, 1, 1, join("m1"), Value::Unit);
    b.ok(2, 3, 1, read(), view(&["m1", "m2"], 3));
    b.ok(4, 5, 1, join("m1"), Value::Unit);
    b.ok(6, 7, 1, read(), view(&["m1"], 2));
    assert_eq!(kinds(&b), Vec::<String>::new());
}

#[test]
fn a_wait_for_a_change_must_return_a_newer_view() {
    let mut b = Builder::new();
    b.ok(0, 1, 1, read(), view(&["m1"], 2));
    b.ok(2, 3, 1, wait(2), view(&["m1", "m2"], 3));
    assert_eq!(kinds(&b), Vec::<String>::new());
    b.ok(4, 5, 1, wait(3), view(&["m1", "m2"], 3));
    assert_eq!(kinds(&b), vec!["change-not-newer"]);
}

#[test]
fn a_wait_that_gives_up_while_its_member_holds_a_newer_view_is_flagged() {
    let mut b = Builder::new();
    b.ok(0, 1, 1, read(), view(&["m1"], 2));
    // Nothing newer came: giving up is right.
    b.fail(2, 1002, 1, wait(2));
    b.ok(1002, 1002, 1, read(), view(&["m1"], 2));
    // Another client's newer view is no evidence about client 1's member.
    b.ok(1003, 1003, 2, read(), view(&["m1", "m2"], 3));
    b.fail(1003, 1013, 1, wait(2));
    assert_eq!(kinds(&b), Vec::<String>::new());
    // A read from the previous member object, then a Join: not evidence.
    let mut c = Builder::new();
    c.ok(0, 1, 1, read(), view(&["m1", "m2"], 3));
    c.ok(2, 3, 1, join("m1"), Value::Unit);
    c.fail(4, 14, 1, wait(2));
    assert_eq!(kinds(&c), Vec::<String>::new());
    // Its own member showed zxid 3 just before it waited after 2.
    b.ok(2000, 2000, 1, read(), view(&["m1", "m2"], 3));
    b.fail(2000, 2010, 1, wait(2));
    assert_eq!(kinds(&b), vec!["missed-change"]);
}

#[test]
fn names_from_older_histories_are_still_judged_for_convergence() {
    let mut b = Builder::new();
    b.ok(
        0,
        1,
        1,
        read(),
        Value::Names {
            names: vec!["m1".into()],
        },
    );
    b.ok(0, 1, 2, read(), view(&["m1"], 2));
    assert_eq!(
        check_membership(&b.clone_build(), &Params::default()).verdict,
        Verdict::Pass
    );
    b.ok(
        2,
        3,
        1,
        read(),
        Value::Names {
            names: vec!["m2".into()],
        },
    );
    let r = check_membership(&b.build(), &Params::default());
    assert_eq!(r.kinds(), vec!["views-diverge"], "{r:#?}");
}
