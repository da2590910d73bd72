//! Running step sequences on the simulator: a fresh 1-server simulated
//! ensemble per sequence, configured like the real standalone server
//! (tick, extended types, no reaping during a run, children in a stable
//! order), with one `SimClient` per client, all in one simulated run.

use std::time::Duration;

use zkdst_recipes::zk::{CreateMode, ZkClient, ZkError};
use zkdst_sim::client::{AnyClient, ClientConfig, ClientKind, SimClient};
use zkdst_sim::cluster::{Cluster, EnsembleConfig};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;
use zkdst_sim::tree::PrepConfig;
use zkdst_sim::zab::ServerId;

use crate::exec::{run_sequence, ExecOptions, Trace};
use crate::ops::Step;
use crate::pinning::{leader_first, pinned_member};
use crate::sim_cutoff::SimFaults;

/// Settings of the simulated ensemble, mirroring a [`crate::ServerOptions`].
#[derive(Debug, Clone)]
pub struct SimOptions {
    pub servers: u32,
    pub tick_ms: u64,
    pub extended_types: bool,
    pub container_check_ms: u64,
    /// The session timeout clients ask for.
    pub session_timeout_ms: i32,
    /// Virtual-time bound of a run.
    pub time_limit: Duration,
    /// Each client connects to one server only, the one [`crate::pinning`]
    /// gives it (as the real ensemble runs pin theirs).
    pub pinned: bool,
    /// The sequence's sessions: zkdst's simulated client, or an installed
    /// client library through the servers' wire port.
    pub client: ClientKind,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            servers: 1,
            tick_ms: 200,
            extended_types: true,
            container_check_ms: 3_600_000,
            session_timeout_ms: 6000,
            time_limit: Duration::from_secs(600),
            pinned: false,
            client: ClientKind::Sim,
        }
    }
}

impl SimOptions {
    /// The ensemble configuration these options describe.
    pub fn ensemble(&self) -> EnsembleConfig {
        EnsembleConfig {
            servers: self.servers,
            tick_ms: self.tick_ms,
            prep: PrepConfig {
                extended_types_enabled: self.extended_types,
                ..PrepConfig::default()
            },
            shuffle_children: false,
            container_check_ms: self.container_check_ms,
            wire: matches!(self.client, ClientKind::Library(_)),
            ..EnsembleConfig::default()
        }
    }
}

/// Client id of the session that creates the root.
const ADMIN: u32 = 1000;

/// Why a simulated run could not be set up or did not finish.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimRunError {
    #[error("no leader")]
    NoLeader,
    #[error("client {client} task: {message}")]
    ClientTask { client: u32, message: String },
    #[error("client {0} did not connect")]
    NotConnected(u32),
    #[error("client {0} did not connect to server {1}")]
    NotConnectedTo(u32, ServerId),
    #[error("creating the root: {0}")]
    Root(ZkError),
    /// The simulation itself failed (a panic, the time limit).
    #[error("{0}")]
    Simulation(String),
}

/// Connects simulated client `id` on its own node and waits until it is
/// connected. Call inside the simulation.
pub async fn connect_sim_client(
    cluster: &mut Cluster,
    id: u32,
    session_timeout_ms: i32,
) -> Result<SimClient, SimRunError> {
    let zk = cluster
        .spawn_client(id, session_timeout_ms, |zk| async move { zk })
        .await
        .map_err(|e| SimRunError::ClientTask {
            client: id,
            message: e.to_string(),
        })?;
    if !zk.wait_connected(Duration::from_secs(30)).await {
        return Err(SimRunError::NotConnected(id));
    }
    Ok(zk)
}

/// Connects `n` simulated clients (ids 0..n, each on its own node) and
/// waits until every one is connected. Call inside the simulation.
pub async fn connect_sim_clients(
    cluster: &mut Cluster,
    n: usize,
    session_timeout_ms: i32,
) -> Result<Vec<SimClient>, SimRunError> {
    let mut handles = Vec::with_capacity(n);
    for i in 0..n {
        handles.push(cluster.spawn_client(i as u32, session_timeout_ms, |zk| async move { zk }));
    }
    let mut clients = Vec::with_capacity(n);
    for (i, h) in handles.into_iter().enumerate() {
        let zk = h.await.map_err(|e| SimRunError::ClientTask {
            client: i as u32,
            message: e.to_string(),
        })?;
        if !zk.wait_connected(Duration::from_secs(30)).await {
            return Err(SimRunError::NotConnected(i as u32));
        }
        clients.push(zk);
    }
    Ok(clients)
}

