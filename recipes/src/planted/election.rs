//! A broken leader latch.

use futures::channel::oneshot;
use futures::{select_biased, FutureExt};

use crate::cell::WatchCell;
use crate::ctx::Ctx;
use crate::election::{LatchState, CANDIDATE_KIND};
use crate::error::{RecipeError, RecipeResult};
use crate::guid::SeqName;
use crate::nodes::{create_protected, delete_own, spawn_delete_own};
use crate::runtime::Runtime;
use crate::zk::path::join;
use crate::zk::{CreateMode, Op, OpResult, SessionState, StateWatch, ZkClient, ANY_VERSION};

/// Reset livelock (CURATOR-644/645): Curator's pre-5.4 LeaderLatch shape.
/// On every reconnect the latch "resets" — deletes its candidate node and
/// creates a new one at the back of the queue — and it resets too when its
/// predecessor is gone (a NoNode setting the watch, or the watch firing
/// NodeDeleted). One reset deletes a node another candidate watches, which
/// resets, which deletes the node the next one watches...: the head of the
/// queue always resets instead of leading, so after a leader's reconnect no
/// leader is ever elected, with unbounded node churn.
pub struct ResetLivelockLatch {
    cell: WatchCell<LatchState>,
    _stop: oneshot::Sender<()>,
}

enum Step {
    Lead,
    Reset,
    Lost,
}

impl ResetLivelockLatch {
    pub fn start<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, dir: impl Into<String>) -> ResetLivelockLatch {
        let cell = WatchCell::new(LatchState::Contending);
        let (stop_tx, stop_rx) = oneshot::channel();
        let dir = dir.into();
        let task_cell = cell.clone();
        let ctx2 = ctx.clone();
        ctx.runtime().spawn(async move {
            let mut stop = stop_rx.fuse();
            let mut node: Option<String> = None;
            let r = select_biased! {
                _ = stop => Ok(()),
                r = run(&ctx2, &dir, &task_cell, &mut node).fuse() => r,
            };
            if let Some(n) = node {
                spawn_delete_own(&ctx2, &n);
            }
            task_cell.set(LatchState::Closed { reason: r.err() });
        });
        ResetLivelockLatch { cell, _stop: stop_tx }
    }

    pub fn state(&self) -> LatchState {
        self.cell.get()
    }

    /// Waits until this latch leads; returns the token (node czxid).
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

    /// Waits until this latch does not lead.
    pub async fn not_leader(&self) {
        self.cell
            .wait_for(|s| (!matches!(s, LatchState::Leader { .. })).then_some(()))
            .await
    }
}

async fn run<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    dir: &str,
    cell: &WatchCell<LatchState>,
    node: &mut Option<String>,
) -> RecipeResult<()> {
    let mut states = ctx.client().state_watch();
    let mut token: i64;
    loop {
        // (Re)create our candidate node: the reset deletes the old one and
        // creates a new one at the back of the queue (in one multi).
        let guid = ctx.next_guid().await?;
        let name = match node.take() {
            None => {
                let (name, stat) =
                    create_protected(ctx, dir, &guid, CANDIDATE_KIND, &[], CreateMode::EphemeralSequential).await?;
                token = stat.czxid;
                name
            }
            Some(old) => {
                let ops = vec![
                    Op::Delete {
                        path: old.clone(),
                        version: ANY_VERSION,
                    },
                    Op::Create {
                        path: join(dir, &guid.prefix(CANDIDATE_KIND)),
                        data: Vec::new(),
                        mode: CreateMode::EphemeralSequential,
                    },
                ];
                match ctx.client().multi(ops).await {
                    Ok(rs) => match rs.into_iter().nth(1) {
                        Some(OpResult::Create { path, stat }) => {
                            token = stat.czxid;
                            path[dir.len() + 1..].to_string()
                        }
                        _ => return Err(RecipeError::Conflict("multi without a create result".into())),
                    },
                    Err(e) if e.error.is_session_lost() => return Err(RecipeError::SessionLost),
                    Err(_) => {
                        // Old node gone or outcome unknown: start afresh.
                        delete_own(ctx, &old).await;
                        let (name, stat) =
                            create_protected(ctx, dir, &guid, CANDIDATE_KIND, &[], CreateMode::EphemeralSequential)
                                .await?;
                        token = stat.czxid;
                        name
                    }
                }
            }
        };
        *node = Some(join(dir, &name));
        match check(ctx, dir, &name, &mut states).await? {
            Step::Lead => {
                cell.set(LatchState::Leader { token });
                // Lead until the next reconnect, which (the bug) resets.
                loop {
                    match states.changed().await {
                        SessionState::Disconnected => continue,
                        s if s.is_terminal() => return Err(RecipeError::SessionLost),
                        _ => break,
                    }
                }
                cell.set(LatchState::Contending);
            }
            Step::Reset => {}
            Step::Lost => return Err(RecipeError::SessionLost),
        }
    }
}

/// One leadership check: `Lead`, or `Reset` (the bug) when the predecessor
/// is gone or the session reconnected.
async fn check<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    dir: &str,
    me: &str,
    states: &mut StateWatch,
) -> RecipeResult<Step> {
    let (children, _) = ctx.retry(|| ctx.client().get_children(dir)).await?;
    let queue = SeqName::parse_sorted(&children, &[CANDIDATE_KIND]);
    let Some(idx) = queue.iter().position(|n| n.name == me) else {
        return Ok(Step::Reset);
    };
    if idx == 0 {
        return Ok(Step::Lead);
    }
    let pred = join(dir, &queue[idx - 1].name);
    let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&pred)).await?;
    if stat.is_none() {
        return Ok(Step::Reset); // BUG: Curator's `NONODE -> reset()`.
    }
    let mut watch = Box::pin(watch.changed().fuse());
    loop {
        select_biased! {
            ev = watch => {
                // BUG: any change of the predecessor (its NodeDeleted
                // above all) resets instead of re-checking.
                return Ok(if ev.is_session_event() && ev.state.is_terminal() {
                    Step::Lost
                } else {
                    Step::Reset
                });
            }
            s = states.changed().fuse() => match s {
                SessionState::Disconnected => continue,
                s if s.is_terminal() => return Ok(Step::Lost),
                _ => return Ok(Step::Reset), // BUG: reset on every reconnect.
            },
        }
    }
}
