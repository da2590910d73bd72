//! Snapshots on the simulated disk and SNAP sync, under kills (losing the
//! unsynced log tail and tearing unsynced snapshots), restarts and
//! partitions, with a small snapCount so that snapshots, log purges,
//! restarts from a snapshot and SNAP syncs all happen. Checks: no
//! acknowledged write is lost; every server ends with the same tree; the
//! history passes ZooKeeper's consistency checker; a seed replays bit for
//! bit.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use madsim::rand::Rng;
use zkdst_checker::{properties, Params, Verdict};
use zkdst_recipes::zk::{CreateMode, ZkClient, ZkError, ANY_VERSION};
use zkdst_sim::cluster::{Cluster, EnsembleConfig, NodeRef};
use zkdst_sim::disk::DiskStats;
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::zab::ZabConfig;

const CLIENTS: u32 = 3;
const CHAOS_SECS: u64 = 30;

#[derive(Debug)]
struct Outcome {
    fingerprint: u64,
    acked: usize,
    disks: DiskStats,
}

fn add(a: DiskStats, b: DiskStats) -> DiskStats {
    DiskStats {
        snapshots_written: a.snapshots_written + b.snapshots_written,
        snapshots_synced: a.snapshots_synced + b.snapshots_synced,
        snapshots_torn: a.snapshots_torn + b.snapshots_torn,
        snaps_installed: a.snaps_installed + b.snaps_installed,
        purges: a.purges + b.purges,
        purged_entries: a.purged_entries + b.purged_entries,
        loads_from_snapshot: a.loads_from_snapshot + b.loads_from_snapshot,
    }
}

