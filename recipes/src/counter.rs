//! Distributed counter: compare-and-set on the node's version.
//!
//! The ConnectionLoss hazard (kazoo `Counter`, Curator
//! `DistributedAtomicLong`): a `setData(version)` can be applied with its
//! response lost; a blind retry then reads the new version and applies the
//! increment again. This counter never does that: every write carries its
//! guid, and the node keeps the guids of the last [`HISTORY`] writers. After
//! an ambiguous write the counter re-reads: its guid in the history means
//! applied; the version unchanged, or every write since accounted for by
//! other guids, means not applied (safe to retry); otherwise — more than
//! [`HISTORY`] writes since, or the session ended — it returns
//! [`RecipeError::Ambiguous`] rather than guess.
//!
//! Data format (UTF-8): `{value}` then, per line, the guids of the most
//! recent writers, newest first. An empty node reads as 0.
//!
//! Not supported: a node whose version has wrapped to -1 (ZooKeeper 3.8
//! reads -1 as "any version", so no compare-and-set is possible;
//! CURATOR-688): such an `add` fails with [`RecipeError::Conflict`].
//!
//! ```ignore
//! let c = Counter::new(ctx.clone(), "/counters/hits");
//! let now = c.add(1).await?;
//! ```

use std::future::Future;

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::guid::Guid;
use crate::nodes::create_all;
use crate::runtime::Runtime;
use crate::zk::path::parent;
use crate::zk::{CreateMode, Stat, ZkClient, ZkError, ANY_VERSION};

/// Writers remembered in the node, to tell after ConnectionLoss whether a
/// write was ours.
pub const HISTORY: usize = 16;

/// A counter node's content.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CounterData {
    pub value: i64,
    /// Most recent writers, newest first.
    pub writers: Vec<Guid>,
}

/// Why a counter node's data is not a counter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CounterDataError {
    #[error("not UTF-8")]
    NotUtf8,
    #[error("value {0:?} is not an integer")]
    Value(String),
    #[error("bad writer guid {0:?}")]
    Writer(String),
}

impl CounterData {
    pub fn encode(&self) -> Vec<u8> {
        let mut s = self.value.to_string();
        for g in &self.writers {
            s.push('\n');
            s.push_str(&g.to_string());
        }
        s.into_bytes()
    }

    pub fn decode(data: &[u8]) -> Result<CounterData, CounterDataError> {
        if data.is_empty() {
            return Ok(CounterData::default());
        }
        let text = std::str::from_utf8(data).map_err(|_| CounterDataError::NotUtf8)?;
        let mut lines = text.split('\n');
        let first = lines.next().unwrap_or("");
        let value = first
            .parse::<i64>()
            .map_err(|_| CounterDataError::Value(first.to_string()))?;
        let writers = lines
            .map(|l| Guid::parse(l).ok_or_else(|| CounterDataError::Writer(l.to_string())))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CounterData { value, writers })
    }

    /// The content after `writer` adds `delta`.
    pub fn next(&self, delta: i64, writer: Guid) -> Option<CounterData> {
        let mut writers = Vec::with_capacity(HISTORY);
        writers.push(writer);
        writers.extend(self.writers.iter().take(HISTORY - 1).copied());
        Some(CounterData {
            value: self.value.checked_add(delta)?,
            writers,
        })
    }
}

/// What a re-read after an ambiguous write says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteFate {
    Applied,
    NotApplied,
    Unknown,
}

/// Whether `writer`'s write, attempted on top of `base_version`, is
/// reflected in `now` (read at `now_version`).
pub fn fate_of(writer: Guid, base_version: i32, now: &CounterData, now_version: i32) -> WriteFate {
    if now.writers.contains(&writer) {
        return WriteFate::Applied;
    }
    let since = now_version.wrapping_sub(base_version) as u32 as usize;
    if since <= now.writers.len() {
        // Every write since our read is listed, and none is ours.
        WriteFate::NotApplied
    } else {
        WriteFate::Unknown
    }
}

