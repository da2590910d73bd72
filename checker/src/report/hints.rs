//! What a violation usually means, and where to look.

/// A hint for a violation kind (empty when there is none).
pub fn hint(kind: &str) -> &'static str {
    match kind {
        "mutex-overlap" | "rwlock-overlap" => "Two clients acted as holders at once. Typical causes: a holder whose session expired (partition, GC pause) keeps acting — use fencing tokens at the resource; a client that reconnected with a NEW session adopted the old session's lock node (stale-session adoption); a retried create without a guid left a second node.",
        "stale-token-accepted" => "The protected resource accepted an older fencing token after a newer one: the resource must remember the highest token it accepted and reject smaller ones (expired but still acting).",
        "duplicate-token" => "Two acquisitions got the same fencing token: derive tokens from something unique per acquisition (the lock node's czxid or sequence number).",
        "lost-item" => "An acknowledged item was never delivered. Typical cause: the head's delete was applied but its reply lost (ConnectionLoss); the retry saw NoNode and assumed another consumer took it.",
        "duplicate-delivery" => "An item was delivered twice under an exactly-once contract. Typical causes: a sequential create retried blindly after ConnectionLoss; a consumer's session expired mid-processing and another consumer took the item.",
        "phantom-item" => "Something was delivered that nobody enqueued: check item encoding, or a consumer reading another queue's nodes.",
        "delivered-before-enqueued" => "An item came out before it went in: the history's clock or item naming is inconsistent.",
        "fifo-order" => "Items came out out of order. Children lists are unordered in ZooKeeper: sort by the sequence suffix, not by the order getChildren returns.",
        "priority-order" => "A lower-priority item was taken while a higher-priority one waited: check how the priority is encoded in node names and sorted.",
        "two-leaders-one-epoch" | "token-not-increasing" => "Two leaders for one epoch, or an epoch reused: derive epochs from a monotonic source (czxid, a versioned counter) and re-check leadership after reconnects with a new session.",
        "stale-leader-acted" => "A deposed leader acted after a newer leader: check leadership (and fence with the epoch) before acting, and treat Disconnected (SUSPENDED) as possibly not leading.",
        "leaders-overlap" => "The recipe told two clients they led at once, and the older one was neither paused nor force-expired: a candidate that assumes leadership when its predecessor's node goes (the predecessor may have been a waiter that gave up, not the leader), a re-read skipped after a watch, or a leader not told of its loss.",
        "acted-past-grace" | "acted-after-session-end" => "A leader kept acting after its session was Disconnected for longer than its grace (or after it ended): the server may expire the session about a third of a session timeout after the client notices, and elect another leader. Treat Disconnected (SUSPENDED) as 'maybe not leading' and stop within the grace.",
        "acted-after-loss" => "The recipe reported the leadership lost, yet its leader went on acting with that token: is_leader() (or whatever the leader consults before acting) disagrees with the loss the recipe reported.",
        "stale-act-rejected" => "The resource rejected a leader's act because a newer leader had acted, and nothing (no pause, no forced expiry) explains how the old leader fell that far behind: it went on leading after it should have known it lost.",
        "passed-before-removal" | "passed-before-n-entered" | "entered-early" | "left-early" | "left-before-all-entered" => "A barrier let someone through early: the wait must re-check the condition after every watch event (watches are one-shot and can fire for unrelated changes).",
        "counter-out-of-bounds" => "The counter moved more (or less) than the acknowledged increments allow. Typical cause: setData(version) applied but its reply lost; the retry re-read and re-applied the increment (double increment).",
        "split-decision" | "commit-despite-no" | "commit-without-yes" => "Sites decided differently, or committed without unanimous yes votes: the coordinator must persist its decision before announcing it and treat missing votes as no.",
        "views-diverge" | "member-missing" | "member-lingers" => "Membership views did not converge after the heal: watches lost on reconnect (not re-armed), or a Disconnected state treated as harmless.",
        "config-went-back" => "A client's configuration went back in time: it read from a server behind one it had already read from. Keep the highest version seen and ignore older reads.",
        "config-version-conflict" | "config-not-converged" => "Configuration readers disagree after the heal: a cached value not refreshed (lost watch on reconnect).",
        "stuck" => "An operation hung after the faults healed. Typical causes: an orphan node left by a retried create (unprotected create) or a leaked lock node (delete under disconnect), or a watch not re-armed after reconnect.",
        "lost-ack-write" => "A write the client was told succeeded is not in the committed history: the ensemble lost an acknowledged write (a leader acknowledged before a quorum persisted it, or a crash with disk loss).",
        "write-result-mismatch" => "A write's reply disagrees with replaying the committed writes in zxid order: wrong sequential name, version or Stat — a server-side model bug.",
        "read-mismatch" => "A read does not match the state at the zxid it claims: the server answered with a wrong value or a wrong zxid.",
        "read-from-future" => "A read reflects a write that had not been invoked or committed yet when the read returned: the recorder's zxids or times are wrong, or a server served uncommitted data.",
        "session-time-travel" => "A session saw an older zxid after a newer one: a client reconnected to a server behind its last seen zxid (ZooKeeper must refuse such connects).",
        "session-fifo" => "A session's writes were applied out of the order it sent them.",
        "write-order" => "A write that started after another finished got a smaller zxid: writes are not linearizable.",
        "stale-after-sync" => "A read after sync() missed a write completed before the sync. In ZooKeeper 3.8 sync is not a quorum op: a deposed leader can still serve this (ZOOKEEPER-1675).",
        "expiry-ephemerals" | "ephemeral-after-close" => "A session end must delete all of its ephemerals in one txn, and no ephemeral may be created for an ended session.",
        "divergent-commit" | "commit-stream-inconsistent" | "duplicate-zxid" => "The servers' commit streams are not one history: replicas diverged, or a zxid was issued twice.",
        "replica-divergence" | "replica-gap" | "commit-rolled-back" => "A server's applied sequence left the canonical one: two servers applied different txns at one zxid, a follower skipped a committed txn (a DIFF/TRUNC/SNAP sync bug), or a committed txn was lost across a restart (acknowledged before fsync, or committed without a quorum). Replay with --trace debug and compare the servers' commits around the zxid.",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_kind_the_checkers_emit_has_a_hint() {
        for k in [
            "mutex-overlap",
            "stale-token-accepted",
            "lost-item",
            "duplicate-delivery",
            "counter-out-of-bounds",
            "stuck",
            "lost-ack-write",
            "session-time-travel",
            "read-from-future",
            "replica-divergence",
            "replica-gap",
            "commit-rolled-back",
        ] {
            assert!(!super::hint(k).is_empty(), "{k}");
        }
        assert!(super::hint("mutex-overlap").contains("fencing"));
        assert_eq!(super::hint("nonsense"), "");
    }
}
