//! The revocation request of ZooKeeper's "revocable shared locks" recipe:
//! a client that wants a lock writes this marker to each holder's node.
//! The recipes write and watch for it; the checker finds requests in the
//! commit log by it; one definition keeps them from drifting apart.

/// The data a requester writes to a holder's node to ask it to release.
pub const REVOKE: &[u8] = b"revoke";
