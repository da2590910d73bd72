//! [`SessionFaults`] on a real server: each client connects through its own
//! [`FaultProxy`].
//!
//! - Cut: the proxy drops every byte and closes the client's connection;
//!   the client sees the connection end at once (Disconnected) and cannot
//!   reconnect through the silent proxy.
//! - Restore: the proxy passes bytes again (and closes the half-open
//!   connection attempts that lost bytes); the client reconnects with its
//!   session and re-registers its watches.
//! - Expire: a second handle attaches to the session directly (the server
//!   closes the session's old connection, already gone) and closes it: the
//!   session's close transaction is what an expiry commits (its ephemerals
//!   go, other sessions' watches fire). The cut-off client learns the
//!   session is gone when it reconnects: Expired.

use std::time::Duration;

use zkdst_real::RealClient;
use zkdst_recipes::zk::SessionId;
use zookeeper_client as zkc;

use crate::cutoff::SessionFaults;
use crate::proxy::{FaultMode, FaultProxy};

/// The proxies of a run's clients, by client index, and the server itself.
pub struct ProxyFaults<'a> {
    pub proxies: &'a [FaultProxy],
    pub clients: &'a [RealClient],
    /// Connect string of the server, bypassing the proxies.
    pub direct: String,
}

impl SessionFaults for ProxyFaults<'_> {
    async fn cut(&mut self, client: usize) {
        if let Some(p) = self.proxies.get(client) {
            p.set_mode(FaultMode::DropAll);
            p.close_all();
        }
    }

    async fn restore(&mut self, client: usize) {
        if let Some(p) = self.proxies.get(client) {
            p.set_mode(FaultMode::Pass);
        }
    }

    async fn expire(&mut self, client: usize, session: SessionId) {
        let Some(raw) = self.clients.get(client).and_then(RealClient::raw) else {
            return;
        };
        let info = raw.session().clone();
        drop(raw);
        if info.id().0 != session {
            return;
        }
        let attaching = zkc::Client::connector()
            .with_session(info)
            .with_session_timeout(Duration::from_secs(6))
            .connect(&self.direct);
        let twin = match tokio::time::timeout(Duration::from_secs(10), attaching).await {
            Ok(Ok(c)) => c,
            other => {
                tracing::warn!(?other, "could not attach to the session to end it");
                return;
            }
        };
        // Dropping the last handle closes the session; wait until it has.
        let mut states = twin.state_watcher();
        drop(twin);
        let closed = async {
            while !states.peek_state().is_terminated() {
                states.changed().await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(10), closed).await;
    }
}
