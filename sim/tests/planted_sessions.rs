//! Planted session-handling bugs caught by the checkers: expired but still
//! acting (a lock used without fencing; fencing), stale-session adoption
//! (mutex), suspended ignored (a partitioner on group membership; fencing
//! on the partitions' writes) and reset livelock (liveness). The correct
//! recipes pass the same seeds under the same faults.

mod planted_common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{select_biased, FutureExt};
use planted_common::*;
use zkdst_checker::history::{History, Op, Outcome, Value};
use zkdst_recipes::election::LeaderLatch;
use zkdst_recipes::lock::{Lock, LockGuard};
use zkdst_recipes::membership::{GroupMember, GroupView, MemberStatus};
use zkdst_recipes::planted::{PlainGuard, ResetLivelockLatch, StaleSessionLock, SuspendedIgnoredMember, UnfencedLock};
use zkdst_recipes::zk::{SessionState, ZkClient, ZkResult};
use zkdst_recipes::RecipeResult;
use zkdst_sim::client::SimClient;
use zkdst_sim::cluster::NodeRef;
use zkdst_sim::runtime::SimRuntime;

const LOCK: &str = "/locks/l";

struct Shared {
    stop: Flag,
    handles: Handles,
    holder: Holder,
    /// The protected resource: the highest token it accepted.
    highest: Mutex<i64>,
}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        stop: Flag::default(),
        handles: Handles::default(),
        holder: Holder::default(),
        highest: Mutex::new(i64::MIN),
    })
}

async fn wait_holder(h: &Holder) -> Option<u32> {
    for _ in 0..250 {
        if let Some(c) = h.get() {
            return Some(c);
        }
        sleep_ms(20).await;
    }
    None
}

// --- expired but still acting: UnfencedLock ---

async fn fencing_worker(i: usize, zk: SimClient, v: Variant, servers: Vec<u32>, s: Arc<Shared>) {
    let mut zk = zk;
    s.handles.set(i, &zk);
    while !s.stop.is_set() {
        if zk.state().is_terminal() {
            zk = reconnect(zk.id(), servers.clone(), zk.recorder());
            s.handles.set(i, &zk);
        }
        let c = ctx(zk.clone());
        let id = invoke(
            &zk,
            Op::Acquire {
                lock: LOCK.into(),
                shared: false,
            },
        );
        // The planted guard has no token: the resource gets none (but the
        // history records the node's czxid, to order the writes).
        let (token, fenced, release): (i64, bool, futures::future::BoxFuture<'static, ()>) = match v {
            Variant::Planted => match UnfencedLock::new(c, LOCK).acquire().await {
                Ok(g) => (g.czxid_for_history(), false, Box::pin(g.release())),
                Err(e) => {
                    fail(&zk, id, e);
                    sleep_ms(100).await;
                    continue;
                }
            },
            Variant::Correct => match Lock::new(c, LOCK).acquire().await {
                Ok(g) => (
                    g.token(),
                    true,
                    Box::pin(async move {
                        let _ = g.release_and_wait().await;
                    }),
                ),
                Err(e) => {
                    fail(&zk, id, e);
                    sleep_ms(100).await;
                    continue;
                }
            },
        };
        ok(&zk, id, Value::Token { token });
        s.holder.set(Some(zk.id()));
        for _ in 0..10 {
            let w = invoke(
                &zk,
                Op::FencedWrite {
                    resource: "db".into(),
                    token,
                },
            );
            let accepted = {
                let mut hi = s.highest.lock().unwrap();
                if fenced && token < *hi {
                    false
                } else {
                    *hi = (*hi).max(token);
                    true
                }
            };
            if accepted {
                ok(&zk, w, Value::Unit);
            } else {
                fail(&zk, w, "stale fencing token rejected");
            }
            sleep_ms(100).await;
        }
        s.holder.set(None);
        let r = invoke(&zk, Op::Release { lock: LOCK.into() });
        release.await;
        ok(&zk, r, Value::Unit);
        sleep_ms(rand_ms(0, 50)).await;
    }
}

