//! A broken group member.
//!
//! Suspended ignored (kazoo commit f9cc08f, SetPartitioner):
//! [`crate::membership::GroupMember`] except that a Disconnected session is
//! treated as harmless — the member keeps reporting
//! [`MemberStatus::Joined`] and its last view while its session may be
//! expiring. A partitioner built on it keeps the partitions of its last view
//! after its membership expired and the others re-divided them: two members
//! own one partition.

use std::pin::pin;

use futures::channel::oneshot;
use futures::{select_biased, FutureExt};

use crate::cell::WatchCell;
use crate::ctx::{Connect, Ctx};
use crate::error::{RecipeError, RecipeResult};
use crate::membership::{GroupView, MemberStatus};
use crate::nodes::create_all;
use crate::retry::RetryPolicy;
use crate::runtime::Runtime;
use crate::session_loop::{run_sessions, SessionEnd, Stop};
use crate::wait::{watch_or_session, Woken};
use crate::zk::path::join;
use crate::zk::{CreateMode, SessionState, ZkClient, ZkError};

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    status: MemberStatus,
    view: Option<GroupView>,
}

/// A background group member that ignores suspension (see the module
/// docs). Dropping it leaves the group.
pub struct SuspendedIgnoredMember {
    cell: WatchCell<State>,
    _stop: oneshot::Sender<()>,
}

impl SuspendedIgnoredMember {
    /// Joins `group` as `id` with `data`, re-joining after every expiry.
    pub fn join<C: ZkClient, R: Runtime>(
        connect: impl Connect<C>,
        rt: R,
        group: &str,
        id: &str,
        data: Vec<u8>,
    ) -> SuspendedIgnoredMember {
        Self::start(connect, rt, group, Some((id.to_string(), data)))
    }

    /// Follows `group`'s membership without joining it.
    pub fn watch<C: ZkClient, R: Runtime>(connect: impl Connect<C>, rt: R, group: &str) -> SuspendedIgnoredMember {
        Self::start(connect, rt, group, None)
    }

    fn start<C: ZkClient, R: Runtime>(
        connect: impl Connect<C>,
        rt: R,
        group: &str,
        member: Option<(String, Vec<u8>)>,
    ) -> SuspendedIgnoredMember {
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
        SuspendedIgnoredMember { cell, _stop: stop_tx }
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

struct Session<C, R> {
    ctx: Ctx<C, R>,
    group: String,
    member: Option<(String, Vec<u8>)>,
    cell: WatchCell<State>,
}

impl<C: ZkClient, R: Runtime> Session<C, R> {
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

    async fn run(self, mut stop: Stop) -> (SessionEnd, Stop) {
        let mut states = self.ctx.client().state_watch();
        self.status(MemberStatus::Joining);
        let joined = select_biased! {
            _ = stop => return (SessionEnd::Stopped, stop),
            r = self.join(&mut states).fuse() => r,
        };
        if let Err(e) = joined {
            tracing::debug!(error = %e, group = %self.group, "join failed; new session");
            return (SessionEnd::Lost, stop);
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
                Err(_) => return (SessionEnd::Lost, stop),
            };
            if self.ctx.client().state().is_connected() {
                self.status(MemberStatus::Joined);
            }
            let mut node = pin!(watch.changed().fuse());
            let woken = loop {
                let state = select_biased! {
                    _ = stop => return (SessionEnd::Stopped, stop),
                    ev = node => break if ev.is_session_event() && ev.state.is_terminal() {
                        Woken::SessionLost
                    } else {
                        Woken::Node(ev)
                    },
                    st = states.changed().fuse() => st,
                };
                match state {
                    // BUG: Disconnected (SUSPENDED) treated as harmless: the
                    // member keeps reporting Joined and its last view.
                    SessionState::Disconnected => continue,
                    st if st.is_terminal() => break Woken::SessionLost,
                    _ => break Woken::Reconnected,
                }
            };
            match woken {
                Woken::SessionLost => return (SessionEnd::Lost, stop),
                Woken::Node(_) => {}
                Woken::Reconnected => {
                    // Our node survives a reconnect with the same session;
                    // re-check only that nobody deleted it.
                    if let Err(e) = self.join(&mut states).await {
                        tracing::debug!(error = %e, "rejoin failed; new session");
                        return (SessionEnd::Lost, stop);
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
        let me = ctx.session_id().await?;
        loop {
            let created = ctx
                .retry(|| async {
                    match ctx.client().create(&path, data, CreateMode::Ephemeral).await {
                        Ok(_) => Ok(true),
                        Err(ZkError::NodeExists) => Ok(false),
                        Err(e) => Err(e),
                    }
                })
                .await?;
            if created {
                return Ok(());
            }
            let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&path)).await?;
            match stat {
                Some(s) if s.ephemeral_owner == me => return Ok(()),
                None => continue,
                Some(s) => {
                    tracing::debug!(
                        owner = s.ephemeral_owner,
                        path,
                        "member id held by another session; waiting"
                    );
                    if watch_or_session(watch, states).await == Woken::SessionLost {
                        return Err(RecipeError::SessionLost);
                    }
                }
            }
        }
    }
}
