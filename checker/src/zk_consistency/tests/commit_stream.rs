//! The commit stream: indeterminate writes resolved by it, expiries, the
//! order of writes without it, divergent servers, commits that cannot apply.

use super::*;

#[test]
fn indeterminate_write_is_resolved_by_the_commit_stream() {
    let mut b = base();
    let lost = b.invoke_s(20, 0, Some(A), set("/a", "3"));
    b.commit(21, 3, txn_set("/a", "3", 2));
    b.complete(
        lost,
        22,
        Outcome::Info {
            error: "ConnectionLoss".into(),
        },
    );
    let r = b.invoke_s(30, 1, Some(B), get("/a"));
    b.complete_z(r, 31, ok(data("3", stat(1, 3, 2, 1))), Some(3));
    let res = run(b);
    assert_eq!(res.verdict, Verdict::Pass, "{res:#?}");
    assert_eq!(res.figures["indeterminate_writes_committed"], 1.0);
}

#[test]
fn expiry_must_delete_all_ephemerals_at_one_zxid() {
    let mut b = Builder::new();
    let e = b.invoke_s(
        1,
        0,
        Some(A),
        Op::Create {
            path: "/e".into(),
            data: Data::default(),
            mode: CreateMode::Ephemeral,
        },
    );
    b.commit(
        2,
        1,
        TxnRecord::Create {
            path: "/e".into(),
            data: Data::default(),
            ephemeral_owner: A,
            session: A,
        },
    );
    b.complete_z(
        e,
        3,
        ok(Value::Created {
            path: "/e".into(),
            stat: Stat::default(),
        }),
        Some(1),
    );
    b.commit(
        50,
        2,
        TxnRecord::CloseSession {
            session: A,
            expired: true,
            deleted: vec!["/e".into()],
        },
    );
    let good = b.h.clone();
    assert_eq!(check(&good, &Params::default()).verdict, Verdict::Pass);

    let mut bad = Builder::new();
    bad.h = good;
    if let Some(Event::Commit {
        txn: TxnRecord::CloseSession { deleted, .. },
        ..
    }) = bad.h.events.last_mut()
    {
        deleted.clear();
    }
    let res = check(&bad.h, &Params::default());
    assert_eq!(res.kinds(), vec!["expiry-ephemerals"], "{res:#?}");
    assert!(res.violations[0].explanation.contains("/e"));
}

#[test]
fn without_commits_write_order_and_bounded_replay() {
    // Write 1 completes at 10 ms with zxid 5; write 2 invoked at 12 ms gets zxid 3.
    let mut b = Builder::new();
    let w1 = b.invoke_s(1, 0, Some(A), create("/a", "1"));
    b.complete_z(
        w1,
        10,
        ok(Value::Created {
            path: "/a".into(),
            stat: Stat::default(),
        }),
        Some(5),
    );
    let w2 = b.invoke_s(12, 1, Some(B), create("/b", "1"));
    b.complete_z(
        w2,
        13,
        ok(Value::Created {
            path: "/b".into(),
            stat: Stat::default(),
        }),
        Some(3),
    );
    let res = run(b);
    assert!(res.kinds().contains(&"write-order"), "{res:#?}");
    assert!(res.notes.iter().any(|n| n.contains("no Commit events")));

    // An indeterminate create that did apply: a later read sees it. Legal;
    // the read lies beyond the certain bound and is not compared.
    let mut b = Builder::new();
    let w1 = b.invoke_s(1, 0, Some(A), create("/a", "1"));
    b.complete_z(
        w1,
        2,
        ok(Value::Created {
            path: "/a".into(),
            stat: Stat::default(),
        }),
        Some(1),
    );
    let w2 = b.invoke_s(3, 0, Some(A), create("/b", "1"));
    b.complete(
        w2,
        4,
        Outcome::Info {
            error: "ConnectionLoss".into(),
        },
    );
    let r = b.invoke_s(
        5,
        1,
        Some(B),
        Op::Exists {
            path: "/b".into(),
            watch: false,
        },
    );
    b.complete_z(
        r,
        6,
        ok(Value::Stat {
            stat: Some(stat(2, 2, 0, 1)),
        }),
        Some(2),
    );
    let res = run(b);
    assert_eq!(res.verdict, Verdict::Pass, "{res:#?}");
    assert_eq!(res.figures["unchecked_ops"], 1.0);
}

#[test]
fn stale_read_after_sync_fails() {
    let mut b = base();
    let s = b.invoke_s(20, 1, Some(B), Op::Sync { path: "/a".into() });
    b.complete_z(s, 21, ok(Value::Unit), None);
    let r = b.invoke_s(22, 1, Some(B), get("/a"));
    b.complete_z(r, 23, ok(data("1", stat(1, 1, 0, 1))), Some(1));
    let res = run(b);
    assert_eq!(res.kinds(), vec!["stale-after-sync"], "{res:#?}");
}

#[test]
fn divergent_servers_fail() {
    let mut b = base();
    b.h.events.push(Event::Commit {
        session: None,
        xid: None,
        time: 99,
        server: 2,
        zxid: 2,
        txn: txn_set("/a", "X", 1),
    });
    let res = run(b);
    assert!(res.kinds().contains(&"divergent-commit"), "{res:#?}");
}

/// A commit no client op explains must still apply to the tree: a delete
/// of a node that never existed (and a create under a missing parent) is
/// an inconsistent commit stream, named with the reason.
#[test]
fn a_commit_that_cannot_apply_is_named() {
    let mut b = Builder::new();
    b.commit(3, 1, txn_create("/a", "1"));
    assert_eq!(check(&b.h, &Params::default()).verdict, Verdict::Pass);
    b.commit(5, 2, TxnRecord::Delete { path: "/nope".into() });
    b.commit(7, 3, txn_create("/x/y", ""));
    let res = check(&b.h, &Params::default());
    assert_eq!(res.kinds(), vec!["commit-stream-inconsistent"; 2], "{res:#?}");
    assert!(
        res.violations[0]
            .explanation
            .contains("delete of /nope but it does not exist"),
        "{res:#?}"
    );
    assert!(
        res.violations[1].explanation.contains("its parent /x does not exist"),
        "{res:#?}"
    );
}
