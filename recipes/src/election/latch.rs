//! Leader latch (Curator's LeaderLatch shape): a participant that stays in
//! the election in the background and reports whether it currently leads.
//!
//! Unlike Curator before CURATOR-644/645, a reconnect never deletes and
//! recreates the candidate node: the node survives a reconnect with the
//! same session, so the latch just re-reads the queue. A new node is
//! created only if ours was deleted by someone else while the session
//! lives. When the session ends the latch closes; start a new latch on a
//! new session.

use std::future::Future;
use std::marker::PhantomData;
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::Fuse;
use futures::{select_biased, FutureExt};

use crate::cell::WatchCell;
use crate::ctx::Ctx;
use crate::election::CANDIDATE_KIND;
use crate::error::{RecipeError, RecipeResult};
use crate::lock::core::{blocker_exclusive, wait_turn};
use crate::lock::steps::Exact as ExactLock;
use crate::monitor::{Hold, HoldState, LostReason};
use crate::nodes::{create_protected, spawn_delete_own, OrphanGuard};
use crate::runtime::Runtime;
use crate::zk::path::join;
use crate::zk::{CreateMode, StateWatch, ZkClient};

/// Where a latch stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LatchState {
    /// In the queue, not leading.
    Contending,
    /// Leading with this token (the candidate node's czxid).
    Leader { token: i64 },
    /// Out of the election for good.
    Closed { reason: Option<RecipeError> },
}

/// The latch's delicate steps: waiting for its turn, and leading until
/// the leadership ends. Both may end with our node gone
/// ([`RecipeError::NodeGone`], [`LostReason::NodeDeleted`]), and the latch
/// then queues again with a new node. [`Exact`] is the correct way; a
/// planted type (feature `planted`) replaces them and shares every other
/// line with the correct latch.
pub trait Steps: Clone + Send + Sync + 'static {
    /// Waits until our node `me` (a name under `dir`) heads the queue; a
    /// reconnect re-reads the queue and keeps the node (it survives with
    /// the session).
    fn wait_turn<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        dir: &str,
        me: &str,
        states: &mut StateWatch,
    ) -> impl Future<Output = RecipeResult<()>> + Send {
        wait_turn(ctx, &ExactLock, dir, me, &[CANDIDATE_KIND], blocker_exclusive, states)
    }

    /// Leads until `hold` (on our node at `path`) is lost.
    fn lead<C: ZkClient, R: Runtime>(
        &self,
        _ctx: &Ctx<C, R>,
        _path: &str,
        hold: &Hold,
        _states: &mut StateWatch,
    ) -> impl Future<Output = LostReason> + Send {
        hold.lost()
    }
}

/// The correct steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exact;

impl Steps for Exact {}

/// A background participant in an election. Dropping it (or
/// [`LeaderLatch::close`]) leaves the election and deletes its node. `S`:
/// how it waits and leads (always [`Exact`] outside the harness's planted
/// types).
pub struct LeaderLatch<S = Exact> {
    cell: WatchCell<LatchState>,
    _stop: oneshot::Sender<()>,
    _steps: PhantomData<fn() -> S>,
}

impl LeaderLatch {
    /// Joins the election under `dir` with `data`. `grace` as in
    /// [`crate::election::Election::with_suspend_grace`] (clamped likewise).
    pub fn start<C: ZkClient, R: Runtime>(
        ctx: &Ctx<C, R>,
        dir: impl Into<String>,
        data: Vec<u8>,
        grace: Duration,
    ) -> LeaderLatch {
        Self::start_with_steps(ctx, dir, data, grace, Exact)
    }
}

