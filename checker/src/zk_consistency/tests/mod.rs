//! Hand-built histories: legal ones must pass, each anomaly must be named.

use super::*;
use crate::history::SessionState;
use crate::history::{CreateMode, Data, Stat, TxnRecord, Value};
use crate::properties::testkit::Builder;
use crate::properties::Verdict;

mod commit_stream;
mod watches;

const A: i64 = 0x100;
const B: i64 = 0x200;

fn create(path: &str, data: &str) -> Op {
    Op::Create {
        path: path.into(),
        data: Data::from(data),
        mode: CreateMode::Persistent,
    }
}
fn set(path: &str, data: &str) -> Op {
    Op::SetData {
        path: path.into(),
        data: Data::from(data),
        version: -1,
    }
}
fn get(path: &str) -> Op {
    Op::GetData {
        path: path.into(),
        watch: false,
    }
}
fn stat(czxid: i64, mzxid: i64, version: i32, len: i32) -> Stat {
    Stat {
        czxid,
        mzxid,
        pzxid: czxid,
        version,
        data_length: len,
        ..Stat::default()
    }
}
fn ok(value: Value) -> Outcome {
    Outcome::Ok { value }
}
fn data(d: &str, s: Stat) -> Value {
    Value::Data {
        data: Data::from(d),
        stat: s,
    }
}
fn txn_create(path: &str, d: &str) -> TxnRecord {
    TxnRecord::Create {
        path: path.into(),
        data: Data::from(d),
        ephemeral_owner: 0,
        session: A,
    }
}
fn txn_set(path: &str, d: &str, v: i32) -> TxnRecord {
    TxnRecord::SetData {
        path: path.into(),
        data: Data::from(d),
        version: v,
    }
}

/// Client 0 (session A) creates /a = "1" (zxid 1) and sets it to "2"
/// (zxid 2); both are committed.
fn base() -> Builder {
    let mut b = Builder::new();
    let c = b.invoke_s(1, 0, Some(A), create("/a", "1"));
    b.commit(3, 1, txn_create("/a", "1"));
    b.complete_z(
        c,
        4,
        ok(Value::Created {
            path: "/a".into(),
            stat: stat(1, 1, 0, 1),
        }),
        Some(1),
    );
    let s = b.invoke_s(10, 0, Some(A), set("/a", "2"));
    b.commit(12, 2, txn_set("/a", "2", 1));
    b.complete_z(
        s,
        14,
        ok(Value::Stat {
            stat: Some(stat(1, 2, 1, 1)),
        }),
        Some(2),
    );
    b
}

fn run(b: Builder) -> CheckResult {
    check(&b.build(), &Params::default())
}

#[test]
fn legal_stale_follower_read_passes() {
    let mut b = base();
    // Session B on a lagging follower reads after the set completed, at zxid 1.
    let r = b.invoke_s(20, 1, Some(B), get("/a"));
    b.complete_z(r, 21, ok(data("1", stat(1, 1, 0, 1))), Some(1));
    // And later, a fresh read at zxid 2.
    let r2 = b.invoke_s(22, 1, Some(B), get("/a"));
    b.complete_z(r2, 23, ok(data("2", stat(1, 2, 1, 1))), Some(2));
    let res = run(b);
    assert_eq!(res.verdict, Verdict::Pass, "{res:#?}");
    assert_eq!(res.figures["checked_reads"], 2.0);
    assert_eq!(res.figures["checked_writes"], 2.0);
}

#[test]
fn lost_acknowledged_write_fails() {
    let mut b = base();
    // Acknowledged at zxid 3, but no server ever committed zxid 3, and a
    // read at zxid 4 does not see it.
    let s = b.invoke_s(30, 0, Some(A), set("/a", "3"));
    b.complete_z(
        s,
        31,
        ok(Value::Stat {
            stat: Some(stat(1, 3, 2, 1)),
        }),
        Some(3),
    );
    b.commit(40, 4, txn_create("/b", ""));
    let r = b.invoke_s(41, 1, Some(B), get("/a"));
    b.complete_z(r, 42, ok(data("2", stat(1, 2, 1, 1))), Some(4));
    let res = run(b);
    assert_eq!(res.verdict, Verdict::Violation);
    let lost = res
        .violations
        .iter()
        .find(|v| v.kind == "lost-ack-write")
        .expect("lost-ack-write");
    assert!(
        lost.explanation.contains("zxid 0x3") && lost.explanation.contains("setData /a"),
        "{}",
        lost.explanation
    );
    assert_eq!(lost.ops, vec![3]);
}

