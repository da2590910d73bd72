//! Configuration / name service: a watched node whose latest value is kept
//! current in the background, across reconnects and session expiry.
//!
//! Each new session starts with `sync`, then reads with a watch and re-reads
//! on every change or reconnect. Every value carries the zxid it reflects —
//! the node's `mzxid`, or for an absent node the parent's `pzxid` read just
//! before — and a value with a lower zxid than the current one is
//! discarded, so a reader never goes back in time, even when a new session
//! lands on a lagging server.
//!
//! ```ignore
//! let cfg = WatchedValue::start(connect, rt, "/config/db-url");
//! let v = cfg.changed_after(0).await;
//! publish(&ctx, "/config/db-url", b"postgres://...", None).await?;
//! ```

use std::pin::pin;

use futures::channel::oneshot;
use futures::{select_biased, FutureExt};

use crate::cell::WatchCell;
use crate::ctx::{Connect, Ctx};
use crate::error::{RecipeError, RecipeResult};
use crate::nodes::create_all;
use crate::retry::RetryPolicy;
use crate::runtime::Runtime;
use crate::session_loop::{run_sessions, SessionEnd, Stop};
use crate::wait::{watch_or_session, Woken};
use crate::zk::path::parent;
use crate::zk::{CreateMode, Stat, ZkClient, ZkError, ANY_VERSION};

/// A value as of one zxid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    /// `None` when the node does not exist.
    pub data: Option<Vec<u8>>,
    /// The node's data version (-1 when absent).
    pub version: i32,
    /// The zxid this value reflects (see the module docs).
    pub zxid: i64,
}

/// A background reader of one node. Dropping it stops the reader.
pub struct WatchedValue {
    cell: WatchCell<Option<Versioned>>,
    _stop: oneshot::Sender<()>,
}

impl WatchedValue {
    pub fn start<C: ZkClient, R: Runtime>(connect: impl Connect<C>, rt: R, path: &str) -> Self {
        let cell = WatchCell::new(None);
        let (stop_tx, stop_rx) = oneshot::channel();
        let task_cell = cell.clone();
        let path = path.to_string();
        rt.clone().spawn(run_sessions(
            connect,
            rt,
            RetryPolicy::default(),
            stop_rx.fuse(),
            move |ctx, stop| {
                let reader = Reader {
                    ctx,
                    path: path.clone(),
                    cell: task_cell.clone(),
                };
                async move { reader.run(stop).await }
            },
        ));
        WatchedValue { cell, _stop: stop_tx }
    }

    /// The latest value, once one was read.
    pub fn get(&self) -> Option<Versioned> {
        self.cell.get()
    }

    /// Waits for a value reflecting a zxid above `zxid` (0: any value).
    pub async fn changed_after(&self, zxid: i64) -> Versioned {
        self.cell
            .wait_for(|v| v.clone().filter(|v| zxid == 0 || v.zxid > zxid))
            .await
    }
}

struct Reader<C, R> {
    ctx: Ctx<C, R>,
    path: String,
    cell: WatchCell<Option<Versioned>>,
}

impl<C: ZkClient, R: Runtime> Reader<C, R> {
    fn offer(&self, v: Versioned) {
        self.cell.update(|cur| {
            let newer = cur.as_ref().is_none_or(|c| v.zxid > c.zxid);
            if newer {
                *cur = Some(v);
            }
            newer
        });
    }

    async fn run(self, mut stop: Stop) -> (SessionEnd, Stop) {
        let ctx = &self.ctx;
        let mut states = ctx.client().state_watch();
        if ctx.retry(|| ctx.client().sync(parent(&self.path))).await.is_err() {
            return (SessionEnd::Lost, stop);
        }
        loop {
            let watch = match self.read().await {
                Ok(w) => w,
                Err(e) => {
                    tracing::debug!(error = %e, path = %self.path, "read failed; new session");
                    return (SessionEnd::Lost, stop);
                }
            };
            let mut woken = pin!(watch_or_session(watch, &mut states).fuse());
            let w = select_biased! {
                _ = stop => return (SessionEnd::Stopped, stop),
                w = woken => w,
            };
            if w == Woken::SessionLost {
                return (SessionEnd::Lost, stop);
            }
        }
    }

