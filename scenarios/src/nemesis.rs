//! Carries out a fault plan on a running cluster: each fault at its time,
//! undone after its duration, and everything healed at the end of the
//! fault phase. Counts what fired (and what could not, e.g. no leader to
//! isolate) into the run's stats.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use zkdst_model::{Exercised, FaultKind, Situation};

use zkdst_sim::client::AnyClient;
use zkdst_sim::cluster::{Cluster, NodeRef};

use crate::plan::{Fault, FaultPlan, Node};
use crate::stats::Stats;

/// The current session handle of every client, for connection faults.
pub type ClientRegistry = Arc<Mutex<BTreeMap<u32, AnyClient>>>;

/// Whose connections the client faults aim at.
pub enum Conns {
    /// The workload's sessions, by their current handles.
    Sessions(ClientRegistry),
    /// Real clients of a served ensemble: the streams their proxies hold
    /// on each client's simulated node (`zkdst serve`).
    Served(BTreeMap<u32, madsim::task::NodeId>),
}

impl Conns {
    fn session(&self, client: u32) -> Option<AnyClient> {
        match self {
            Conns::Sessions(r) => r.lock().unwrap_or_else(|e| e.into_inner()).get(&client).cloned(),
            Conns::Served(_) => None,
        }
    }

    fn served_node(&self, client: u32) -> Option<madsim::task::NodeId> {
        match self {
            Conns::Served(nodes) => nodes.get(&client).copied(),
            Conns::Sessions(_) => None,
        }
    }
}

