//! The leader latch, the counter and the group member as the workload sees
//! them: the correct recipe or its planted variant, behind one interface.

use std::time::Duration;

use zkdst_recipes::counter::Counter;
use zkdst_recipes::election::{Election, LatchState, LeaderLatch, Leadership};
use zkdst_recipes::membership::{GroupMember, GroupView, MemberStatus};
use zkdst_recipes::planted::{
    DoubleIncrementCounter, NoAbdicationElection, PredecessorGoneElection, ResetLivelockLatch, SuspendedIgnoredMember,
};
use zkdst_recipes::{Connect, RecipeResult};
use zkdst_sim::client::SimClient;
use zkdst_sim::runtime::SimRuntime;

use super::SimCtx;
use crate::variant::Variant;

pub enum AnyLatch {
    Correct(LeaderLatch),
    Reset(ResetLivelockLatch),
}

impl AnyLatch {
    pub fn start(variant: Option<Variant>, ctx: &SimCtx, dir: &str, data: Vec<u8>, grace: Duration) -> AnyLatch {
        match variant {
            Some(Variant::ResetLivelockLatch) => AnyLatch::Reset(ResetLivelockLatch::start(ctx, dir)),
            _ => AnyLatch::Correct(LeaderLatch::start(ctx, dir, data, grace)),
        }
    }

    pub async fn leadership(&self) -> RecipeResult<i64> {
        match self {
            AnyLatch::Correct(l) => l.leadership().await,
            AnyLatch::Reset(l) => l.leadership().await,
        }
    }

    /// The token while leading.
    pub fn token(&self) -> Option<i64> {
        match self {
            AnyLatch::Correct(l) => l.token(),
            AnyLatch::Reset(l) => match l.state() {
                LatchState::Leader { token } => Some(token),
                _ => None,
            },
        }
    }

    pub fn state(&self) -> LatchState {
        match self {
            AnyLatch::Correct(l) => l.state(),
            AnyLatch::Reset(l) => l.state(),
        }
    }

    /// Resolves when the latch does not lead.
    pub async fn not_leader(&self) {
        match self {
            AnyLatch::Correct(l) => l.not_leader().await,
            AnyLatch::Reset(l) => l.not_leader().await,
        }
    }

    /// Leaves the election (dropping the latch deletes its node).
    pub fn close(self) {
        match self {
            AnyLatch::Correct(l) => l.close(),
            AnyLatch::Reset(l) => drop(l),
        }
    }
}

pub enum AnyElection {
    Correct(Election<SimClient, SimRuntime>),
    NoAbdication(NoAbdicationElection<SimClient, SimRuntime>),
    PredecessorGone(PredecessorGoneElection<SimClient, SimRuntime>),
}

impl AnyElection {
    pub fn new(variant: Option<Variant>, ctx: SimCtx, dir: &str) -> AnyElection {
        match variant {
            Some(Variant::NoAbdicationElection) => AnyElection::NoAbdication(NoAbdicationElection::new(ctx, dir)),
            Some(Variant::PredecessorGoneElection) => {
                AnyElection::PredecessorGone(PredecessorGoneElection::new(ctx, dir))
            }
            _ => AnyElection::Correct(Election::new(ctx, dir)),
        }
    }

    /// Campaigns, giving up after `limit` if there is one (`Ok(None)`).
    pub async fn campaign(
        &self,
        data: &[u8],
        limit: Option<Duration>,
    ) -> RecipeResult<Option<Leadership<SimClient, SimRuntime>>> {
        let forever = Duration::from_secs(u32::MAX as u64);
        let limit = limit.unwrap_or(forever);
        match self {
            AnyElection::Correct(e) => e.campaign_for(data, limit).await,
            AnyElection::NoAbdication(e) => e.campaign_for(data, limit).await,
            AnyElection::PredecessorGone(e) => e.campaign_for(data, limit).await,
        }
    }
}

pub enum AnyCounter {
    Correct(Counter<SimClient, SimRuntime>),
    Double(DoubleIncrementCounter<SimClient, SimRuntime>),
}

impl AnyCounter {
    pub fn new(variant: Option<Variant>, ctx: SimCtx, path: &str) -> AnyCounter {
        match variant {
            Some(Variant::DoubleIncrementCounter) => AnyCounter::Double(DoubleIncrementCounter::new(ctx, path)),
            _ => AnyCounter::Correct(Counter::new(ctx, path)),
        }
    }

    pub async fn increment(&self) -> RecipeResult<i64> {
        match self {
            AnyCounter::Correct(c) => c.increment().await,
            AnyCounter::Double(c) => c.add(1).await,
        }
    }

    pub async fn get(&self) -> RecipeResult<i64> {
        match self {
            AnyCounter::Correct(c) => c.get().await.map(|(v, _)| v),
            AnyCounter::Double(c) => c.get().await,
        }
    }
}

pub enum AnyMember {
    Correct(GroupMember),
    Suspended(SuspendedIgnoredMember),
}

impl AnyMember {
    pub fn join(variant: Option<Variant>, connect: impl Connect<SimClient>, group: &str, id: &str) -> AnyMember {
        let rt = SimRuntime::new();
        match variant {
            Some(Variant::SuspendedIgnoredMember) => {
                AnyMember::Suspended(SuspendedIgnoredMember::join(connect, rt, group, id, Vec::new()))
            }
            _ => AnyMember::Correct(GroupMember::join(connect, rt, group, id, Vec::new())),
        }
    }

    pub async fn joined(&self) {
        match self {
            AnyMember::Correct(m) => m.joined().await,
            AnyMember::Suspended(m) => m.joined().await,
        }
    }

    pub fn status(&self) -> MemberStatus {
        match self {
            AnyMember::Correct(m) => m.status(),
            AnyMember::Suspended(m) => m.status(),
        }
    }

    pub fn view(&self) -> Option<GroupView> {
        match self {
            AnyMember::Correct(m) => m.view(),
            AnyMember::Suspended(m) => m.view(),
        }
    }

    /// Leaves the group (its session closes).
    pub fn leave(self) {
        match self {
            AnyMember::Correct(m) => m.leave(),
            AnyMember::Suspended(m) => m.leave(),
        }
    }
}
