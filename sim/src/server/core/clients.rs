//! Client connections in a server: new and closed connections, the
//! requests that arrive on them (reads answered here, writes forwarded
//! to the leader), watch removal, and the replies queued for each.

use super::*;

impl ServerCore {
    /// Takes the packets for `conn` queued so far, leaving the rest: a wire
    /// connection sends what SetWatches fired before its own reply.
    pub fn take_client_messages(&mut self, conn: ConnId) -> Vec<ToClient> {
        let (mine, rest) = std::mem::take(&mut self.out.clients)
            .into_iter()
            .partition(|(c, _)| *c == conn);
        self.out.clients = rest;
        mine.into_iter().map(|(_, m)| m).collect::<Vec<_>>()
    }

    /// `removeWatches` / `checkWatches` for a session connected here:
    /// whether it had such a watch (`kind` is the request's WatcherType).
    pub fn remove_watch(&mut self, session: SessionId, path: &str, kind: i32, remove: bool) -> Result<bool, ZkError> {
        // No path validation, as for reads: an unknown path has no watch.
        let kind = crate::tree::WatchKind::from_i32(kind).ok_or(ZkError::BadArguments)?;
        self.touch(session);
        Ok(self.watches.remove_watch(path, session, kind, remove))
    }

    pub fn on_client_connected(&mut self, conn: ConnId) {
        if self.serving {
            self.conns.insert(conn, Conn::new());
        } else {
            // Not serving (no leader): refuse, as a LOOKING server does.
            self.out.close.push((conn, CloseReason::NotServing));
        }
    }

    pub fn on_client_closed(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.remove(&conn) {
            if let Some(s) = c.session() {
                self.orphan_in_flight(s, c);
                if self.session_conn.get(&s) == Some(&conn) {
                    self.session_conn.remove(&s);
                    self.watches.remove_session(s);
                }
            }
        }
    }

    /// Keeps the writes and syncs a closed connection of `session` had in
    /// flight: ZooKeeper's CommitProcessor queues a session's requests by
    /// session id, not by connection, so they still run, and a later
    /// connection of the session on this server is answered only after
    /// them (a read there sees a create the old connection sent).
    pub(super) fn orphan_in_flight(&mut self, session: SessionId, c: Conn) {
        let mut kept = c.queue.into_iter().filter(Pending::in_flight).peekable();
        if kept.peek().is_some() {
            self.orphans
                .entry(session)
                .or_default()
                .extend(kept.map(|p| Pending { orphaned: true, ..p }));
        }
    }

    /// Completes an orphaned request of a session with no connection here.
    pub(super) fn complete_orphan(&mut self, session: SessionId, xid: i64) {
        if let Some(q) = self.orphans.get_mut(&session) {
            if let Some(i) = q.iter().position(|p| p.xid == xid) {
                q.remove(i);
            }
            if q.is_empty() {
                self.orphans.remove(&session);
            }
        }
    }

    pub fn on_client(&mut self, now_ms: u64, conn: ConnId, msg: ToServer) {
        self.now_ms = now_ms;
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        match msg {
            ToServer::Connect {
                session,
                last_zxid,
                timeout_ms,
            } => {
                if c.state != ConnState::New {
                    return self.close_conn(conn, CloseReason::BadFrame);
                }
                if last_zxid > self.tree.last_zxid() {
                    // "client must try another server": never let a session
                    // see time go backwards.
                    return self.close_conn(conn, CloseReason::ClientAhead);
                }
                let timeout_ms = negotiate_timeout(timeout_ms, self.cfg.tick_ms);
                if session == 0 {
                    self.next_session += 1;
                    let id = ((self.cfg.id as i64) << 56)
                        | (((self.incarnation & 0xffff) as i64) << 40)
                        | self.next_session as i64;
                    if let Some(c) = self.conns.get_mut(&conn) {
                        c.state = ConnState::Creating {
                            session: id,
                            timeout_ms,
                        };
                    }
                    self.forward(id, 0, ForwardedWrite::CreateSession { timeout_ms });
                } else {
                    if let Some(c) = self.conns.get_mut(&conn) {
                        c.state = ConnState::Revalidating { session };
                    }
                    if self.peer.is_leader() {
                        let me = self.cfg.id;
                        let t = self.revalidate(me, session);
                        self.revalidated(session, conn, t);
                    } else if let Some(l) = self.peer.leader() {
                        self.to_leader(l, PeerMsg::Revalidate { session, conn });
                    }
                }
            }
            ToServer::SetWatches {
                relative_zxid,
                data,
                exist,
                child,
                persistent,
                persistent_recursive,
            } => {
                let Some(session) = c.session() else { return };
                self.touch(session);
                let events = self.watches.set_watches(
                    &self.tree,
                    session,
                    relative_zxid,
                    &data,
                    &exist,
                    &child,
                    &persistent,
                    &persistent_recursive,
                );
                let zxid = self.tree.last_zxid();
                for e in events {
                    if let Some(path) = e.path {
                        self.out.clients.push((
                            conn,
                            ToClient::Event {
                                event_type: e.event_type,
                                path,
                                zxid,
                            },
                        ));
                    }
                }
            }
            ToServer::Ping => {
                if let Some(session) = c.session() {
                    self.touch(session);
                    let zxid = self.tree.last_zxid();
                    self.out.clients.push((conn, ToClient::Pong { zxid }));
                }
            }
            ToServer::Request { xid, request } => {
                let Some(session) = c.session() else {
                    return self.close_conn(conn, CloseReason::BadFrame);
                };
                self.touch(session);
                if request.wire_len() > JUTE_MAX_BUFFER {
                    // "Len error": the server drops the connection.
                    return self.close_conn(conn, CloseReason::TooLarge);
                }
                let stage = if request.is_write() {
                    Stage::AwaitCommit
                } else if matches!(request, Request::Sync { .. }) {
                    Stage::AwaitSync
                } else {
                    Stage::Read
                };
                let c = self.conns.get_mut(&conn).expect("checked above");
                c.queue.push_back(Pending {
                    xid,
                    request: request.clone(),
                    stage: stage.clone(),
                    orphaned: false,
                });
                match stage {
                    Stage::AwaitCommit => {
                        self.forward(session, xid, ForwardedWrite::Request(request));
                    }
                    Stage::AwaitSync => {
                        if self.peer.is_leader() {
                            let me = self.cfg.id;
                            self.leader_sync(me, session, xid);
                        } else if let Some(l) = self.peer.leader() {
                            self.to_leader(l, PeerMsg::SyncRequest { session, xid });
                        }
                    }
                    _ => {}
                }
                self.drain(conn);
            }
        }
    }
}
