//! The step loop: each step's call, its versions resolved first, and the
//! watches it set handed to collectors.

use std::future::Future;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::BoxStream;
use zkdst_recipes::zk::{AddWatchMode, Op, ReadOp, ReadResult, WatchedEvent, ZkClient, ZkError};

use super::collector::{collect, oneshot, persistent_events, Collector, DeliveryLog};
use super::fault::FaultRun;
use super::{ExecOptions, OpRecord, Outcome, Trace, WatchKind, WatchRecord};
use crate::cutoff::SessionFaults;
use crate::ops::{absolute, MultiStep, Step, Version};

/// The version of `path` as `client` sees it now (0 when it cannot be read).
async fn current_version<C: ZkClient>(client: &C, path: &str) -> i32 {
    match client.exists(path).await {
        Ok(Some(stat)) => stat.version,
        _ => 0,
    }
}

async fn resolve<C: ZkClient>(client: &C, root: &str, rel: &str, v: Version, sync: bool) -> i32 {
    let current = if v.needs_current() {
        if sync {
            let _ = client.sync(&absolute(root, rel)).await;
        }
        current_version(client, &absolute(root, rel)).await
    } else {
        0
    };
    v.resolve(current)
}

fn sorted(mut children: Vec<String>) -> Vec<String> {
    children.sort();
    children
}

