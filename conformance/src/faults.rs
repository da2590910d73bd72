//! Fault scenarios written once over any [`ZkClient`], run on the real
//! server (faults through the [`crate::FaultProxy`] or by killing a JVM) and
//! on the simulator (faults through `SimClient` / `Cluster`). Each returns
//! the client-visible outcomes as a list of lines, so that the two runs can
//! be compared with `assert_eq!`.
//!
//! Time passes only through the injected `sleep`; every wait is a bounded
//! loop of short sleeps.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures::FutureExt;
use zkdst_recipes::zk::{CreateMode, EventType, SessionState, WatchedEvent, ZkClient, ZkError, ANY_VERSION};

/// Injects a fault and heals it. Implemented by the tests for the proxy,
/// a `SimClient`'s lost reply, a simulated partition, a killed server.
pub trait Nemesis {
    fn inject(&mut self);
    fn heal(&mut self);
}

/// Waits (at most `limit`, in steps of 20 ms) until a read succeeds.
pub async fn wait_usable<C, S, F>(zk: &C, sleep: &S, limit: Duration) -> Result<(), ZkError>
where
    C: ZkClient,
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    let step = Duration::from_millis(20);
    let mut left = limit.as_millis() / step.as_millis();
    loop {
        match zk.exists("/").await {
            Ok(_) => return Ok(()),
            Err(ZkError::ConnectionLoss) if left > 0 => {
                left -= 1;
                sleep(step).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Polls `fut` every 20 ms for at most `limit`.
pub async fn wait_for<T, S, F>(
    fut: &mut Pin<Box<dyn Future<Output = T> + Send>>,
    sleep: &S,
    limit: Duration,
) -> Option<T>
where
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    let step = Duration::from_millis(20);
    for _ in 0..=(limit.as_millis() / step.as_millis()) {
        if let Some(v) = fut.as_mut().now_or_never() {
            return Some(v);
        }
        sleep(step).await;
    }
    None
}

fn event(e: &WatchedEvent, root: &str) -> String {
    let path = e.path.as_deref().map(|p| p.replacen(root, "~", 1));
    format!("{:?} {:?} {}", e.event_type, e.state, path.as_deref().unwrap_or("-"))
}

/// (a) Replies lost after the server applied the write: each write (create,
/// sequential create, delete, conditional set) reports ConnectionLoss, was
/// applied, the session survives, and the naive retry sees the consequence.
/// `zk` is the faulted client, `direct` an unfaulted one; `nemesis.inject()`
/// makes the next write's reply get lost, `heal()` ends that.
pub async fn lost_reply<C, N, S, F>(zk: &C, direct: &C, root: &str, nemesis: &mut N, sleep: S) -> Vec<String>
where
    C: ZkClient,
    N: Nemesis,
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    let mut out = Vec::new();
    let p = |rel: &str| format!("{root}/{rel}");
    let rel = |abs: &str| abs.replacen(root, "~", 1);
    let setup = async {
        direct.create(root, b"", CreateMode::Persistent).await?;
        direct.create(&p("victim"), b"", CreateMode::Persistent).await?;
        direct.create(&p("counter"), b"0", CreateMode::Persistent).await?;
        direct.create(&p("q"), b"", CreateMode::Persistent).await
    };
    if let Err(e) = setup.await {
        out.push(format!("setup failed: {e}"));
        return out;
    }
    let session = zk.session_id();
    for write in 0..4 {
        nemesis.inject();
        let result = match write {
            0 => zk.create(&p("ambig"), b"", CreateMode::Persistent).await.map(|_| ()),
            1 => zk
                .create(&p("q/item-"), b"", CreateMode::PersistentSequential)
                .await
                .map(|_| ()),
            2 => zk.delete(&p("victim"), ANY_VERSION).await,
            _ => zk.set_data(&p("counter"), b"1", 0).await.map(|_| ()),
        };
        out.push(format!("write {write}: {result:?}"));
        nemesis.heal();
        let usable = wait_usable(zk, &sleep, Duration::from_secs(15)).await;
        out.push(format!("write {write}: usable again {usable:?}"));
    }
    out.push(format!("same session: {}", zk.session_id() == session));
    out.push(format!("state: {:?}", zk.state()));
    out.push(format!(
        "ambig applied: {:?}",
        direct.exists(&p("ambig")).await.map(|s| s.is_some())
    ));
    out.push(format!(
        "queue: {:?}",
        direct.get_children(&p("q")).await.map(|(c, _)| c)
    ));
    out.push(format!(
        "victim: {:?}",
        direct.exists(&p("victim")).await.map(|s| s.is_some())
    ));
    out.push(format!(
        "counter: {:?}",
        direct.get_data(&p("counter")).await.map(|(d, s)| (d, s.version))
    ));
    // The naive retries.
    out.push(format!(
        "retry create: {:?}",
        zk.create(&p("ambig"), b"", CreateMode::Persistent)
            .await
            .map(|(p, _)| rel(&p))
    ));
    out.push(format!(
        "retry sequential create: {:?}",
        zk.create(&p("q/item-"), b"", CreateMode::PersistentSequential)
            .await
            .map(|(p, _)| rel(&p))
    ));
    out.push(format!(
        "retry delete: {:?}",
        zk.delete(&p("victim"), ANY_VERSION).await
    ));
    out.push(format!(
        "retry set: {:?}",
        zk.set_data(&p("counter"), b"1", 0).await.map(|s| s.version)
    ));
    out
}

/// (b) A client silenced past its session timeout: the server expires the
/// session (an observer's watch sees the ephemeral go), and once the
/// silence ends the client is Expired, its calls fail with SessionExpired
/// and its one-shot watch got the Expired event.
pub async fn silenced_expiry<C, N, S, F>(zk: &C, observer: &C, root: &str, nemesis: &mut N, sleep: S) -> Vec<String>
where
    C: ZkClient,
    N: Nemesis,
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    let mut out = Vec::new();
    let eph = format!("{root}/eph");
    if let Err(e) = observer.create(root, b"", CreateMode::Persistent).await {
        out.push(format!("setup failed: {e}"));
        return out;
    }
    out.push(format!("negotiated timeout: {:?}", zk.session_timeout()));
    let created = zk.create(&eph, b"", CreateMode::Ephemeral).await;
    out.push(format!(
        "ephemeral owned by the session: {:?}",
        created.map(|(_, s)| s.ephemeral_owner == zk.session_id())
    ));
    let (Ok((_, gone)), Ok((_, _, own))) = (observer.exists_watch(&eph).await, zk.get_data_watch(&eph).await) else {
        out.push("watches failed".to_string());
        return out;
    };
    let mut gone: Pin<Box<dyn Future<Output = WatchedEvent> + Send>> = Box::pin(gone.changed());
    let mut own: Pin<Box<dyn Future<Output = WatchedEvent> + Send>> = Box::pin(own.changed());

    nemesis.inject();
    let limit = zk.session_timeout() * 5;
    match wait_for(&mut gone, &sleep, limit).await {
        Some(e) => out.push(format!("observer saw: {}", event(&e, root))),
        None => out.push("observer saw nothing".to_string()),
    }
    // Silent a little longer, then heal.
    sleep(Duration::from_millis(200)).await;
    nemesis.heal();
    let step = Duration::from_millis(20);
    for _ in 0..(Duration::from_secs(20).as_millis() / step.as_millis()) {
        if zk.state().is_terminal() {
            break;
        }
        sleep(step).await;
    }
    out.push(format!("state after the heal: {:?}", zk.state()));
    out.push(format!("get_data: {:?}", zk.get_data(&eph).await.map(|_| ())));
    out.push(format!(
        "create: {:?}",
        zk.create(&format!("{root}/x"), b"", CreateMode::Persistent)
            .await
            .map(|_| ())
    ));
    match wait_for(&mut own, &sleep, Duration::from_secs(5)).await {
        Some(e) => out.push(format!("own watch: {}", event(&e, root))),
        None => out.push("own watch: nothing".to_string()),
    }
    out.push(format!(
        "ephemeral after: {:?}",
        observer.exists(&eph).await.map(|s| s.is_some())
    ));
    out
}

