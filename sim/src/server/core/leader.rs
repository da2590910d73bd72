//! The leader's duties in a server: preparing writes against the
//! speculative tree (with the session-owner check), proposing them,
//! reaping containers and TTL nodes, revalidating sessions that move
//! between servers, and ordering syncs after the writes before them.

use super::*;

impl ServerCore {
    /// Leader: prepare, propose, and apply to the speculative tree.
    pub(super) fn leader_submit(&mut self, origin: Option<ServerId>, session: SessionId, xid: i64, req: WriteRequest) {
        let Some(spec) = self.spec.as_mut() else {
            return;
        };
        let time_ms = EPOCH_MS + self.now_ms as i64;
        let moved = match (origin, &req) {
            // PrepRequestProcessor skips checkSession for closeSession ("the
            // session expiration thread queues up this operation without
            // being the session owner"): a close from any server closes.
            (Some(_), WriteRequest::CreateSession { .. } | WriteRequest::CloseSession) => false,
            (Some(o), _) => self
                .tracker
                .owner(session)
                .is_some_and(|owner| owner != o && owner != u32::MAX),
            (None, _) => false,
        };
        let txn = if moved {
            // A request from a connection the session has left
            // (PrepRequestProcessor's checkSession → SessionMovedException).
            Txn::Error(ZkError::SessionMoved)
        } else {
            crate::tree::prep(spec, session, &req, time_ms, &self.cfg.prep)
        };
        match (&req, &txn) {
            (WriteRequest::CreateSession { timeout_ms }, Txn::CreateSession { .. }) => {
                let timeout_ms = *timeout_ms;
                self.tracker.add(
                    session,
                    timeout_ms.max(0) as u64,
                    self.now_ms,
                    origin.unwrap_or(self.cfg.id),
                )
            }
            (WriteRequest::CloseSession, Txn::CloseSession { .. }) => self.tracker.set_closing(session),
            _ => {}
        }
        let logged = Arc::new(LoggedTxn {
            session,
            xid,
            time_ms,
            txn,
        });
        if let Ok(zxid) = self.peer.propose(logged.clone()) {
            spec.apply(zxid, time_ms, &logged.txn);
        }
        self.after_peer();
    }

    pub(super) fn reap_containers(&mut self) {
        let Some(spec) = self.spec.as_ref() else {
            return;
        };
        let mut paths = spec.containers_to_reap();
        paths.extend(spec.ttl_expired(EPOCH_MS + self.now_ms as i64));
        for path in paths {
            self.leader_submit(None, 0, 0, WriteRequest::DeleteContainer { path });
        }
    }

    pub(super) fn revalidate(&mut self, from: ServerId, session: SessionId) -> i32 {
        if self.tracker.touch(session, self.now_ms) {
            self.tracker.set_owner(session, from);
            self.tracker.timeout_ms(session).unwrap_or(0) as i32
        } else {
            0
        }
    }

    pub(super) fn leader_sync(&mut self, from: ServerId, session: SessionId, xid: i64) {
        if !self.peer.is_leader() {
            return;
        }
        let target = self.peer.last_zxid();
        if self.peer.commit() >= target {
            self.send_sync_reply(from, session, xid);
        } else {
            self.syncs.push_back((target, from, session, xid));
        }
    }

    pub(super) fn send_sync_reply(&mut self, to: ServerId, session: SessionId, xid: i64) {
        if to == self.cfg.id {
            self.sync_done(session, xid);
        } else {
            let zxid = self.peer.commit();
            self.out.peers.push((to, PeerMsg::SyncReply { session, xid, zxid }));
        }
    }
}
