//! The fault proxy against the real server: lost replies, a silenced
//! session, connections closed, leader failover.

use std::time::{Duration, Instant};

use zkdst_conformance::real::fresh_root;
use zkdst_conformance::{FaultMode, FaultProxy, RealEnsemble, ServerOptions};
use zkdst_recipes::zk::{CreateMode, EventType, SessionState, ZkClient, ZkError, ANY_VERSION};

use crate::support::{connect, run, serial, standalone, wait_state, wait_usable};

/// (a) + zookeeper-semantics.md §1.10: responses lost after the request was
/// applied. Every write reports ConnectionLoss, every write was applied, and
/// the naive retry sees the consequence.
#[test]
fn connection_loss_after_apply() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    run(Duration::from_secs(90), async {
        let proxy = FaultProxy::start(server.addr()).await.expect("proxy");
        let direct = connect(&server.connect_string(), 2000).await;
        let zk = connect(&proxy.connect_string(), 2000).await;
        let session = zk.session_id();
        let root = fresh_root();
        direct.create(&root, b"", CreateMode::Persistent).await.expect("root");
        let p = |rel: &str| format!("{root}/{rel}");
        direct
            .create(&p("victim"), b"", CreateMode::Persistent)
            .await
            .expect("victim");
        direct
            .create(&p("counter"), b"0", CreateMode::Persistent)
            .await
            .expect("counter");
        direct.create(&p("q"), b"", CreateMode::Persistent).await.expect("q");
        let mut states = zk.state_watch();

        // Lose the responses of one write of each kind; heal after each.
        let mut lost = Vec::new();
        for write in 0..4 {
            proxy.set_mode(FaultMode::DropServerToClient);
            let dropped_before = proxy.stats().dropped_to_client;
            let accepted_before = proxy.stats().accepted;
            let started = Instant::now();
            let result = match write {
                0 => zk.create(&p("ambig"), b"", CreateMode::Persistent).await.map(|_| ()),
                1 => zk
                    .create(&p("q/item-"), b"", CreateMode::PersistentSequential)
                    .await
                    .map(|_| ()),
                2 => zk.delete(&p("victim"), ANY_VERSION).await,
                _ => zk.set_data(&p("counter"), b"1", 0).await.map(|_| ()),
            };
            lost.push(started.elapsed());
            assert_eq!(result, Err(ZkError::ConnectionLoss), "write {write}");
            assert!(
                proxy.stats().dropped_to_client > dropped_before,
                "no response was dropped"
            );
            proxy.set_mode(FaultMode::Pass);
            // The state watcher keeps only the latest state, so a quick
            // Disconnected → SyncConnected may show as SyncConnected alone;
            // the proxy's accepted count shows the reconnect itself.
            let seen = wait_state(&mut states, SessionState::SyncConnected, Duration::from_secs(10)).await;
            assert_eq!(
                seen.last(),
                Some(&SessionState::SyncConnected),
                "write {write}: {seen:?}"
            );
            wait_usable(&zk, Duration::from_secs(10))
                .await
                .expect("usable after the heal");
            assert!(
                proxy.stats().accepted > accepted_before,
                "write {write}: the client did not reconnect after losing the reply"
            );
        }
        eprintln!(
            "ConnectionLoss after {lost:?} (session timeout {:?})",
            zk.session_timeout()
        );
        assert_eq!(zk.session_id(), session, "reconnected with the same session");

        // All four were applied.
        assert!(direct.exists(&p("ambig")).await.expect("exists").is_some());
        let (items, _) = direct.get_children(&p("q")).await.expect("children");
        assert_eq!(items, vec!["item-0000000000".to_string()]);
        assert_eq!(direct.exists(&p("victim")).await.expect("exists"), None);
        let (data, stat) = direct.get_data(&p("counter")).await.expect("counter");
        assert_eq!((data.as_slice(), stat.version), (&b"1"[..], 1));

        // The naive retries.
        assert_eq!(
            zk.create(&p("ambig"), b"", CreateMode::Persistent).await.map(|_| ()),
            Err(ZkError::NodeExists)
        );
        let (dup, _) = zk
            .create(&p("q/item-"), b"", CreateMode::PersistentSequential)
            .await
            .expect("retried sequential create");
        assert_eq!(dup, p("q/item-0000000001"), "a duplicate item");
        assert_eq!(zk.delete(&p("victim"), ANY_VERSION).await, Err(ZkError::NoNode));
        assert_eq!(zk.set_data(&p("counter"), b"1", 0).await, Err(ZkError::BadVersion));
        zk.close().await;
        direct.close().await;
    });
}

