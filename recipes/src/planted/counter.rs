//! A broken counter.

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::nodes::create_all;
use crate::runtime::Runtime;
use crate::zk::path::parent;
use crate::zk::{CreateMode, ZkClient, ZkError};

/// Double increment (kazoo `Counter`; Curator `DistributedAtomicLong`,
/// optimistic mode): read the value and version, `setData(value + delta,
/// version)`, and on any failure — ConnectionLoss included — re-read and
/// try again. A `setData` applied with its reply lost is applied a second
/// time: the counter runs ahead of the acknowledged increments.
///
/// Data: the value in decimal (empty reads as 0).
#[derive(Clone)]
pub struct DoubleIncrementCounter<C, R> {
    ctx: Ctx<C, R>,
    path: String,
}

impl<C: ZkClient, R: Runtime> DoubleIncrementCounter<C, R> {
    pub fn new(ctx: Ctx<C, R>, path: impl Into<String>) -> Self {
        DoubleIncrementCounter { ctx, path: path.into() }
    }

    fn parse(&self, data: &[u8]) -> RecipeResult<i64> {
        if data.is_empty() {
            return Ok(0);
        }
        std::str::from_utf8(data)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| RecipeError::BadData {
                path: self.path.clone(),
                reason: "not a decimal".into(),
            })
    }

    /// The current value. The read follows a `sync`, as the correct
    /// counter's does, so that the blind retry is this type's only defect.
    pub async fn get(&self) -> RecipeResult<i64> {
        let ctx = &self.ctx;
        ctx.retry(|| ctx.client().sync(&self.path)).await?;
        match ctx.retry(|| ctx.client().get_data(&self.path)).await {
            Ok((d, _)) => self.parse(&d),
            Err(RecipeError::Zk(ZkError::NoNode)) => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// Adds `delta`; returns the new value.
    pub async fn add(&self, delta: i64) -> RecipeResult<i64> {
        let ctx = &self.ctx;
        let mut attempt = 0u32;
        loop {
            let (data, stat) = match ctx.retry(|| ctx.client().get_data(&self.path)).await {
                Ok(r) => r,
                Err(RecipeError::Zk(ZkError::NoNode)) => {
                    create_all(ctx, parent(&self.path)).await?;
                    ctx.retry(|| async {
                        match ctx.client().create(&self.path, b"0", CreateMode::Persistent).await {
                            Ok(_) | Err(ZkError::NodeExists) => Ok(()),
                            Err(e) => Err(e),
                        }
                    })
                    .await?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let next = self.parse(&data)? + delta;
            match ctx
                .client()
                .set_data(&self.path, next.to_string().as_bytes(), stat.version)
                .await
            {
                Ok(_) => return Ok(next),
                Err(ZkError::BadVersion) => continue,
                // BUG: the set may have been applied; retried from a re-read.
                Err(e) if e.is_ambiguous() && attempt < 20 => {
                    ctx.runtime().sleep(ctx.retry_policy().delay(attempt)).await;
                    attempt += 1;
                }
                Err(e) => return Err(RecipeError::from_zk(e)),
            }
        }
    }
}
