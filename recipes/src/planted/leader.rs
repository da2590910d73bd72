//! Broken waiting queues (elections and the lock): the correct [`Election`]
//! or [`Lock`] with one of its [`Steps`] replaced.

use std::time::Duration;

use crate::election::Election;
use crate::lock::Lock;
use crate::lock::Steps;
use crate::wait::Woken;
use crate::zk::EventType;

/// Suspended ignored, for a leader (Curator Tech Note 10; kazoo's
/// `Election.run`, which keeps running its leader function through
/// SUSPENDED): leadership ends only when the session ends or the node goes,
/// never on Disconnected. A leader cut off from the ensemble keeps acting
/// while the servers expire its session and elect another.
pub type NoAbdicationElection<C, R> = Election<C, R, NoAbdication>;

/// Predecessor gone, so I lead (the ZooKeeper recipe's own warning: a
/// candidate woken by its predecessor's deletion must re-read the
/// children; the predecessor may have been a candidate that gave up or
/// died while someone before it still leads). Needs a waiter to leave the
/// queue without ever leading — a campaign that times out, or a session
/// that expires while waiting.
pub type PredecessorGoneElection<C, R> = Election<C, R, PredecessorGoneIsMyTurn>;

/// A leader gone between the listing and its read taken for no leader
/// (`leader()` answers "nobody leads" instead of listing again, while the
/// next candidate already leads). Needs a query whose head resigns, gives
/// up or expires between its `getChildren` and its `getData`: under swarm
/// faults a query can take seconds, so about a third of election.toml's
/// seeds reach it.
pub type VanishedLeaderElection<C, R> = Election<C, R, VanishedHeadIsNobody>;

/// A leadership survives any disconnection.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAbdication;

impl Steps for NoAbdication {
    fn grace(&self, _grace: Option<Duration>) -> Option<Duration> {
        // BUG: no suspension limit.
        None
    }
}

/// The predecessor's deletion is taken for our turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct PredecessorGoneIsMyTurn;

impl Steps for PredecessorGoneIsMyTurn {
    fn turn_on(&self, woken: &Woken) -> bool {
        // BUG: the deleted predecessor may not have been the leader.
        matches!(woken, Woken::Node(ev) if ev.event_type == EventType::NodeDeleted)
    }
}

/// The gone blocker taken for our turn (the recipe's "if exists() returns
/// null, go to step 2" read as "the lock is ours"): right only when the
/// blocker was the holder. Needs a rare interleaving: a waiter that gives
/// up, or whose session ends, between its successor's `getChildren` and
/// `exists`, while the node before it holds.
pub type GoneBlockerLock<C, R> = Lock<C, R, GoneIsMyTurn>;

/// A blocker found gone is taken for our turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct GoneIsMyTurn;

impl Steps for GoneIsMyTurn {
    fn gone_is_turn(&self) -> bool {
        // BUG: the gone blocker may have been a waiter.
        true
    }
}

/// A head found gone by `leader()` is taken for an empty election.
#[derive(Debug, Clone, Copy, Default)]
pub struct VanishedHeadIsNobody;

impl Steps for VanishedHeadIsNobody {
    fn vanished_head_is_nobody(&self) -> bool {
        // BUG: the next candidate leads now.
        true
    }
}