impl<S: Steps> LeaderLatch<S> {
    /// Like [`LeaderLatch::start`], its steps done as `steps` does them.
    pub fn start_with_steps<C: ZkClient, R: Runtime>(
        ctx: &Ctx<C, R>,
        dir: impl Into<String>,
        data: Vec<u8>,
        grace: Duration,
        steps: S,
    ) -> Self {
        let cell = WatchCell::new(LatchState::Contending);
        let (stop_tx, stop_rx) = oneshot::channel();
        let grace = grace.min(super::max_grace(ctx.client().session_timeout()));
        let run = Participant {
            ctx: ctx.clone(),
            dir: dir.into(),
            data,
            grace,
            cell: cell.clone(),
            steps,
        };
        ctx.runtime().spawn(run.run(stop_rx));
        LeaderLatch {
            cell,
            _stop: stop_tx,
            _steps: PhantomData,
        }
    }

    pub fn state(&self) -> LatchState {
        self.cell.get()
    }

    pub fn has_leadership(&self) -> bool {
        matches!(self.cell.get(), LatchState::Leader { .. })
    }

    /// The current leadership token, if leading.
    pub fn token(&self) -> Option<i64> {
        match self.cell.get() {
            LatchState::Leader { token } => Some(token),
            _ => None,
        }
    }

    /// Waits until this latch leads; returns the token. Fails if the latch
    /// closes first.
    pub async fn leadership(&self) -> RecipeResult<i64> {
        self.cell
            .wait_for(|s| match s {
                LatchState::Leader { token } => Some(Ok(*token)),
                LatchState::Closed { reason } => {
                    Some(Err(reason.clone().unwrap_or(RecipeError::Cancelled("latch closed"))))
                }
                LatchState::Contending => None,
            })
            .await
    }

    /// Waits until this latch does not lead (immediately if it does not).
    pub async fn not_leader(&self) {
        self.cell
            .wait_for(|s| (!matches!(s, LatchState::Leader { .. })).then_some(()))
            .await
    }

    /// Leaves the election (the node is deleted in the background).
    pub fn close(self) {}
}

struct Participant<C, R, S> {
    ctx: Ctx<C, R>,
    dir: String,
    data: Vec<u8>,
    grace: Duration,
    cell: WatchCell<LatchState>,
    steps: S,
}

enum Turn {
    Stop,
    Done(RecipeResult<()>),
}

enum Reconnect {
    Yes,
    SessionLost,
    Stopped,
}

impl<C: ZkClient, R: Runtime, S: Steps> Participant<C, R, S> {
    fn close(&self, reason: Option<RecipeError>) {
        self.cell.set(LatchState::Closed { reason });
    }

