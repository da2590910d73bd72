//! [`SessionFaults`] on the simulator, with its own fault primitives.
//!
//! - Cut: the client's node is clogged (no packet in or out) and its
//!   connection dropped (`AnyClient::drop_connection`): Disconnected at
//!   once, no reconnect until the node is unclogged.
//! - Restore: the node is unclogged; the client reconnects with its session.
//! - Expire: the leader expires the session (`Cluster::expire_session`, at
//!   its next tick); the run waits a few ticks of virtual time for the
//!   close transaction.

use std::time::Duration;

use zkdst_recipes::zk::SessionId;
use zkdst_sim::client::AnyClient;
use zkdst_sim::cluster::{Cluster, NodeRef};

use crate::cutoff::SessionFaults;

/// The simulated cluster and the run's clients (client `i` runs on the
/// cluster's client node `i`).
pub struct SimFaults<'a> {
    pub cluster: &'a mut Cluster,
    pub clients: &'a [AnyClient],
    pub tick_ms: u64,
}

impl SimFaults<'_> {
    /// Both directions between the client and every server: the simulated
    /// network's links, as the cluster's own partitions cut them.
    fn links(&self, client: usize) -> Vec<(NodeRef, NodeRef)> {
        let Some(c) = self.clients.get(client).map(|c| NodeRef::Client(c.id())) else {
            return Vec::new();
        };
        self.cluster
            .server_ids()
            .into_iter()
            .flat_map(|s| [(c, NodeRef::Server(s)), (NodeRef::Server(s), c)])
            .collect()
    }
}

impl SessionFaults for SimFaults<'_> {
    async fn cut(&mut self, client: usize) {
        for (a, b) in self.links(client) {
            self.cluster.cut(a, b);
        }
        if let Some(c) = self.clients.get(client) {
            c.drop_connection();
        }
    }

    async fn restore(&mut self, client: usize) {
        for (a, b) in self.links(client) {
            self.cluster.uncut(a, b);
        }
    }

    async fn expire(&mut self, _client: usize, session: SessionId) {
        if self.cluster.expire_session(session) {
            madsim::time::sleep(Duration::from_millis(3 * self.tick_ms)).await;
        }
    }
}
