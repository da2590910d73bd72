//! Two-phase commit (ZooKeeper recipes: "Two-phased Commit").
//!
//! Layout of one transaction `{root}/{tx}` (its data: the site names):
//! - `alive/{site}`: ephemeral, a site's liveness;
//! - `votes/{site}`: persistent, `commit` or `abort`;
//! - `decision`: persistent, `commit` or `abort`, created exactly once.
//!
//! The decision is whoever creates `decision` first, so every participant
//! reads the same outcome. The coordinator decides commit only when every
//! site voted commit; abort as soon as one site votes abort, a site's
//! liveness node disappears before it voted (it failed), or a site has not
//! joined within the join timeout. Any site may decide abort at any time
//! before a decision exists.
//!
//! Faults handled: every create has a fixed name, so ConnectionLoss is
//! resolved by NodeExists plus reading the node back (our vote or decision
//! being there means it was applied; a different one is a
//! [`RecipeError::Conflict`] for votes, or the outcome to adopt for the
//! decision). Waits wake on reconnect and re-read.
//!
//! ```ignore
//! let coord = Coordinator::begin(ctx.clone(), "/tx", "t-17", &["a", "b"]).await?;
//! let site = Site::join(ctx_a, "/tx", "t-17", "a").await?;
//! site.vote(Decision::Commit).await?;
//! let outcome = coord.decide(Duration::from_secs(10)).await?;
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::pin::pin;
use std::time::Duration;

use futures::{select_biased, FutureExt};

use crate::ctx::Ctx;
use crate::error::{RecipeError, RecipeResult};
use crate::nodes::{claim_ephemeral, create_all, Claim};
use crate::runtime::Runtime;
use crate::wait::{maybe, watch_or_session, Woken};
use crate::zk::path::join;
use crate::zk::{CreateMode, SessionState, WatchedEvent, ZkClient, ZkError};

/// A vote, and the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Commit,
    Abort,
}

impl Decision {
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            Decision::Commit => b"commit",
            Decision::Abort => b"abort",
        }
    }

    pub fn parse(data: &[u8]) -> Option<Decision> {
        match data {
            b"commit" => Some(Decision::Commit),
            b"abort" => Some(Decision::Abort),
            _ => None,
        }
    }
}

/// What the coordinator concludes from the votes seen so far.
pub fn tally(
    sites: &[String],
    votes: &BTreeMap<String, Decision>,
    alive: &BTreeSet<String>,
    seen_alive: &BTreeSet<String>,
    join_deadline_passed: bool,
) -> Option<Decision> {
    if votes.values().any(|v| *v == Decision::Abort) {
        return Some(Decision::Abort);
    }
    let mut all_committed = true;
    for s in sites {
        if votes.contains_key(s) {
            continue;
        }
        all_committed = false;
        let failed = !alive.contains(s) && (seen_alive.contains(s) || join_deadline_passed);
        if failed {
            return Some(Decision::Abort);
        }
    }
    all_committed.then_some(Decision::Commit)
}

struct TxPaths {
    tx: String,
    alive: String,
    votes: String,
    decision: String,
}

impl TxPaths {
    fn new(root: &str, tx: &str) -> Self {
        let tx = join(root, tx);
        TxPaths {
            alive: join(&tx, "alive"),
            votes: join(&tx, "votes"),
            decision: join(&tx, "decision"),
            tx,
        }
    }
}

/// Creates `path` with `data`, or finds it already there: returns what the
/// node holds (ours if we created it, or if a lost create of ours did).
async fn create_or_read<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, path: &str, data: &[u8]) -> RecipeResult<Vec<u8>> {
    let created = ctx
        .retry(|| async {
            match ctx.client().create(path, data, CreateMode::Persistent).await {
                Ok(_) => Ok(true),
                Err(ZkError::NodeExists) => Ok(false),
                Err(e) => Err(e),
            }
        })
        .await?;
    if created {
        return Ok(data.to_vec());
    }
    Ok(ctx.retry(|| ctx.client().get_data(path)).await?.0)
}

fn read_decision(path: &str, raw: &[u8]) -> RecipeResult<Decision> {
    Decision::parse(raw).ok_or_else(|| RecipeError::BadData {
        path: path.to_string(),
        reason: format!("not a decision: {:?}", String::from_utf8_lossy(raw)),
    })
}

