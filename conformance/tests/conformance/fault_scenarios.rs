//! Faults: the same scenario on the real server and on the simulator, the
//! same client-visible outcomes.

use std::future::Future;
use std::time::Duration;

use zkdst_conformance::faults::{self, Nemesis};
use zkdst_conformance::real::fresh_root;
use zkdst_conformance::sim::connect_sim_client;
use zkdst_conformance::{FaultMode, FaultProxy, RealEnsemble, ServerOptions, SimOptions};
use zkdst_recipes::zk::ZkClient;
use zkdst_sim::client::SimClient;
use zkdst_sim::cluster::{Cluster, NodeRef};
use zkdst_sim::recorder::Recorder;
use zkdst_sim::runner::run_seed;

use crate::support::{connect, run, serial, standalone};

struct ProxyNemesis<'a> {
    proxy: &'a FaultProxy,
    mode: FaultMode,
}

impl Nemesis for ProxyNemesis<'_> {
    fn inject(&mut self) {
        self.proxy.set_mode(self.mode);
    }
    fn heal(&mut self) {
        self.proxy.set_mode(FaultMode::Pass);
    }
}

/// The simulator's lost reply: the next write is applied, its reply lost,
/// the connection dropped.
struct LoseReply(SimClient);

impl Nemesis for LoseReply {
    fn inject(&mut self) {
        self.0.lose_next_write_reply();
    }
    fn heal(&mut self) {}
}

/// The simulator's silence: the client node cut off from every server.
struct Isolate<'a> {
    cluster: &'a mut Cluster,
    client: u32,
}

impl Nemesis for Isolate<'_> {
    fn inject(&mut self) {
        let servers: Vec<NodeRef> = self.cluster.server_ids().into_iter().map(NodeRef::Server).collect();
        self.cluster.partition(&[vec![NodeRef::Client(self.client)], servers]);
    }
    fn heal(&mut self) {
        self.cluster.heal();
    }
}

/// Runs `body` on a fresh simulated ensemble (`servers`, `tick_ms`) with
/// clients connected with the given session timeouts.
fn on_sim<T, B, Fut>(seed: u64, servers: u32, tick_ms: u64, timeouts: Vec<i32>, body: B) -> T
where
    T: Send + 'static,
    B: FnOnce(Cluster, Vec<SimClient>) -> Fut + Send + 'static,
    Fut: Future<Output = T> + 'static,
{
    let options = SimOptions {
        servers,
        tick_ms,
        ..SimOptions::default()
    };
    run_seed(seed, Some(Duration::from_secs(3600)), move || async move {
        let mut cluster = Cluster::start(options.ensemble(), Recorder::new(), seed);
        assert!(
            cluster.wait_for_leader(Duration::from_secs(60)).await.is_some(),
            "no leader"
        );
        let mut clients = Vec::new();
        for (i, t) in timeouts.into_iter().enumerate() {
            clients.push(connect_sim_client(&mut cluster, i as u32, t).await.expect("sim client"));
        }
        body(cluster, clients).await
    })
    .unwrap_or_else(|e| panic!("simulated run: {e}"))
}

fn assert_same_outcomes(what: &str, real: &[String], sim: &[String]) {
    eprintln!("{what}, real server:\n  {}", real.join("\n  "));
    eprintln!("{what}, simulator:\n  {}", sim.join("\n  "));
    assert_eq!(
        real, sim,
        "{what}: the simulator's outcomes differ from the real server's"
    );
}