fn node_ref(n: Node) -> NodeRef {
    match n {
        Node::Server(s) => NodeRef::Server(s),
        Node::Client(c) => NodeRef::Client(c),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Undo(usize),
    Start(usize),
}

/// What a fault left behind, to undo.
enum Undo {
    Nothing,
    Network,
    Restart(u32),
    Resume(NodeRef),
    Latency,
    /// The session handle whose connection flaps (not the client's current
    /// one at the undo: the workload may have renewed it meanwhile).
    StopFlapping(AnyClient),
    /// The same, for lose-reply-then-flap.
    StopFlappingAfterLoss(AnyClient),
}

/// madsim's default link latency, restored after a spike.
pub const DEFAULT_LATENCY: (Duration, Duration) = (Duration::from_millis(1), Duration::from_millis(10));

/// Runs `plan` from `t0` (virtual), stopping at `end_ms` after `t0`.
pub async fn run_plan(
    c: &mut Cluster,
    plan: &FaultPlan,
    clients: &Conns,
    t0: madsim::time::Instant,
    end_ms: u64,
    stats: &mut Stats,
) {
    let mut steps: Vec<(u64, Step)> = Vec::new();
    for (i, f) in plan.faults.iter().enumerate() {
        if f.at_ms >= end_ms {
            continue;
        }
        steps.push((f.at_ms, Step::Start(i)));
        if !f.fault.is_instant() {
            steps.push((f.at_ms.saturating_add(f.duration_ms.max(1)), Step::Undo(i)));
        }
    }
    steps.sort();
    let mut undo: BTreeMap<usize, Undo> = BTreeMap::new();
    for (at, step) in steps {
        if at >= end_ms {
            break;
        }
        let when = t0 + Duration::from_millis(at);
        let now = madsim::time::Instant::now();
        if when > now {
            madsim::time::sleep(when - now).await;
        }
        match step {
            Step::Start(i) => {
                let f = &plan.faults[i].fault;
                let applied = c.injecting(f.kind(), |c| apply(c, f, plan.faults[i].duration_ms, clients));
                match applied {
                    Some(u) => {
                        stats.add(Exercised::Fault(f.kind()), 1);
                        undo.insert(i, u);
                    }
                    None => stats.add(Exercised::Skipped(f.kind()), 1),
                }
            }
            Step::Undo(i) => {
                if let Some(u) = undo.remove(&i) {
                    match u {
                        Undo::Nothing => {}
                        Undo::Network => c.heal(),
                        Undo::Restart(s) => {
                            if !c.is_up(s) {
                                c.restart_server(s)
                            }
                        }
                        Undo::Resume(n) => c.resume(n),
                        Undo::Latency => c.restore_latency(DEFAULT_LATENCY.0, DEFAULT_LATENCY.1),
                        Undo::StopFlapping(h) => h.stop_flapping(),
                        Undo::StopFlappingAfterLoss(h) => h.stop_flapping_after_loss(),
                    }
                }
            }
        }
    }
    let end = t0 + Duration::from_millis(end_ms);
    let now = madsim::time::Instant::now();
    if end > now {
        madsim::time::sleep(end - now).await;
    }
    // The fault phase is over: no connection keeps flapping into the
    // liveness phase (the heal after it restores the rest).
    for u in undo.into_values() {
        match u {
            Undo::StopFlapping(h) => h.stop_flapping(),
            Undo::StopFlappingAfterLoss(h) => h.stop_flapping_after_loss(),
            _ => {}
        }
    }
}

fn all_servers(c: &Cluster) -> Vec<NodeRef> {
    c.server_ids().into_iter().map(NodeRef::Server).collect()
}

fn apply(c: &mut Cluster, f: &Fault, duration_ms: u64, clients: &Conns) -> Option<Undo> {
    let servers = c.server_ids();
    let has_server = |s: &u32| servers.contains(s);
    match f {
        Fault::PartitionHalves { groups } => {
            let gs: Vec<Vec<NodeRef>> = groups
                .iter()
                .map(|g| g.iter().map(|n| node_ref(*n)).collect())
                .collect();
            c.partition(&gs);
            Some(Undo::Network)
        }
        Fault::IsolateLeader => {
            let l = c.leader()?;
            let rest: Vec<NodeRef> = c.nodes().into_iter().filter(|n| *n != NodeRef::Server(l)).collect();
            c.partition(&[vec![NodeRef::Server(l)], rest]);
            Some(Undo::Network)
        }
        Fault::MajoritiesRing { order } | Fault::Bridge { order } => {
            let order: Vec<u32> = order.iter().copied().filter(|s| has_server(s)).collect();
            let n = order.len();
            if n < 3 {
                return None;
            }
            // Pairs that stay connected.
            let mut keep = std::collections::BTreeSet::new();
            if matches!(f, Fault::MajoritiesRing { .. }) {
                for i in 0..n {
                    let j = (i + 1) % n;
                    keep.insert((order[i].min(order[j]), order[i].max(order[j])));
                }
            } else {
                // Halves order[..mid] and order[mid+1..], bridged by order[mid].
                let mid = n / 2;
                for i in 0..n {
                    for j in 0..n {
                        let same = (i < mid && j < mid) || (i > mid && j > mid);
                        if i != j && (same || i == mid || j == mid) {
                            keep.insert((order[i].min(order[j]), order[i].max(order[j])));
                        }
                    }
                }
            }
            c.heal();
            let mut cut = Vec::new();
            for &a in &order {
                for &b in &order {
                    if a < b && !keep.contains(&(a, b)) {
                        c.cut(NodeRef::Server(a), NodeRef::Server(b));
                        c.cut(NodeRef::Server(b), NodeRef::Server(a));
                        cut.push(format!("zk{a}<->zk{b}"));
                    }
                }
            }
            c.recorder()
                .fault(f.kind(), cut.clone(), format!("cut {}", cut.join(", ")));
            Some(Undo::Network)
        }
        Fault::OneWayCut { from, to } => {
            c.cut_one_way(node_ref(*from), node_ref(*to));
            Some(Undo::Network)
        }
        Fault::ClientCut { client, servers: ss } => {
            let me = NodeRef::Client(*client);
            let mut targets = Vec::new();
            for s in ss.iter().filter(|s| has_server(s)) {
                c.cut(me, NodeRef::Server(*s));
                c.cut(NodeRef::Server(*s), me);
                targets.push(format!("zk{s}"));
            }
            c.recorder().fault(
                FaultKind::ClientCut,
                vec![me.to_string()],
                format!("{me} cut from {}", targets.join(",")),
            );
            Some(Undo::Network)
        }
        Fault::KillLeader { lose_unsynced } => {
            let l = c.leader()?;
            c.kill_server(l, *lose_unsynced);
            Some(Undo::Restart(l))
        }
        Fault::KillServer { server, lose_unsynced } => {
            if !c.is_up(*server) {
                return None;
            }
            c.kill_server(*server, *lose_unsynced);
            Some(Undo::Restart(*server))
        }
        Fault::DropConnection { client } => {
            if let Some(node) = clients.served_node(*client) {
                c.recorder()
                    .fault(FaultKind::DropConnection, vec![format!("client{client}")], "");
                zkdst_sim::wire::reset_connections(node);
                return Some(Undo::Nothing);
            }
            let h = clients.session(*client)?;
            // The client records the fault itself (once).
            h.drop_connection();
            Some(Undo::Nothing)
        }
        Fault::LoseReply { client } => {
            if let Some(node) = clients.served_node(*client) {
                c.recorder().fault(
                    FaultKind::LoseReply,
                    vec![format!("client{client}")],
                    "the next write applies; its reply is lost",
                );
                zkdst_sim::wire::lose_next_write_reply(node);
                return Some(Undo::Nothing);
            }
            let h = clients.session(*client)?;
            h.lose_next_write_reply();
            Some(Undo::Nothing)
        }
        Fault::ExpireSession { client } => {
            let me = NodeRef::Client(*client);
            c.partition(&[vec![me], all_servers(c)]);
            Some(Undo::Network)
        }
        Fault::ExpireAfterRead { client } => {
            let h = clients.session(*client)?;
            // The client records the fault itself; a library's client cannot take it.
            h.expire_after_next_read().then_some(Undo::Nothing)
        }
        Fault::FlapConnection { client } => {
            let h = clients.session(*client)?;
            // The client records the fault itself; a library's client cannot take it.
            h.flap_connection().then(|| Undo::StopFlapping(h.clone()))
        }
        Fault::LoseReplyThenFlap { client } => {
            let h = clients.session(*client)?;
            // The client records the fault itself; a library's client cannot take it.
            h.lose_reply_then_flap().then(|| Undo::StopFlappingAfterLoss(h.clone()))
        }
        Fault::Pause { node } => {
            let n = node_ref(*node);
            if let NodeRef::Server(s) = n {
                if !c.is_up(s) {
                    return None;
                }
            }
            c.pause(n);
            Some(Undo::Resume(n))
        }
        Fault::LatencySpike { min_ms, max_ms } => {
            c.set_latency(Duration::from_millis(*min_ms), Duration::from_millis(*max_ms));
            Some(Undo::Latency)
        }
        Fault::DeleteRecipeDir { path, client } => {
            delete_recipe_dir(c, path, *client, duration_ms);
            Some(Undo::Nothing)
        }
    }
}

/// An operator's session deletes `path` once it is empty (a recipe's
/// directory between uses), trying every 20 ms for `duration_ms`; records
/// the attempt as a fault and a deletion as exercised.
fn delete_recipe_dir(c: &mut Cluster, path: &str, client: u32, duration_ms: u64) {
    // The operator's session: as short as servers grant (2 ticks), so a
    // deletion that never happens leaves little behind.
    let timeout = (2 * c.config().tick_ms).min(i32::MAX as u64) as i32;
    let rec = c.recorder().clone();
    rec.fault(
        FaultKind::DeleteRecipeDir,
        vec![path.to_string()],
        format!("by client{client} while empty"),
    );
    let path = path.to_string();
    let deadline = madsim::time::Instant::now() + Duration::from_millis(duration_ms.max(1));
    drop(c.spawn_client(client, timeout, move |zk| async move {
        use zkdst_recipes::zk::{ZkClient, ZkError};
        while madsim::time::Instant::now() < deadline {
            match zk.delete(&path, -1).await {
                Ok(()) => {
                    rec.note(None, Situation::RecipeDirDeleted.note());
                    break;
                }
                Err(ZkError::NoNode) => break,
                Err(_) => madsim::time::sleep(Duration::from_millis(20)).await,
            }
        }
        zk.close().await;
    }));
}