/// Connects client `id` (on its own node) to `server` only, and waits
/// until it is connected. Call inside the simulation.
pub async fn connect_sim_client_to(
    cluster: &mut Cluster,
    id: u32,
    server: ServerId,
    session_timeout_ms: i32,
) -> Result<SimClient, SimRunError> {
    let cfg = ClientConfig {
        id,
        servers: vec![server],
        session_timeout_ms,
    };
    let recorder = cluster.recorder().clone();
    let zk = cluster
        .client_node(id)
        .spawn(async move { SimClient::connect(cfg, recorder) })
        .await
        .map_err(|e| SimRunError::ClientTask {
            client: id,
            message: e.to_string(),
        })?;
    if !zk.wait_connected(Duration::from_secs(30)).await {
        return Err(SimRunError::NotConnectedTo(id, server));
    }
    Ok(zk)
}

/// Starts client `id` of `options.client` on its own node, connecting to
/// `servers`. Call inside the simulation.
fn spawn_any(
    cluster: &mut Cluster,
    id: u32,
    servers: Vec<ServerId>,
    options: &SimOptions,
) -> madsim::task::JoinHandle<AnyClient> {
    let cfg = ClientConfig {
        id,
        servers,
        session_timeout_ms: options.session_timeout_ms,
    };
    let (recorder, kind) = (cluster.recorder().clone(), options.client);
    cluster
        .client_node(id)
        .spawn(async move { AnyClient::connect(kind, cfg, recorder) })
}

/// The run's clients, pinned or not as `options` say: each waited for
/// until connected (pinned ones one after the other).
async fn connect(cluster: &mut Cluster, n: usize, options: &SimOptions) -> Result<Vec<AnyClient>, SimRunError> {
    let started = |id: u32, r: Result<AnyClient, _>| {
        r.map_err(|e: madsim::task::JoinError| SimRunError::ClientTask {
            client: id,
            message: e.to_string(),
        })
    };
    let mut clients = Vec::with_capacity(n);
    if options.pinned {
        let order = leader_first(cluster.leader().ok_or(SimRunError::NoLeader)?, cluster.server_ids());
        for i in 0..n {
            let server = *pinned_member(&order, i);
            let zk = started(i as u32, spawn_any(cluster, i as u32, vec![server], options).await)?;
            if !zk.wait_connected(Duration::from_secs(30)).await {
                return Err(SimRunError::NotConnectedTo(i as u32, server));
            }
            clients.push(zk);
        }
        return Ok(clients);
    }
    let servers = cluster.server_ids();
    let handles: Vec<_> = (0..n)
        .map(|i| spawn_any(cluster, i as u32, servers.clone(), options))
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let zk = started(i as u32, h.await)?;
        if !zk.wait_connected(Duration::from_secs(30)).await {
            return Err(SimRunError::NotConnected(i as u32));
        }
        clients.push(zk);
    }
    Ok(clients)
}

/// Runs `steps` on a fresh simulated ensemble under `root` (created first
/// by its own session) with `clients` sessions, on a fresh OS thread under
/// madsim `seed`.
pub fn run_sim(
    seed: u64,
    options: &SimOptions,
    root: &str,
    clients: usize,
    steps: &[Step],
    exec: &ExecOptions,
) -> Result<Trace, SimRunError> {
    let (options, root, steps, exec) = (options.clone(), root.to_string(), steps.to_vec(), exec.clone());
    let limit = options.time_limit;
    run_seed(seed, Some(limit), move || async move {
        if let ClientKind::Library(library) = options.client {
            (library.enter)();
        }
        let mut cluster = Cluster::start(options.ensemble(), Recorder::new(), seed);
        if cluster.wait_for_leader(Duration::from_secs(60)).await.is_none() {
            cluster.shutdown();
            return Err(SimRunError::NoLeader);
        }
        let admin_root = root.clone();
        let admin = cluster.spawn_client(ADMIN, options.session_timeout_ms, move |zk| async move {
            if !zk.wait_connected(Duration::from_secs(30)).await {
                return Err(SimRunError::NotConnected(ADMIN));
            }
            let r = zk.create(&admin_root, b"", CreateMode::Persistent).await;
            zk.close().await;
            r.map(|_| ()).map_err(SimRunError::Root)
        });
        let created = admin
            .await
            .map_err(|e| SimRunError::ClientTask {
                client: ADMIN,
                message: e.to_string(),
            })
            .and_then(|r| r);
        let result = match created {
            Ok(()) => match connect(&mut cluster, clients, &options).await {
                Ok(sessions) => {
                    let mut faults = SimFaults {
                        cluster: &mut cluster,
                        clients: &sessions,
                        tick_ms: options.tick_ms,
                    };
                    let trace = run_sequence(&sessions, &root, &steps, madsim::time::sleep, &exec, &mut faults).await;
                    for c in &sessions {
                        c.close().await;
                    }
                    Ok(trace)
                }
                Err(e) => Err(e),
            },
            Err(e) => Err(e),
        };
        cluster.shutdown();
        madsim::time::sleep(Duration::from_millis(1)).await;
        result
    })
    .map_err(|e| SimRunError::Simulation(e.to_string()))?
}
