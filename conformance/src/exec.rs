//! Runs a [`Step`] sequence on any [`ZkClient`] implementation and records
//! a [`Trace`]: every call's result and every one-shot watch's event.
//!
//! Steps run strictly one after another (each call is awaited before the
//! next). Watches are collected without spawning anything: each watch's
//! events are drained by a [`Collector`] that is its own waker (so events
//! are logged in the order the client delivers them) and polled after every
//! step; the executor is runtime-agnostic, and time passes only through the
//! injected `sleep`, which the simulator implements with virtual time.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use futures::stream::{BoxStream, StreamExt};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use zkdst_recipes::zk::{AddWatchMode, Op, OpResult, SessionId, Stat, WatchedEvent, ZkClient, ZkError};

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
    WatchAdded,
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
    /// `addWatch` PERSISTENT.
    Persistent,
    /// `addWatch` PERSISTENT_RECURSIVE.
    PersistentRecursive,
}

/// A watch a step set (one-shot or persistent), and what it delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchRecord {
    pub client: usize,
    /// Index of the step that set it.
    pub set_at: usize,
    pub kind: WatchKind,
    pub path: String,
    /// The (first) event, or `None` if it had not fired when the run ended.
    pub event: Option<WatchedEvent>,
    /// Every event, in order (at most one for a one-shot watch).
    #[serde(default)]
    pub events: Vec<WatchedEvent>,
    /// The step after which the event was first seen (timing-dependent:
    /// the normaliser drops it).
    pub seen_after: Option<usize>,
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
    /// Every delivered event as the index of its watch, in the order the
    /// clients delivered them (see [`Collector`]): the k-th occurrence of
    /// watch `i` is `watches[i].events[k]`.
    #[serde(default)]
    pub deliveries: Vec<usize>,
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
        deliveries: Vec::new(),
    };
    let log: DeliveryLog = Arc::new(Mutex::new(Vec::new()));
    let mut collectors: Vec<Arc<Collector>> = Vec::new();
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
            Step::AddWatch { path, recursive, .. } => {
                let abs = absolute(root, path);
                let (mode, kind) = if *recursive {
                    (AddWatchMode::PersistentRecursive, WatchKind::PersistentRecursive)
                } else {
                    (AddWatchMode::Persistent, WatchKind::Persistent)
                };
                match client.add_watch(&abs, mode).await {
                    Ok(w) => {
                        new_watch(kind, &abs, persistent(w));
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

/// Pumps every collector (in case an event arrived without a wake) and
/// moves newly logged deliveries into the trace.
fn collect(collectors: &[Arc<Collector>], log: &DeliveryLog, trace: &mut Trace, after: usize) {
    for c in collectors {
        c.pump();
    }
    let new: Vec<(usize, WatchedEvent)> = std::mem::take(&mut *log.lock().unwrap_or_else(|e| e.into_inner()));
    for (i, event) in new {
        let w = &mut trace.watches[i];
        if w.event.is_none() {
            w.event = Some(event.clone());
            w.seen_after = Some(after);
        }
        w.events.push(event);
        trace.deliveries.push(i);
    }
}

fn oneshot(w: zkdst_recipes::zk::OneshotWatch) -> BoxStream<'static, WatchedEvent> {
    futures::stream::once(w.changed()).boxed()
}

/// A persistent watch's events until (and including) a terminal session
/// event.
fn persistent(w: zkdst_recipes::zk::PersistentWatch) -> BoxStream<'static, WatchedEvent> {
    futures::stream::unfold(Some(w), |w| async move {
        let mut w = w?;
        let e = w.changed().await;
        let end = e.is_session_event() && e.state.is_terminal();
        Some((e, (!end).then_some(w)))
    })
    .boxed()
}

type DeliveryLog = Arc<Mutex<Vec<(usize, WatchedEvent)>>>;

/// One watch's events, taken out of the client's channel the moment the
/// client delivers them: the collector is its own stream's waker, and when
/// woken (inside the client's send) it drains the stream into the run's
/// delivery log. So the log holds every client's events in the order that
/// client delivered them, across watches.
pub struct Collector {
    watch: usize,
    stream: Mutex<Option<BoxStream<'static, WatchedEvent>>>,
    /// Set by a wake that found the stream busy: the holder polls again.
    again: AtomicBool,
    log: DeliveryLog,
}

impl Collector {
    fn pump(self: &Arc<Self>) {
        self.again.store(true, Ordering::SeqCst);
        loop {
            let Ok(mut stream) = self.stream.try_lock() else {
                // The holder sees `again` and polls once more.
                return;
            };
            let waker = Waker::from(self.clone());
            let mut cx = Context::from_waker(&waker);
            while self.again.swap(false, Ordering::SeqCst) {
                while let Some(s) = stream.as_mut() {
                    match s.poll_next_unpin(&mut cx) {
                        Poll::Ready(Some(e)) => {
                            self.log.lock().unwrap_or_else(|p| p.into_inner()).push((self.watch, e))
                        }
                        Poll::Ready(None) => *stream = None,
                        Poll::Pending => break,
                    }
                }
            }
            drop(stream);
            if !self.again.load(Ordering::SeqCst) {
                return;
            }
        }
    }
}

impl Wake for Collector {
    fn wake(self: Arc<Self>) {
        self.pump();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.pump();
    }
}
