//! What a checker can find: every violation kind, with the hint a report
//! prints for it. The kind's name is what histories' reports, JSON lines
//! and JUnit files carry; the macro takes a hint with every kind, so a
//! kind without one does not compile.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! kinds {
    ($($v:ident = $name:literal : $hint:expr,)*) => {
        /// A kind of violation.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ViolationKind {
            $($v,)*
        }

        impl ViolationKind {
            pub const ALL: &'static [ViolationKind] = &[$(ViolationKind::$v,)*];

            /// The kind's name (`mutex-overlap`).
            pub fn name(self) -> &'static str {
                match self {
                    $(ViolationKind::$v => $name,)*
                }
            }

            /// What the violation usually means, and where to look.
            pub fn hint(self) -> &'static str {
                match self {
                    $(ViolationKind::$v => $hint,)*
                }
            }

            pub fn from_name(name: &str) -> Option<ViolationKind> {
                match name {
                    $($name => Some(ViolationKind::$v),)*
                    _ => None,
                }
            }
        }
    };
}

const MUTEX_OVERLAP: &str = "Two clients acted as holders at once. Typical causes: a holder whose session expired (partition, GC pause) keeps acting — use fencing tokens at the resource; a client that reconnected with a NEW session adopted the old session's lock node (stale-session adoption); a retried create without a guid left a second node.";
const TWO_LEADERS_ONE_EPOCH: &str = "Two leaders for one epoch, or an epoch reused: derive epochs from a monotonic source (czxid, a versioned counter) and re-check leadership after reconnects with a new session.";
const ACTED_PAST_GRACE: &str = "A leader kept acting after its session was Disconnected for longer than its grace (or after it ended): the server may expire the session about a third of a session timeout after the client notices, and elect another leader. Treat Disconnected (SUSPENDED) as 'maybe not leading' and stop within the grace.";
const PASSED_BEFORE_REMOVAL: &str = "A barrier let someone through early: the wait must re-check the condition after every watch event (watches are one-shot and can fire for unrelated changes).";
const SPLIT_DECISION: &str = "Sites decided differently, or committed without unanimous yes votes: the coordinator must persist its decision before announcing it and treat missing votes as no.";
const VIEWS_DIVERGE: &str = "Membership views did not converge after the heal: watches lost on reconnect (not re-armed), or a Disconnected state treated as harmless.";
const CONFIG_VERSION_CONFLICT: &str =
    "Configuration readers disagree after the heal: a cached value not refreshed (lost watch on reconnect).";
const EXPIRY_EPHEMERALS: &str =
    "A session end must delete all of its ephemerals in one txn, and no ephemeral may be created for an ended session.";
const DIVERGENT_COMMIT: &str =
    "The servers' commit streams are not one history: replicas diverged, or a zxid was issued twice.";
const REPLICA_DIVERGENCE: &str = "A server's applied sequence left the canonical one: two servers applied different txns at one zxid, a follower skipped a committed txn (a DIFF/TRUNC/SNAP sync bug), or a committed txn was lost across a restart (acknowledged before fsync, or committed without a quorum). Replay with --trace debug and compare the servers' commits around the zxid.";

