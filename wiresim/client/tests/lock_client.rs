//! zookeeper-client's own lock recipe (`Client::lock`, Curator layout) as a
//! subject under test: four application nodes contend for one lock through
//! the wire protocol while a nemesis partitions servers, kills the leader,
//! pauses clients (GC), resets connections and loses write replies. Each
//! holder writes a protected node through `LockClient::set_data` (a multi
//! that checks its lock node: ZooKeeper itself fences it) and records what
//! it did; zkdst's checkers judge the history: `mutex` (no two definite
//! holds overlap), `fencing` (the resource never accepts an older token
//! after a newer one, no token handed out twice), `replicas`.
//!
//! `ZKDST_LOCKCLIENT_SEEDS=a..b` sets the seeds (default 0..12); run a
//! campaign in release mode:
//! `ZKDST_LOCKCLIENT_SEEDS=0..10000 cargo test --release --manifest-path wiresim/Cargo.toml --test lock_client`.

use std::time::Duration;

use madsim::rand::Rng;
use zkdst_checker::history::{Op, Outcome, SessionState, Value};
use zkdst_checker::properties::registry;
use zkdst_checker::Verdict;
use zkdst_sim::cluster::{Cluster, EnsembleConfig, NodeRef};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::wire::connect_string;
use zookeeper_client as zkc;

const CLIENTS: u32 = 4;
const RUN: Duration = Duration::from_secs(20);
const LOCK: &str = "zkc-lock";
/// The lock's directory: acquires are recorded under it.
const DIR: &str = "/locks";

fn cfg() -> EnsembleConfig {
    EnsembleConfig {
        tick_ms: 500,
        wire: true,
        ..Default::default()
    }
}

fn state(s: zkc::SessionState) -> SessionState {
    match s {
        zkc::SessionState::Disconnected => SessionState::Disconnected,
        zkc::SessionState::SyncConnected => SessionState::SyncConnected,
        zkc::SessionState::ConnectedReadOnly => SessionState::ConnectedReadOnly,
        zkc::SessionState::Expired => SessionState::Expired,
        zkc::SessionState::AuthFailed => SessionState::AuthFailed,
        zkc::SessionState::Closed => SessionState::Closed,
    }
}

fn err(e: &zkc::Error) -> Outcome {
    match e {
        zkc::Error::ConnectionLoss | zkc::Error::Timeout => Outcome::Info { error: e.to_string() },
        _ => Outcome::Fail { error: e.to_string() },
    }
}

/// How the application uses the lock: correctly, or with one of two
/// planted usage bugs the checkers must catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Usage {
    Correct,
    /// Writes an external resource that does not check fencing tokens
    /// (and ZooKeeper through the plain client, not `LockClient::set_data`).
    Unfenced,
    /// Stops waiting after 30 ms and goes ahead as if it held the lock.
    ProceedOnTimeout,
}

/// One application node: connect, then take the lock, write through it,
/// release, for as long as the run lasts; a new session after expiry.
/// A resource outside ZooKeeper (a storage service): with fencing it
/// refuses a token older than the newest it accepted.
type External = std::sync::Arc<std::sync::Mutex<i64>>;

