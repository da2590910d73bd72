//! The service alone: raw ZooKeeper calls (creates, conditional and blind
//! writes, ephemerals, reads, syncs, calls on odd paths) for the ZooKeeper
//! consistency checker.
//! The simulated client records every call itself.

use rand::Rng;
use zkdst_recipes::zk::{CreateMode, Op, ZkClient};

use super::odd_paths::odd_path;
use super::Env;

pub async fn client(mut env: Env) {
    let mut zk = env.connect();
    let _ = zk.create("/shared", b"0", CreateMode::Persistent).await;
    let mut n = 0u64;
    let mut held = Vec::new();
    while env.running() {
        if zk.state().is_terminal() {
            zk = env.connect();
        }
        env.ops += 1;
        let id = env.id;
        match env.rng.gen_range(0..11) {
            0..=2 => {
                n += 1;
                let _ = zk.create(&format!("/c{id}-{n}"), b"v", CreateMode::Persistent).await;
            }
            3..=4 => {
                let _ = zk.set_data("/shared", format!("{id}-{n}").as_bytes(), -1).await;
            }
            5 => {
                if let Ok((_, stat)) = zk.get_data("/shared").await {
                    let _ = zk
                        .set_data("/shared", format!("cas{id}-{n}").as_bytes(), stat.version)
                        .await;
                }
            }
            6 => {
                let _ = zk
                    .create(&format!("/e{id}-"), b"", CreateMode::EphemeralSequential)
                    .await;
            }
            7 => {
                // Watched reads, the handles held a while (SetWatches
                // re-registers them after a reconnect) and then dropped:
                // the `watches` checker judges every event the servers send.
                match env.rng.gen_range(0..4) {
                    0 => {
                        let _ = zk.get_data("/shared").await;
                    }
                    1 => {
                        if let Ok((_, _, w)) = zk.get_data_watch("/shared").await {
                            held.push(w);
                        }
                    }
                    2 => {
                        if let Ok((_, w)) = zk.exists_watch(&format!("/c{id}-{}", n + 1)).await {
                            held.push(w);
                        }
                    }
                    _ => {
                        if let Ok((_, _, w)) = zk.get_children_watch("/").await {
                            held.push(w);
                        }
                    }
                }
                if held.len() > 8 {
                    held.remove(0);
                }
            }
            8 => {
                if zk.sync("/").await.is_ok() {
                    let _ = zk.get_children("/").await;
                }
            }
            9 => {
                let _ = zk.delete(&format!("/c{id}-{}", n.max(1)), -1).await;
            }
            _ => {
                let path = odd_path(&mut env.rng);
                let _ = match env.rng.gen_range(0..6) {
                    0 => zk.create(&path, b"o", CreateMode::Persistent).await.map(drop),
                    1 => zk.create(&path, b"o", CreateMode::PersistentSequential).await.map(drop),
                    2 => zk.get_data(&path).await.map(drop),
                    3 => zk.exists(&path).await.map(drop),
                    4 => zk.get_children(&path).await.map(drop),
                    _ => zk
                        .multi(vec![
                            Op::Check {
                                path: "/shared".into(),
                                version: -1,
                            },
                            Op::Create {
                                path,
                                data: b"o".to_vec(),
                                mode: CreateMode::Persistent,
                            },
                        ])
                        .await
                        .map(drop)
                        .map_err(|e| e.error),
                };
            }
        }
        env.think().await;
    }
}