/// Records `d` as the decision unless one exists; returns the decision.
async fn decide_once<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, p: &TxPaths, d: Decision) -> RecipeResult<Decision> {
    let raw = create_or_read(ctx, &p.decision, d.as_bytes()).await?;
    read_decision(&p.decision, &raw)
}

/// Waits for the decision node.
async fn await_decision<C: ZkClient, R: Runtime>(ctx: &Ctx<C, R>, p: &TxPaths) -> RecipeResult<Decision> {
    let mut states = ctx.client().state_watch();
    loop {
        let (stat, watch) = ctx.retry(|| ctx.client().exists_watch(&p.decision)).await?;
        if stat.is_some() {
            match ctx.retry(|| ctx.client().get_data(&p.decision)).await {
                Ok((raw, _)) => return read_decision(&p.decision, &raw),
                Err(RecipeError::Zk(ZkError::NoNode)) => continue,
                Err(e) => return Err(e),
            }
        }
        if watch_or_session(watch, &mut states).await == Woken::SessionLost {
            return Err(RecipeError::SessionLost);
        }
    }
}

/// The coordinator of one transaction.
pub struct Coordinator<C, R> {
    ctx: Ctx<C, R>,
    paths: TxPaths,
    sites: Vec<String>,
}

impl<C: ZkClient, R: Runtime> Coordinator<C, R> {
    /// Creates transaction `tx` under `root` for `sites`.
    pub async fn begin(ctx: Ctx<C, R>, root: &str, tx: &str, sites: &[&str]) -> RecipeResult<Self> {
        let mut sites: Vec<String> = sites.iter().map(|s| s.to_string()).collect();
        sites.sort();
        sites.dedup();
        if sites.is_empty() {
            return Err(RecipeError::InvalidArgument("no sites".into()));
        }
        let paths = TxPaths::new(root, tx);
        create_all(&ctx, root).await?;
        let listing = sites.join("\n").into_bytes();
        let stored = create_or_read(&ctx, &paths.tx, &listing).await?;
        if stored != listing {
            return Err(RecipeError::Conflict(format!(
                "transaction {} exists with other sites",
                paths.tx
            )));
        }
        create_all(&ctx, &paths.alive).await?;
        create_all(&ctx, &paths.votes).await?;
        Ok(Coordinator { ctx, paths, sites })
    }

    /// Collects votes until the outcome is known and records it. Sites that
    /// have not joined within `join_timeout` count as failed.
    pub async fn decide(&self, join_timeout: Duration) -> RecipeResult<Decision> {
        let ctx = &self.ctx;
        let p = &self.paths;
        let mut states = ctx.client().state_watch();
        let deadline = ctx.runtime().now() + join_timeout;
        let mut seen_alive = BTreeSet::new();
        loop {
            let (decided, decision_w) = ctx.retry(|| ctx.client().exists_watch(&p.decision)).await?;
            if decided.is_some() {
                return await_decision(ctx, p).await;
            }
            let (alive, _, alive_w) = ctx.retry(|| ctx.client().get_children_watch(&p.alive)).await?;
            let (voters, _, votes_w) = ctx.retry(|| ctx.client().get_children_watch(&p.votes)).await?;
            let alive: BTreeSet<String> = alive.into_iter().collect();
            seen_alive.extend(alive.iter().cloned());
            let mut votes = BTreeMap::new();
            for v in voters.into_iter().filter(|v| self.sites.contains(v)) {
                let path = join(&p.votes, &v);
                let (raw, _) = ctx.retry(|| ctx.client().get_data(&path)).await?;
                let d = Decision::parse(&raw).ok_or_else(|| RecipeError::BadData {
                    path,
                    reason: "not a vote".into(),
                })?;
                votes.insert(v, d);
            }
            let now = ctx.runtime().now();
            if let Some(d) = tally(&self.sites, &votes, &alive, &seen_alive, now >= deadline) {
                return decide_once(ctx, p, d).await;
            }
            // The join deadline matters only until it has passed.
            let mut timer = (now < deadline).then(|| ctx.runtime().sleep(deadline - now).boxed());
            let others = async {
                select_biased! {
                    e = votes_w.changed().fuse() => e,
                    e = decision_w.changed().fuse() => e,
                    _ = maybe(&mut timer).fuse() => WatchedEvent::session(SessionState::SyncConnected),
                }
            };
            let mut a = pin!(watch_or_session(alive_w, &mut states).fuse());
            let mut o = pin!(others.fuse());
            let woken = select_biased! {
                w = a => w,
                e = o => if e.is_session_event() && e.state.is_terminal() {
                    Woken::SessionLost
                } else {
                    Woken::Reconnected
                },
            };
            if woken == Woken::SessionLost {
                return Err(RecipeError::SessionLost);
            }
        }
    }

