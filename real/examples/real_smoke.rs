//! Smoke test of the real-ZooKeeper adapter against a running server:
//!
//!     scripts/zk/start-standalone.sh            # prints ZK_CONNECT=127.0.0.1:PORT
//!     cargo run -p zkdst-real --features tokio --example real_smoke -- 127.0.0.1:PORT
//!
//! Exercises create/get/set/multi/watches through the `ZkClient` interface
//! and prints every result; exits non-zero when one is not what ZooKeeper
//! answers. Everything lives under a fresh `/zkdst-smoke-<pid>-<ms>` root,
//! deleted at the end.

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use zkdst_real::{RealClient, RealOptions};
use zkdst_recipes::zk::{AddWatchMode, CreateMode, EventType, Op, OpResult, ZkClient, ZkError, ANY_VERSION};

fn check(ok: bool, what: &str, failures: &mut u32) {
    println!("{} {what}", if ok { "ok  " } else { "FAIL" });
    if !ok {
        *failures += 1;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let Some(connect) = std::env::args().nth(1) else {
        eprintln!("usage: real_smoke HOST:PORT[,HOST:PORT...]");
        return ExitCode::from(2);
    };
    match tokio::time::timeout(Duration::from_secs(60), run(&connect)).await {
        Ok(Ok(0)) => {
            println!("all checks passed");
            ExitCode::SUCCESS
        }
        Ok(Ok(n)) => {
            println!("{n} checks failed");
            ExitCode::FAILURE
        }
        Ok(Err(e)) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("error: smoke test took longer than 60 s");
            ExitCode::FAILURE
        }
    }
}