async fn scenario(seed: u64, servers: u32) -> Outcome {
    let rec = Recorder::new();
    rec.set_meta("seed", seed.to_string());
    let cfg = EnsembleConfig {
        servers,
        tick_ms: 500,
        zab: ZabConfig {
            snap_count: 20,
            ..ZabConfig::default()
        },
        ..Default::default()
    };
    let mut c = Cluster::start(cfg, rec.clone(), seed);
    assert!(
        c.wait_for_leader(Duration::from_secs(30)).await.is_some(),
        "seed {seed}: no initial leader"
    );

    let acked: Arc<Mutex<BTreeSet<String>>> = Arc::new(Mutex::new(BTreeSet::new()));
    let stop = madsim::time::Instant::now() + Duration::from_secs(CHAOS_SECS);
    let mut workers = Vec::new();
    for id in 0..CLIENTS {
        let acked = acked.clone();
        workers.push(c.spawn_client(id, 4000, move |zk| async move {
            let mut n = 0u32;
            let _ = zk.create("/shared", b"0", CreateMode::Persistent).await;
            while madsim::time::Instant::now() < stop && !zk.state().is_terminal() {
                match madsim::rand::thread_rng().gen_range(0..8) {
                    0..=3 => {
                        n += 1;
                        let path = format!("/c{id}-{n}");
                        if zk.create(&path, b"v", CreateMode::Persistent).await.is_ok() {
                            acked.lock().unwrap().insert(path);
                        }
                    }
                    4 => {
                        let _ = zk
                            .set_data("/shared", format!("{id}-{n}").as_bytes(), ANY_VERSION)
                            .await;
                    }
                    5 => {
                        let _ = zk
                            .create(&format!("/e{id}-"), b"", CreateMode::EphemeralSequential)
                            .await;
                    }
                    6 => {
                        if zk.sync("/").await.is_ok() {
                            let _ = zk.get_children("/").await;
                        }
                    }
                    _ => {
                        let _ = zk.get_data("/shared").await;
                    }
                }
                madsim::time::sleep(Duration::from_millis(madsim::rand::thread_rng().gen_range(5..40))).await;
            }
        }));
    }

    // Nemesis: servers stay down or cut off for a few seconds, long enough
    // for the others to snapshot and purge past them.
    let ids = c.server_ids();
    while madsim::time::Instant::now() < stop {
        madsim::time::sleep(Duration::from_millis(madsim::rand::thread_rng().gen_range(1000..3000))).await;
        match madsim::rand::thread_rng().gen_range(0..6) {
            0 => {
                let s = ids[madsim::rand::thread_rng().gen_range(0..ids.len())];
                let rest: Vec<NodeRef> = c.nodes().into_iter().filter(|n| *n != NodeRef::Server(s)).collect();
                c.partition(&[vec![NodeRef::Server(s)], rest]);
            }
            1 => {
                if let Some(l) = c.leader() {
                    c.kill_server(l, true);
                }
            }
            2 | 3 => {
                let s = ids[madsim::rand::thread_rng().gen_range(0..ids.len())];
                let lose = madsim::rand::thread_rng().gen_bool(0.5);
                c.kill_server(s, lose);
            }
            _ => c.heal_all(),
        }
    }
    for w in workers {
        assert!(
            madsim::time::timeout(Duration::from_secs(120), w).await.is_ok(),
            "seed {seed}: a worker is stuck 120 s after the chaos ended"
        );
    }

    c.heal_all();
    assert!(
        c.wait_for_leader(Duration::from_secs(60)).await.is_some(),
        "seed {seed}: no leader within 60 s of healing"
    );
    let probe = c.spawn_client(100, 4000, |zk| async move {
        for _ in 0..50 {
            match zk.create("/probe", b"", CreateMode::Persistent).await {
                Ok(_) | Err(ZkError::NodeExists) => return true,
                Err(_) => madsim::time::sleep(Duration::from_millis(500)).await,
            }
        }
        false
    });
    assert!(probe.await.unwrap(), "seed {seed}: no write succeeded after healing");
    let mut converged = false;
    for _ in 0..600 {
        let st: Vec<_> = ids.iter().filter_map(|id| c.status(*id)).collect();
        if st.len() == ids.len()
            && st
                .iter()
                .all(|s| s.serving && s.tree.last_zxid() == st[0].tree.last_zxid())
        {
            for (i, s) in st.iter().enumerate() {
                assert_eq!(
                    s.tree.digest(),
                    st[0].tree.digest(),
                    "seed {seed}: server {} has a different tree at zxid {:#x}",
                    ids[i],
                    s.tree.last_zxid()
                );
            }
            for p in acked.lock().unwrap().iter() {
                assert!(st[0].tree.exists(p), "seed {seed}: acknowledged create {p} lost");
            }
            converged = true;
            break;
        }
        madsim::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(converged, "seed {seed}: servers did not converge after healing");
    let disks = ids
        .iter()
        .filter_map(|id| c.disk_stats(*id))
        .fold(DiskStats::default(), add);
    c.shutdown();
    madsim::time::sleep(Duration::from_millis(1)).await;

    let h = rec.history();
    let result = properties::registry::run("zk-consistency", &h, &Params::default()).expect("known checker");
    assert_eq!(
        result.verdict,
        Verdict::Pass,
        "seed {seed}: {}",
        zkdst_checker::report::render_text(&h, std::slice::from_ref(&result))
    );
    let acked = acked.lock().unwrap().len();
    Outcome {
        fingerprint: h.fingerprint(),
        acked,
        disks,
    }
}

fn seeds(default: u64) -> u64 {
    std::env::var("ZKDST_SIM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
fn snapshots_purges_and_snap_syncs_under_chaos() {
    let mut total = DiskStats::default();
    for seed in 0..seeds(8) {
        let servers = if seed % 2 == 0 { 3 } else { 5 };
        let o = run_seed(seed, Some(Duration::from_secs(600)), move || scenario(seed, servers))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(o.acked > 20, "seed {seed}: only {} acknowledged creates", o.acked);
        assert!(o.disks.snapshots_synced > 0, "seed {seed}: {:?}", o.disks);
        total = add(total, o.disks);
    }
    eprintln!("{total:?}");
    // Each mechanism ran, not just the happy path.
    assert!(total.purges > 0, "{total:?}");
    assert!(total.snaps_installed > 0, "{total:?}");
    assert!(total.loads_from_snapshot > 0, "{total:?}");
    // A crash tearing an unsynced snapshot needs a kill within its ~2 ms
    // fsync: rare here, so the zab unit tests (`restart_falls_back_past_an_
    // unsynced_snapshot`, the snapshot chaos world) cover it.
}

#[test]
fn a_snapshot_run_replays_bit_for_bit() {
    for seed in [11u64, 12] {
        let a = run_seed(seed, None, move || scenario(seed, 3)).unwrap_or_else(|e| panic!("{e}"));
        let b = run_seed(seed, None, move || scenario(seed, 3)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            a.fingerprint, b.fingerprint,
            "seed {seed}: two runs gave different histories"
        );
        assert_eq!(a.disks, b.disks);
    }
}