    /// Aborts now (unless a decision exists); returns the decision.
    pub async fn abort(&self) -> RecipeResult<Decision> {
        decide_once(&self.ctx, &self.paths, Decision::Abort).await
    }
}

/// A participating site of one transaction.
pub struct Site<C, R> {
    ctx: Ctx<C, R>,
    paths: TxPaths,
    site: String,
}

impl<C: ZkClient, R: Runtime> Site<C, R> {
    /// Signals liveness for `site` in transaction `tx` (an ephemeral node:
    /// if this site fails before voting, the coordinator aborts).
    pub async fn join(ctx: Ctx<C, R>, root: &str, tx: &str, site: &str) -> RecipeResult<Self> {
        let paths = TxPaths::new(root, tx);
        let (raw, _) = match ctx.retry(|| ctx.client().get_data(&paths.tx)).await {
            Ok(r) => r,
            Err(RecipeError::Zk(ZkError::NoNode)) => return Err(RecipeError::NodeGone(paths.tx)),
            Err(e) => return Err(e),
        };
        if !String::from_utf8_lossy(&raw).split('\n').any(|s| s == site) {
            return Err(RecipeError::InvalidArgument(format!(
                "{site} is not a site of {}",
                paths.tx
            )));
        }
        let path = join(&paths.alive, site);
        if let Claim::Held(_) = claim_ephemeral(&ctx, &path, &[]).await? {
            return Err(RecipeError::Conflict(format!("{path} is held by another session")));
        }
        Ok(Site {
            ctx,
            paths,
            site: site.to_string(),
        })
    }

    /// Records this site's vote (once; re-voting the same is a no-op).
    pub async fn vote(&self, vote: Decision) -> RecipeResult<()> {
        let path = join(&self.paths.votes, &self.site);
        let stored = create_or_read(&self.ctx, &path, vote.as_bytes()).await?;
        if stored == vote.as_bytes() {
            Ok(())
        } else {
            Err(RecipeError::Conflict(format!("{path} already holds another vote")))
        }
    }

    /// Aborts (unless a decision exists); returns the decision.
    pub async fn abort(&self) -> RecipeResult<Decision> {
        decide_once(&self.ctx, &self.paths, Decision::Abort).await
    }

    /// Waits for the outcome. Blocks as long as the coordinator does not
    /// decide (classic two-phase commit); see [`Site::decision_within`].
    pub async fn decision(&self) -> RecipeResult<Decision> {
        await_decision(&self.ctx, &self.paths).await
    }

    /// Waits up to `limit` for the outcome, then aborts. Safe even after
    /// voting commit, unlike classic 2PC: the decision is one znode created
    /// once, so if the coordinator decided first its decision is returned,
    /// and if this abort came first the coordinator adopts it. A site thus
    /// never blocks on a coordinator that failed or lost its session.
    pub async fn decision_within(&self, limit: Duration) -> RecipeResult<Decision> {
        match crate::lock::core::with_timeout(&self.ctx, limit, self.decision()).await? {
            Some(d) => Ok(d),
            None => self.abort().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tally_rules() {
        let sites = vec!["a".to_string(), "b".to_string()];
        let mut votes = BTreeMap::new();
        let all = set(&["a", "b"]);
        assert_eq!(tally(&sites, &votes, &all, &all, false), None);
        votes.insert("a".to_string(), Decision::Commit);
        assert_eq!(tally(&sites, &votes, &all, &all, false), None);
        // b failed before voting.
        assert_eq!(tally(&sites, &votes, &set(&["a"]), &all, false), Some(Decision::Abort));
        // b never joined, deadline not yet passed / passed.
        assert_eq!(tally(&sites, &votes, &set(&["a"]), &set(&["a"]), false), None);
        assert_eq!(
            tally(&sites, &votes, &set(&["a"]), &set(&["a"]), true),
            Some(Decision::Abort)
        );
        votes.insert("b".to_string(), Decision::Commit);
        // A site that voted and then died does not block commit.
        assert_eq!(tally(&sites, &votes, &set(&[]), &all, true), Some(Decision::Commit));
        votes.insert("b".to_string(), Decision::Abort);
        assert_eq!(tally(&sites, &votes, &all, &all, false), Some(Decision::Abort));
    }
}
