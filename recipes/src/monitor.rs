//! The holder's side of an ephemeral node: is the thing it stands for (a
//! lock, a lease, leadership) still ours?
//!
//! A background task follows the session and the node itself:
//! Disconnected makes the hold *suspended* (the session may be expiring on
//! the server right now; the holder should pause work that needs the hold),
//! SyncConnected with the same session makes it *held* again, Expired/Closed
//! or the node's deletion make it *lost* for good. With a suspension grace,
//! a suspension that lasts longer than the grace also counts as lost
//! (leadership abdicates rather than risk overlapping a successor).
//! The task also reports a revocation request written to the node's data.
//! It ends when the hold is lost or its handle is dropped.

use std::time::Duration;

use futures::channel::oneshot;
use futures::future::BoxFuture;
use futures::{select_biased, FutureExt};

use crate::cell::WatchCell;
use crate::ctx::Ctx;
use crate::runtime::Runtime;
use crate::wait::maybe;
use crate::zk::{EventType, SessionState, StateWatch, WatchedEvent, ZkClient, ZkError};

/// The data a requester writes to a holder's node to ask it to release
/// (ZooKeeper's revocable shared lock recipe).
pub use zkdst_model::REVOKE;

/// Why a hold ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostReason {
    /// The session expired or was closed.
    SessionEnded,
    /// The node was deleted by someone else.
    NodeDeleted,
    /// Disconnected for longer than the allowed grace.
    SuspendedTooLong,
}

