//! One-shot watches against the commit stream: each broken promise named.

use super::*;
use crate::zk_consistency::watches::{self, WATCH_EVENTS, WATCH_EVENTS_WIRE};

fn get_w(path: &str) -> Op {
    Op::GetData {
        path: path.into(),
        watch: true,
    }
}

/// `base()` (/a created at zxid 1, set at 2, by session A), recorded as the
/// simulated client records watch events; client 0 then sets a data watch
/// on /a with a read answered at zxid 2 (t = 16).
fn watched() -> Builder {
    let mut b = base();
    b.meta(WATCH_EVENTS, WATCH_EVENTS_WIRE);
    let r = b.invoke_s(15, 0, Some(A), get_w("/a"));
    b.complete_z(r, 16, ok(data("2", stat(1, 2, 1, 1))), Some(2));
    b
}

/// Client 1 (session B) sets /a at zxid 3, committed at t = 20.
fn change(b: &mut Builder) {
    let s = b.invoke_s(19, 1, Some(B), set("/a", "3"));
    b.commit(20, 3, txn_set("/a", "3", 2));
    b.complete_z(
        s,
        21,
        ok(Value::Stat {
            stat: Some(stat(1, 3, 2, 1)),
        }),
        Some(3),
    );
}

/// Client 0 reads /a at zxid 3 (the change), answered at `t`.
fn read_after(b: &mut Builder, t: u64) -> OpId {
    let r = b.invoke_s(t - 1, 0, Some(A), get("/a"));
    b.complete_z(r, t, ok(data("3", stat(1, 3, 2, 1))), Some(3));
    r
}

fn judge(b: Builder) -> CheckResult {
    let h = b.build();
    let ops = h.operations().expect("well formed");
    watches::check_ops(&h, &ops, &Params::default())
}

#[test]
fn the_event_before_the_reply_that_shows_the_change_passes() {
    let mut b = watched();
    change(&mut b);
    b.watch_s(22, 0, A, "NodeDataChanged", "/a");
    read_after(&mut b, 23);
    let res = judge(b);
    assert_eq!(res.verdict, Verdict::Pass, "{res:#?}");
    assert_eq!(res.figures["watches_set"], 1.0);
    assert_eq!(res.figures["watch_events"], 1.0);
}

#[test]
fn a_reply_past_the_change_without_the_event_is_a_missed_watch() {
    let mut b = watched();
    change(&mut b);
    let r = read_after(&mut b, 23);
    let res = judge(b);
    assert_eq!(res.kinds(), vec!["watch-missed"], "{res:#?}");
    assert!(res.violations[0].ops.contains(&r), "{res:#?}");
    assert!(res.violations[0].explanation.contains("zxid 0x3"), "{res:#?}");
}

#[test]
fn an_event_after_the_reply_that_shows_the_change_is_missed_then_spurious() {
    let mut b = watched();
    change(&mut b);
    read_after(&mut b, 23);
    b.watch_s(24, 0, A, "NodeDataChanged", "/a");
    let res = judge(b);
    assert_eq!(res.kinds(), vec!["watch-missed", "watch-spurious"], "{res:#?}");
}

#[test]
fn a_watch_fires_once() {
    let mut b = watched();
    change(&mut b);
    b.watch_s(22, 0, A, "NodeDataChanged", "/a");
    // A second change, and a second event with no watch set again.
    let s = b.invoke_s(25, 1, Some(B), set("/a", "4"));
    b.commit(26, 4, txn_set("/a", "4", 3));
    b.complete_z(
        s,
        27,
        ok(Value::Stat {
            stat: Some(stat(1, 4, 3, 1)),
        }),
        Some(4),
    );
    b.watch_s(28, 0, A, "NodeDataChanged", "/a");
    let res = judge(b);
    assert_eq!(res.kinds(), vec!["watch-spurious"], "{res:#?}");
}

#[test]
fn an_event_before_any_change_or_of_the_wrong_class_is_spurious() {
    // Fired with nothing changed since the watch was set.
    let mut b = watched();
    b.watch_s(18, 0, A, "NodeDataChanged", "/a");
    change(&mut b);
    let res = judge(b);
    assert!(res.kinds().contains(&"watch-spurious"), "{res:#?}");
    // A child event for a data watch.
    let mut b = watched();
    change(&mut b);
    b.watch_s(22, 0, A, "NodeChildrenChanged", "/a");
    let res = judge(b);
    assert!(res.kinds().contains(&"watch-spurious"), "{res:#?}");
    // An event for another session's watch.
    let mut b = watched();
    change(&mut b);
    b.watch_s(22, 1, B, "NodeDataChanged", "/a");
    b.watch_s(22, 0, A, "NodeDataChanged", "/a");
    let res = judge(b);
    assert_eq!(res.kinds(), vec!["watch-spurious"], "{res:#?}");
}

