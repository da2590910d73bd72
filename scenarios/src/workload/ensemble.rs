//! The service alone: raw ZooKeeper calls (creates, conditional and blind
//! writes, ephemerals, reads, syncs) for the ZooKeeper consistency checker.
//! The simulated client records every call itself.

use rand::Rng;
use zkdst_recipes::zk::{CreateMode, ZkClient};

use super::Env;

pub async fn client(mut env: Env) {
    let mut zk = env.connect();
    let _ = zk.create("/shared", b"0", CreateMode::Persistent).await;
    let mut n = 0u64;
    while env.running() {
        if zk.state().is_terminal() {
            zk = env.connect();
        }
        env.ops += 1;
        let id = env.id;
        match env.rng.gen_range(0..10) {
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
                let _ = zk.get_data("/shared").await;
            }
            8 => {
                if zk.sync("/").await.is_ok() {
                    let _ = zk.get_children("/").await;
                }
            }
            _ => {
                let _ = zk.delete(&format!("/c{id}-{}", n.max(1)), -1).await;
            }
        }
        env.think().await;
    }
}