async fn app(id: u32, rec: Recorder, until: std::time::Instant, usage: Usage, external: External) {
    let servers = connect_string(3);
    while std::time::Instant::now() < until {
        let connecting = zkc::Client::connector()
            .with_session_timeout(Duration::from_secs(4))
            .connect(&servers);
        let Ok(Ok(zk)) = madsim::time::timeout(Duration::from_secs(10), connecting).await else {
            madsim::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let session = zk.session_id().0;
        rec.session_event(id, session, SessionState::SyncConnected, None);
        let mut states = zk.state_watcher();
        let srec = rec.clone();
        madsim::task::spawn(async move {
            loop {
                let s = states.changed().await;
                srec.session_event(id, session, state(s), None);
                if s.is_terminated() {
                    return;
                }
            }
        });
        loop {
            if std::time::Instant::now() >= until || zk.state().is_terminated() {
                break;
            }
            let acq = rec.invoke(
                id,
                Some(session),
                Op::Acquire {
                    lock: DIR.into(),
                    shared: false,
                },
            );
            let prefix = zkc::LockPrefix::new_curator(DIR, "lock-").expect("prefix");
            let opts = zkc::LockOptions::new(zkc::Acls::anyone_all())
                .with_ancestor_options(zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all()))
                .expect("options");
            let patience = if usage == Usage::ProceedOnTimeout {
                Duration::from_millis(30)
            } else {
                Duration::from_secs(8)
            };
            let held = match madsim::time::timeout(patience, zk.lock(prefix, b"", opts)).await {
                Ok(Ok(held)) => Some(held),
                Err(_) if usage == Usage::ProceedOnTimeout => None,
                Ok(Err(e)) => {
                    rec.complete(acq, id, err(&e), None);
                    madsim::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                Err(_) => {
                    // Gave up waiting; the library cleans up in the background.
                    rec.complete(
                        acq,
                        id,
                        Outcome::Fail {
                            error: "acquire-gave-up".into(),
                        },
                        None,
                    );
                    continue;
                }
            };
            // The fencing token: the lock node's czxid (fencing checks a
            // granted token names a lock node of the session under the dir).
            let token = match &held {
                Some(h) => match zk.check_stat(h.lock_path()).await {
                    Ok(Some(stat)) => stat.czxid,
                    _ => {
                        rec.complete(
                            acq,
                            id,
                            Outcome::Info {
                                error: "lock node unread".into(),
                            },
                            None,
                        );
                        continue;
                    }
                },
                None => 0,
            };
            rec.complete(
                acq,
                id,
                Outcome::Ok {
                    value: Value::Token { token },
                },
                None,
            );
            for _ in 0..madsim::rand::thread_rng().gen_range(1..=3) {
                let w = rec.invoke(
                    id,
                    Some(session),
                    Op::FencedWrite {
                        resource: LOCK.into(),
                        token,
                    },
                );
                let write = match (&held, usage) {
                    (Some(h), Usage::Correct) => h.set_data("/resource", &token.to_be_bytes(), None).await,
                    _ => zk.set_data("/resource", &token.to_be_bytes(), None).await,
                };
                let outcome = match write {
                    Ok(_) => Outcome::Ok { value: Value::Unit },
                    Err(zkc::Error::NoNode) | Err(zkc::Error::BadVersion) => Outcome::Ok {
                        value: Value::Error {
                            code: "StaleToken".into(),
                            results: Vec::new(),
                        },
                    },
                    Err(e) => err(&e),
                };
                rec.complete(w, id, outcome, None);
                // The external resource, a few ms later (a slow service call).
                let x = rec.invoke(
                    id,
                    Some(session),
                    Op::FencedWrite {
                        resource: "external".into(),
                        token,
                    },
                );
                madsim::time::sleep(Duration::from_millis(madsim::rand::thread_rng().gen_range(1..4))).await;
                let accepted = {
                    let mut newest = external.lock().unwrap_or_else(|e| e.into_inner());
                    let ok = usage != Usage::Correct || token >= *newest;
                    if ok {
                        *newest = (*newest).max(token);
                    }
                    ok
                };
                let value = if accepted {
                    Value::Unit
                } else {
                    Value::Error {
                        code: "StaleToken".into(),
                        results: Vec::new(),
                    }
                };
                rec.complete(x, id, Outcome::Ok { value }, None);
                let hold = madsim::rand::thread_rng().gen_range(1..40);
                madsim::time::sleep(Duration::from_millis(hold)).await;
            }
            let rel = rec.invoke(id, Some(session), Op::Release { lock: DIR.into() });
            // LockClient releases on drop (its node is deleted in the background).
            drop(held);
            rec.complete(rel, id, Outcome::Ok { value: Value::Unit }, None);
            let think = madsim::rand::thread_rng().gen_range(5..50);
            madsim::time::sleep(Duration::from_millis(think)).await;
        }
        drop(zk);
    }
}

async fn nemesis(c: &mut Cluster, until: std::time::Instant, client_nodes: &[madsim::task::NodeId]) {
    let servers = c.server_ids();
    while std::time::Instant::now() < until {
        let gap = madsim::rand::thread_rng().gen_range(300..1500);
        madsim::time::sleep(Duration::from_millis(gap)).await;
        let len = Duration::from_millis(madsim::rand::thread_rng().gen_range(500..8000));
        let kind = madsim::rand::thread_rng().gen_range(0..5);
        match kind {
            0 => {
                let s = servers[madsim::rand::thread_rng().gen_range(0..servers.len())];
                let rest: Vec<NodeRef> = c.nodes().into_iter().filter(|n| *n != NodeRef::Server(s)).collect();
                c.partition(&[vec![NodeRef::Server(s)], rest]);
                madsim::time::sleep(len).await;
                c.heal_all();
            }
            1 => {
                if let Some(l) = c.leader() {
                    c.kill_server(l, true);
                    madsim::time::sleep(len).await;
                    c.restart_server(l);
                }
            }
            2 => {
                let id = madsim::rand::thread_rng().gen_range(1..=CLIENTS);
                c.pause(NodeRef::Client(id));
                madsim::time::sleep(len).await;
                c.resume(NodeRef::Client(id));
            }
            3 => {
                let n = client_nodes[madsim::rand::thread_rng().gen_range(0..client_nodes.len())];
                zkdst_sim::wire::reset_connections(n);
            }
            _ => {
                let n = client_nodes[madsim::rand::thread_rng().gen_range(0..client_nodes.len())];
                zkdst_sim::wire::lose_next_write_reply(n);
            }
        }
    }
}

/// A seed's verdict and its history, serialized (for the replay check).
async fn one_seed_with_history(seed: u64, usage: Usage) -> (Result<usize, String>, String) {
    let rec = Recorder::new();
    let verdict = run_and_judge(seed, usage, rec.clone()).await;
    let json = serde_json::to_string(&rec.history()).unwrap_or_default();
    (verdict, json)
}

async fn run_and_judge(seed: u64, usage: Usage, rec: Recorder) -> Result<usize, String> {
    zkdst_wiresim::enter();
    let mut c = Cluster::start(cfg(), rec.clone(), seed);
    c.wait_for_leader(Duration::from_secs(30)).await.ok_or("no leader")?;
    // The protected resource: a node the holders write.
    let admin = c.client_node(CLIENTS + 1);
    admin
        .spawn(async move {
            let zk = zkc::Client::connect(&connect_string(3)).await.expect("admin session");
            let open = zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all());
            zk.create("/resource", b"", &open).await.expect("create /resource");
        })
        .await
        .map_err(|e| format!("admin: {e}"))?;
    let until = std::time::Instant::now() + RUN;
    let mut apps = Vec::new();
    let mut nodes = Vec::new();
    let external = External::default();
    for id in 1..=CLIENTS {
        let node = c.client_node(id);
        nodes.push(node.id());
        apps.push(node.spawn(app(id, rec.clone(), until, usage, external.clone())));
    }
    nemesis(&mut c, until, &nodes).await;
    c.heal_all();
    for a in apps {
        let _ = madsim::time::timeout(Duration::from_secs(60), a).await;
    }
    c.shutdown();
    let h = rec.history();
    // Writes the resource accepted: without them fencing would judge nothing.
    let accepted = h
        .operations()
        .map_err(|e| e.to_string())?
        .iter()
        .filter(|o| {
            matches!(o.op, Op::FencedWrite { .. }) && matches!(o.outcome, Some(Outcome::Ok { value: Value::Unit }))
        })
        .count();
    let mut failed = Vec::new();
    for name in ["mutex", "fencing", "replicas"] {
        let r = registry::run(name, &h, &Default::default()).map_err(|e| e.to_string())?;
        if r.verdict != Verdict::Pass {
            failed.push(zkdst_checker::report::render_text(&h, &[r]));
        }
    }
    if failed.is_empty() {
        Ok(accepted)
    } else {
        Err(failed.join("\n"))
    }
}