/// (a) A reply lost after the write was applied, on both backends.
#[test]
fn fault_lost_reply_real_vs_sim() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    let mut real = Vec::new();
    run(Duration::from_secs(120), async {
        let proxy = FaultProxy::start(server.addr()).await.expect("proxy");
        let direct = connect(&server.connect_string(), 2000).await;
        let zk = connect(&proxy.connect_string(), 2000).await;
        let mut nemesis = ProxyNemesis {
            proxy: &proxy,
            mode: FaultMode::DropServerToClient,
        };
        real = faults::lost_reply(&zk, &direct, &fresh_root(), &mut nemesis, tokio::time::sleep).await;
        zk.close().await;
        direct.close().await;
    });
    let sim = on_sim(11, 1, 200, vec![2000, 2000], |mut cluster, clients| async move {
        let mut nemesis = LoseReply(clients[0].clone());
        let out = faults::lost_reply(&clients[0], &clients[1], "/lost", &mut nemesis, madsim::time::sleep).await;
        cluster.shutdown();
        out
    });
    assert_same_outcomes("lost reply", &real, &sim);
}

/// (b) A client silenced past its session timeout, on both backends.
#[test]
fn fault_silenced_expiry_real_vs_sim() {
    let _serial = serial();
    let server = standalone(ServerOptions::default());
    let mut real = Vec::new();
    run(Duration::from_secs(120), async {
        let proxy = FaultProxy::start(server.addr()).await.expect("proxy");
        let zk = connect(&proxy.connect_string(), 2000).await;
        let observer = connect(&server.connect_string(), 4000).await;
        let mut nemesis = ProxyNemesis {
            proxy: &proxy,
            mode: FaultMode::DropAll,
        };
        real = faults::silenced_expiry(&zk, &observer, &fresh_root(), &mut nemesis, tokio::time::sleep).await;
        observer.close().await;
    });
    let sim = on_sim(12, 1, 200, vec![2000, 4000], |mut cluster, clients| async move {
        let (zk, observer) = (clients[0].clone(), clients[1].clone());
        let mut nemesis = Isolate {
            cluster: &mut cluster,
            client: 0,
        };
        let out = faults::silenced_expiry(&zk, &observer, "/silenced", &mut nemesis, madsim::time::sleep).await;
        cluster.shutdown();
        out
    });
    assert_same_outcomes("silenced client", &real, &sim);
}

struct KillRealLeader<'a>(&'a mut RealEnsemble);

impl Nemesis for KillRealLeader<'_> {
    fn inject(&mut self) {
        if let Some(l) = self.0.leader() {
            self.0.kill(l);
        }
    }
    fn heal(&mut self) {}
}

struct KillSimLeader<'a>(&'a mut Cluster);

impl Nemesis for KillSimLeader<'_> {
    fn inject(&mut self) {
        if let Some(l) = self.0.leader() {
            self.0.kill_server(l, false);
        }
    }
    fn heal(&mut self) {}
}

/// (c) The leader of a three-server ensemble killed, on both backends.
#[test]
fn fault_leader_failover_real_vs_sim() {
    let _serial = serial();
    let mut ensemble = RealEnsemble::start(ServerOptions {
        tick_ms: 500,
        ..ServerOptions::default()
    })
    .unwrap_or_else(|e| panic!("starting the ensemble: {e}"));
    let connect_string = ensemble.connect_string();
    let members: Vec<String> = (0..3).map(|i| ensemble.addr(i).to_string()).collect();
    let mut real = Vec::new();
    run(Duration::from_secs(180), async {
        let mut clients = Vec::new();
        for member in &members {
            clients.push(connect(&format!("{member},{connect_string}"), 8000).await);
        }
        let mut nemesis = KillRealLeader(&mut ensemble);
        real = faults::leader_failover(&clients, &fresh_root(), &mut nemesis, tokio::time::sleep).await;
        for c in &clients {
            c.close().await;
        }
    });
    let sim = on_sim(13, 3, 500, vec![8000; 3], |mut cluster, clients| async move {
        let mut nemesis = KillSimLeader(&mut cluster);
        let out = faults::leader_failover(&clients, "/failover", &mut nemesis, madsim::time::sleep).await;
        cluster.shutdown();
        out
    });
    assert_same_outcomes("leader failover", &real, &sim);
}