async fn run(connect: &str) -> Result<u32, ZkError> {
    let mut failures = 0;
    let options = RealOptions {
        session_timeout: Duration::from_secs(4),
        ..RealOptions::default()
    };
    let zk = RealClient::connect_with(connect, options.clone()).await?;
    let other = RealClient::connect_with(connect, options).await?;
    println!(
        "connected: session {:#x}, timeout {:?}",
        zk.session_id(),
        zk.session_timeout()
    );
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let root = format!("/zkdst-smoke-{}-{ms}", std::process::id());

    // create / get / set
    let (path, stat) = zk.create(&root, b"root", CreateMode::Persistent).await?;
    println!("create {path} -> {stat:?}");
    check(
        path == root && stat.version == 0,
        "create returns path and Stat",
        &mut failures,
    );
    let again = zk.create(&root, b"", CreateMode::Persistent).await;
    check(
        again == Err(ZkError::NodeExists),
        "second create is NodeExists",
        &mut failures,
    );
    let (data, _) = zk.get_data(&root).await?;
    check(data == b"root", "get_data reads the data back", &mut failures);
    let stat = zk.set_data(&root, b"v1", 0).await?;
    check(stat.version == 1, "set_data with the right version", &mut failures);
    let bad = zk.set_data(&root, b"v2", 0).await;
    check(
        bad == Err(ZkError::BadVersion),
        "set_data with a stale version is BadVersion",
        &mut failures,
    );
    let bad = zk.set_data(&root, b"v2", -2).await;
    check(bad == Err(ZkError::BadVersion), "-2 is not a wildcard", &mut failures);
    let invalid = zk.get_data(&format!("{root}/./x")).await;
    check(
        matches!(invalid, Err(ZkError::InvalidPath(_))),
        "a bad path is rejected before sending",
        &mut failures,
    );

    // sequential and ephemeral
    let (s0, _) = zk
        .create(&format!("{root}/s-"), b"", CreateMode::PersistentSequential)
        .await?;
    let (s1, _) = zk
        .create(&format!("{root}/s-"), b"", CreateMode::EphemeralSequential)
        .await?;
    println!("sequential: {s0} {s1}");
    check(
        s0.ends_with("s-0000000000") && s1.ends_with("s-0000000001"),
        "sequence suffixes",
        &mut failures,
    );
    let (_, eph) = zk.create(&format!("{root}/e"), b"", CreateMode::Ephemeral).await?;
    check(
        eph.ephemeral_owner == zk.session_id(),
        "ephemeral owner is the session",
        &mut failures,
    );

    // watches: other session watches, this one writes
    let (_, _, watch) = other.get_data_watch(&root).await?;
    let (_, _, child_watch) = other.get_children_watch(&root).await?;
    // On the writer's session: on 3.8 a recursive watch on the path where the same
    // session has a one-shot child watch swallows that child watch (ZOOKEEPER-4466).
    let mut persistent = zk.add_watch(&root, AddWatchMode::PersistentRecursive).await?;
    zk.set_data(&root, b"v2", ANY_VERSION).await?;
    let event = tokio::time::timeout(Duration::from_secs(5), watch.changed()).await;
    println!("data watch: {event:?}");
    check(
        matches!(&event, Ok(e) if e.event_type == EventType::NodeDataChanged),
        "data watch fires NodeDataChanged",
        &mut failures,
    );
    let event = tokio::time::timeout(Duration::from_secs(5), persistent.changed()).await;
    println!("recursive watch: {event:?}");
    check(
        matches!(&event, Ok(e) if e.event_type == EventType::NodeDataChanged),
        "persistent recursive watch fires",
        &mut failures,
    );

    // multi: success, then a failure in the middle
    let ok = zk
        .multi(vec![
            Op::Create {
                path: format!("{root}/m"),
                data: vec![],
                mode: CreateMode::Persistent,
            },
            Op::SetData {
                path: format!("{root}/m"),
                data: b"x".to_vec(),
                version: 0,
            },
            Op::Check {
                path: root.clone(),
                version: ANY_VERSION,
            },
        ])
        .await;
    println!("multi: {ok:?}");
    check(matches!(&ok, Ok(r) if r.len() == 3), "multi succeeds", &mut failures);
    let failed = zk
        .multi(vec![
            Op::Create {
                path: format!("{root}/m2"),
                data: vec![],
                mode: CreateMode::Persistent,
            },
            Op::Create {
                path: format!("{root}/m"),
                data: vec![],
                mode: CreateMode::Persistent,
            },
            Op::Delete {
                path: format!("{root}/m"),
                version: ANY_VERSION,
            },
        ])
        .await;
    println!("failed multi: {failed:?}");
    check(
        matches!(&failed, Err(e) if e.error == ZkError::NodeExists && e.index == 1
            && e.results[2] == OpResult::Error(Some(ZkError::RuntimeInconsistency))),
        "failed multi reports [OK, NodeExists, RuntimeInconsistency]",
        &mut failures,
    );
    check(
        zk.exists(&format!("{root}/m2")).await?.is_none(),
        "failed multi applied nothing",
        &mut failures,
    );

    let event = tokio::time::timeout(Duration::from_secs(5), child_watch.changed()).await;
    println!("child watch: {event:?}");
    check(
        matches!(&event, Ok(e) if e.event_type == EventType::NodeChildrenChanged),
        "child watch fires NodeChildrenChanged",
        &mut failures,
    );

    // Recipes (lock, queue, ...) will be exercised here once they exist.

    // clean up: the ephemerals go with the session
    let (_, watch) = other.exists_watch(&s1).await?;
    zk.close().await;
    let event = tokio::time::timeout(Duration::from_secs(5), watch.changed()).await;
    check(
        matches!(&event, Ok(e) if e.event_type == EventType::NodeDeleted),
        "closing the session deletes its ephemerals",
        &mut failures,
    );
    check(
        zk.get_data(&root).await == Err(ZkError::Closed),
        "a closed handle fails with Closed",
        &mut failures,
    );
    let (children, _) = other.get_children(&root).await?;
    for child in children {
        other.delete(&format!("{root}/{child}"), ANY_VERSION).await?;
    }
    other.delete(&root, ANY_VERSION).await?;
    other.close().await;
    Ok(failures)
}