fn seeds() -> std::ops::Range<u64> {
    let spec = std::env::var("ZKDST_LOCKCLIENT_SEEDS").unwrap_or_else(|_| "0..12".into());
    let (a, b) = spec.split_once("..").expect("ZKDST_LOCKCLIENT_SEEDS is a..b");
    a.parse().expect("start seed")..b.parse().expect("end seed")
}

/// Runs `seeds` with `usage`: (accepted writes, failing seeds with reports).
fn campaign(seeds: std::ops::Range<u64>, usage: Usage) -> (usize, Vec<(u64, String)>) {
    let mut total = 0;
    let mut failures = Vec::new();
    for seed in seeds {
        match run_seed(seed, Some(Duration::from_secs(3600)), move || {
            one_seed_with_history(seed, usage)
        }) {
            Ok((Ok(n), _)) => total += n,
            Ok((Err(report), _)) => failures.push((seed, report)),
            Err(e) => failures.push((seed, e.to_string())),
        }
    }
    (total, failures)
}

#[test]
fn zookeeper_client_lock_keeps_mutual_exclusion_under_faults() {
    let (total, failures) = campaign(seeds(), Usage::Correct);
    eprintln!(
        "LockClient: {} seeds, {total} accepted fenced writes, {} failing",
        seeds().count(),
        failures.len()
    );
    let shown: Vec<String> = failures.iter().map(|(s, r)| format!("seed {s}:\n{r}")).collect();
    assert!(failures.is_empty(), "{}", shown.join("\n\n"));
    assert!(
        total > 0,
        "no write through the lock was accepted: the test would prove nothing"
    );
}

