//! Running step sequences on a real ZooKeeper through `RealClient`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use zkdst_real::{RealClient, RealOptions};
use zkdst_recipes::zk::{CreateMode, ZkClient, ZkError};

use crate::exec::{run_sequence, ExecOptions, Trace};
use crate::ops::Step;
use crate::proxy::FaultProxy;
use crate::real_cutoff::ProxyFaults;

/// A root name no other run in this process (or, with high probability,
/// any earlier process on the same server) uses: `/t-<pid>-<n>`.
pub fn fresh_root() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!("/t-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Connects `n` clients with `timeout` as the requested session timeout.
pub async fn connect_clients(connect: &str, n: usize, session_timeout: Duration) -> Result<Vec<RealClient>, ZkError> {
    let options = RealOptions {
        session_timeout,
        ..RealOptions::default()
    };
    let mut clients = Vec::with_capacity(n);
    for _ in 0..n {
        clients.push(RealClient::connect_with(connect, options.clone()).await?);
    }
    Ok(clients)
}

/// Creates the fresh persistent `root` (through its own session), connects
/// `clients` new sessions — each through its own [`FaultProxy`] to the
/// server at `connect` (one `127.0.0.1:port`), for the fault steps — runs
/// `steps`, and closes every session.
pub async fn run_real(
    connect: &str,
    root: &str,
    clients: usize,
    steps: &[Step],
    options: &ExecOptions,
) -> Result<Trace, ZkError> {
    let upstream: SocketAddr = connect
        .parse()
        .map_err(|e| ZkError::InvalidArgument(format!("{connect} is not one server address: {e}")))?;
    let admin = RealClient::connect(connect).await?;
    admin.create(root, b"", CreateMode::Persistent).await?;
    admin.close().await;
    let mut proxies = Vec::with_capacity(clients);
    for _ in 0..clients {
        let p = FaultProxy::start(upstream)
            .await
            .map_err(|e| ZkError::InvalidArgument(format!("starting a proxy: {e}")))?;
        proxies.push(p);
    }
    let mut sessions = Vec::with_capacity(clients);
    for p in &proxies {
        sessions.extend(connect_clients(&p.connect_string(), 1, Duration::from_secs(6)).await?);
    }
    let mut faults = ProxyFaults {
        proxies: &proxies,
        clients: &sessions,
        direct: connect.to_string(),
    };
    let trace = run_sequence(&sessions, root, steps, tokio::time::sleep, options, &mut faults).await;
    for c in &sessions {
        c.close().await;
    }
    Ok(trace)
}

/// Deletes `path` and everything under it (children first), through one
/// session. Missing nodes are fine. Bounded: at most `limit` nodes.
pub async fn delete_tree<C: ZkClient>(zk: &C, path: &str, limit: usize) -> Result<(), ZkError> {
    let mut stack = vec![(path.to_string(), false)];
    let mut budget = limit;
    while let Some((p, expanded)) = stack.pop() {
        if budget == 0 {
            return Err(ZkError::InvalidArgument(format!(
                "more than {limit} nodes under {path}"
            )));
        }
        if expanded {
            budget -= 1;
            match zk.delete(&p, -1).await {
                Ok(()) | Err(ZkError::NoNode) => {}
                Err(e) => return Err(e),
            }
            continue;
        }
        match zk.get_children(&p).await {
            Ok((children, _)) => {
                stack.push((p.clone(), true));
                for c in children {
                    stack.push((format!("{p}/{c}"), false));
                }
            }
            Err(ZkError::NoNode) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// [`run_real`] on a root that is deleted first if it exists, so that the
/// same root name can serve every run (paths decide some orders on the
/// server — a closed session's ephemerals go in Java HashSet order — so a
/// fixed root makes a run repeatable, which shrinking needs).
pub async fn run_real_reusing_root(
    connect: &str,
    root: &str,
    clients: usize,
    steps: &[Step],
    options: &ExecOptions,
) -> Result<Trace, ZkError> {
    let admin = RealClient::connect(connect).await?;
    let cleared = delete_tree(&admin, root, 10_000).await;
    admin.close().await;
    cleared?;
    run_real(connect, root, clients, steps, options).await
}
