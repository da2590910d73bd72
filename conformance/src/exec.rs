//! Runs a [`Step`] sequence on any [`ZkClient`] implementation and records
//! a [`Trace`]: every call's result and every one-shot watch's event.
//!
//! Steps run strictly one after another (each call is awaited before the
//! next). Watches are collected without spawning anything: each one-shot
//! watch's future is polled (never blocked on) after every step, so the
//! executor is runtime-agnostic; time passes only through the injected
//! `sleep`, which the simulator implements with virtual time.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use zkdst_recipes::zk::{Op, OpResult, SessionId, Stat, WatchedEvent, ZkClient, ZkError};

use crate::ops::{absolute, MultiStep, Step, Version};

/// What one call returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Created {
        path: String,
        stat: Stat,
    },
    Deleted,
    Exists(Option<Stat>),
    Data {
        data: Vec<u8>,
        stat: Stat,
    },
    /// Children sorted by name (ZooKeeper's order is unspecified).
    Children {
        children: Vec<String>,
        stat: Stat,
    },
    SetData(Stat),
    Multi(Vec<OpResult>),
    MultiFailed {
        error: ZkError,
        /// `None` when the whole call failed (no per-op verdict).
        index: Option<usize>,
        results: Vec<OpResult>,
    },
    Synced,
    Closed,
    Error(ZkError),
}

/// One executed step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpRecord {
    pub index: usize,
    pub step: Step,
    /// The version arguments actually sent, in op order (-1 for creates).
    pub versions: Vec<i32>,
    pub outcome: Outcome,
}

/// Which read set a one-shot watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WatchKind {
    Exists,
    Data,
    Children,
}

/// A one-shot watch a step set, and what it delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchRecord {
    pub client: usize,
    /// Index of the step that set it.
    pub set_at: usize,
    pub kind: WatchKind,
    pub path: String,
    /// The event, or `None` if it had not fired when the run ended.
    pub event: Option<WatchedEvent>,
    /// The step after which the event was first seen (timing-dependent:
    /// the normaliser drops it).
    pub seen_after: Option<usize>,
    /// When the event arrived relative to the run's other watch events:
    /// the position in the run's arrival log (every watch future is polled
    /// as soon as it exists, and its waker logs the delivery). The
    /// normaliser turns it into the rank among the same client's events.
    #[serde(default)]
    pub arrival: Option<usize>,
}

/// Everything one run observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    /// The absolute per-run root all relative paths hang under.
    pub root: String,
    /// Each client's session id, by client index.
    pub sessions: Vec<SessionId>,
    pub ops: Vec<OpRecord>,
    pub watches: Vec<WatchRecord>,
}

/// Pacing of a run.
#[derive(Debug, Clone)]
pub struct ExecOptions {
    /// Pause after every step before polling watches.
    pub step_pause: Duration,
    /// Pause at the end (after a `sync` on every open client, which makes
    /// every notification of earlier writes reach its client) before the
    /// watches are read for the last time.
    pub settle: Duration,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            step_pause: Duration::from_millis(2),
            settle: Duration::from_millis(200),
        }
    }
}

type WatchFuture = Pin<Box<dyn Future<Output = WatchedEvent> + Send>>;

/// The version of `path` as `client` sees it now (0 when it cannot be read).
async fn current_version<C: ZkClient>(client: &C, path: &str) -> i32 {
    match client.exists(path).await {
        Ok(Some(stat)) => stat.version,
        _ => 0,
    }
}