/// Each seed replays bit for bit through zookeeper-client: reconnects,
/// resets, lost replies and pauses included.
#[test]
fn a_faulty_lock_client_seed_replays_byte_for_byte() {
    for seed in 0..4 {
        let run = || {
            run_seed(seed, Some(Duration::from_secs(3600)), move || {
                one_seed_with_history(seed, Usage::Correct)
            })
        };
        let (a, b) = (run().expect("runs").1, run().expect("runs").1);
        assert!(a.len() > 1000, "a real history");
        assert!(a == b, "seed {seed} diverged on replay");
    }
}

/// The same harness fails on applications that misuse the lock: the
/// checkers, not this test, find them.
#[test]
fn the_checkers_catch_a_misused_lock() {
    for usage in [Usage::Unfenced, Usage::ProceedOnTimeout] {
        let (_, failures) = campaign(0..24, usage);
        eprintln!("{usage:?}: caught on {} of 24 seeds", failures.len());
        assert!(!failures.is_empty(), "{usage:?} passed every seed");
        let expected = if usage == Usage::Unfenced { "fencing" } else { "mutex" };
        assert!(
            failures.iter().any(|(_, r)| r.contains(expected)),
            "{usage:?} was not caught by {expected}: {}",
            failures[0].1
        );
    }
}

fn lock_prefix(curator: bool) -> zkc::LockPrefix<'static> {
    if curator {
        zkc::LockPrefix::new_curator("/locks", "lock-").expect("prefix")
    } else {
        zkc::LockPrefix::new_shared("/locks/lock-").expect("prefix")
    }
}

fn lock_options() -> zkc::LockOptions<'static> {
    zkc::LockOptions::new(zkc::Acls::anyone_all())
        .with_ancestor_options(zkc::CreateMode::Persistent.with_acls(zkc::Acls::anyone_all()))
        .expect("options")
}

/// The mechanism behind `scenarios/wire/library-lock.toml`'s failures, in
/// zookeeper-client 0.11.2: a contender that ends while its create is in
/// flight (its future dropped, or an error) is cleaned up in the background
/// (`LockingGuard` → `delete_ephemeral_background`). For a shared prefix
/// the cleanup deletes the node; for a Curator prefix it finds the node by
/// its uuid but deletes the bare child name — not a path, so the delete
/// fails on the client and the error is ignored — and the node stays, an
/// orphan of a live session that every later contender queues behind.
#[test]
fn zookeeper_client_leaks_the_node_of_a_curator_contender_dropped_mid_create() {
    for curator in [true, false] {
        let left = run_seed(0, Some(Duration::from_secs(3600)), move || async move {
            zkdst_wiresim::enter();
            let mut c = Cluster::start(cfg(), Recorder::new(), 0);
            c.wait_for_leader(Duration::from_secs(30)).await.expect("a leader");
            let out = c
                .client_node(1)
                .spawn(async move {
                    let holder = zkc::Client::connect(&connect_string(3)).await.expect("session");
                    let waiter = zkc::Client::connect(&connect_string(3)).await.expect("session");
                    let held = holder
                        .lock(lock_prefix(curator), b"", lock_options())
                        .await
                        .expect("lock");
                    {
                        let mut waiting = Box::pin(waiter.lock(lock_prefix(curator), b"", lock_options()));
                        // The first poll sends the create; then the caller
                        // gives up (a timeout, a select).
                        assert!(futures::poll!(waiting.as_mut()).is_pending());
                    }
                    madsim::time::sleep(Duration::from_secs(2)).await;
                    drop(held);
                    madsim::time::sleep(Duration::from_secs(2)).await;
                    let left = holder.list_children("/locks").await.expect("children");
                    (left, waiter)
                })
                .await
                .expect("client");
            c.shutdown();
            out.0
        })
        .expect("runs");
        if curator {
            assert_eq!(left.len(), 1, "the Curator contender's node: {left:?}");
            assert!(left[0].starts_with("_c_"), "{left:?}");
        } else {
            assert!(left.is_empty(), "the shared-prefix cleanup deleted it: {left:?}");
        }
    }
}