/// (b) A client silenced (both directions) past its session timeout: the
/// server expires the session and deletes its ephemeral; after the heal the
/// client is Expired and every call fails with SessionExpired.
#[test]
fn silenced_client_expires() {
    let _serial = serial();
    let server = standalone(ServerOptions::default()); // tick 200 ms
    run(Duration::from_secs(90), async {
        let proxy = FaultProxy::start(server.addr()).await.expect("proxy");
        let observer = connect(&server.connect_string(), 4000).await;
        let zk = connect(&proxy.connect_string(), 2000).await;
        let t = zk.session_timeout();
        assert_eq!(t, Duration::from_millis(2000), "negotiated within [2, 20] ticks");
        let root = fresh_root();
        observer.create(&root, b"", CreateMode::Persistent).await.expect("root");
        let eph = format!("{root}/eph");
        let (_, stat) = zk.create(&eph, b"", CreateMode::Ephemeral).await.expect("ephemeral");
        assert_eq!(stat.ephemeral_owner, zk.session_id());
        let (_, gone) = observer.exists_watch(&eph).await.expect("watch");
        let (_, _, own_watch) = zk.get_data_watch(&eph).await.expect("own watch");
        let mut states = zk.state_watch();

        let silenced = Instant::now();
        proxy.set_mode(FaultMode::DropAll);
        let event = tokio::time::timeout(Duration::from_secs(15), gone.changed())
            .await
            .expect("the server expires the session");
        let server_expiry = silenced.elapsed();
        assert_eq!(event.event_type, EventType::NodeDeleted);
        // The server counts from the last packet it heard (a ping up to
        // ~T/5 before the silence began), rounded up to a tick.
        assert!(
            server_expiry >= t - Duration::from_millis(500),
            "expired after {server_expiry:?}, well before the timeout {t:?}"
        );
        let seen = wait_state(&mut states, SessionState::Expired, Duration::from_secs(1)).await;
        let before_heal = silenced.elapsed();
        proxy.set_mode(FaultMode::Pass);
        let seen_after = wait_state(&mut states, SessionState::Expired, Duration::from_secs(15)).await;
        let client_expiry = silenced.elapsed();
        eprintln!(
            "silenced: server expired the session after {server_expiry:?}; client states by \
             {before_heal:?} (before heal): {seen:?}; after heal: {seen_after:?} at {client_expiry:?}"
        );
        assert_eq!(zk.state(), SessionState::Expired);
        assert_eq!(zk.get_data(&eph).await, Err(ZkError::SessionExpired));
        assert_eq!(observer.exists(&eph).await.expect("exists"), None);
        let own = tokio::time::timeout(Duration::from_secs(5), own_watch.changed())
            .await
            .expect("the one-shot watch hears of the expiry");
        assert_eq!(own.event_type, EventType::None);
        assert_eq!(own.state, SessionState::Expired);
        assert!(proxy.stats().dropped_to_server > 0, "the proxy dropped the pings");
        observer.close().await;
    });
}