#[test]
fn acknowledged_write_replaced_by_another_txn_fails() {
    let mut b = base();
    let s = b.invoke_s(30, 0, Some(A), set("/a", "3"));
    b.commit(30, 3, txn_set("/a", "other", 2));
    b.complete_z(
        s,
        31,
        ok(Value::Stat {
            stat: Some(stat(1, 3, 2, 1)),
        }),
        Some(3),
    );
    let res = run(b);
    assert!(res.kinds().contains(&"lost-ack-write"), "{res:#?}");
}

#[test]
fn read_from_the_future_fails() {
    let mut b = Builder::new();
    let c = b.invoke_s(1, 0, Some(A), create("/a", "1"));
    b.commit(3, 1, txn_create("/a", "1"));
    b.complete_z(
        c,
        4,
        ok(Value::Created {
            path: "/a".into(),
            stat: stat(1, 1, 0, 1),
        }),
        Some(1),
    );
    // Session B reads "2" at zxid 2 and returns at 8 ms, but the setData
    // that wrote "2" was invoked only at 10 ms.
    let r = b.invoke_s(6, 1, Some(B), get("/a"));
    b.complete_z(r, 8, ok(data("2", stat(1, 2, 1, 1))), Some(2));
    let s = b.invoke_s(10, 0, Some(A), set("/a", "2"));
    b.commit(12, 2, txn_set("/a", "2", 1));
    b.complete_z(
        s,
        14,
        ok(Value::Stat {
            stat: Some(stat(1, 2, 1, 1)),
        }),
        Some(2),
    );
    let res = run(b);
    let v = res
        .violations
        .iter()
        .find(|v| v.kind == "read-from-future")
        .expect("read-from-future");
    assert!(
        v.explanation.contains("op 2") && v.explanation.contains("op 3") && v.explanation.contains("0x2"),
        "{}",
        v.explanation
    );
}

#[test]
fn session_going_back_in_time_fails() {
    let mut b = base();
    let r1 = b.invoke_s(20, 1, Some(B), get("/a"));
    b.complete_z(r1, 21, ok(data("2", stat(1, 2, 1, 1))), Some(2));
    b.session(22, 1, B, SessionState::Disconnected);
    b.session(23, 1, B, SessionState::SyncConnected);
    // After reconnecting to a lagging server, the same session reads zxid 1.
    let r2 = b.invoke_s(24, 1, Some(B), get("/a"));
    b.complete_z(r2, 25, ok(data("1", stat(1, 1, 0, 1))), Some(1));
    let res = run(b);
    assert_eq!(res.kinds(), vec!["session-time-travel"], "{res:#?}");
    let v = &res.violations[0];
    assert!(v.explanation.contains("session 0x200") && v.explanation.contains("0x2") && v.explanation.contains("0x1"));
    assert_eq!(v.ops, vec![3, 4]);
}

/// Two pipelined requests of one session: the replies came in request
/// order (zxids 2 then 3), whatever order — or times, a few ns apart — the
/// history gives their completions. A request sent after a reply came,
/// answered with an older zxid, is still time travel.
#[test]
fn pipelined_replies_are_taken_in_request_order() {
    // The read (zxid 2) and the create (zxid 3) of session B, invoked in
    // that order; the create's completion listed first.
    let pipelined = |create_done: u64| {
        let mut b = base();
        let r1 = b.invoke_s(20, 1, Some(B), get("/a"));
        let r2 = b.invoke_s(21, 1, Some(B), create("/b", "x"));
        b.commit(22, 3, txn_create("/b", "x"));
        let created = ok(Value::Created {
            path: "/b".into(),
            stat: stat(3, 3, 0, 1),
        });
        b.complete_z(r2, create_done, created, Some(3));
        b.complete_z(r1, 25, ok(data("2", stat(1, 2, 1, 1))), Some(2));
        run(b)
    };
    for create_done in [24, 25] {
        let r = pipelined(create_done);
        assert_eq!(r.verdict, Verdict::Pass, "create done at {create_done}: {r:#?}");
    }
    // Sent after the create's reply (zxid 3) came, a read answered at 2.
    let mut b = base();
    let r1 = b.invoke_s(20, 1, Some(B), create("/b", "x"));
    b.commit(22, 3, txn_create("/b", "x"));
    let created = ok(Value::Created {
        path: "/b".into(),
        stat: stat(3, 3, 0, 1),
    });
    b.complete_z(r1, 24, created, Some(3));
    let r2 = b.invoke_s(26, 1, Some(B), get("/a"));
    b.complete_z(r2, 27, ok(data("2", stat(1, 2, 1, 1))), Some(2));
    assert_eq!(run(b).kinds(), vec!["session-time-travel"]);
}