    async fn run(self, stop: oneshot::Receiver<()>) {
        let mut stop = stop.fuse();
        let mut node: Option<String> = None;
        let mut states = self.ctx.client().state_watch();
        let mut attempt = 0u32;
        loop {
            let path = match &node {
                Some(p) => p.clone(),
                None => match self.create().await {
                    Ok(p) => {
                        node = Some(p.clone());
                        p
                    }
                    Err(e) if e.is_session_lost() => return self.close(Some(e)),
                    Err(e) => {
                        tracing::debug!(error = %e, "latch create failed; retrying");
                        self.ctx.runtime().sleep(self.ctx.retry_policy().delay(attempt)).await;
                        attempt = attempt.saturating_add(1);
                        continue;
                    }
                },
            };
            let name = path[path.rfind('/').map_or(0, |i| i + 1)..].to_string();
            let turn = select_biased! {
                _ = stop => Turn::Stop,
                r = self.steps.wait_turn(&self.ctx, &self.dir, &name, &mut states).fuse() => Turn::Done(r),
            };
            match turn {
                Turn::Stop => return self.leave(&path),
                Turn::Done(Ok(())) => {}
                Turn::Done(Err(RecipeError::NodeGone(_))) => {
                    node = None;
                    continue;
                }
                Turn::Done(Err(e)) if e.is_session_lost() => return self.close(Some(e)),
                Turn::Done(Err(e)) => {
                    tracing::debug!(error = %e, "latch wait failed; retrying");
                    self.ctx.runtime().sleep(self.ctx.retry_policy().delay(attempt)).await;
                    attempt = attempt.saturating_add(1);
                    continue;
                }
            }
            attempt = 0;
            let (token, hold) = match self.lead(&path).await {
                Ok(t) => t,
                Err(e) if e.is_session_lost() => return self.close(Some(e)),
                Err(RecipeError::NodeGone(_)) => {
                    node = None;
                    continue;
                }
                Err(_) => continue,
            };
            match hold.state() {
                HoldState::Lost(LostReason::SessionEnded) => return self.close(Some(RecipeError::SessionLost)),
                HoldState::Lost(LostReason::NodeDeleted) => {
                    node = None;
                    continue;
                }
                // Disconnected as it came to lead: lead after a reconnect.
                HoldState::Lost(LostReason::SuspendedTooLong) => {
                    drop(hold);
                    match self.reconnected(&mut states, &mut stop).await {
                        Reconnect::Yes => continue,
                        Reconnect::SessionLost => return self.close(Some(RecipeError::SessionLost)),
                        Reconnect::Stopped => return self.leave(&path),
                    }
                }
                HoldState::Held | HoldState::Suspended => {}
            }
            self.cell.set(LatchState::Leader { token });
            let lost = select_biased! {
                _ = stop => None,
                r = self.steps.lead(&self.ctx, &path, &hold, &mut states).fuse() => Some(r),
            };
            drop(hold);
            match lost {
                None => return self.leave(&path),
                Some(LostReason::SessionEnded) => return self.close(Some(RecipeError::SessionLost)),
                Some(LostReason::NodeDeleted) => {
                    self.cell.set(LatchState::Contending);
                    node = None;
                }
                Some(LostReason::SuspendedTooLong) => {
                    // Keep the node: if the session survives, it still
                    // heads the queue and we lead again after reconnecting.
                    self.cell.set(LatchState::Contending);
                    match self.reconnected(&mut states, &mut stop).await {
                        Reconnect::Yes => {}
                        Reconnect::SessionLost => return self.close(Some(RecipeError::SessionLost)),
                        Reconnect::Stopped => return self.leave(&path),
                    }
                }
            }
        }
    }

    /// Waits until the session is connected again.
    async fn reconnected(&self, states: &mut StateWatch, mut stop: &mut Fuse<oneshot::Receiver<()>>) -> Reconnect {
        loop {
            let state = self.ctx.client().state();
            if state.is_connected() {
                return Reconnect::Yes;
            }
            if state.is_terminal() {
                return Reconnect::SessionLost;
            }
            let stopped = select_biased! {
                _ = stop => true,
                _ = states.changed().fuse() => false,
            };
            if stopped {
                return Reconnect::Stopped;
            }
        }
    }

    async fn create(&self) -> RecipeResult<String> {
        let guid = self.ctx.next_guid().await?;
        let orphan = OrphanGuard::new(&self.ctx, &self.dir, guid);
        let (name, _) = create_protected(
            &self.ctx,
            &self.dir,
            &guid,
            CANDIDATE_KIND,
            &self.data,
            CreateMode::EphemeralSequential,
        )
        .await?;
        orphan.disarm();
        Ok(join(&self.dir, &name))
    }

    /// Confirms our node (its czxid is the token) and starts monitoring it;
    /// the hold may be lost already (the caller looks).
    async fn lead(&self, path: &str) -> RecipeResult<(i64, Hold)> {
        let states = self.ctx.client().state_watch();
        let stat = self
            .ctx
            .retry(|| self.ctx.client().exists(path))
            .await?
            .ok_or_else(|| RecipeError::NodeGone(path.to_string()))?;
        let hold = Hold::spawn(&self.ctx, path, states, Some(self.grace));
        Ok((stat.czxid, hold))
    }

    fn leave(&self, path: &str) {
        spawn_delete_own(&self.ctx, path);
        self.close(None);
    }
}
