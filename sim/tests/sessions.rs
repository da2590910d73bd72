//! Session behaviour the recipes depend on: a session survives a leader
//! failover shorter than its timeout; an expired session's ephemerals go
//! and its handle learns Expired on reconnect; a lost reply leaves the write
//! applied; a watch event arrives before a read that reflects the change.

use std::time::Duration;

use futures::FutureExt;
use zkdst_checker::history::Op;
use zkdst_recipes::runtime::Spawn;
use zkdst_recipes::zk::{CreateMode, EventType, SessionState, ZkClient, ZkError, ANY_VERSION};
use zkdst_sim::cluster::{Cluster, EnsembleConfig, NodeRef};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::runtime::SimRuntime;

fn cfg() -> EnsembleConfig {
    EnsembleConfig {
        tick_ms: 500,
        ..Default::default()
    }
}

fn ensemble(servers: u32) -> EnsembleConfig {
    EnsembleConfig { servers, ..cfg() }
}

async fn session_survives_failover(seed: u64, servers: u32) {
    let mut c = Cluster::start(ensemble(servers), Recorder::new(), seed);
    let leader = c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let h = c.spawn_client(1, 6000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.create("/eph", b"", CreateMode::Ephemeral).await.expect("create");
        (zk.session_id(), zk)
    });
    let (sid, zk) = h.await.unwrap();
    let mut states = zk.state_watch();
    c.kill_server(leader, false);
    // The client notices (its server dropped it, or its server died).
    let s = madsim::time::timeout(Duration::from_secs(10), states.changed())
        .await
        .expect("no state change");
    assert_eq!(s, SessionState::Disconnected, "seed {seed}");
    let new_leader = c.wait_for_leader(Duration::from_secs(30)).await.expect("no new leader");
    assert_ne!(new_leader, leader);
    let node = c.client_node(1);
    let check = node.spawn(async move {
        assert!(zk.wait_connected(Duration::from_secs(30)).await, "did not reconnect");
        assert_eq!(zk.session_id(), sid, "a new session after failover");
        let st = zk.exists("/eph").await.expect("exists");
        assert_eq!(st.map(|s| s.ephemeral_owner), Some(sid), "ephemeral lost in failover");
        zk.set_data("/eph", b"x", ANY_VERSION)
            .await
            .expect("write after failover");
    });
    check.await.unwrap();
    c.shutdown();
}

#[test]
fn a_session_survives_leader_failover() {
    for (servers, seed) in (0..20).map(|s| (3, s)).chain((100..110).map(|s| (5, s))) {
        run_seed(seed, Some(Duration::from_secs(600)), move || {
            session_survives_failover(seed, servers)
        })
        .unwrap_or_else(|e| panic!("{servers} servers: {e}"));
    }
}

async fn expiry_deletes_ephemerals(seed: u64, servers: u32) {
    let mut c = Cluster::start(ensemble(servers), Recorder::new(), seed);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let a = c.spawn_client(1, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.create("/owned", b"", CreateMode::Ephemeral).await.expect("create");
        zk
    });
    let a = a.await.unwrap();
    let b = c.spawn_client(2, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        let (st, w) = zk.exists_watch("/owned").await.expect("exists");
        assert!(st.is_some());
        w.changed().await
    });
    // Cut client 1 off from every server for longer than its timeout.
    let servers: Vec<NodeRef> = c.server_ids().into_iter().map(NodeRef::Server).collect();
    c.partition(&[vec![NodeRef::Client(1)], servers]);
    let ev = madsim::time::timeout(Duration::from_secs(20), b)
        .await
        .expect("watch never fired")
        .unwrap();
    assert_eq!(ev.event_type, EventType::NodeDeleted, "seed {seed}");
    c.heal();
    let node = c.client_node(1);
    let after = node.spawn(async move {
        let mut w = a.state_watch();
        for _ in 0..10 {
            if a.state() == SessionState::Expired {
                break;
            }
            let _ = madsim::time::timeout(Duration::from_secs(5), w.changed()).await;
        }
        (a.state(), a.exists("/owned").await)
    });
    let (state, r) = after.await.unwrap();
    assert_eq!(
        state,
        SessionState::Expired,
        "seed {seed}: the client must learn of the expiry on reconnect"
    );
    assert_eq!(r, Err(ZkError::SessionExpired), "seed {seed}");
    c.shutdown();
}

#[test]
fn an_expired_session_loses_its_ephemerals() {
    for (servers, seed) in (0..20).map(|s| (3, s)).chain((100..110).map(|s| (5, s))) {
        run_seed(seed, Some(Duration::from_secs(600)), move || {
            expiry_deletes_ephemerals(seed, servers)
        })
        .unwrap_or_else(|e| panic!("{servers} servers: {e}"));
    }
}