async fn unfenced_scenario(seed: u64, v: Variant) -> History {
    let (mut c, rec) = start(seed).await;
    let s = shared();
    let servers = c.server_ids();
    for i in 0..3 {
        let (s2, sv) = (s.clone(), servers.clone());
        drop(c.spawn_client(i as u32, SESSION_MS, move |zk| fencing_worker(i, zk, v, sv, s2)));
    }
    sleep_ms(rand_ms(1000, 3000)).await;
    // A stop-the-world pause of the holder, three session timeouts long.
    if let Some(h) = wait_holder(&s.holder).await {
        c.pause(NodeRef::Client(h));
        sleep_ms(3 * SESSION_MS as u64).await;
        c.resume(NodeRef::Client(h));
    }
    sleep_ms(3000).await;
    heal_and_finish(c, rec, &s.stop, 3000).await
}

#[test]
fn unfenced_lock_lets_an_expired_holder_act() {
    hunt(
        "UnfencedLock",
        "expired but still acting",
        5,
        &["fencing"],
        &params(),
        unfenced_scenario,
    );
}

// --- stale-session adoption: StaleSessionLock ---

enum Sg {
    Plain(PlainGuard<SimClient, SimRuntime>),
    Correct(LockGuard<SimClient, SimRuntime>),
}

async fn stale_acquire(zk: &SimClient, v: Variant) -> RecipeResult<(i64, Sg)> {
    let c = ctx(zk.clone());
    match v {
        Variant::Planted => {
            let g = StaleSessionLock::new(c, LOCK, format!("client{}", zk.id()))
                .acquire()
                .await?;
            Ok((g.token(), Sg::Plain(g)))
        }
        Variant::Correct => {
            let g = Lock::new(c, LOCK).acquire().await?;
            Ok((g.token(), Sg::Correct(g)))
        }
    }
}

async fn stale_release(g: Sg) {
    match g {
        Sg::Plain(g) => g.release().await,
        Sg::Correct(g) => {
            let _ = g.release_and_wait().await;
        }
    }
}

/// The application: hold the lock for a while; if the connection drops
/// meanwhile, it distrusts the handle, opens a new session, acquires the
/// lock on it, and closes the old handle a second later.
async fn stale_worker(i: usize, zk: SimClient, v: Variant, servers: Vec<u32>, s: Arc<Shared>) {
    let mut zk = zk;
    s.handles.set(i, &zk);
    let mut carried: Option<(u64, RecipeResult<(i64, Sg)>)> = None;
    while !s.stop.is_set() {
        if zk.state().is_terminal() {
            zk = reconnect(zk.id(), servers.clone(), zk.recorder());
            s.handles.set(i, &zk);
        }
        let (id, r) = match carried.take() {
            Some(x) => x,
            None => {
                let id = invoke(
                    &zk,
                    Op::Acquire {
                        lock: LOCK.into(),
                        shared: false,
                    },
                );
                (id, stale_acquire(&zk, v).await)
            }
        };
        let (token, g) = match r {
            Ok(x) => x,
            Err(e) => {
                fail(&zk, id, e);
                sleep_ms(100).await;
                continue;
            }
        };
        ok(&zk, id, Value::Token { token });
        s.holder.set(Some(zk.id()));
        let mut states = zk.state_watch();
        let hold = sleep_ms(rand_ms(1000, 3000)).fuse();
        futures::pin_mut!(hold);
        let trouble = loop {
            select_biased! {
                _ = hold => break false,
                st = states.changed().fuse() => if st == SessionState::Disconnected { break true },
            }
        };
        s.holder.set(None);
        if !trouble {
            let r = invoke(&zk, Op::Release { lock: LOCK.into() });
            stale_release(g).await;
            ok(&zk, r, Value::Unit);
            sleep_ms(rand_ms(0, 50)).await;
            continue;
        }
        // New handle; the old one (and its guard) is closed a second later.
        let old = zk.clone();
        zk = reconnect(zk.id(), servers.clone(), zk.recorder());
        s.handles.set(i, &zk);
        drop(madsim::task::spawn(async move {
            sleep_ms(1000).await;
            old.close().await;
            drop(g);
        }));
        if !zk.wait_connected(Duration::from_secs(30)).await {
            continue;
        }
        let id = invoke(
            &zk,
            Op::Acquire {
                lock: LOCK.into(),
                shared: false,
            },
        );
        carried = Some((id, stale_acquire(&zk, v).await));
    }
}