/// Where a hold stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HoldState {
    Held,
    /// Disconnected: the session may or may not still be alive.
    Suspended,
    Lost(LostReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HoldInfo {
    state: HoldState,
    revoke_requested: bool,
}

/// Handle on a running hold monitor. Dropping it stops the monitor.
pub struct Hold {
    cell: WatchCell<HoldInfo>,
    _stop: oneshot::Sender<()>,
}

impl Hold {
    /// Starts monitoring `path` (our node) on `ctx`'s session. `states` must
    /// have been created before the node was, so no transition is missed.
    pub fn spawn<C: ZkClient, R: Runtime>(
        ctx: &Ctx<C, R>,
        path: &str,
        mut states: StateWatch,
        grace: Option<Duration>,
    ) -> Hold {
        // From the client's state now, not the last one the caller's wait
        // consumed (a guard reported suspended, or with a grace lost, after
        // its acquire had already seen the reconnect).
        let initial = match states.catch_up() {
            s if s.is_terminal() => HoldState::Lost(LostReason::SessionEnded),
            s if s.is_connected() => HoldState::Held,
            // Disconnected since an unknown instant: any grace may be spent.
            _ if grace.is_some() => HoldState::Lost(LostReason::SuspendedTooLong),
            _ => HoldState::Suspended,
        };
        let suspended_at = (initial == HoldState::Suspended).then(|| ctx.runtime().now());
        let cell = WatchCell::new(HoldInfo {
            state: initial,
            revoke_requested: false,
        });
        let (stop_tx, stop_rx) = oneshot::channel();
        let task = Monitor {
            ctx: ctx.clone(),
            path: path.to_string(),
            cell: cell.clone(),
            grace,
            suspended_at,
        };
        ctx.runtime().spawn(task.run(states, stop_rx));
        Hold { cell, _stop: stop_tx }
    }

    pub fn state(&self) -> HoldState {
        self.cell.get().state
    }

    pub fn revoke_requested(&self) -> bool {
        self.cell.get().revoke_requested
    }

    /// Resolves when the hold is lost, with the reason.
    pub async fn lost(&self) -> LostReason {
        self.cell
            .wait_for(|i| match i.state {
                HoldState::Lost(r) => Some(r),
                _ => None,
            })
            .await
    }

    /// Resolves when the hold is suspended or lost.
    pub async fn suspended_or_lost(&self) -> HoldState {
        self.cell
            .wait_for(|i| (i.state != HoldState::Held).then_some(i.state))
            .await
    }

    /// Resolves when someone asked the holder to release.
    pub async fn revocation_requested(&self) {
        self.cell.wait_for(|i| i.revoke_requested.then_some(())).await
    }
}

struct Monitor<C, R> {
    ctx: Ctx<C, R>,
    path: String,
    cell: WatchCell<HoldInfo>,
    grace: Option<Duration>,
    suspended_at: Option<Duration>,
}

type NodeWatch = BoxFuture<'static, WatchedEvent>;

/// A read of our node that arms a data watch on it, under way.
type Arming = BoxFuture<'static, Result<(Vec<u8>, NodeWatch), ZkError>>;

enum Step {
    Session(SessionState),
    Armed(Result<(Vec<u8>, NodeWatch), ZkError>),
    Node(WatchedEvent),
    GraceOver,
    Rearm,
}

impl<C: ZkClient, R: Runtime> Monitor<C, R> {
    fn set(&self, state: HoldState) {
        self.cell.update(|i| {
            let changed = i.state != state && !matches!(i.state, HoldState::Lost(_));
            if changed {
                i.state = state;
            }
            changed
        });
    }

    fn is_lost(&self) -> bool {
        matches!(self.cell.get().state, HoldState::Lost(_))
    }

    /// Starts reading our node and arming a data watch on it. It runs beside
    /// the session events: a read that waits for a reconnect must not hide
    /// a Disconnected from the hold (a leader would go on acting).
    fn arm(&self) -> Arming {
        let client = self.ctx.client().clone();
        let path = self.path.clone();
        async move {
            let (data, _, w) = client.get_data_watch(&path).await?;
            Ok((data, w.changed().boxed()))
        }
        .boxed()
    }

    /// What the read found. `None`: no watch (the read failed ambiguously
    /// and is retried later, or the hold is now lost).
    fn armed(&self, r: Result<(Vec<u8>, NodeWatch), ZkError>) -> Option<NodeWatch> {
        match r {
            Ok((data, w)) => {
                if data == REVOKE {
                    self.cell.update(|i| !std::mem::replace(&mut i.revoke_requested, true));
                }
                Some(w)
            }
            Err(ZkError::NoNode) => {
                self.set(HoldState::Lost(LostReason::NodeDeleted));
                None
            }
            Err(e) if e.is_session_lost() => {
                self.set(HoldState::Lost(LostReason::SessionEnded));
                None
            }
            Err(_) => None,
        }
    }

    async fn run(mut self, mut states: StateWatch, stop: oneshot::Receiver<()>) {
        let mut stop = stop.fuse();
        let mut watch: Option<NodeWatch> = None;
        let mut arming: Option<Arming> = Some(self.arm());
        let mut rearm_attempt = 0u32;
        while !self.is_lost() {
            let grace_left = match (self.grace, self.suspended_at) {
                (Some(g), Some(at)) => Some(g.saturating_sub(self.ctx.runtime().now() - at)),
                _ => None,
            };
            let mut grace_timer = grace_left.map(|d| self.ctx.runtime().sleep(d).boxed());
            // Re-arm a watch lost to an ambiguous read while connected.
            let mut rearm = (watch.is_none() && arming.is_none() && self.state_is(HoldState::Held)).then(|| {
                self.ctx
                    .runtime()
                    .sleep(self.ctx.retry_policy().delay(rearm_attempt))
                    .boxed()
            });
            let ev = select_biased! {
                _ = stop => return,
                s = states.changed().fuse() => Step::Session(s),
                r = maybe(&mut arming).fuse() => Step::Armed(r),
                ev = maybe(&mut watch).fuse() => Step::Node(ev),
                _ = maybe(&mut grace_timer).fuse() => Step::GraceOver,
                _ = maybe(&mut rearm).fuse() => Step::Rearm,
            };
            drop((grace_timer, rearm));
            match ev {
                Step::Session(s) => self.on_session(s, &mut arming),
                Step::Armed(r) => {
                    arming = None;
                    match self.armed(r) {
                        Some(w) => {
                            watch = Some(w);
                            rearm_attempt = 0;
                        }
                        None => rearm_attempt = rearm_attempt.saturating_add(1),
                    }
                }
                Step::Node(ev) => {
                    watch = None;
                    self.on_node(ev);
                    if !self.is_lost() {
                        arming = Some(self.arm());
                    }
                }
                Step::GraceOver => self.set(HoldState::Lost(LostReason::SuspendedTooLong)),
                Step::Rearm => arming = Some(self.arm()),
            }
        }
    }

    fn state_is(&self, s: HoldState) -> bool {
        self.cell.get().state == s
    }

    fn on_session(&mut self, s: SessionState, arming: &mut Option<Arming>) {
        match s {
            SessionState::Disconnected => {
                self.suspended_at = Some(self.ctx.runtime().now());
                if self.grace == Some(Duration::ZERO) {
                    self.set(HoldState::Lost(LostReason::SuspendedTooLong));
                } else {
                    self.set(HoldState::Suspended);
                }
            }
            s if s.is_terminal() => self.set(HoldState::Lost(LostReason::SessionEnded)),
            _ => {
                self.suspended_at = None;
                self.set(HoldState::Held);
                // Confirm the node survived the disconnect and re-arm, in
                // case the client did not carry the watch over.
                *arming = Some(self.arm());
            }
        }
    }

    fn on_node(&self, ev: WatchedEvent) {
        match ev.event_type {
            EventType::NodeDeleted => self.set(HoldState::Lost(LostReason::NodeDeleted)),
            EventType::None if ev.state.is_terminal() => self.set(HoldState::Lost(LostReason::SessionEnded)),
            _ => {}
        }
    }
}