/// `close_all`: every connection closed at once; the client reconnects with
/// the same session and in-flight-free state is intact.
#[test]
fn proxy_close_all_reconnects_same_session() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    run(Duration::from_secs(60), async {
        let proxy = FaultProxy::start(server.addr()).await.expect("proxy");
        let zk = connect(&proxy.connect_string(), 2000).await;
        let root = fresh_root();
        zk.create(&root, b"", CreateMode::Persistent).await.expect("root");
        let eph = format!("{root}/e");
        zk.create(&eph, b"", CreateMode::Ephemeral).await.expect("eph");
        let session = zk.session_id();
        let mut states = zk.state_watch();
        let accepted = proxy.stats().accepted;
        proxy.close_all();
        wait_usable(&zk, Duration::from_secs(10)).await.expect("usable again");
        // Disconnected then SyncConnected, unless the two coalesced.
        let mut seen = vec![states.state()];
        while let Ok(s) = tokio::time::timeout(Duration::from_millis(50), states.changed()).await {
            seen.push(s);
        }
        eprintln!("close_all: states {seen:?}");
        assert_eq!(seen.last(), Some(&SessionState::SyncConnected), "{seen:?}");
        assert!(proxy.stats().accepted > accepted, "reconnected through the proxy");
        assert_eq!(zk.session_id(), session);
        assert!(zk.exists(&eph).await.expect("exists").is_some());
        zk.close().await;
    });
}

/// (c) Killing the leader of a 3-server ensemble: clients reconnect with the
/// same session ids, their ephemerals survive, writes work again.
#[test]
fn leader_failover_keeps_sessions() {
    let _serial = serial();
    let mut ensemble = RealEnsemble::start(ServerOptions {
        tick_ms: 500,
        ..ServerOptions::default()
    })
    .unwrap_or_else(|e| panic!("starting the ensemble: {e}"));
    let leader = ensemble.leader().expect("a leader");
    let connect_string = ensemble.connect_string();
    // One member per client as its first choice, so clients sit on
    // followers as well as on the leader.
    let clients: Vec<String> = (0..3).map(|i| ensemble.addr(i).to_string()).collect();
    let mut rt_clients = Vec::new();
    run(Duration::from_secs(120), async {
        let root = fresh_root();
        let admin = connect(&connect_string, 8000).await;
        admin.create(&root, b"", CreateMode::Persistent).await.expect("root");
        for (i, member) in clients.iter().enumerate() {
            // Each client starts on its own member, and may fail over to any.
            let list = format!("{member},{connect_string}");
            let zk = connect(&list, 8000).await;
            let eph = format!("{root}/eph-{i}");
            zk.create(&eph, b"", CreateMode::Ephemeral).await.expect("ephemeral");
            let states = zk.state_watch();
            rt_clients.push((zk, eph, states));
        }
        let sessions: Vec<i64> = rt_clients.iter().map(|(zk, _, _)| zk.session_id()).collect();

        let killed = Instant::now();
        ensemble.kill(leader);
        let new_leader =
            tokio::task::block_in_place(|| ensemble.wait_for_leader(Duration::from_secs(30))).expect("a new leader");
        let elected = killed.elapsed();
        assert_ne!(new_leader, leader);

        for (i, (zk, eph, states)) in rt_clients.iter_mut().enumerate() {
            // A write works again (bounded retries while reconnecting).
            let deadline = Instant::now() + Duration::from_secs(30);
            let path = format!("{root}/after-{i}");
            loop {
                match zk.create(&path, b"", CreateMode::Persistent).await {
                    Ok(_) | Err(ZkError::NodeExists) => break,
                    Err(ZkError::ConnectionLoss) if Instant::now() < deadline => {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(e) => panic!("client {i}: write after failover failed: {e}"),
                }
            }
            let mut seen = vec![states.state()];
            while let Ok(s) = tokio::time::timeout(Duration::from_millis(10), states.changed()).await {
                seen.push(s);
            }
            eprintln!(
                "failover: client {i} states {seen:?}, writable {:?} after the kill",
                killed.elapsed()
            );
            assert_eq!(zk.session_id(), sessions[i], "client {i} kept its session");
            assert!(zk.state().is_connected(), "client {i}: {:?}", zk.state());
            let stat = zk.exists(eph).await.expect("exists").expect("ephemeral survived");
            assert_eq!(stat.ephemeral_owner, sessions[i]);
        }
        eprintln!("failover: leader {leader} killed, member {new_leader} elected after {elected:?}");
        for (zk, _, _) in &rt_clients {
            zk.close().await;
        }
        admin.close().await;
    });
}
