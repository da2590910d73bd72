//! zookeeper-client as the simulation's client library: scenarios with
//! `[ensemble] client = "wire"` open their sessions through zkdst's
//! zookeeper-client adapter (`zkdst_real::RealClient`, the one that
//! runs against a real ZooKeeper), which speaks jute to the simulated
//! servers' wire port.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use zkdst_real::{RealClient, RealOptions};
use zkdst_recipes::zk::ZkResult;
use zkdst_sim::client::library::{DynZk, Library};
use zkdst_sim::client::ClientConfig;
use zkdst_sim::wire::WIRE_PORT;

/// The name runs record in their history's meta (`client`).
pub const NAME: &str = "zookeeper-client 0.11";

fn connect(cfg: &ClientConfig) -> BoxFuture<'static, ZkResult<Arc<dyn DynZk>>> {
    let servers = cfg
        .servers
        .iter()
        .map(|s| format!("zk{s}:{WIRE_PORT}"))
        .collect::<Vec<_>>()
        .join(",");
    let session_timeout = Duration::from_millis(cfg.session_timeout_ms.max(0) as u64);
    let options = RealOptions {
        session_timeout,
        // The library retries the servers within this; then the caller
        // starts over, as an application's connect loop would.
        connect_timeout: 2 * session_timeout,
    };
    Box::pin(async move {
        let zk = RealClient::connect_with(&servers, options).await?;
        Ok(Arc::new(zk) as Arc<dyn DynZk>)
    })
}

/// Installs zookeeper-client as this process's client library (idempotent).
pub fn install() {
    zkdst_sim::client::library::install(Library {
        enter: crate::enter,
        connect,
        name: NAME,
        command: "zkdst-wire",
        lock: Some(crate::lock::LOCK),
    });
}
