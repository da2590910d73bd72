//! Group membership (ZooKeeper recipes: "Group Membership"): each member is
//! an ephemeral node `{group}/{member id}`; the view is the group's
//! children, kept current through a child watch.
//!
//! A [`GroupMember`] runs in the background across sessions: the instant
//! its session is Disconnected, whatever it was doing (re-listing after a
//! change included), it reports [`MemberStatus::Suspended`] — its
//! membership may be expiring, so it must not act on group-derived
//! ownership (the kazoo SetPartitioner bug) — and after an expiry it opens
//! a new session through its [`Connect`] and re-joins. A node left by an
//! older session of the same member id is never adopted: the member waits
//! for it to disappear (the server deletes it with the old session).
//!
//! Views never go back in time: each carries the group node's `pzxid`
//! (zxid of the last membership change) and a view with a lower `pzxid`
//! than the current one is discarded.
//!
//! ```ignore
//! let member = GroupMember::join(connect, rt, "/groups/workers", "w-3", b"10.0.0.3".to_vec());
//! let view = member.view_changed(0).await;
//! ```

use std::marker::PhantomData;
use std::pin::pin;

use futures::channel::oneshot;
use futures::{select_biased, FutureExt};

use crate::cell::WatchCell;
use crate::ctx::{Connect, Ctx};
use crate::error::{RecipeError, RecipeResult};
use crate::nodes::{claim_ephemeral, create_all, delete_own, Claim};
use crate::retry::RetryPolicy;
use crate::runtime::Runtime;
use crate::session_loop::{run_sessions, SessionEnd, Stop};
use crate::wait::{watch_or_session, Woken};
use crate::zk::path::join;
use crate::zk::{SessionState, ZkClient};

/// The members of a group as of one zxid.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupView {
    /// Member ids, sorted.
    pub members: Vec<String>,
    /// The group node's pzxid when this view was read.
    pub zxid: i64,
}

/// Where a member stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberStatus {
    /// Connecting or (re-)creating the member node.
    Joining,
    /// The member node exists and the session is connected.
    Joined,
    /// Disconnected: the membership may be expiring.
    Suspended,
    /// Stopped.
    Left,
}

/// The member's one delicate step: what it reports when its session is
/// Disconnected. [`Exact`] is the correct way; a planted type (feature
/// `planted`) replaces it and shares every other line with the correct
/// member.
pub trait Steps: Clone + Send + Sync + 'static {
    /// The status to report while Disconnected (`None`: keep the current
    /// one): Suspended, because the server may be expiring the session.
    fn on_disconnected(&self) -> Option<MemberStatus> {
        Some(MemberStatus::Suspended)
    }
}

/// The correct step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exact;

impl Steps for Exact {}

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    status: MemberStatus,
    view: Option<GroupView>,
}

/// A background group member (or, without an id, a group watcher).
/// Dropping it leaves the group. `S`: how its session's Disconnected is
/// taken (always [`Exact`] outside the harness's planted types).
pub struct GroupMember<S = Exact> {
    cell: WatchCell<State>,
    _stop: oneshot::Sender<()>,
    _steps: PhantomData<fn() -> S>,
}

impl GroupMember {
    /// Joins `group` as `id` with `data`, re-joining after every expiry.
    pub fn join<C: ZkClient, R: Runtime>(
        connect: impl Connect<C>,
        rt: R,
        group: &str,
        id: &str,
        data: Vec<u8>,
    ) -> GroupMember {
        Self::join_with_steps(connect, rt, group, id, data, Exact)
    }

    /// Follows `group`'s membership without joining it.
    pub fn watch<C: ZkClient, R: Runtime>(connect: impl Connect<C>, rt: R, group: &str) -> GroupMember {
        Self::start(connect, rt, group, None, Exact)
    }
}

impl<S: Steps> GroupMember<S> {
    /// Like [`GroupMember::join`], its step done as `steps` does it.
    pub fn join_with_steps<C: ZkClient, R: Runtime>(
        connect: impl Connect<C>,
        rt: R,
        group: &str,
        id: &str,
        data: Vec<u8>,
        steps: S,
    ) -> Self {
        Self::start(connect, rt, group, Some((id.to_string(), data)), steps)
    }

    fn start<C: ZkClient, R: Runtime>(
        connect: impl Connect<C>,
        rt: R,
        group: &str,
        member: Option<(String, Vec<u8>)>,
        steps: S,
    ) -> Self {
        let cell = WatchCell::new(State {
            status: MemberStatus::Joining,
            view: None,
        });
        let (stop_tx, stop_rx) = oneshot::channel();
        let task_cell = cell.clone();
        let group = group.to_string();
        let task = run_sessions(
            connect,
            rt.clone(),
            RetryPolicy::default(),
            stop_rx.fuse(),
            move |ctx, stop| {
                let s = Session {
                    ctx,
                    group: group.clone(),
                    member: member.clone(),
                    cell: task_cell.clone(),
                    steps: steps.clone(),
                };
                async move { s.run(stop).await }
            },
        );
        let done = cell.clone();
        rt.spawn(async move {
            task.await;
            done.update(|s| {
                s.status = MemberStatus::Left;
                true
            });
        });
        GroupMember {
            cell,
            _stop: stop_tx,
            _steps: PhantomData,
        }
    }

    pub fn status(&self) -> MemberStatus {
        self.cell.get().status
    }

    /// The latest view, once one was read.
    pub fn view(&self) -> Option<GroupView> {
        self.cell.get().view
    }

