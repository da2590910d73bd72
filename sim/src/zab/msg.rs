//! The messages servers exchange: election votes and the Zab protocol
//! (discovery, synchronization, broadcast), as in ZooKeeper's Learner/Leader.

use super::log::{Entry, SyncKind};

/// A server's id (`myid`).
pub type ServerId = u32;
pub use zkdst_model::{counter_of, epoch_of, make_zxid, Zxid};

/// A server's election state as carried in votes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerState {
    Looking,
    Following,
    Leading,
}

/// A fast-leader-election notification: who the sender proposes (or, when
/// not looking, who it follows or that it leads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vote {
    /// The sender's election round (FLE's logical clock).
    pub round: u64,
    pub leader: ServerId,
    /// The proposed leader's current epoch and last logged zxid.
    pub leader_epoch: u32,
    pub leader_zxid: Zxid,
    pub state: PeerState,
}

impl Vote {
    /// FLE's total order: higher epoch, then higher zxid, then higher id.
    pub fn key(&self) -> (u32, Zxid, ServerId) {
        (self.leader_epoch, self.leader_zxid, self.leader)
    }
}

/// A replication protocol message. Every leader→follower message after
/// discovery carries the epoch so stale ones (from an older leadership,
/// delivered late after a partition heals) are ignored.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg<T, S> {
    Vote(Vote),
    /// follower → leader: start of discovery.
    FollowerInfo {
        accepted_epoch: u32,
        last_zxid: Zxid,
    },
    /// leader → follower: the new epoch.
    LeaderInfo {
        epoch: u32,
    },
    /// follower → leader: the follower accepted `epoch`; its history.
    /// `counts` is false when the follower had already accepted this epoch
    /// (from this or another would-be leader): such an ack must not count
    /// toward the quorum that establishes the epoch (ZooKeeper's -1 ack),
    /// or two leaders could both establish one epoch.
    AckEpoch {
        epoch: u32,
        current_epoch: u32,
        last_zxid: Zxid,
        counts: bool,
    },
    /// leader → follower: DIFF, TRUNC or SNAP, then `entries`;
    /// everything ≤ `commit` is committed.
    Sync {
        epoch: u32,
        kind: SyncKind<S>,
        entries: Vec<Entry<T>>,
        commit: Zxid,
    },
    /// follower → leader: the synced history is durable up to `zxid`.
    NewLeaderAck {
        epoch: u32,
        zxid: Zxid,
    },
    /// leader → follower: start serving clients.
    UpToDate {
        epoch: u32,
    },
    Propose {
        epoch: u32,
        entry: Entry<T>,
    },
    /// follower → leader: durable up to `zxid`.
    Ack {
        epoch: u32,
        zxid: Zxid,
    },
    /// leader → follower: committed up to `zxid`.
    Commit {
        epoch: u32,
        zxid: Zxid,
    },
    Ping {
        epoch: u32,
    },
}