/// (c) The leader of a three-server ensemble killed: every client
/// reconnects with the same session, its ephemeral survives, a write works
/// again within 30 s. `clients` are connected, `nemesis.inject()` kills
/// the leader.
pub async fn leader_failover<C, N, S, F>(clients: &[C], root: &str, nemesis: &mut N, sleep: S) -> Vec<String>
where
    C: ZkClient,
    N: Nemesis,
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    let mut out = Vec::new();
    let Some(admin) = clients.first() else {
        return out;
    };
    if let Err(e) = admin.create(root, b"", CreateMode::Persistent).await {
        out.push(format!("setup failed: {e}"));
        return out;
    }
    let mut sessions = Vec::new();
    for (i, zk) in clients.iter().enumerate() {
        let r = zk
            .create(&format!("{root}/eph-{i}"), b"", CreateMode::Ephemeral)
            .await
            .map(|_| ());
        out.push(format!("client {i}: ephemeral {r:?}"));
        sessions.push(zk.session_id());
    }
    nemesis.inject();
    for (i, zk) in clients.iter().enumerate() {
        let path = format!("{root}/after-{i}");
        let step = Duration::from_millis(100);
        let mut result = Err(ZkError::ConnectionLoss);
        for _ in 0..300 {
            result = zk.create(&path, b"", CreateMode::Persistent).await.map(|_| ());
            match &result {
                Ok(()) | Err(ZkError::NodeExists) => break,
                Err(ZkError::ConnectionLoss) => sleep(step).await,
                Err(_) => break,
            }
        }
        out.push(format!(
            "client {i}: write after failover {:?}",
            result.or_else(|e| if e == ZkError::NodeExists { Ok(()) } else { Err(e) })
        ));
        out.push(format!("client {i}: same session {}", zk.session_id() == sessions[i]));
        out.push(format!("client {i}: connected {}", zk.state().is_connected()));
        let eph = zk.exists(&format!("{root}/eph-{i}")).await;
        out.push(format!(
            "client {i}: ephemeral survived, own {:?}",
            eph.map(|s| s.map(|s| s.ephemeral_owner == sessions[i]))
        ));
    }
    out
}

/// The event type and state of an expiry notification, for asserting.
pub fn is_expired_event(e: &WatchedEvent) -> bool {
    e.event_type == EventType::None && e.state == SessionState::Expired
}