/// Runs `steps` with `clients` (step `client` fields index into it) under
/// the existing node `root`, and records the trace. `sleep` is the only
/// source of waiting; `faults` carries out the fault steps.
pub async fn run_sequence<C, S, F, N>(
    clients: &[C],
    root: &str,
    steps: &[Step],
    sleep: S,
    options: &ExecOptions,
    faults: &mut N,
) -> Trace
where
    C: ZkClient,
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
    N: SessionFaults,
{
    let mut trace = Trace {
        root: root.to_string(),
        sessions: clients.iter().map(|c| c.session_id()).collect(),
        ops: Vec::with_capacity(steps.len()),
        watches: Vec::new(),
        deliveries: Vec::new(),
        bursts: Vec::new(),
    };
    let log: DeliveryLog = Arc::new(Mutex::new(Vec::new()));
    let mut collectors: Vec<Arc<Collector>> = Vec::new();
    let mut closed = vec![false; clients.len()];
    let mut cut = vec![false; clients.len()];
    // Clients holding a persistent watch are not disconnected: the
    // reference client, `zookeeper-client` 0.11.2, does not re-register
    // persistent watches on a reconnect (`WatchManager::resend_watches`
    // never raises the SetWatches2 index: it always sends a SetWatches
    // without them), so the real run would show a client bug, not
    // ZooKeeper's re-adding them.
    let mut persistent = vec![false; clients.len()];

    for (index, step) in steps.iter().enumerate() {
        let client_index = step.client();
        let Some(client) = clients.get(client_index) else {
            trace.ops.push(OpRecord {
                index,
                step: step.clone(),
                versions: Vec::new(),
                outcome: Outcome::Error(ZkError::InvalidArgument(format!("no client {client_index}"))),
            });
            continue;
        };
        if cut[client_index] && !matches!(step, Step::Reconnect { .. } | Step::Expire { .. }) {
            trace.ops.push(OpRecord {
                index,
                step: step.clone(),
                versions: Vec::new(),
                outcome: Outcome::NotRun,
            });
            continue;
        }
        // A watch registered on a lagging follower fires for writes it has
        // not applied yet: sync before adding one too.
        let registers_watch = matches!(step, Step::AddWatch { .. });
        if options.sync_before_reads && (step.is_read() || registers_watch) && !closed[client_index] {
            let _ = client.sync(root).await;
        }
        match step {
            Step::Disconnect { .. } | Step::Reconnect { .. } | Step::Expire { .. } => {
                let mut fault = FaultRun {
                    client,
                    index: client_index,
                    sleep: &sleep,
                    options,
                    collectors: &collectors,
                    log: &log,
                };
                let outcome = match step {
                    Step::Disconnect { .. } if !closed[client_index] && !persistent[client_index] => {
                        cut[client_index] = true;
                        fault.disconnect(faults, &mut trace, index).await
                    }
                    Step::Reconnect { .. } if cut[client_index] => {
                        cut[client_index] = false;
                        fault.reconnect(faults, &mut trace, index).await
                    }
                    Step::Expire { .. } if !closed[client_index] => {
                        let was_cut = std::mem::replace(&mut cut[client_index], false);
                        closed[client_index] = true;
                        fault.expire(faults, &mut trace, index, was_cut).await
                    }
                    _ => Outcome::NotRun,
                };
                trace.ops.push(OpRecord {
                    index,
                    step: step.clone(),
                    versions: Vec::new(),
                    outcome,
                });
                sleep(options.step_pause).await;
                collect(&collectors, &log, &mut trace, index);
                continue;
            }
            _ => {}
        }
        let mut versions = Vec::new();
        let mut new_watch = |kind, path: &str, events: BoxStream<'static, WatchedEvent>| {
            trace.watches.push(WatchRecord {
                client: client_index,
                set_at: index,
                kind,
                path: path.to_string(),
                event: None,
                events: Vec::new(),
                seen_after: None,
            });
            let c = Arc::new(Collector {
                watch: trace.watches.len() - 1,
                stream: Mutex::new(Some(events)),
                again: AtomicBool::new(false),
                log: log.clone(),
            });
            // Polled at once, so that its waker is registered before the
            // first event can be delivered.
            c.pump();
            collectors.push(c);
        };
        let outcome = match step {
            Step::Create { path, data, mode, .. } => match client.create(&absolute(root, path), data, *mode).await {
                Ok((path, stat)) => Outcome::Created { path, stat },
                Err(e) => Outcome::Error(e),
            },
            Step::Delete { path, version, .. } => {
                let v = resolve(client, root, path, *version, options.sync_before_reads).await;
                versions.push(v);
                match client.delete(&absolute(root, path), v).await {
                    Ok(()) => Outcome::Deleted,
                    Err(e) => Outcome::Error(e),
                }
            }
            Step::SetData {
                path, data, version, ..
            } => {
                let v = resolve(client, root, path, *version, options.sync_before_reads).await;
                versions.push(v);
                match client.set_data(&absolute(root, path), data, v).await {
                    Ok(stat) => Outcome::SetData(stat),
                    Err(e) => Outcome::Error(e),
                }
            }
            Step::Exists { path, watch, .. } => {
                let abs = absolute(root, path);
                if *watch {
                    match client.exists_watch(&abs).await {
                        Ok((stat, w)) => {
                            new_watch(WatchKind::Exists, &abs, oneshot(w));
                            Outcome::Exists(stat)
                        }
                        Err(e) => Outcome::Error(e),
                    }
                } else {
                    match client.exists(&abs).await {
                        Ok(stat) => Outcome::Exists(stat),
                        Err(e) => Outcome::Error(e),
                    }
                }
            }
            Step::GetData { path, watch, .. } => {
                let abs = absolute(root, path);
                if *watch {
                    match client.get_data_watch(&abs).await {
                        Ok((data, stat, w)) => {
                            new_watch(WatchKind::Data, &abs, oneshot(w));
                            Outcome::Data { data, stat }
                        }
                        Err(e) => Outcome::Error(e),
                    }
                } else {
                    match client.get_data(&abs).await {
                        Ok((data, stat)) => Outcome::Data { data, stat },
                        Err(e) => Outcome::Error(e),
                    }
                }
            }
            Step::GetChildren { path, watch, .. } => {
                let abs = absolute(root, path);
                if *watch {
                    match client.get_children_watch(&abs).await {
                        Ok((children, stat, w)) => {
                            new_watch(WatchKind::Children, &abs, oneshot(w));
                            Outcome::Children {
                                children: sorted(children),
                                stat,
                            }
                        }
                        Err(e) => Outcome::Error(e),
                    }
                } else {
                    match client.get_children(&abs).await {
                        Ok((children, stat)) => Outcome::Children {
                            children: sorted(children),
                            stat,
                        },
                        Err(e) => Outcome::Error(e),
                    }
                }
            }
            Step::MultiRead { ops, .. } => {
                let ops = ops
                    .iter()
                    .map(|op| match op {
                        ReadOp::GetData { path } => ReadOp::GetData {
                            path: absolute(root, path),
                        },
                        ReadOp::GetChildren { path } => ReadOp::GetChildren {
                            path: absolute(root, path),
                        },
                    })
                    .collect();
                match client.multi_read(ops).await {
                    Ok(results) => Outcome::Reads(
                        results
                            .into_iter()
                            .map(|r| match r {
                                ReadResult::Children { children } => ReadResult::Children {
                                    children: sorted(children),
                                },
                                other => other,
                            })
                            .collect(),
                    ),
                    Err(e) => Outcome::Error(e),
                }
            }
            Step::Multi { ops, .. } => {
                let mut calls = Vec::with_capacity(ops.len());
                for op in ops {
                    let v = match op.version() {
                        Some(version) => resolve(client, root, op.path(), version, options.sync_before_reads).await,
                        None => -1,
                    };
                    versions.push(v);
                    let path = absolute(root, op.path());
                    calls.push(match op {
                        MultiStep::Create { data, mode, .. } => Op::Create {
                            path,
                            data: data.clone(),
                            mode: *mode,
                        },
                        MultiStep::Delete { .. } => Op::Delete { path, version: v },
                        MultiStep::SetData { data, .. } => Op::SetData {
                            path,
                            data: data.clone(),
                            version: v,
                        },
                        MultiStep::Check { .. } => Op::Check { path, version: v },
                    });
                }
                match client.multi(calls).await {
                    Ok(results) => Outcome::Multi(results),
                    Err(e) => Outcome::MultiFailed {
                        error: e.error,
                        index: (e.index != usize::MAX).then_some(e.index),
                        results: e.results,
                    },
                }
            }
            Step::AddWatch { path, recursive, .. } => {
                let abs = absolute(root, path);
                let (mode, kind) = if *recursive {
                    (AddWatchMode::PersistentRecursive, WatchKind::PersistentRecursive)
                } else {
                    (AddWatchMode::Persistent, WatchKind::Persistent)
                };
                match client.add_watch(&abs, mode).await {
                    Ok(w) => {
                        persistent[client_index] = true;
                        new_watch(kind, &abs, persistent_events(w));
                        Outcome::WatchAdded
                    }
                    Err(e) => Outcome::Error(e),
                }
            }
            Step::Sync { path, .. } => match client.sync(&absolute(root, path)).await {
                Ok(()) => Outcome::Synced,
                Err(e) => Outcome::Error(e),
            },
            Step::Close { .. } => {
                client.close().await;
                closed[client_index] = true;
                Outcome::Closed
            }
            Step::Disconnect { .. } | Step::Reconnect { .. } | Step::Expire { .. } => Outcome::NotRun,
        };
        trace.ops.push(OpRecord {
            index,
            step: step.clone(),
            versions,
            outcome,
        });
        sleep(options.step_pause).await;
        collect(&collectors, &log, &mut trace, index);
    }

    // Clients still cut off (a shrunk sequence) reconnect first.
    for (i, client) in clients.iter().enumerate() {
        if cut[i] {
            let mut fault = FaultRun {
                client,
                index: i,
                sleep: &sleep,
                options,
                collectors: &collectors,
                log: &log,
            };
            fault.reconnect(faults, &mut trace, steps.len()).await;
        }
    }
    // Every notification of an earlier write reaches a client before the
    // reply to its later sync.
    for (i, client) in clients.iter().enumerate() {
        if !closed[i] {
            let _ = client.sync("/").await;
        }
    }
    sleep(options.settle).await;
    collect(&collectors, &log, &mut trace, steps.len());
    trace
}