async fn resolve<C: ZkClient>(client: &C, root: &str, rel: &str, v: Version) -> i32 {
    let current = if v.needs_current() {
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
/// source of waiting.
pub async fn run_sequence<C, S, F>(clients: &[C], root: &str, steps: &[Step], sleep: S, options: &ExecOptions) -> Trace
where
    C: ZkClient,
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    let mut trace = Trace {
        root: root.to_string(),
        sessions: clients.iter().map(|c| c.session_id()).collect(),
        ops: Vec::with_capacity(steps.len()),
        watches: Vec::new(),
    };
    let mut pending: Vec<(usize, WatchFuture, Waker)> = Vec::new();
    let log: ArrivalLog = Arc::new(Mutex::new(Vec::new()));
    let mut ready_now: Vec<(usize, WatchedEvent)> = Vec::new();
    let mut closed = vec![false; clients.len()];

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
        let mut versions = Vec::new();
        let mut new_watch = |kind, path: &str, w: zkdst_recipes::zk::OneshotWatch| {
            trace.watches.push(WatchRecord {
                client: client_index,
                set_at: index,
                kind,
                path: path.to_string(),
                event: None,
                seen_after: None,
                arrival: None,
            });
            let i = trace.watches.len() - 1;
            let mut fut: WatchFuture = Box::pin(w.changed());
            // Polled at once, so that its waker is registered before the
            // event can be delivered.
            let waker = Waker::from(Arc::new(ArrivalWaker {
                log: log.clone(),
                watch: i,
            }));
            match fut.as_mut().poll(&mut Context::from_waker(&waker)) {
                Poll::Ready(event) => {
                    log.lock().unwrap_or_else(|e| e.into_inner()).push(i);
                    ready_now.push((i, event));
                }
                Poll::Pending => pending.push((i, fut, waker)),
            }
        };
        let outcome = match step {
            Step::Create { path, data, mode, .. } => match client.create(&absolute(root, path), data, *mode).await {
                Ok((path, stat)) => Outcome::Created { path, stat },
                Err(e) => Outcome::Error(e),
            },
            Step::Delete { path, version, .. } => {
                let v = resolve(client, root, path, *version).await;
                versions.push(v);
                match client.delete(&absolute(root, path), v).await {
                    Ok(()) => Outcome::Deleted,
                    Err(e) => Outcome::Error(e),
                }
            }
            Step::SetData {
                path, data, version, ..
            } => {
                let v = resolve(client, root, path, *version).await;
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
                            new_watch(WatchKind::Exists, &abs, w);
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
                            new_watch(WatchKind::Data, &abs, w);
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
                            new_watch(WatchKind::Children, &abs, w);
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
            Step::Multi { ops, .. } => {
                let mut calls = Vec::with_capacity(ops.len());
                for op in ops {
                    let v = match op.version() {
                        Some(version) => resolve(client, root, op.path(), version).await,
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
            Step::Sync { path, .. } => match client.sync(&absolute(root, path)).await {
                Ok(()) => Outcome::Synced,
                Err(e) => Outcome::Error(e),
            },
            Step::Close { .. } => {
                client.close().await;
                closed[client_index] = true;
                Outcome::Closed
            }
        };
        trace.ops.push(OpRecord {
            index,
            step: step.clone(),
            versions,
            outcome,
        });
        for (i, event) in ready_now.drain(..) {
            trace.watches[i].event = Some(event);
            trace.watches[i].seen_after = Some(index);
        }
        sleep(options.step_pause).await;
        poll_watches(&mut pending, &mut trace.watches, index);
    }

    // Every notification of an earlier write reaches a client before the
    // reply to its later sync.
    for (i, client) in clients.iter().enumerate() {
        if !closed[i] {
            let _ = client.sync("/").await;
        }
    }
    sleep(options.settle).await;
    poll_watches(&mut pending, &mut trace.watches, steps.len());
    // Arrival positions: the first time each watch's waker fired.
    let log = log.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for (pos, i) in log.into_iter().enumerate() {
        let w = &mut trace.watches[i];
        if w.event.is_some() && w.arrival.is_none() {
            w.arrival = Some(pos);
        }
    }
    trace
}

type ArrivalLog = Arc<Mutex<Vec<usize>>>;

/// A watch future's waker: logs the watch's index when woken (the client
/// delivered its event, or dropped it).
struct ArrivalWaker {
    log: ArrivalLog,
    watch: usize,
}

impl Wake for ArrivalWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).push(self.watch);
    }
}

fn poll_watches(pending: &mut Vec<(usize, WatchFuture, Waker)>, watches: &mut [WatchRecord], after: usize) {
    pending.retain_mut(
        |(i, fut, waker)| match fut.as_mut().poll(&mut Context::from_waker(waker)) {
            Poll::Ready(event) => {
                watches[*i].event = Some(event);
                watches[*i].seen_after = Some(after);
                false
            }
            Poll::Pending => true,
        },
    );
}