    /// Reads the value and arms a watch on the node.
    async fn read(&self) -> RecipeResult<crate::zk::OneshotWatch> {
        let ctx = &self.ctx;
        loop {
            let parent_stat = ctx.retry(|| ctx.client().exists(parent(&self.path))).await?;
            match ctx.retry(|| ctx.client().get_data_watch(&self.path)).await {
                Ok((data, stat, watch)) => {
                    self.offer(Versioned {
                        data: Some(data),
                        version: stat.version,
                        zxid: stat.mzxid,
                    });
                    return Ok(watch);
                }
                Err(RecipeError::Zk(ZkError::NoNode)) => {
                    // getData sets no watch on a missing node; exists does.
                    let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&self.path)).await?;
                    if stat.is_some() {
                        continue; // created in between: read its data
                    }
                    self.offer(Versioned {
                        data: None,
                        version: -1,
                        zxid: parent_stat.map_or(0, |s: Stat| s.pzxid),
                    });
                    return Ok(watch);
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Writes a value: with `expected_version`, only over that version
/// (`BadVersion` otherwise); without, unconditionally. Creates the node if
/// absent. Returns the new Stat.
///
/// ConnectionLoss on a conditional write is resolved by re-reading (and so is
/// any error of a retry after it: the first attempt may have landed since):
/// the version unchanged means not applied (retried); our bytes at the next
/// version mean applied (identical bytes written by someone else at that
/// version are indistinguishable, and equivalent for a value); other bytes
/// there mean `BadVersion`; a version further ahead is `Ambiguous`.
/// An unconditional write of the same bytes is idempotent and is retried.
pub async fn publish<C: ZkClient, R: Runtime>(
    ctx: &Ctx<C, R>,
    path: &str,
    data: &[u8],
    expected_version: Option<i32>,
) -> RecipeResult<Stat> {
    let Some(v) = expected_version else {
        return loop {
            match ctx.retry(|| ctx.client().set_data(path, data, ANY_VERSION)).await {
                Ok(s) => break Ok(s),
                Err(RecipeError::Zk(ZkError::NoNode)) => {
                    create_all(ctx, parent(path)).await?;
                    match ctx
                        .retry(|| ctx.client().create(path, data, CreateMode::Persistent))
                        .await
                    {
                        Ok((_, s)) => break Ok(s),
                        Err(RecipeError::Zk(ZkError::NodeExists)) => continue,
                        Err(e) => break Err(e),
                    }
                }
                Err(e) => break Err(e),
            }
        };
    };
    let policy = ctx.retry_policy();
    let mut attempt = 0u32;
    // Once an attempt may have been applied, a retry's BadVersion (or any
    // error) may be that attempt's doing: it is resolved by re-reading too.
    let mut unsure = false;
    loop {
        match ctx.client().set_data(path, data, v).await {
            Ok(s) => return Ok(s),
            Err(e) if unsure || e.is_ambiguous() => {
                unsure = true;
                ctx.runtime().sleep(policy.delay(attempt)).await;
                attempt = attempt.saturating_add(1);
                // The write may have been applied: a failed re-read leaves
                // it unknown, which only Ambiguous says.
                let reread = async {
                    ctx.retry(|| ctx.client().sync(parent(path))).await?;
                    ctx.retry(|| ctx.client().get_data(path)).await
                };
                let (now, stat) = match reread.await {
                    Ok(r) => r,
                    Err(e) => {
                        return Err(RecipeError::Ambiguous(format!(
                            "publish to {path}: {e} while resolving a lost reply"
                        )))
                    }
                };
                if stat.version == v {
                    continue; // not applied: the same conditional write is safe
                }
                if stat.version == v.wrapping_add(1) && now != data {
                    // Someone else's write won the version we wanted.
                    return Err(RecipeError::Zk(ZkError::BadVersion));
                }
                if stat.version == v.wrapping_add(1) {
                    return Ok(stat);
                }
                return Err(RecipeError::Ambiguous(format!(
                    "publish to {path}: ConnectionLoss and the version moved to {}",
                    stat.version
                )));
            }
            Err(e) => return Err(RecipeError::from_zk(e)),
        }
    }
}
