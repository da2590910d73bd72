//! Differential runs on a three-server ensemble: the real one
//! ([`crate::RealEnsemble`]) and the simulated one, with each session
//! pinned to one server ([`crate::pinning`]: client `i` to the `i`-th of
//! the members listed leader first, then the followers) so that
//! sessions on different servers see each other's writes through the
//! atomic broadcast, watches fire on followers, and reads may be stale.
//!
//! Staleness is the one thing that legitimately differs between two
//! correct runs (how far a follower lags is timing), so these runs use
//! [`ExecOptions::sync_before_reads`]: every read (and every version read
//! to resolve a symbolic version) follows a `sync` by the same client.
//! With that, every result, Stat, watch event and each client's event order
//! is determined by the order of the steps.

use std::time::Duration;

use zkdst_real::RealClient;
use zkdst_recipes::zk::{CreateMode, ZkClient, ZkError};

use crate::cutoff::NoFaults;
use crate::exec::{run_sequence, ExecOptions, Trace};
use crate::ops::{GenConfig, Step};
use crate::pinning::{leader_first, pinned_member};
use crate::real::{connect_clients, delete_tree};
use crate::server::RealEnsemble;

/// The generator settings for ensemble runs: no session fault steps (the
/// fault proxy forwards to one member; reconnects to another server are
/// the leader-failover scenario's business).
pub fn ensemble_gen() -> GenConfig {
    GenConfig {
        disconnects: false,
        expiry: false,
        ..GenConfig::default()
    }
}

/// The members' connect strings, leader first, then the followers by
/// index. `None` without a leader.
pub fn members_leader_first(ensemble: &RealEnsemble) -> Option<Vec<String>> {
    let leader = ensemble.leader()?;
    let order = leader_first(leader, 0..ensemble.len());
    Some(order.into_iter().map(|i| ensemble.addr(i).to_string()).collect())
}

/// Clears and creates `root` (through the first member), connects each
/// client to its [`pinned_member`] of `members` only, runs `steps`, and
/// closes every session.
pub async fn run_real_pinned(
    members: &[String],
    root: &str,
    clients: usize,
    steps: &[Step],
    options: &ExecOptions,
) -> Result<Trace, ZkError> {
    let first = members
        .first()
        .ok_or_else(|| ZkError::InvalidArgument("no members".into()))?;
    let admin = RealClient::connect(first).await?;
    let cleared = delete_tree(&admin, root, 10_000).await;
    let created = match cleared {
        Ok(()) => admin.create(root, b"", CreateMode::Persistent).await.map(|_| ()),
        Err(e) => Err(e),
    };
    admin.close().await;
    created?;
    let mut sessions = Vec::with_capacity(clients);
    for i in 0..clients {
        let member = pinned_member(members, i);
        sessions.extend(connect_clients(member, 1, Duration::from_secs(6)).await?);
    }
    let trace = run_sequence(&sessions, root, steps, tokio::time::sleep, options, &mut NoFaults).await;
    for c in &sessions {
        c.close().await;
    }
    Ok(trace)
}
