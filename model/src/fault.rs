//! The kinds of fault a plan injects, by one name each, from the plan file
//! to the stats.

crate::words! {
    /// The kinds of fault: what a swarm draws from (its weights' keys), what
    /// a plan's `kind` names (a pause split by the node it stops), and the
    /// `fault.KIND` / `skipped.KIND` stats. One name each.
    pub enum FaultKind {
        PartitionHalves = "partition-halves",
        IsolateLeader = "isolate-leader",
        MajoritiesRing = "majorities-ring",
        Bridge = "bridge",
        OneWayCut = "one-way-cut",
        ClientCut = "client-cut",
        KillLeader = "kill-leader",
        /// A server drawn at random.
        KillServer = "kill-server",
        DropConnection = "drop-connection",
        LoseReply = "lose-reply",
        ExpireSession = "expire-session",
        PauseClient = "pause-client",
        PauseServer = "pause-server",
        LatencySpike = "latency-spike",
        DeleteRecipeDir = "delete-recipe-dir",
        /// A client's connection fails as its next read's reply arrives and
        /// stays down past the session timeout: the session expires while
        /// the recipe acts on what it read, and the write it sends next
        /// fails with SessionExpired, never sent.
        ExpireAfterRead = "expire-after-read",
        /// A client's connection drops as each request goes out on it, for
        /// the fault's duration: every call it makes meanwhile fails with
        /// ConnectionLoss (applied or not), retries included, and each
        /// reconnect's first read with it.
        FlapConnection = "flap-connection",
        /// A client's next write is applied and its reply lost; from the
        /// next reply it reads (its retry's, typically) its connection
        /// flaps for the fault's duration: a flaky link that comes back
        /// for one answer, so the recipe learns the write's fate only by
        /// reading it back, and that read fails.
        LoseReplyThenFlap = "lose-reply-then-flap",
    }
}