async fn stale_scenario(seed: u64, v: Variant) -> History {
    let (mut c, rec) = start(seed).await;
    let s = shared();
    let servers = c.server_ids();
    for i in 0..3 {
        let (s2, sv) = (s.clone(), servers.clone());
        drop(c.spawn_client(i as u32, SESSION_MS, move |zk| stale_worker(i, zk, v, sv, s2)));
    }
    sleep_ms(1000).await;
    for _ in 0..3 {
        if let Some(h) = wait_holder(&s.holder).await {
            sleep_ms(rand_ms(100, 800)).await;
            if let Some(zk) = s.handles.get(h as usize) {
                zk.drop_connection();
            }
        }
        sleep_ms(rand_ms(2000, 4000)).await;
    }
    heal_and_finish(c, rec, &s.stop, 5000).await
}

#[test]
fn stale_session_lock_adopts_the_old_sessions_node() {
    hunt(
        "StaleSessionLock",
        "stale-session adoption",
        5,
        &["mutex"],
        &params(),
        stale_scenario,
    );
}

// --- suspended ignored: a partitioner on SuspendedIgnoredMember ---

const GROUP: &str = "/groups/g";
const PARTITIONS: usize = 2;

enum Member {
    Planted(SuspendedIgnoredMember),
    Correct(GroupMember),
}

impl Member {
    fn status(&self) -> MemberStatus {
        match self {
            Member::Planted(m) => m.status(),
            Member::Correct(m) => m.status(),
        }
    }
    fn view(&self) -> Option<GroupView> {
        match self {
            Member::Planted(m) => m.view(),
            Member::Correct(m) => m.view(),
        }
    }
}

struct PartShared {
    go: Flag,
    act_stop: Flag,
    stop: Flag,
    sizes: Mutex<[usize; 2]>,
}

/// A partitioner: partition p belongs to the member at p mod n of the
/// sorted view; an owner writes to its partitions with the view's zxid as
/// its ownership epoch. The partitions do not check epochs.
async fn part_worker(i: u32, v: Variant, servers: Vec<u32>, rec: zkdst_sim::recorder::Recorder, s: Arc<PartShared>) {
    let me = format!("m{i}");
    let rec2 = rec.clone();
    let connect = move || {
        let (servers, rec) = (servers.clone(), rec2.clone());
        async move { ZkResult::Ok(reconnect(i, servers, &rec)) }
    };
    let rt = SimRuntime::new();
    let m = match v {
        Variant::Planted => Member::Planted(SuspendedIgnoredMember::join(connect, rt, GROUP, &me, vec![])),
        Variant::Correct => Member::Correct(GroupMember::join(connect, rt, GROUP, &me, vec![])),
    };
    while !s.stop.is_set() {
        sleep_ms(200).await;
        let Some(view) = m.view() else { continue };
        s.sizes.lock().unwrap()[i as usize] = view.members.len();
        if !s.go.is_set() || s.act_stop.is_set() || m.status() != MemberStatus::Joined || view.members.is_empty() {
            continue;
        }
        for p in 0..PARTITIONS {
            if view.members[p % view.members.len()] == me {
                let id = rec.invoke(
                    i,
                    None,
                    Op::FencedWrite {
                        resource: format!("partition-{p}"),
                        token: view.zxid,
                    },
                );
                rec.complete(id, i, Outcome::Ok { value: Value::Unit }, None);
            }
        }
    }
    drop(m);
}

async fn partitioner_scenario(seed: u64, v: Variant) -> History {
    let (mut c, rec) = start(seed).await;
    let s = Arc::new(PartShared {
        go: Flag::default(),
        act_stop: Flag::default(),
        stop: Flag::default(),
        sizes: Mutex::new([0; 2]),
    });
    let servers = c.server_ids();
    for i in 0..2u32 {
        let (s2, sv, r2) = (s.clone(), servers.clone(), rec.clone());
        let node = c.client_node(i);
        drop(node.spawn(part_worker(i, v, sv, r2, s2)));
    }
    // Start acting once both members see the whole group.
    for _ in 0..300 {
        if *s.sizes.lock().unwrap() == [2, 2] {
            break;
        }
        sleep_ms(100).await;
    }
    s.go.set();
    sleep_ms(rand_ms(1000, 3000)).await;
    let all: Vec<NodeRef> = servers.iter().map(|x| NodeRef::Server(*x)).collect();
    c.partition(&[vec![NodeRef::Client(0)], all]);
    sleep_ms(3 * SESSION_MS as u64).await;
    s.act_stop.set();
    heal_and_finish(c, rec, &s.stop, 2000).await
}