/// The counter's one delicate step: telling, after a ConnectionLoss on
/// the conditional set, whether that set was applied. [`Exact`] is the
/// correct way; a planted type (feature `planted`) replaces it and shares
/// every other line with the correct counter.
pub trait Steps: Clone + Send + Sync + 'static {
    /// The fate of `writer`'s set on top of `base_version` of `path`:
    /// re-read (after a `sync`) and look for the writer's guid.
    fn fate<C: ZkClient, R: Runtime>(
        &self,
        ctx: &Ctx<C, R>,
        path: &str,
        writer: Guid,
        base_version: i32,
    ) -> impl Future<Output = RecipeResult<WriteFate>> + Send {
        async move {
            ctx.retry(|| ctx.client().sync(path)).await?;
            match ctx.retry(|| ctx.client().get_data(path)).await {
                Ok((data, stat)) => Ok(fate_of(writer, base_version, &decode(path, &data)?, stat.version)),
                // Deleted since: whatever happened is unknowable.
                Err(RecipeError::Zk(ZkError::NoNode)) => Ok(WriteFate::Unknown),
                Err(e) => Err(e),
            }
        }
    }
}

/// The correct step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exact;

impl Steps for Exact {}

fn decode(path: &str, data: &[u8]) -> RecipeResult<CounterData> {
    CounterData::decode(data).map_err(|e| RecipeError::BadData {
        path: path.to_string(),
        reason: e.to_string(),
    })
}

/// A counter stored in one node. `S`: how an ambiguous write is resolved
/// (always [`Exact`] outside the harness's planted types).
#[derive(Clone)]
pub struct Counter<C, R, S = Exact> {
    ctx: Ctx<C, R>,
    path: String,
    steps: S,
}

impl<C: ZkClient, R: Runtime> Counter<C, R> {
    pub fn new(ctx: Ctx<C, R>, path: impl Into<String>) -> Self {
        Counter::with_steps(ctx, path, Exact)
    }
}

impl<C: ZkClient, R: Runtime, S: Steps> Counter<C, R, S> {
    /// A counter whose ambiguous writes are resolved as `steps` does it.
    pub fn with_steps(ctx: Ctx<C, R>, path: impl Into<String>, steps: S) -> Self {
        Counter {
            ctx,
            path: path.into(),
            steps,
        }
    }

    /// The current value and the node's version (0 if the node is absent).
    /// Reflects every `add` completed before the call: the read follows a
    /// `sync`, so a lagging server cannot return an older value.
    pub async fn get(&self) -> RecipeResult<(i64, i32)> {
        let ctx = &self.ctx;
        ctx.retry(|| ctx.client().sync(&self.path)).await?;
        match ctx.retry(|| ctx.client().get_data(&self.path)).await {
            Ok((data, stat)) => Ok((decode(&self.path, &data)?.value, stat.version)),
            Err(RecipeError::Zk(ZkError::NoNode)) => Ok((0, 0)),
            Err(e) => Err(e),
        }
    }

