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
use zkdst_recipes::zk::{
    AddWatchMode, Op, OpResult, ReadOp, ReadResult, SessionId, SessionState, Stat, WatchedEvent, ZkClient, ZkError,
};

use crate::cutoff::{wait_state, SessionFaults};
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
    /// multiRead results; children sorted by name.
    Reads(Vec<ReadResult>),
    MultiFailed {
        error: ZkError,
        /// `None` when the whole call failed (no per-op verdict).
        index: Option<usize>,
        results: Vec<OpResult>,
    },
    Synced,
    WatchAdded,
    Closed,
    /// A fault step: the client's session state once the fault took
    /// effect (`Disconnect`: Disconnected; `Reconnect`: SyncConnected, and
    /// whether the session is the same; `Expire`: Expired).
    Fault {
        state: SessionState,
        same_session: bool,
    },
    /// Not run: the client is cut off (a step between its `Disconnect`
    /// and `Reconnect`, which the generator never makes, but shrinking
    /// can), or a fault step that does not apply (reconnecting a client
    /// that is not cut off, faulting a closed one).
    NotRun,
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
    /// The events a reconnect delivered (SetWatches' verdicts), as
    /// `(client, from, to)`: `deliveries[from..to]`. Their order within the
    /// burst is the client library's (the order of its watch table), not
    /// the server's.
    #[serde(default)]
    pub bursts: Vec<(usize, usize, usize)>,
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
    /// `sync` before every read and every `add_watch` (and before reading
    /// a version to resolve one): a follower then answers, and registers
    /// watches, as fresh as the leader.
    pub sync_before_reads: bool,
    /// Bound of each wait for a fault's effect (a session state).
    pub fault_wait: Duration,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions {
            step_pause: Duration::from_millis(2),
            settle: Duration::from_millis(200),
            sync_before_reads: false,
            fault_wait: Duration::from_secs(30),
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

/// One fault step being carried out on one client.
struct FaultRun<'a, C, S> {
    client: &'a C,
    index: usize,
    sleep: &'a S,
    options: &'a ExecOptions,
    collectors: &'a [Arc<Collector>],
    log: &'a DeliveryLog,
}

impl<C, S, F> FaultRun<'_, C, S>
where
    C: ZkClient,
    S: Fn(Duration) -> F,
    F: Future<Output = ()>,
{
    /// Makes every notification of earlier writes reach the client (they
    /// precede the reply to its sync) and logs them, so that none is in
    /// flight when the connection goes.
    async fn flush(&self, trace: &mut Trace, after: usize) {
        let _ = self.client.sync("/").await;
        (self.sleep)(self.options.step_pause).await;
        collect(self.collectors, self.log, trace, after);
    }

    async fn disconnect<N: SessionFaults>(&mut self, faults: &mut N, trace: &mut Trace, after: usize) -> Outcome {
        self.flush(trace, after).await;
        faults.cut(self.index).await;
        let state = wait_state(self.client, self.sleep, self.options.fault_wait, |s| !s.is_connected()).await;
        Outcome::Fault {
            state,
            same_session: true,
        }
    }

    /// Lets the client back and waits until it is connected and has every
    /// event its SetWatches produced (they precede the reply to a sync);
    /// those events are recorded as one burst.
    async fn reconnect<N: SessionFaults>(&mut self, faults: &mut N, trace: &mut Trace, after: usize) -> Outcome {
        let session = self.client.session_id();
        collect(self.collectors, self.log, trace, after);
        let from = trace.deliveries.len();
        faults.restore(self.index).await;
        let state = wait_state(self.client, self.sleep, self.options.fault_wait, |s| {
            s.is_connected() || s.is_terminal()
        })
        .await;
        if state.is_connected() {
            self.flush(trace, after).await;
        }
        trace.bursts.push((self.index, from, trace.deliveries.len()));
        Outcome::Fault {
            state,
            same_session: self.client.session_id() == session,
        }
    }

    /// Cuts the client off (unless it is already), has the server end its
    /// session, lets it back, and waits until it learns it is expired.
    async fn expire<N: SessionFaults>(
        &mut self,
        faults: &mut N,
        trace: &mut Trace,
        after: usize,
        was_cut: bool,
    ) -> Outcome {
        if !was_cut {
            self.disconnect(faults, trace, after).await;
        }
        faults.expire(self.index, self.client.session_id()).await;
        faults.restore(self.index).await;
        let state = wait_state(
            self.client,
            self.sleep,
            self.options.fault_wait,
            SessionState::is_terminal,
        )
        .await;
        Outcome::Fault {
            state,
            same_session: true,
        }
    }
}

fn oneshot(w: zkdst_recipes::zk::OneshotWatch) -> BoxStream<'static, WatchedEvent> {
    futures::stream::once(w.changed()).boxed()
}

/// A persistent watch's events until (and including) a terminal session
/// event.
fn persistent_events(w: zkdst_recipes::zk::PersistentWatch) -> BoxStream<'static, WatchedEvent> {
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
