//! Answering clients in order: a connection's queue releases replies only
//! from its head (reads wait behind earlier writes and syncs), reads are
//! served from this server's applied tree, and revalidation ends with the
//! session attached here or the connection closed as expired.

use super::*;
use zkdst_history::Names;
use zkdst_recipes::zk::Stat;

impl ServerCore {
    pub(super) fn revalidated(&mut self, session: SessionId, conn: ConnId, timeout_ms: i32) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.state != (ConnState::Revalidating { session }) {
            return;
        }
        let server = self.cfg.id;
        if timeout_ms > 0 {
            c.state = ConnState::Open { session };
            if let Some(old) = self.session_conn.insert(session, conn) {
                if old != conn {
                    // The session moved to this connection: the old one is
                    // stale, and its watches go with it (ZooKeeper's watcher
                    // is the connection: `closeSession` of the stale one
                    // removes them). The client re-registers with SetWatches
                    // what it still holds.
                    self.out.close.push((old, CloseReason::SessionMoved));
                    self.watches.remove_session(session);
                    if let Some(o) = self.conns.remove(&old) {
                        self.orphan_in_flight(session, o);
                    }
                }
            }
            // What earlier connections left in flight answers first.
            if let Some(orphans) = self.orphans.remove(&session) {
                let c = self.conns.get_mut(&conn).expect("present");
                for p in orphans.into_iter().rev() {
                    c.queue.push_front(p);
                }
            }
            self.out.clients.push((
                conn,
                ToClient::Connected {
                    session,
                    timeout_ms,
                    server,
                },
            ));
        } else {
            self.out.clients.push((
                conn,
                ToClient::Connected {
                    session,
                    timeout_ms: 0,
                    server,
                },
            ));
            self.close_conn(conn, CloseReason::SessionRefused);
        }
    }

    /// Completes the syncs whose commit point this server has applied. One
    /// this server never reaches (it fell out of the quorum unawares) waits
    /// until the server gives up on its leader and drops its clients.
    pub(super) fn release_syncs(&mut self) {
        let applied = self.tree.last_zxid();
        let (ready, waiting): (Vec<_>, Vec<_>) = self.sync_waiting.drain(..).partition(|(z, _, _)| *z <= applied);
        self.sync_waiting = waiting;
        for (_, session, xid) in ready {
            self.sync_done(session, xid);
        }
    }

    pub(super) fn sync_done(&mut self, session: SessionId, xid: i64) {
        let Some(&conn) = self.session_conn.get(&session) else {
            self.complete_orphan(session, xid);
            return;
        };
        let zxid = self.tree.last_zxid();
        if let Some(c) = self.conns.get_mut(&conn) {
            c.complete(xid, zxid, Response::Sync);
        }
        self.drain(conn);
    }

    /// Sends every reply at the head of the connection's queue that is ready.
    pub(super) fn drain(&mut self, conn: ConnId) {
        loop {
            let Some(c) = self.conns.get_mut(&conn) else {
                return;
            };
            let Some(head) = c.queue.front() else { break };
            let (zxid, response) = match &head.stage {
                Stage::Read => {
                    let Some(session) = c.session() else { return };
                    let req = head.request.clone();
                    let r = self.read(session, &req);
                    (self.tree.last_zxid(), r)
                }
                // FinalRequestProcessor answers SessionMoved by closing the
                // connection, not with a reply (ZOOKEEPER-710): the client
                // sees ConnectionLoss, reconnects and revalidates.
                Stage::Done {
                    response: Response::Error(ZkError::SessionMoved),
                    ..
                } if !head.orphaned => {
                    self.close_conn(conn, CloseReason::SessionMoved);
                    return;
                }
                Stage::Done { zxid, response } => (*zxid, response.clone()),
                Stage::AwaitCommit | Stage::AwaitSync => break,
            };
            let c = self.conns.get_mut(&conn).expect("present");
            let head = c.queue.pop_front().expect("present");
            if head.orphaned {
                continue; // its connection is gone
            }
            self.out.clients.push((
                conn,
                ToClient::Reply {
                    xid: head.xid,
                    zxid,
                    response,
                },
            ));
        }
        if let Some(c) = self.conns.get(&conn) {
            if c.close_when_drained && c.queue.is_empty() {
                self.close_conn(conn, CloseReason::SessionClosed);
            }
        }
    }

    pub(super) fn read(&mut self, session: SessionId, req: &Request) -> Response {
        if let Request::MultiRead(ops) = req {
            // One after another at this point of the applied state, without
            // watches; each read fails on its own (FinalRequestProcessor).
            let results = ops
                .iter()
                .map(|op| {
                    let r = match op {
                        ReadOp::GetData { path } => self
                            .data_of(session, path, false)
                            .map(|(data, stat)| ReadResult::Data { data, stat }),
                        ReadOp::GetChildren { path } => self
                            .children_of(session, path, false)
                            .map(|(children, _, _)| ReadResult::Children { children }),
                    };
                    r.unwrap_or_else(ReadResult::Error)
                })
                .collect();
            return Response::MultiRead(results);
        }
        let path = match req {
            Request::Exists { path, .. }
            | Request::GetData { path, .. }
            | Request::GetChildren { path, .. }
            | Request::AddWatch { path, .. } => path,
            _ => return Response::Error(ZkError::Unimplemented),
        };
        // Reads do not validate their path on a 3.8 server (clients do): a
        // malformed path is a path with no node, NoNode (verified byte for
        // byte by conformance/tests/bytes.rs).
        let reply = match req {
            Request::Exists { watch, .. } => {
                if *watch {
                    Ok(Response::Exists(self.watches.exists_watch(&self.tree, path, session)))
                } else {
                    Ok(Response::Exists(self.tree.stat(path)))
                }
            }
            Request::GetData { watch, .. } => self
                .data_of(session, path, *watch)
                .map(|(data, stat)| Response::GetData { data, stat }),
            Request::GetChildren { watch, .. } => self
                .children_of(session, path, *watch)
                .map(|(children, sorted, stat)| Response::GetChildren { children, sorted, stat }),
            Request::AddWatch { mode, .. } => {
                self.watches.add_persistent(path, session, *mode);
                Ok(Response::AddWatch)
            }
            _ => Err(ZkError::Unimplemented),
        };
        reply.unwrap_or_else(Response::Error)
    }

    fn data_of(&mut self, session: SessionId, path: &str, watch: bool) -> Result<(Vec<u8>, Stat), ZkError> {
        let r = if watch {
            self.watches.get_data_watch(&self.tree, path, session)
        } else {
            self.tree.get_data(path)
        };
        r.ok_or(ZkError::NoNode)
    }

    /// Children in the order a server's HashSet gives: unspecified, so
    /// shuffled unless the configuration says otherwise; and sorted.
    fn children_of(
        &mut self,
        session: SessionId,
        path: &str,
        watch: bool,
    ) -> Result<(Vec<String>, Names, Stat), ZkError> {
        let r = if watch {
            self.watches.get_children_watch(&self.tree, path, session)
        } else {
            self.tree.get_children(path)
        };
        let (sorted, stat) = r.ok_or(ZkError::NoNode)?;
        let sorted = Names::from(sorted);
        let children = if self.cfg.shuffle_children {
            // Shuffling the positions draws from the RNG exactly as
            // shuffling the names would (the draws depend on the length).
            let mut order: Vec<usize> = (0..sorted.len()).collect();
            order.shuffle(&mut self.rng);
            order.into_iter().map(|i| sorted[i].clone()).collect()
        } else {
            sorted.to_vec()
        };
        Ok((children, sorted, stat))
    }
}