#[test]
fn wrong_read_value_at_its_zxid_fails() {
    let mut b = base();
    let r = b.invoke_s(20, 1, Some(B), get("/a"));
    b.complete_z(r, 21, ok(data("1", stat(1, 1, 0, 1))), Some(2));
    let res = run(b);
    assert_eq!(res.kinds(), vec!["read-mismatch"], "{res:#?}");
}

#[test]
fn sequential_names_and_error_replies_are_replayed() {
    let mut b = base();
    let q = b.invoke_s(
        20,
        0,
        Some(A),
        Op::Create {
            path: "/a/q-".into(),
            data: Data::from("x"),
            mode: CreateMode::EphemeralSequential,
        },
    );
    b.commit(
        21,
        3,
        TxnRecord::Create {
            path: "/a/q-0000000000".into(),
            data: Data::from("x"),
            ephemeral_owner: A,
            session: A,
        },
    );
    b.complete_z(
        q,
        22,
        ok(Value::Created {
            path: "/a/q-0000000000".into(),
            stat: Stat::default(),
        }),
        Some(3),
    );
    let e = b.invoke_s(23, 1, Some(B), create("/a", "again"));
    b.complete_z(
        e,
        24,
        ok(Value::Error {
            code: "NodeExists".into(),
            results: vec![],
        }),
        Some(3),
    );
    let res = run(b);
    assert_eq!(res.verdict, Verdict::Pass, "{res:#?}");

    // The same, but the client is told a wrong sequential name.
    let mut b = base();
    let q = b.invoke_s(
        20,
        0,
        Some(A),
        Op::Create {
            path: "/a/q-".into(),
            data: Data::from("x"),
            mode: CreateMode::PersistentSequential,
        },
    );
    b.commit(
        21,
        3,
        TxnRecord::Create {
            path: "/a/q-0000000000".into(),
            data: Data::from("x"),
            ephemeral_owner: 0,
            session: A,
        },
    );
    b.complete_z(
        q,
        22,
        ok(Value::Created {
            path: "/a/q-0000000001".into(),
            stat: Stat::default(),
        }),
        Some(3),
    );
    let res = run(b);
    assert!(res.kinds().contains(&"write-result-mismatch"), "{res:#?}");
}

fn refused(b: &mut Builder, t: u64, op: Op) {
    let id = b.invoke_s(t, 0, Some(A), op);
    b.complete(
        id,
        t + 1,
        Outcome::Fail {
            error: zkdst_model::client_error::INVALID_PATH.into(),
        },
    );
}

#[test]
fn bad_paths_refused_by_the_client_pass() {
    let mut b = base();
    refused(&mut b, 20, create("/a/..", "x"));
    refused(&mut b, 22, get("/a/\u{7f}"));
    refused(
        &mut b,
        24,
        Op::Multi {
            ops: vec![create("/b", "x"), create("//c", "x")],
        },
    );
    let res = run(b);
    assert_eq!(res.verdict, Verdict::Pass, "{res:#?}");
}

#[test]
fn a_bad_path_sent_to_the_server_is_a_path_validation_violation() {
    let mut b = base();
    // The client let `/a/.` through; the server answered NoNode.
    let r = b.invoke_s(20, 0, Some(A), get("/a/."));
    b.complete_z(
        r,
        21,
        ok(Value::Error {
            code: "NoNode".into(),
            results: vec![],
        }),
        Some(2),
    );
    let res = run(b);
    assert_eq!(res.kinds(), vec!["path-validation"], "{res:#?}");
    assert!(
        res.violations[0]
            .explanation
            .contains("\"/a/.\": relative paths not allowed"),
        "{res:#?}"
    );
}

#[test]
fn a_valid_path_refused_is_a_path_validation_violation() {
    let mut b = base();
    // `/p/` is a valid sequential prefix (`/p/1`), and `/a..` a valid name.
    refused(
        &mut b,
        20,
        Op::Create {
            path: "/p/".into(),
            data: Data::from("x"),
            mode: CreateMode::PersistentSequential,
        },
    );
    refused(&mut b, 22, get("/a.."));
    let res = run(b);
    assert_eq!(res.kinds(), vec!["path-validation", "path-validation"], "{res:#?}");
}