#[madsim::test]
async fn a_lost_reply_leaves_the_write_applied() {
    let mut c = Cluster::start(cfg(), Recorder::new(), 5);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let h = c.spawn_client(1, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.lose_next_write_reply();
        let first = zk.create("/ambiguous", b"", CreateMode::Persistent).await;
        assert_eq!(first.unwrap_err(), ZkError::ConnectionLoss);
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        assert!(
            zk.exists("/ambiguous").await.unwrap().is_some(),
            "the write was applied"
        );
        assert_eq!(
            zk.create("/ambiguous", b"", CreateMode::Persistent).await.unwrap_err(),
            ZkError::NodeExists
        );
        zk.lose_next_write_reply();
        let seq = zk.create("/q-", b"", CreateMode::PersistentSequential).await;
        assert_eq!(seq.unwrap_err(), ZkError::ConnectionLoss);
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        let (p, _) = zk.create("/q-", b"", CreateMode::PersistentSequential).await.unwrap();
        let (kids, _) = zk.get_children("/").await.unwrap();
        let items = kids.iter().filter(|k| k.starts_with("q-")).count();
        (p, items)
    });
    let (p, items) = h.await.unwrap();
    assert_eq!(
        items, 2,
        "a blind retry of a sequential create duplicates it (the second is {p})"
    );
    c.shutdown();
}

#[madsim::test]
async fn expire_after_read_fails_the_next_write_unsent() {
    let mut c = Cluster::start(cfg(), Recorder::new(), 6);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let h = c.spawn_client(1, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.create("/read", b"0", CreateMode::Persistent).await.unwrap();
        zk.expire_after_next_read();
        // The write's reply does not trigger it; the read's does, and its
        // reply is still delivered.
        zk.create("/before", b"", CreateMode::Persistent).await.unwrap();
        let (data, _) = zk.get_data("/read").await.expect("the read's reply arrives");
        let write = zk.set_data("/read", b"1", -1).await;
        (data, write, zk.state())
    });
    let (data, write, state) = h.await.unwrap();
    assert_eq!(data, b"0");
    assert_eq!(
        write.unwrap_err(),
        ZkError::SessionExpired,
        "the write waited out the session"
    );
    assert_eq!(state, SessionState::Expired);
    let check = c.spawn_client(2, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.get_data("/read").await.unwrap().0
    });
    assert_eq!(check.await.unwrap(), b"0", "the refused write was never applied");
    c.shutdown();
}

#[madsim::test]
async fn a_flapping_connection_fails_every_call_until_it_stops() {
    let mut c = Cluster::start(cfg(), Recorder::new(), 7);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let h = c.spawn_client(1, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.create("/f", b"0", CreateMode::Persistent).await.unwrap();
        let session = zk.session_id();
        zk.flap_connection();
        let mut failed = Vec::new();
        for _ in 0..3 {
            failed.push(zk.get_data("/f").await.map(|(d, _)| d));
        }
        zk.stop_flapping();
        let after = zk.get_data("/f").await.map(|(d, _)| d);
        (failed, after, session, zk.session_id())
    });
    let (failed, after, before, now) = h.await.unwrap();
    assert!(
        failed
            .iter()
            .all(|r| r.as_ref().err() == Some(&ZkError::ConnectionLoss)),
        "every call while flapping lost its connection: {failed:?}"
    );
    assert_eq!(after.unwrap(), b"0", "calls succeed once it stops");
    assert_eq!(before, now, "reconnects keep the session");
    c.shutdown();
}

#[madsim::test]
async fn a_lost_reply_then_flap_answers_the_retry_and_fails_the_read_after_it() {
    let mut c = Cluster::start(cfg(), Recorder::new(), 7);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let h = c.spawn_client(1, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        let session = zk.session_id();
        // Reads before the write are answered: only a lost write arms it.
        zk.lose_reply_then_flap();
        let before = zk.exists("/").await.map(|s| s.is_some());
        let first = zk.create("/c", b"", CreateMode::Ephemeral).await.map(|(p, _)| p);
        let retry = zk.create("/c", b"", CreateMode::Ephemeral).await.map(|(p, _)| p);
        let mut fate = Vec::new();
        for _ in 0..3 {
            fate.push(zk.exists("/c").await.map(|s| s.map(|s| s.ephemeral_owner)));
        }
        zk.stop_flapping_after_loss();
        let after = zk.exists("/c").await.map(|s| s.map(|s| s.ephemeral_owner));
        (before, first, retry, fate, after, session)
    });
    let (before, first, retry, fate, after, session) = h.await.unwrap();
    assert_eq!(before, Ok(true), "a read before the lost write is answered");
    assert_eq!(first, Err(ZkError::ConnectionLoss), "the write's reply is lost");
    assert_eq!(
        retry,
        Err(ZkError::NodeExists),
        "the retry is answered: the write was applied"
    );
    assert!(
        fate.iter().all(|r| r == &Err(ZkError::ConnectionLoss)),
        "every read after the retry's answer fails while it flaps: {fate:?}"
    );
    assert_eq!(after, Ok(Some(session)), "once it ends, the read finds our node");
    c.shutdown();
}