    /// Waits for a view newer than `zxid` (0 for "any").
    pub async fn view_changed(&self, zxid: i64) -> GroupView {
        self.cell
            .wait_for(|s| s.view.clone().filter(|v| zxid == 0 || v.zxid > zxid))
            .await
    }

    /// Waits until joined (status [`MemberStatus::Joined`]).
    pub async fn joined(&self) {
        self.cell
            .wait_for(|s| (s.status == MemberStatus::Joined).then_some(()))
            .await
    }

    /// Leaves the group (the member node goes with the closed session).
    pub fn leave(self) {}
}

struct Session<C, R, S> {
    ctx: Ctx<C, R>,
    group: String,
    member: Option<(String, Vec<u8>)>,
    cell: WatchCell<State>,
    steps: S,
}

impl<C: ZkClient, R: Runtime, S: Steps> Session<C, R, S> {
    fn status(&self, status: MemberStatus) {
        self.cell.update(|s| std::mem::replace(&mut s.status, status) != status);
    }

    fn offer(&self, view: GroupView) {
        self.cell.update(|s| {
            let newer = s.view.as_ref().is_none_or(|v| view.zxid > v.zxid);
            if newer {
                s.view = Some(view);
            }
            newer
        });
    }

    /// Serves one session until it ends or the member is dropped: the stop
    /// is heard whatever the session is doing (a dropped member mid-retry
    /// must not keep its node, nor re-join on a new session).
    async fn run(self, mut stop: Stop) -> (SessionEnd, Stop) {
        let serve = self.serve().fuse();
        let suspend = self.suspend_on_disconnect().fuse();
        let mut serve = pin!(serve);
        let mut suspend = pin!(suspend);
        let end = loop {
            select_biased! {
                _ = stop => break SessionEnd::Stopped,
                end = serve => break end,
                // The session ended; serving notices it too.
                () = suspend => {}
            }
        };
        // The session is gone, and our standing with it, until a new
        // session re-joins (the next run starts Joining too; until then the
        // old session is being closed).
        if let SessionEnd::Lost = end {
            self.status(MemberStatus::Joining);
        }
        (end, stop)
    }

    /// Suspends the member the instant its connection is lost, whatever
    /// the session is doing (joining, re-listing after a change, waiting
    /// for the next); returns when the session ends.
    async fn suspend_on_disconnect(&self) {
        let mut states = self.ctx.client().state_watch();
        loop {
            match states.changed().await {
                SessionState::Disconnected => {
                    if let Some(status) = self.steps.on_disconnected() {
                        self.status(status);
                    }
                }
                st if st.is_terminal() => return,
                _ => {}
            }
        }
    }

    async fn serve(&self) -> SessionEnd {
        let mut states = self.ctx.client().state_watch();
        self.status(MemberStatus::Joining);
        if let Err(e) = self.join(&mut states).await {
            tracing::debug!(error = %e, group = %self.group, "join failed; new session");
            return SessionEnd::Lost;
        }
        loop {
            let listed = self
                .ctx
                .retry(|| self.ctx.client().get_children_watch(&self.group))
                .await;
            let watch = match listed {
                Ok((mut members, stat, watch)) => {
                    members.sort();
                    self.offer(GroupView {
                        members,
                        zxid: stat.pzxid,
                    });
                    watch
                }
                Err(_) => return SessionEnd::Lost,
            };
            if self.ctx.client().state().is_connected() {
                self.status(MemberStatus::Joined);
            }
            let mut node = pin!(watch.changed().fuse());
            let woken = loop {
                let state = select_biased! {
                    ev = node => break if ev.is_session_event() && ev.state.is_terminal() {
                        Woken::SessionLost
                    } else {
                        Woken::Node(ev)
                    },
                    st = states.changed().fuse() => st,
                };
                match state {
                    // Suspended by suspend_on_disconnect; wait for what follows.
                    SessionState::Disconnected => {}
                    st if st.is_terminal() => break Woken::SessionLost,
                    _ => break Woken::Reconnected,
                }
            };
            match woken {
                Woken::SessionLost => return SessionEnd::Lost,
                Woken::Node(_) => {}
                Woken::Reconnected => {
                    // Our node survives a reconnect with the same session;
                    // re-check only that nobody deleted it.
                    if let Err(e) = self.join(&mut states).await {
                        tracing::debug!(error = %e, "rejoin failed; new session");
                        return SessionEnd::Lost;
                    }
                }
            }
        }
    }

    /// Creates our member node, or confirms it is ours. Waits out a node of
    /// the same id owned by another (older) session.
    async fn join(&self, states: &mut crate::zk::StateWatch) -> RecipeResult<()> {
        let ctx = &self.ctx;
        create_all(ctx, &self.group).await?;
        let Some((id, data)) = &self.member else {
            return Ok(());
        };
        let path = join(&self.group, id);
        loop {
            let Claim::Held(owner) = claim_ephemeral(ctx, &path, data).await? else {
                return Ok(());
            };
            tracing::debug!(owner, path, "member id held by another session; waiting");
            let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&path)).await?;
            // Wait only on the holder just seen; any other change, claim again.
            if stat.is_some_and(|s| s.ephemeral_owner == owner)
                && watch_or_session(watch, states).await == Woken::SessionLost
            {
                return Err(RecipeError::SessionLost);
            }
        }
    }
}

/// Removes `id` from `group` on `ctx`'s session (for a member managed by
/// hand rather than by [`GroupMember`]).
pub async fn remove_member<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, group: &str, id: &str) {
    delete_own(ctx, &join(group, id)).await;
}
