//! Hand-built histories: three servers along one sequence; two servers
//! that applied different txns at one zxid; a committed txn rolled back
//! after a restart.

use super::*;
use crate::history::{Data, Event, FaultEvent, FaultKind, History, ReplicaCheck, TxnRecord};
use crate::properties::testkit::{Builder, MS};
use crate::properties::Verdict;

fn set(v: &str) -> TxnRecord {
    TxnRecord::SetData {
        path: "/a".into(),
        data: Data(v.as_bytes().to_vec()),
        version: 1,
    }
}

fn replica(b: &mut Builder, t: u64, server: u32, check: ReplicaCheck, zxid: i64, chain: u64, expected: Option<u64>) {
    b.h.events.push(Event::Replica {
        time: t * MS,
        server,
        check,
        zxid,
        chain,
        expected,
        missing: None,
        applied: None,
        detail: String::new(),
    });
}

/// Commits 0x1_0000_0001..=0x1_0000_0003; canonical chains 11, 12, 13.
fn committed() -> Builder {
    let mut b = Builder::new();
    for (i, v) in ["x", "y", "z"].iter().enumerate() {
        b.commit(10 + i as u64, 0x1_0000_0001 + i as i64, set(v));
    }
    b
}

#[test]
fn servers_on_one_sequence_pass() {
    let mut b = committed();
    replica(&mut b, 50, 1, ReplicaCheck::Final, 0x1_0000_0003, 13, Some(13));
    replica(&mut b, 50, 2, ReplicaCheck::Final, 0x1_0000_0003, 13, Some(13));
    // A lagging server is a prefix: fine.
    replica(&mut b, 50, 3, ReplicaCheck::Final, 0x1_0000_0002, 12, Some(12));
    let r = check(&b.h, &Params::default());
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.violations);
    assert_eq!(r.figures["servers"], 3.0);
    assert_eq!(r.figures["disagreements"], 0.0);
}

#[test]
fn two_servers_with_different_txns_at_one_zxid_diverge() {
    let mut b = committed();
    b.h.events.push(Event::Replica {
        time: 20 * MS,
        server: 3,
        check: ReplicaCheck::Diverged,
        zxid: 0x1_0000_0002,
        chain: 99,
        expected: Some(12),
        missing: None,
        applied: None,
        detail: "applied a different txn".into(),
    });
    replica(&mut b, 50, 1, ReplicaCheck::Final, 0x1_0000_0003, 13, Some(13));
    replica(&mut b, 50, 3, ReplicaCheck::Final, 0x1_0000_0003, 13, Some(13));
    let r = check(&b.h, &Params::default());
    assert_eq!(r.verdict, Verdict::Violation);
    assert_eq!(r.kinds(), vec![DIVERGENCE.name()]);
    assert!(
        r.violations[0].explanation.contains("zk3"),
        "{}",
        r.violations[0].explanation
    );
    assert!(r.violations[0].explanation.contains("0x100000002"));
}

#[test]
fn final_positions_off_the_canonical_sequence_diverge() {
    // No disagreement recorded, but two servers ended at one zxid with
    // different chains, and one ended at a zxid nobody committed.
    let mut b = committed();
    replica(&mut b, 50, 1, ReplicaCheck::Final, 0x1_0000_0003, 13, None);
    replica(&mut b, 50, 2, ReplicaCheck::Final, 0x1_0000_0003, 14, None);
    replica(&mut b, 50, 3, ReplicaCheck::Final, 0x1_0000_0007, 15, None);
    let r = check(&b.h, &Params::default());
    assert_eq!(r.kinds(), vec![DIVERGENCE.name(), DIVERGENCE.name()]);
}

#[test]
fn a_committed_txn_rolled_back_after_a_restart_is_flagged() {
    let mut b = committed();
    b.h.events.push(Event::Fault(FaultEvent::new(
        30 * MS,
        FaultKind::KillServer.into(),
        vec!["zk1".into()],
        "lose unsynced",
    )));
    // zk1 had applied ..0003; after its restart it applied 0x2_0000_0001
    // straight after 0002.
    b.h.events.push(Event::Replica {
        time: 40 * MS,
        server: 1,
        check: ReplicaCheck::RolledBack,
        zxid: 0x2_0000_0001,
        chain: 21,
        expected: Some(20),
        missing: Some(0x1_0000_0003),
        applied: None,
        detail: "after 1 snapshot load".into(),
    });
    let r = check(&b.h, &Params::default());
    assert_eq!(r.kinds(), vec![ROLLED_BACK.name()]);
    let e = &r.violations[0].explanation;
    assert!(e.contains("0x100000003") && e.contains("SetData"), "{e}");
    assert_eq!(r.violations[0].times, vec![40 * MS]);
}

#[test]
fn a_skipped_commit_is_a_gap() {
    let mut b = committed();
    b.h.events.push(Event::Replica {
        time: 40 * MS,
        server: 2,
        check: ReplicaCheck::Gap,
        zxid: 0x1_0000_0003,
        chain: 21,
        expected: Some(13),
        missing: Some(0x1_0000_0002),
        applied: None,
        detail: String::new(),
    });
    assert_eq!(check(&b.h, &Params::default()).kinds(), vec![GAP.name()]);
}

#[test]
fn histories_without_replica_records_pass_with_a_note() {
    let r = check(&committed().h, &Params::default());
    assert_eq!(r.verdict, Verdict::Pass);
    assert!(!r.notes.is_empty());
}

#[test]
fn replica_records_round_trip_and_old_histories_parse() {
    let mut b = committed();
    replica(
        &mut b,
        50,
        1,
        ReplicaCheck::Final,
        0x1_0000_0003,
        u64::MAX,
        Some(u64::MAX),
    );
    let back = History::from_json(&b.h.to_json()).unwrap();
    assert_eq!(back, b.h);
    let minimal = r#"{"events":[{"type":"replica","time":1,"server":2,"check":"final","zxid":0,"chain":0}]}"#;
    let h = History::from_json(minimal).unwrap();
    assert_eq!(check(&h, &Params::default()).verdict, Verdict::Pass);
}
