//! [`SessionFaults`] on the simulator, with its own fault primitives.
//!
//! - Cut: the client's node is clogged (no packet in or out) and its
//!   connection dropped (`SimClient::drop_connection`): Disconnected at
//!   once, no reconnect until the node is unclogged.
//! - Restore: the node is unclogged; the client reconnects with its session.
//! - Expire: the leader expires the session (`Cluster::expire_session`, at
//!   its next tick); the run waits a few ticks of virtual time for the
//!   close transaction.

use std::time::Duration;

use madsim::net::NetSim;
use zkdst_recipes::zk::SessionId;
use zkdst_sim::client::SimClient;
use zkdst_sim::cluster::Cluster;

use crate::cutoff::SessionFaults;

/// The simulated cluster and the run's clients (client `i` runs on the
/// cluster's client node `i`).
pub struct SimFaults<'a> {
    pub cluster: &'a mut Cluster,
    pub clients: &'a [SimClient],
    pub tick_ms: u64,
}

impl SimFaults<'_> {
    fn node(&mut self, client: usize) -> Option<madsim::task::NodeId> {
        let id = self.clients.get(client)?.id();
        Some(self.cluster.client_node(id).id())
    }
}

impl SessionFaults for SimFaults<'_> {
    async fn cut(&mut self, client: usize) {
        if let Some(node) = self.node(client) {
            NetSim::current().clog_node(node);
            self.clients[client].drop_connection();
        }
    }

    async fn restore(&mut self, client: usize) {
        if let Some(node) = self.node(client) {
            NetSim::current().unclog_node(node);
        }
    }

    async fn expire(&mut self, _client: usize, session: SessionId) {
        if self.cluster.expire_session(session) {
            madsim::time::sleep(Duration::from_millis(3 * self.tick_ms)).await;
        }
    }
}