    async fn read(&self) -> RecipeResult<(CounterData, Stat)> {
        let ctx = &self.ctx;
        loop {
            match ctx.retry(|| ctx.client().get_data(&self.path)).await {
                Ok((data, stat)) => return Ok((decode(&self.path, &data)?, stat)),
                Err(RecipeError::Zk(ZkError::NoNode)) => {
                    create_all(ctx, parent(&self.path)).await?;
                    let init = CounterData::default().encode();
                    ctx.retry(|| async {
                        match ctx.client().create(&self.path, &init, CreateMode::Persistent).await {
                            Ok(_) | Err(ZkError::NodeExists) => Ok(()),
                            Err(e) => Err(e),
                        }
                    })
                    .await?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Adds `delta` exactly once; returns the new value. An error other
    /// than [`RecipeError::Ambiguous`] means `delta` was not added.
    pub async fn add(&self, delta: i64) -> RecipeResult<i64> {
        let ctx = &self.ctx;
        let policy = ctx.retry_policy();
        let mut attempt = 0u32;
        loop {
            let (now, stat) = self.read().await?;
            if stat.version == ANY_VERSION {
                return Err(RecipeError::Conflict(format!(
                    "{}: version wrapped to -1, compare-and-set impossible",
                    self.path
                )));
            }
            let guid = ctx.next_guid().await?;
            let next = now
                .next(delta, guid)
                .ok_or_else(|| RecipeError::InvalidArgument(format!("{} + {delta} overflows", now.value)))?;
            match ctx.client().set_data(&self.path, &next.encode(), stat.version).await {
                Ok(_) => return Ok(next.value),
                Err(ZkError::BadVersion) | Err(ZkError::NoNode) => continue,
                Err(e) if e.is_ambiguous() => {
                    ctx.runtime().sleep(policy.delay(attempt)).await;
                    attempt = attempt.saturating_add(1);
                    match self.steps.fate(ctx, &self.path, guid, stat.version).await {
                        Ok(WriteFate::Applied) => return Ok(next.value),
                        Ok(WriteFate::NotApplied) => continue,
                        Ok(WriteFate::Unknown) => return Err(ambiguous(&self.path, delta, "too many writes since")),
                        Err(e) if e.is_session_lost() => return Err(ambiguous(&self.path, delta, "session ended")),
                        // The re-read failed (retries exhausted, bad data):
                        // the set may still have been applied.
                        Err(e) => return Err(ambiguous(&self.path, delta, &format!("the re-read failed: {e}"))),
                    }
                }
                Err(e) => return Err(RecipeError::from_zk(e)),
            }
        }
    }

    pub async fn increment(&self) -> RecipeResult<i64> {
        self.add(1).await
    }
}

fn ambiguous(path: &str, delta: i64, why: &str) -> RecipeError {
    RecipeError::Ambiguous(format!(
        "add {delta} to {path}: ConnectionLoss and the outcome cannot be told ({why})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(c: u64) -> Guid {
        Guid {
            session: 77,
            counter: c,
        }
    }

    #[test]
    fn data_round_trips() {
        let d = CounterData {
            value: -12,
            writers: vec![g(3), g(2)],
        };
        assert_eq!(CounterData::decode(&d.encode()), Ok(d));
        assert_eq!(CounterData::decode(b""), Ok(CounterData::default()));
        assert!(CounterData::decode(b"x").is_err());
        assert!(CounterData::decode(b"1\nnot-a-guid").is_err());
    }

    #[test]
    fn history_is_bounded_newest_first() {
        let mut d = CounterData::default();
        for c in 0..40 {
            d = d.next(1, g(c)).expect("no overflow");
        }
        assert_eq!(d.value, 40);
        assert_eq!(d.writers.len(), HISTORY);
        assert_eq!(d.writers[0], g(39));
        assert!(CounterData {
            value: i64::MAX,
            writers: vec![]
        }
        .next(1, g(0))
        .is_none());
    }

    #[test]
    fn fate_after_connection_loss() {
        let mine = g(5);
        let base = CounterData {
            value: 1,
            writers: vec![g(1)],
        };
        let after_mine = base.next(1, mine).expect("ok");
        assert_eq!(fate_of(mine, 3, &after_mine, 4), WriteFate::Applied);
        // Ours applied, then someone else's on top: still found.
        let after_other = after_mine.next(1, g(9)).expect("ok");
        assert_eq!(fate_of(mine, 3, &after_other, 5), WriteFate::Applied);
        // Unchanged: not applied.
        assert_eq!(fate_of(mine, 3, &base, 3), WriteFate::NotApplied);
        // One foreign write since: not ours.
        let foreign = base.next(1, g(8)).expect("ok");
        assert_eq!(fate_of(mine, 3, &foreign, 4), WriteFate::NotApplied);
        // More writes since than the history covers: unknown.
        assert_eq!(fate_of(mine, 3, &foreign, 3 + HISTORY as i32 + 5), WriteFate::Unknown);
        // Version wrap across i32::MAX.
        assert_eq!(fate_of(mine, i32::MAX, &foreign, i32::MIN), WriteFate::NotApplied);
    }
}
