use super::*;
use crate::exec::{OpRecord, Outcome, Trace, WatchRecord};
use crate::ops::Step;
use zkdst_recipes::zk::{CreateMode, EventType, Stat, WatchedEvent};

fn stat(czxid: i64, owner: i64, ctime: i64) -> Stat {
    Stat {
        czxid,
        mzxid: czxid,
        pzxid: czxid,
        ctime,
        mtime: ctime,
        ephemeral_owner: owner,
        ..Stat::default()
    }
}

fn trace(root: &str, base: i64, sessions: [i64; 2], ctime: i64) -> Trace {
    let create = |i, path: &str, s| OpRecord {
        index: i,
        step: Step::Create {
            client: 0,
            path: path.to_string(),
            data: vec![],
            mode: CreateMode::Ephemeral,
        },
        versions: vec![],
        outcome: Outcome::Created {
            path: format!("{root}/{path}"),
            stat: s,
        },
    };
    Trace {
        root: root.to_string(),
        sessions: sessions.to_vec(),
        ops: vec![
            create(0, "a", stat(base + 3, sessions[1], ctime)),
            create(1, "b", stat(base + 10, sessions[0], ctime + 5)),
        ],
        watches: vec![WatchRecord {
            client: 1,
            set_at: 0,
            kind: crate::exec::WatchKind::Exists,
            path: format!("{root}/a"),
            event: Some(WatchedEvent::node(EventType::NodeDeleted, format!("{root}/a"))),
            events: vec![WatchedEvent::node(EventType::NodeDeleted, format!("{root}/a"))],
            seen_after: Some(base as usize),
        }],
        deliveries: vec![0],
        bursts: vec![],
    }
}

#[test]
fn run_specific_values_are_removed() {
    let a = trace("/t-1", 100, [0x111, 0x222], 1000);
    let b = trace("/t-2", 7000, [0x333, 0x444], 99999);
    assert_eq!(compare(&a, &b), Ok(()));
    let n = normalize(&a, &NormalizeOptions::default());
    assert_eq!(
        n.ops[0].outcome,
        Outcome::Created {
            path: "~/a".to_string(),
            stat: stat(1, 2, 0)
        }
    );
}

#[test]
fn real_differences_are_reported() {
    let a = trace("/t-1", 100, [0x111, 0x222], 1000);
    let mut b = trace("/t-2", 7000, [0x333, 0x444], 1000);
    // Same zxid order, but owned by the other client.
    if let Outcome::Created { stat, .. } = &mut b.ops[1].outcome {
        stat.ephemeral_owner = 0x444;
    }
    let d = compare(&a, &b).expect_err("owners differ");
    assert!(matches!(d, Divergence::Op { index: 1, .. }), "{d}");
    assert!(d.to_string().contains("op 1 diverges"));

    let mut c = trace("/t-3", 100, [0x111, 0x222], 1000);
    c.watches[0].event = None;
    c.watches[0].events.clear();
    c.deliveries.clear();
    let d = compare(&a, &c).expect_err("watch differs");
    assert!(matches!(d, Divergence::Watch { set_at: 0, .. }), "{d}");

    // zxid equalities are kept: a create that shares its zxid differs
    // from one that does not.
    let mut e = trace("/t-4", 100, [0x111, 0x222], 1000);
    if let Outcome::Created { stat, .. } = &mut e.ops[1].outcome {
        stat.mzxid = 103;
    }
    assert!(compare(&a, &e).is_err());
}

#[test]
fn a_clients_event_order_is_compared() {
    let mut a = trace("/t-1", 100, [0x111, 0x222], 1000);
    let second = WatchRecord {
        set_at: 1,
        kind: crate::exec::WatchKind::Children,
        event: Some(WatchedEvent::node(EventType::NodeChildrenChanged, "/t-1".to_string())),
        events: vec![WatchedEvent::node(EventType::NodeChildrenChanged, "/t-1".to_string())],
        ..a.watches[0].clone()
    };
    a.watches.push(second);
    a.deliveries = vec![0, 1];
    let mut b = a.clone();
    b.root = "/t-2".to_string();
    for w in &mut b.watches {
        for e in w.events.iter_mut().chain(w.event.iter_mut()) {
            e.path = e.path.as_ref().map(|p| p.replace("/t-1", "/t-2"));
        }
        w.path = w.path.replace("/t-1", "/t-2");
    }
    if let Outcome::Created { path, .. } = &mut b.ops[0].outcome {
        *path = path.replace("/t-1", "/t-2");
    }
    if let Outcome::Created { path, .. } = &mut b.ops[1].outcome {
        *path = path.replace("/t-1", "/t-2");
    }
    assert_eq!(compare(&a, &b), Ok(()));
    b.deliveries = vec![1, 0];
    let d = compare(&a, &b).expect_err("order differs");
    assert!(matches!(d, Divergence::WatchOrder { client: 1, .. }), "{d}");
}
