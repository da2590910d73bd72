//! Property: a follower that applies the leader's txns (through serde, as
//! replication would carry them) ends with the same tree, results and
//! digest; snapshots taken by `clone` never change afterwards; the
//! incremental digest equals the recomputed one.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestCaseError;
use zkdst_recipes::zk::{CreateMode, Op};

use super::*;

const PATHS: [&str; 8] = ["/a", "/a/b", "/a/c", "/b", "/b/x", "/a/b/d", "/zookeeper", "/"];

fn path() -> impl Strategy<Value = String> {
    prop::sample::select(&PATHS[..]).prop_map(str::to_string)
}

fn mode() -> impl Strategy<Value = CreateMode> {
    prop_oneof![
        Just(CreateMode::Persistent),
        Just(CreateMode::Ephemeral),
        Just(CreateMode::PersistentSequential),
        Just(CreateMode::EphemeralSequential),
        Just(CreateMode::Container),
        (-1i64..300).prop_map(|ttl_ms| CreateMode::PersistentWithTtl { ttl_ms }),
    ]
}

fn version() -> impl Strategy<Value = i32> {
    prop_oneof![Just(-1), 0..3, Just(-2)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (path(), mode()).prop_map(|(path, mode)| Op::Create {
            path,
            data: vec![1],
            mode
        }),
        (path(), version()).prop_map(|(path, version)| Op::Delete { path, version }),
        (path(), version(), any::<u8>()).prop_map(|(path, version, b)| Op::SetData {
            path,
            data: vec![b],
            version
        }),
        (path(), version()).prop_map(|(path, version)| Op::Check { path, version }),
    ]
}

fn request() -> impl Strategy<Value = WriteRequest> {
    prop_oneof![
        4 => op().prop_map(|op| match op {
            Op::Create { path, data, mode } => WriteRequest::Create { path, data, mode },
            Op::Delete { path, version } => WriteRequest::Delete { path, version },
            Op::SetData { path, data, version } => WriteRequest::SetData { path, data, version },
            Op::Check { path, version } => WriteRequest::SetData { path, data: vec![], version },
        }),
        2 => prop::collection::vec(op(), 0..4).prop_map(WriteRequest::Multi),
        1 => (1000..9000i32).prop_map(|timeout_ms| WriteRequest::CreateSession { timeout_ms }),
        1 => Just(WriteRequest::CloseSession),
        1 => path().prop_map(|path| WriteRequest::DeleteContainer { path }),
    ]
}

type Steps = Vec<(i64, WriteRequest, bool)>;

fn steps() -> impl Strategy<Value = Steps> {
    prop::collection::vec((1i64..4, request(), any::<bool>()), 1..60)
}

/// Runs the leader/follower pair; returns how many requests succeeded.
fn replay(steps: Steps, extended: bool) -> Result<usize, TestCaseError> {
    let cfg = PrepConfig {
        extended_types_enabled: extended,
        check_sessions: true,
        sequence_base: 0,
    };
    let mut leader = DataTree::new();
    let mut follower = DataTree::new();
    let mut snapshots = Vec::new();
    let mut applied_ok = 0usize;
    for session in 1..4 {
        let txn = Txn::CreateSession {
            session,
            timeout_ms: 6000,
        };
        leader.apply(session, 0, &txn);
        follower.apply(session, 0, &txn);
    }
    for (i, (session, req, snap)) in steps.into_iter().enumerate() {
        let zxid = i as i64 + 4;
        let now = zxid * 50;
        let txn = prep(&mut leader, session, &req, now, &cfg);
        let wire = serde_json::to_string(&txn).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let a = leader.apply(zxid, now, &txn);
        let received: Txn = serde_json::from_str(&wire).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let b = follower.apply(zxid, now, &received);
        prop_assert_eq!(&a, &b);
        // a prepped txn never fails at apply unless it was decided as an error
        if !matches!(txn, Txn::Error(_) | Txn::MultiError { .. }) {
            prop_assert!(a.result.error().is_none(), "{:?} -> {:?}", txn, a.result);
        }
        if a.result.error().is_none() {
            applied_ok += 1;
        }
        prop_assert_eq!(leader.digest(), follower.digest());
        prop_assert_eq!(leader.digest(), leader.compute_digest());
        prop_assert_eq!(&leader, &follower);
        if snap {
            let paths: Vec<String> = leader.paths().map(String::from).collect();
            snapshots.push((leader.clone(), leader.compute_digest(), paths));
        }
    }
    for (snapshot, digest, paths) in snapshots {
        prop_assert_eq!(snapshot.compute_digest(), digest);
        prop_assert_eq!(snapshot.digest(), digest);
        prop_assert_eq!(snapshot.paths().map(String::from).collect::<Vec<_>>(), paths);
    }
    Ok(applied_ok)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn follower_replay_matches_leader(steps in steps(), extended in any::<bool>()) {
        replay(steps, extended)?;
    }
}

/// The generator must mostly produce requests that change the tree, or the
/// property above proves little.
#[test]
fn generated_requests_mostly_succeed() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut ok, mut total) = (0, 0);
    for _ in 0..100 {
        let steps = steps().new_tree(&mut runner).map(|t| t.current()).unwrap_or_default();
        total += steps.len();
        ok += replay(steps, true).unwrap_or(0);
    }
    assert!(total > 1000, "{total}");
    assert!(ok * 4 >= total, "only {ok} of {total} requests succeeded");
}