#[test]
fn across_a_reconnect_a_watch_is_judged_for_spuriousness_only() {
    // Disconnected after the watch was set: the client may have dropped it
    // (not re-registered), so a reply past the change without the event
    // passes; an event fired by SetWatches later passes too.
    let mut b = watched();
    b.session(17, 0, A, SessionState::Disconnected);
    b.session(18, 0, A, SessionState::SyncConnected);
    change(&mut b);
    read_after(&mut b, 23);
    b.watch_s(24, 0, A, "NodeDataChanged", "/a");
    let res = judge(b);
    assert_eq!(res.verdict, Verdict::Pass, "{res:#?}");
    // But not twice.
    let mut b = watched();
    b.session(17, 0, A, SessionState::Disconnected);
    change(&mut b);
    b.watch_s(24, 0, A, "NodeDataChanged", "/a");
    b.watch_s(25, 0, A, "NodeDeleted", "/a");
    let res = judge(b);
    assert_eq!(res.kinds(), vec!["watch-spurious"], "{res:#?}");
}

#[test]
fn a_session_end_clears_its_watches_and_other_recordings_are_not_judged() {
    let mut b = watched();
    b.session(17, 0, A, SessionState::Expired);
    change(&mut b);
    b.watch_s(22, 0, A, "NodeDataChanged", "/a");
    let res = judge(b);
    assert_eq!(res.kinds(), vec!["watch-spurious"], "{res:#?}");
    // Without the meta (a library's watchers record on delivery): a note.
    let mut b = base();
    let r = b.invoke_s(15, 0, Some(A), get_w("/a"));
    b.complete_z(r, 16, ok(data("2", stat(1, 2, 1, 1))), Some(2));
    change(&mut b);
    read_after(&mut b, 23);
    let res = judge(b);
    assert_eq!(res.verdict, Verdict::Pass, "{res:#?}");
    assert!(res.notes.iter().any(|n| n.contains("not judged")), "{res:#?}");
}

#[test]
fn session_states_are_transitions_and_end_for_ever() {
    let mut b = watched();
    b.session(17, 0, A, SessionState::Disconnected);
    b.session(18, 0, A, SessionState::SyncConnected);
    b.session(19, 0, A, SessionState::Disconnected);
    b.session(20, 0, A, SessionState::Expired);
    b.session(20, 1, B, SessionState::Disconnected);
    let res = judge(b);
    assert_eq!(res.verdict, Verdict::Pass, "{res:#?}");
    let mut b = watched();
    b.session(17, 0, A, SessionState::Disconnected);
    b.session(18, 0, A, SessionState::Disconnected);
    b.session(19, 0, A, SessionState::Expired);
    b.session(20, 0, A, SessionState::Closed);
    let res = judge(b);
    assert_eq!(
        res.kinds(),
        vec!["session-transition", "session-transition"],
        "{res:#?}"
    );
    assert!(res.violations[0].explanation.contains("twice in a row"), "{res:#?}");
    assert!(
        res.violations[1].explanation.contains("after its session had ended"),
        "{res:#?}"
    );
}

fn set_watches(b: &mut Builder, t: u64, relative_zxid: Zxid, data: &[&str], exist: &[&str]) {
    b.push(Event::SetWatches {
        time: t * crate::properties::NS_PER_MS,
        client: 0,
        session: A,
        relative_zxid,
        data: data.iter().map(|p| p.to_string()).collect(),
        exist: exist.iter().map(|p| p.to_string()).collect(),
        child: Vec::new(),
    });
}

#[test]
fn a_watch_re_registered_by_set_watches_is_judged_again() {
    // Re-registered at zxid 2, then /a changes at 3: the event must come
    // before a reply at zxid 3.
    let mut b = watched();
    b.session(17, 0, A, SessionState::Disconnected);
    b.session(18, 0, A, SessionState::SyncConnected);
    set_watches(&mut b, 18, 2, &["/a"], &[]);
    change(&mut b);
    read_after(&mut b, 23);
    let res = judge(b);
    assert_eq!(res.kinds(), vec!["watch-missed"], "{res:#?}");
    // With the event (SetWatches fires at once for a change made while
    // disconnected), it passes.
    let mut b = watched();
    b.session(17, 0, A, SessionState::Disconnected);
    change(&mut b);
    b.session(22, 0, A, SessionState::SyncConnected);
    set_watches(&mut b, 22, 2, &["/a"], &[]);
    b.watch_s(22, 0, A, "NodeDataChanged", "/a");
    read_after(&mut b, 23);
    let res = judge(b);
    assert_eq!(res.verdict, Verdict::Pass, "{res:#?}");
    // Not sent (the application dropped it): an event for it is spurious.
    let mut b = watched();
    b.session(17, 0, A, SessionState::Disconnected);
    b.session(18, 0, A, SessionState::SyncConnected);
    set_watches(&mut b, 18, 2, &[], &[]);
    change(&mut b);
    b.watch_s(22, 0, A, "NodeDataChanged", "/a");
    let res = judge(b);
    assert_eq!(res.kinds(), vec!["watch-spurious"], "{res:#?}");
}