#[test]
fn suspended_ignored_member_makes_two_owners() {
    hunt(
        "SuspendedIgnoredMember",
        "suspended ignored",
        5,
        &["fencing"],
        &params(),
        partitioner_scenario,
    );
}

// --- reset livelock: ResetLivelockLatch ---

const ELECTION: &str = "/election/e";

enum Latch {
    Planted(ResetLivelockLatch),
    Correct(LeaderLatch),
}

impl Latch {
    fn start(zk: &SimClient, v: Variant) -> Latch {
        let c = ctx(zk.clone());
        match v {
            Variant::Planted => Latch::Planted(ResetLivelockLatch::start(&c, ELECTION)),
            Variant::Correct => Latch::Correct(LeaderLatch::start(&c, ELECTION, vec![], Duration::ZERO)),
        }
    }
    async fn leadership(&self) -> RecipeResult<i64> {
        match self {
            Latch::Planted(l) => l.leadership().await,
            Latch::Correct(l) => l.leadership().await,
        }
    }
    async fn not_leader(&self) {
        match self {
            Latch::Planted(l) => l.not_leader().await,
            Latch::Correct(l) => l.not_leader().await,
        }
    }
}

async fn latch_worker(i: usize, zk: SimClient, v: Variant, servers: Vec<u32>, s: Arc<Shared>) {
    let mut zk = zk;
    s.handles.set(i, &zk);
    zk.wait_connected(Duration::from_secs(30)).await;
    let mut latch = Latch::start(&zk, v);
    while !s.stop.is_set() {
        if zk.state().is_terminal() {
            zk = reconnect(zk.id(), servers.clone(), zk.recorder());
            s.handles.set(i, &zk);
            zk.wait_connected(Duration::from_secs(30)).await;
            latch = Latch::start(&zk, v);
        }
        let id = invoke(
            &zk,
            Op::Campaign {
                election: ELECTION.into(),
            },
        );
        match latch.leadership().await {
            Ok(token) => {
                ok(&zk, id, Value::Token { token });
                s.holder.set(Some(zk.id()));
                latch.not_leader().await;
                s.holder.set(None);
                let r = invoke(
                    &zk,
                    Op::Resign {
                        election: ELECTION.into(),
                    },
                );
                ok(&zk, r, Value::Unit);
            }
            Err(e) => {
                fail(&zk, id, e);
                sleep_ms(100).await;
            }
        }
    }
}

async fn livelock_scenario(seed: u64, v: Variant) -> History {
    let (mut c, rec) = start(seed).await;
    let s = shared();
    let servers = c.server_ids();
    for i in 0..5 {
        let (s2, sv) = (s.clone(), servers.clone());
        drop(c.spawn_client(i as u32, SESSION_MS, move |zk| latch_worker(i, zk, v, sv, s2)));
    }
    sleep_ms(1000).await;
    // The leader's connection drops (it reconnects with the same session).
    for _ in 0..3 {
        if let Some(h) = wait_holder(&s.holder).await {
            sleep_ms(rand_ms(100, 1000)).await;
            if let Some(zk) = s.handles.get(h as usize) {
                zk.drop_connection();
            }
        }
        sleep_ms(rand_ms(2000, 4000)).await;
    }
    heal_and_finish(c, rec, &s.stop, 5000).await
}

#[test]
fn reset_livelock_latch_never_elects() {
    hunt(
        "ResetLivelockLatch",
        "reset livelock",
        5,
        // The correct LeaderLatch re-leads with its same node (same token)
        // after a suspension: one leader per epoch, which `election` accepts.
        &["liveness", "election"],
        &params(),
        livelock_scenario,
    );
}