kinds! {
    MutexOverlap = "mutex-overlap": MUTEX_OVERLAP,
    RwlockOverlap = "rwlock-overlap": MUTEX_OVERLAP,
    LostWhileHeld = "lost-while-held": "The recipe told a holder its lock was lost while its session and lock node were alive and its client had not been told the session ended: a lock without a grace keeps its hold through a disconnection (a Disconnected session may still be alive; only its end, or the node's deletion, ends the hold). Giving up early costs a spurious release and a new acquisition.",
    HeldAfterSessionEnd = "held-after-session-end": "A lock holder went on writing with its token after its client had been told the session holding the lock ended (Expired or Closed): the session's end deleted the lock node, so the guard must say lost (is_lost) at once, whatever its grace, and the application must stop. A fenced resource rejects such writes only once a newer holder wrote.",
    WrongHoldNode = "wrong-hold-node": "A lock guard or lease named a node other than the one its hold stands on (its path, name, sequence number or Stat disagree with the node the holder's session created at the token's zxid): check the accessors return the node the acquire created, not a predecessor's or a placeholder.",
    SuspendedMisreported = "suspended-misreported": "A lock guard (or an at-least-once queue's claim) said its hold was suspended while its client had been connected, held while its client had been disconnected, or not lost once its client knew the session had ended: the guard's state must follow the session's connection (Disconnected suspends a hold, a reconnect restores it, the session's end loses it), or the application pauses work it could do, or acts on a hold it may have lost.",
    RevokeMisreported = "revoke-misreported": "A revocable lock's holder was told someone asked it to release when no revocation request had been written to its node, or heard a request its guard then denied: revocation is the holder's consent to a request another client wrote (setData of the revoke marker on the holder's node), never a guess.",
    RevokeUnheard = "revoke-unheard": "A revocable lock's guard said revocation was requested, and said so again later, while the application's wait for the request (`revocation_requested()`, one future across the hold) never ended: a holder that waits for the request never hears it and holds on. Typical cause: the guard records the request without waking its waiters.",
    StaleTokenAccepted = "stale-token-accepted": "The protected resource accepted an older fencing token after a newer one: the resource must remember the highest token it accepted and reject smaller ones (expired but still acting).",
    DuplicateToken = "duplicate-token": "Two acquisitions got the same fencing token: derive tokens from something unique per acquisition (the lock node's czxid or sequence number).",
    LostItem = "lost-item": "An acknowledged item was never delivered. Typical cause: the head's delete was applied but its reply lost (ConnectionLoss); the retry saw NoNode and assumed another consumer took it.",
    RedeliveredAfterComplete = "redelivered-after-complete": "An at-least-once item was handed out again after a consumer's complete() of it returned Ok: complete promises the item is gone for good. Typical causes: the claim deleted without the item (not one multi), or an error of the multi read as success.",
    LeftInQueue = "left-in-queue": "A queue the scenario drained still held items when the run ended (by the servers' commit log): no consumer will ever process them. Typical causes: a claim left behind (an item given back, or a claim dropped, without deleting the claim while its session lives), or a complete that gave up on a lost reply without removing the item or its claim.",
    MissedItem = "missed-item": "A take reported nothing to take without reading the queue, or though its own listing showed an item that stayed (by the commit log) until after the take returned. Typical causes: a wait that gives up without looking, a take that skips a listed item it failed to read, or one that gives up on the first item another consumer raced for instead of trying the next.",
    NeverCompleted = "never-completed": "The queue drained, yet an acknowledged at-least-once item that was delivered has no complete() that returned Ok or an unknown outcome: either it is still in the queue (consumers gave up on it: a claim wrongly believed lost, a complete never called) or a complete removed it while reporting that it had not (SessionLost/NodeGone for a multi that was applied).",
    DuplicateDelivery = "duplicate-delivery": "An item was delivered twice under an exactly-once contract. Typical causes: a sequential create retried blindly after ConnectionLoss; a consumer's session expired mid-processing and another consumer took the item.",
    PhantomItem = "phantom-item": "Something was delivered that nobody enqueued: check item encoding, or a consumer reading another queue's nodes.",
    DeliveredBeforeEnqueued = "delivered-before-enqueued": "An item came out before it went in: the history's clock or item naming is inconsistent.",
    FifoOrder = "fifo-order": "Items came out out of order. Children lists are unordered in ZooKeeper: sort by the sequence suffix, not by the order getChildren returns.",
    WrongPriority = "wrong-priority": "A taken item came back with a priority other than the one it was enqueued with: check that the priority is decoded from the node name as it was encoded.",
    PriorityOrder = "priority-order": "A lower-priority item was taken while a higher-priority one waited: check how the priority is encoded in node names and sorted.",
    TwoLeadersOneEpoch = "two-leaders-one-epoch": TWO_LEADERS_ONE_EPOCH,
    TokenNotCandidateNode = "token-not-candidate-node": "A campaign returned an epoch that is not its own candidate node's czxid (in the election's directory, created by its session): the leader's fencing token does not name its own leadership, so the resource cannot order it against others.",
    TokenNotLockNode = "token-not-lock-node": "An acquire returned a fencing token that is not the czxid of a lock node its session created under the lock's directory: the token does not name the hold, so a resource cannot order it against other holds (or the recipe reports the wrong directory or node).",
    TokenNotIncreasing = "token-not-increasing": TWO_LEADERS_ONE_EPOCH,
    LeaderMisreported = "leader-misreported": "An election's leader() answered other than its own last listing of the election's directory says: the leader is the lowest-sequence candidate node listed (its epoch that node's czxid), and nobody when none is listed or the directory is gone. Typical causes: sorting children as strings or by the wrong part of the name, giving up (reporting nobody) when the head vanished between the listing and its read instead of listing again, or reporting another node's Stat.",
    StaleLeaderActed = "stale-leader-acted": "A deposed leader acted after a newer leader: check leadership (and fence with the epoch) before acting, and treat Disconnected (SUSPENDED) as possibly not leading.",
    LeadersOverlap = "leaders-overlap": "The recipe told two clients they led at once, and the older one was neither paused nor force-expired: a candidate that assumes leadership when its predecessor's node goes (the predecessor may have been a waiter that gave up, not the leader), a re-read skipped after a watch, or a leader not told of its loss.",
    ActedPastGrace = "acted-past-grace": ACTED_PAST_GRACE,
    ActedAfterSessionEnd = "acted-after-session-end": ACTED_PAST_GRACE,
    LostWithinGrace = "lost-within-grace": "The recipe gave up a leadership while Disconnected for less than its grace, with its session and candidate node still alive: the grace the application asked for was not honoured (a brief network blip costs a leadership, and a new election, that the grace exists to avoid).",
    LostWhileConnected = "lost-while-connected": "The recipe told a leader its leadership was lost although its client had stayed connected since it won, and its session and candidate node were alive: nothing could have ended the leadership. Typical causes: a grace timer started while connected, a watch event (a data change, a reconnect) read as a loss, or a loss reported for an error the recipe should have retried.",
    ActedAfterLoss = "acted-after-loss": "The recipe reported the leadership lost, yet its leader went on acting with that token: is_leader() (or whatever the leader consults before acting) disagrees with the loss the recipe reported.",
    StaleActRejected = "stale-act-rejected": "The resource rejected a leader's act because a newer leader had acted, and nothing (no pause, no forced expiry) explains how the old leader fell that far behind: it went on leading after it should have known it lost.",
    PassedBeforeRemoval = "passed-before-removal": PASSED_BEFORE_REMOVAL,
    PassedBeforeNEntered = "passed-before-n-entered": PASSED_BEFORE_REMOVAL,
    BusyWait = "busy-wait": "A waiting recipe call listed its directory far more often than anything could have woken it (a change of the directory's children, an event of its session): it polls instead of waiting on a watch — a watch never set or never awaited, a wait that returns at once.",
    HoldPolls = "hold-polls": "A holder read its own node far more often than anything could have made it (a change of the node, an event of its session, a failed read): it polls the node instead of keeping a watch on it — a watch re-armed while one is set, a re-arm timer that runs while the hold is quiet. No safety promise breaks, but the ensemble's load grows with every holder and every second held.",
    WaitFailed = "wait-failed": "A barrier wait failed with an error although its session stayed connected throughout: the recipe leaked an error it should have handled (a \"no node\" that means the barrier is down, a failed check taken for an error).",
    MissedRemoval = "missed-removal": "A timed barrier wait gave up although the barrier had been removed before the wait began: the wait does not see an absent barrier as down (a predicate that never holds, an absence it never confirms).",
    EnteredEarly = "entered-early": PASSED_BEFORE_REMOVAL,
    UnknownParticipantNode = "unknown-participant-node": "A double-barrier participant that passed enter named a node (its node() accessor) that its session never created under the barrier: the participant would leave, or report, the wrong node.",
    LeftEarly = "left-early": PASSED_BEFORE_REMOVAL,
    LeftBeforeAllEntered = "left-before-all-entered": PASSED_BEFORE_REMOVAL,
    CounterOutOfBounds = "counter-out-of-bounds": "The counter moved more (or less) than the acknowledged increments allow. Typical cause: setData(version) applied but its reply lost; the retry re-read and re-applied the increment (double increment).",
    SplitDecision = "split-decision": SPLIT_DECISION,
    CommitDespiteNo = "commit-despite-no": SPLIT_DECISION,
    CommitWithoutYes = "commit-without-yes": SPLIT_DECISION,
    DecidedLate = "decided-late": "A transaction's coordinator, started after the faults healed, decided well past its join timeout although a site had not even started to join by then: the join timeout did not count that site as failed. Typical cause: a tally that waits for a site it never saw alive until some later event (the sites' own timeout).",
    AbortWithoutCause = "abort-without-cause": "A transaction was decided abort although, after the faults healed, every site voted commit (each vote acknowledged well within the coordinator's join timeout) and no site voted abort: the coordinator aborts what it should commit (a tally that counts a live, voted site as failed, or decides before reading every vote).",
    ViewsDiverge = "views-diverge": VIEWS_DIVERGE,
    MemberMissing = "member-missing": VIEWS_DIVERGE,
    MemberLingers = "member-lingers": VIEWS_DIVERGE,
    JoinedWithoutNode = "joined-without-node": "A member's join was acknowledged (joined() returned) while its member node did not exist at any moment of the join: the recipe reports Joined before its create was applied, or after the node was gone.",
    MemberPolls = "member-polls": "A group member whose id was held by another session read that node far more often than anything could have made it (a change of the node, an event of its sessions, a failed read): it polls for the id instead of waiting on a watch — a wait that returns at once, a watch never awaited. No view goes wrong, but a member held off for a session timeout loads the ensemble as fast as it answers.",
    MemberDroppedSession = "member-dropped-session": "A group member closed a session on which every call had been answered, while its application still wanted it (no leave, work still going on): the recipe took an answer, or a wait's end, for a session loss. Each such close costs a session and the member's place among those waiting for its id; repeated while the id is held, it is a storm of sessions.",
    MemberActedSuspended = "member-acted-suspended": "A group member acted on its standing (status Joined) while its session was Disconnected or already ended: its membership may be expiring, so the recipe must report it Suspended the instant the connection is lost (kazoo's SetPartitioner bug) and no longer Joined once the session is gone.",
    ViewWentBack = "view-went-back": "A group member's view went back in time: it returned a view older (a lower pzxid) than one it had already returned. Keep the newest view and discard older reads (from a lagging server or an older session).",
    ViewNeverHeld = "view-never-held": "A group member's view is not a state the group was ever in: its members differ from the group's children at the view's own zxid (pzxid), by the commit log. Typical cause: a view assembled from several reads, or members added or removed by hand instead of read.",
    ConfigWentBack = "config-went-back": "A client's configuration went back in time: it read from a server behind one it had already read from. Keep the highest version seen and ignore older reads.",
    ConfigVersionConflict = "config-version-conflict": CONFIG_VERSION_CONFLICT,
    ConfigNotConverged = "config-not-converged": CONFIG_VERSION_CONFLICT,
    MissedChange = "missed-change": "A wait for the next change of a watched value gave up, though the client's watcher already held a newer version when the wait began: the wait does not wake on a value it should accept (a predicate that never holds, a wake-up lost).",
    ChangeNotNewer = "change-not-newer": "A wait for the next change of a watched value returned a version no newer than the one the client had already seen: the recipe's wait compares the wrong way (or wakes on any notification without checking).",
    ConditionalSetBroken = "conditional-set-broken": "A conditional set (compare-and-set on the key's version) broke its word: acknowledged but not written exactly once over the expected version, or reported failed although it was written. Typical cause: a lost reply resolved wrongly (our own write, re-read, taken for someone else's; or a retry over the version our first attempt made).",
    NoViewAfterHeal = "no-view-after-heal": "After the faults healed (and, for a configuration, after the last set), a client's last read of its watched view — the group's members, the configuration value — still had no view at all: the recipe's watcher never read the node, or never handed what it read to the application.",
    Stuck = "stuck": "An operation hung after the faults healed. Typical causes: an orphan node left by a retried create (unprotected create) or a leaked lock node (delete under disconnect), or a watch not re-armed after reconnect.",
    LostAckWrite = "lost-ack-write": "A write the client was told succeeded is not in the committed history: the ensemble lost an acknowledged write (a leader acknowledged before a quorum persisted it, or a crash with disk loss).",
    WriteResultMismatch = "write-result-mismatch": "A write's reply disagrees with replaying the committed writes in zxid order: wrong sequential name, version or Stat — a server-side model bug.",
    ReadMismatch = "read-mismatch": "A read does not match the state at the zxid it claims: the server answered with a wrong value or a wrong zxid.",
    ReadFromFuture = "read-from-future": "A read reflects a write that had not been invoked or committed yet when the read returned: the recorder's zxids or times are wrong, or a server served uncommitted data.",
    SessionTimeTravel = "session-time-travel": "A session saw an older zxid after a newer one: a client reconnected to a server behind its last seen zxid (ZooKeeper must refuse such connects).",
    SessionFifo = "session-fifo": "A session's writes were applied out of the order it sent them.",
    WriteOrder = "write-order": "A write that started after another finished got a smaller zxid: writes are not linearizable.",
    PathValidation = "path-validation": "A client sent a path ZooKeeper's client refuses before sending (PathUtils.validatePath: empty, relative, `.`/`..` or empty components, a trailing `/`, NUL, control or reserved characters), or refused a valid one: its path validation differs from ZooKeeper 3.8's. A sequential create's path is checked with a `1` appended.",
    WatchMissed = "watch-missed": "A client got a reply reflecting a change (a zxid at or past it) before the event of the one-shot watch that change fires: the watch was lost (not registered with the read, dropped by the server, not re-registered by SetWatches after a reconnect with the client's last zxid) or delivered after the reply. ZooKeeper promises the event first.",
    WatchSpurious = "watch-spurious": "A client got a node event with no watch pending on that path (none set by a returned read, or already fired: one-shot watches fire once) or before any change of the path after the watch was set: the server fired a watch it did not hold, fired one twice, or fired on the wrong change.",
    SessionTransition = "session-transition": "A client told its application a session state that is not a transition: the same state twice in a row, or any state after its session ended (Expired, Closed). A state watch promises transitions, in order, none skipped, and a terminal state for ever: the client's state fan-out let a repeat or a resurrection through.",
    StaleAfterSync = "stale-after-sync": "A read after sync() missed a write completed before the sync. In ZooKeeper 3.8 sync is not a quorum op: a deposed leader can still serve this (ZOOKEEPER-1675).",
    ExpiryEphemerals = "expiry-ephemerals": EXPIRY_EPHEMERALS,
    EphemeralAfterClose = "ephemeral-after-close": EXPIRY_EPHEMERALS,
    DivergentCommit = "divergent-commit": DIVERGENT_COMMIT,
    CommitStreamInconsistent = "commit-stream-inconsistent": DIVERGENT_COMMIT,
    DuplicateZxid = "duplicate-zxid": DIVERGENT_COMMIT,
    ReplicaDivergence = "replica-divergence": REPLICA_DIVERGENCE,
    ReplicaGap = "replica-gap": REPLICA_DIVERGENCE,
    CommitRolledBack = "commit-rolled-back": REPLICA_DIVERGENCE,
    NoProgress = "no-progress": "Too few operations succeeded after the faults healed: the recipe (or the ensemble) stopped making progress — a client stuck on a watch that never fires, a leaked node every waiter queues behind, or sessions that never reconnected.",
    XidReused = "xid-reused": "A client library sent a request with an xid its session had already used (the servers' record of its connections shows both): its reply can be matched to the wrong call. ZooKeeper clients keep one increasing xid per session, across reconnects; look at where the library assigns xids and what it resets on reconnect.",
    ReplyUnmatched = "reply-unmatched": "A server sent a reply with no request of that xid in flight on the connection, or ahead of an earlier request (only auth is answered on receipt). A server-side defect: the simulator's connection queue (sim/src/wire/conn.rs) or its core answered out of order.",
    LastZxidWentBack = "last-zxid-went-back": "A session told the ensemble it had seen less than it had already claimed: a SetWatches' relative zxid below the last_zxid_seen its ConnectRequest claimed on the same connection. A server that lags accepts such a reconnect and serves the session the past (single system image broken); the library must carry the highest reply zxid it read across reconnects.",
    UnexplainedDisconnect = "unexplained-disconnect": "A client closed a healthy connection with no fault to explain it (after the faults healed, plus a session timeout), without closing its session, and its application went on working: a defect on the client's side, typically a reply or notification its library could not parse or match, which it answers by tearing the connection down. Read the last frames quoted, then the library's handling of them.",
    FalseSessionLost = "false-session-lost": "A recipe call reported 'session lost' while its session was alive (no CloseSession committed, no Expired or Closed told to its client by then). The caller will start over with a new session while the old one's ephemeral nodes still stand: map only SessionExpired/SessionClosed (or a session event) to SessionLost, and look at which branch a wake-up takes.",
    UnexplainedRecipeError = "unexplained-recipe-error": "A recipe call failed with bad data, an invalid argument or a protocol conflict, though only the recipes wrote its nodes, the workload passed valid arguments and every participant ran the same recipe: the recipe misreads (or miswrites) its own format, refuses an input its API accepts, or mistakes its own earlier step (a retried write, its own node) for another participant's.",
    NeedlessAmbiguity = "needless-ambiguity": "A recipe call answered 'ambiguous outcome', though every write it sent during the call was decided by the server (applied, or refused: SessionExpired, NoNode, BadVersion): it knew what happened and handed its caller a doubt it did not have. Typical causes: a refused first attempt sent down the lost-reply branch (a guard that treats every error as ConnectionLoss), or a session loss mapped to Ambiguous before anything could have been applied.",
    LatchQuit = "latch-quit": "A leader latch's campaign failed while its session lived: a latch stays in the election until it is closed or its session ends, retrying whatever else fails (a create, a wait, a read that ran out of retries). Its application is left outside the election with an error it cannot act on. Typical causes: an error guard that closes the latch on any error rather than on session loss only.",
    RetryBudgetExceeded = "retry-budget-exceeded": "A recipe call kept retrying past the bound its retry policy sets (RetryPolicy::max_attempts, the first attempt included): it sent one request again and again, each after the one before failed with ConnectionLoss, more times in a row than the budget allows, or (a queue enqueue) sent more multis whose reply was lost. The application set that bound on how long a call may take. Typical causes: an off-by-one in the attempt guard (`<=` for `<`), or an attempt counter that never grows.",
    QueueLenMisreported = "queue-len-misreported": "A queue's len() or is_empty() answered other than its own listing of the item directory showed: the recipe miscounts (strays counted as items, items skipped) or answers without looking. A producer pacing itself on it floods or starves the queue; a consumer draining until it is empty stops early or never.",
    GaveUpUnqueued = "gave-up-unqueued": "A timed acquire (lease, campaign) reported that it gave up waiting, though it never queued: its session was connected throughout, yet it created no node in the lock's directory. The application was told the lock was busy without the recipe asking for it. Typical causes: a time limit checked (or a wait that returns) before the contender's node is created, or an error path that reports a timeout.",
    TooManyLeases = "too-many-leases": "More clients held leases at once than the semaphore allows. Typical causes: a lease whose session expired still counted as held by its client, a retried create that left a second lease node, or a holder that counted the leases before its own node was created.",
}

impl std::fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<&str> for ViolationKind {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl Serialize for ViolationKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ViolationKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        ViolationKind::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown violation kind {name:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_unique_name_and_a_hint_and_round_trips() {
        let mut names = std::collections::BTreeSet::new();
        for &k in ViolationKind::ALL {
            assert!(names.insert(k.name()), "{k} twice");
            assert!(!k.hint().is_empty(), "{k}");
            assert_eq!(ViolationKind::from_name(k.name()), Some(k));
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{k}\""));
            assert_eq!(serde_json::from_str::<ViolationKind>(&json).unwrap(), k);
        }
        assert!(ViolationKind::MutexOverlap.hint().contains("fencing"));
        assert_eq!(ViolationKind::from_name("nonsense"), None);
        assert!(serde_json::from_str::<ViolationKind>("\"nonsense\"").is_err());
    }
}