#[madsim::test]
async fn calls_from_a_recipes_background_task_are_marked() {
    let rec = Recorder::new();
    let mut c = Cluster::start(cfg(), rec.clone(), 5);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let h = c.spawn_client(1, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.exists("/").await.unwrap();
        let (tx, rx) = futures::channel::oneshot::channel();
        let bg = zk.clone();
        SimRuntime::new().spawn(async move {
            bg.exists("/").await.unwrap();
            let _ = tx.send(());
        });
        rx.await.unwrap();
        zk.exists("/").await.unwrap();
    });
    h.await.unwrap();
    let marks: Vec<bool> = rec
        .history()
        .operations()
        .unwrap()
        .iter()
        .filter(|o| matches!(o.op, Op::Exists { .. }))
        .map(|o| o.background)
        .collect();
    assert_eq!(
        marks,
        vec![false, true, false],
        "only the spawned task's call is background"
    );
    c.shutdown();
}

#[madsim::test]
async fn a_watch_event_precedes_a_read_that_reflects_it() {
    let mut c = Cluster::start(cfg(), Recorder::new(), 9);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let setup = c.spawn_client(1, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.create("/w", b"0", CreateMode::Persistent).await.unwrap();
    });
    setup.await.unwrap();
    let reader = c.spawn_client(2, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        let (_, _, w) = zk.get_data_watch("/w").await.unwrap();
        let mut w = Some(w);
        loop {
            let (d, _) = zk.get_data("/w").await.unwrap();
            if d == b"1" {
                // The event must already be here.
                let fired = w.take().unwrap().changed().now_or_never();
                return fired.map(|e| e.event_type);
            }
            madsim::time::sleep(Duration::from_millis(1)).await;
        }
    });
    let writer = c.spawn_client(3, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        madsim::time::sleep(Duration::from_millis(200)).await;
        zk.set_data("/w", b"1", ANY_VERSION).await.unwrap();
    });
    writer.await.unwrap();
    assert_eq!(reader.await.unwrap(), Some(EventType::NodeDataChanged));
    c.shutdown();
}

#[madsim::test]
async fn a_forced_expiry_ends_the_session() {
    let mut c = Cluster::start(cfg(), Recorder::new(), 11);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let a = c.spawn_client(1, 4000, |zk| async move {
        assert!(zk.wait_connected(Duration::from_secs(10)).await);
        zk.create("/mine", b"", CreateMode::Ephemeral).await.expect("create");
        zk
    });
    let a = a.await.unwrap();
    assert!(c.expire_session(a.session_id()));
    let node = c.client_node(1);
    let state = node
        .spawn(async move {
            let mut w = a.state_watch();
            for _ in 0..20 {
                if a.state().is_terminal() {
                    break;
                }
                let _ = madsim::time::timeout(Duration::from_secs(1), w.changed()).await;
            }
            a.state()
        })
        .await
        .unwrap();
    assert_eq!(state, SessionState::Expired);
    let gone = c
        .spawn_client(2, 4000, |zk| async move { zk.exists("/mine").await.unwrap() })
        .await
        .unwrap();
    assert!(gone.is_none(), "the expired session's ephemeral survived");
    c.shutdown();
}

/// The client hears from its server at least every T/3 (pings) and declares
/// the connection lost after 2T/3 of silence (ClientCnxn's read timeout).
async fn silence_detection(seed: u64) -> u64 {
    let mut c = Cluster::start(cfg(), Recorder::new(), seed);
    c.wait_for_leader(Duration::from_secs(30)).await.expect("leader");
    let zk = c
        .spawn_client(1, 6000, move |zk| async move {
            assert!(zk.wait_connected(Duration::from_secs(10)).await);
            // Idle for a while: only pings keep the connection alive. The
            // seed moves the cut across the ping period.
            madsim::time::sleep(Duration::from_millis(20_000 + seed * 347 % 2000)).await;
            assert_eq!(
                zk.state(),
                SessionState::SyncConnected,
                "an idle session lost its connection"
            );
            zk
        })
        .await
        .unwrap();
    let server = zk.server().expect("connected");
    c.cut_one_way(NodeRef::Server(server), NodeRef::Client(1));
    let cut = madsim::time::Instant::now();
    c.client_node(1)
        .spawn(async move {
            let mut w = zk.state_watch();
            while zk.state() == SessionState::SyncConnected {
                w.changed().await;
            }
        })
        .await
        .unwrap();
    let ms = cut.elapsed().as_millis() as u64;
    c.shutdown();
    ms
}

#[test]
fn silence_of_two_thirds_of_the_timeout_disconnects() {
    for seed in 0..20 {
        let ms = run_seed(seed, Some(Duration::from_secs(600)), move || silence_detection(seed))
            .unwrap_or_else(|e| panic!("{e}"));
        // Last heard at most T/3 = 2 s before the cut; read timeout 2T/3 = 4 s.
        assert!(
            (2000..=4100).contains(&ms),
            "seed {seed}: disconnected {ms} ms after the server went silent"
        );
    }
}
