//! Applying what the ensemble committed: after every peer input, the
//! committed log entries go into the data tree (or a snapshot replaces it),
//! watches fire, pending requests get their replies, and a snapshot is
//! taken every ~`snap_count` txns.

use super::*;

impl ServerCore {
    /// After the peer changed: persist, send, apply what committed, and
    /// track role changes.
    pub(super) fn after_peer(&mut self) {
        if let Some(snap) = self.peer.take_installed() {
            // SNAP sync: the leader's snapshot replaces our applied tree.
            self.tree = load_snapshot(&snap);
            self.since_snapshot = 0;
            self.loaded();
        }
        self.apply_committed();
        self.out.disk.extend(self.peer.take_disk_ops());
        for (to, m) in self.peer.take_messages() {
            self.out.peers.push((to, PeerMsg::Zab(m)));
        }
        if !self.sync_waiting.is_empty() {
            self.release_syncs();
        }
        let serving = self.peer.is_serving();
        if self.serving && !serving {
            // Lost the leader (or leadership): drop every client, as a
            // server going back to LOOKING does.
            let conns: Vec<ConnId> = self.conns.keys().copied().collect();
            for c in conns {
                self.close_conn(c, CloseReason::NotServing);
            }
            self.touched.clear();
            self.sync_waiting.clear();
            self.orphans.clear();
        }
        self.serving = serving;
        let leading = self.peer.is_leader();
        if leading && self.spec.is_none() {
            // Newly established: everything in the log is committed.
            self.spec = Some(self.tree.clone());
            self.tracker = SessionTracker::new(self.cfg.tick_ms);
            // Owners are unknown after an election: every client reconnects
            // (and revalidates) anyway, which sets them.
            for (s, t) in self.tree.sessions() {
                self.tracker.add(s, t as u64, self.now_ms, u32::MAX);
            }
            self.syncs.clear();
        } else if !leading && self.spec.is_some() {
            self.spec = None;
            self.tracker = SessionTracker::new(self.cfg.tick_ms);
            self.syncs.clear();
        }
        if leading {
            let commit = self.peer.commit();
            while let Some(&(target, to, session, xid)) = self.syncs.front() {
                if target > commit {
                    break;
                }
                self.syncs.pop_front();
                self.send_sync_reply(to, session, xid);
            }
        }
    }

    pub(super) fn apply_committed(&mut self) {
        let commit = self.peer.commit();
        let applied = self.tree.last_zxid();
        if commit <= applied {
            return;
        }
        if applied != self.peer.log_floor() && self.peer.position(applied).is_none() {
            // Our applied state is not on our log any more: only possible if
            // a committed txn was truncated. Rebuild from the snapshot.
            tracing::error!(
                server = self.cfg.id,
                applied,
                "applied zxid missing from the log; rebuilding the tree"
            );
            self.tree = load_snapshot(&self.peer.snapshot());
            self.loaded();
        }
        let from = self.peer.upper_bound(self.tree.last_zxid());
        let to = self.peer.upper_bound(commit);
        // Index access: an im::Vector iterator's skip would walk from the start.
        let entries: Vec<_> = (from..to).filter_map(|i| self.peer.log().get(i).cloned()).collect();
        for e in entries {
            self.apply_one(e.zxid, e.txn);
            self.since_snapshot += 1;
        }
        if self.since_snapshot >= self.snapshot_after {
            // ZooKeeper's SyncRequestProcessor: snapshot, then roll again.
            self.since_snapshot = 0;
            self.snapshot_after = snapshot_roll(&mut self.rng, self.cfg.zab.snap_count);
            let snap = Snapshot {
                zxid: self.tree.last_zxid(),
                data: Arc::new(self.tree.clone()),
            };
            self.peer.take_snapshot(snap);
        }
    }

    /// The applied tree was just replaced by a snapshot.
    pub(super) fn loaded(&mut self) {
        let (zxid, tree) = (self.tree.last_zxid(), self.tree.digest());
        self.out.applied.push(TreeChange::Loaded { zxid, tree });
    }

    pub(super) fn apply_one(&mut self, zxid: Zxid, logged: LogTxn) {
        let applied = self.tree.apply(zxid, logged.time_ms, &logged.txn);
        self.out.applied.push(TreeChange::Applied {
            zxid,
            logged: logged.clone(),
            result: applied.result.clone(),
            tree: self.tree.digest(),
        });
        for (session, ev) in self.watches.trigger(&applied.triggers) {
            if let (Some(&conn), Some(path)) = (self.session_conn.get(&session), ev.path) {
                self.out.clients.push((
                    conn,
                    ToClient::Event {
                        event_type: ev.event_type,
                        path,
                        zxid,
                    },
                ));
            }
        }
        let session = logged.session;
        match (&logged.txn, applied.result) {
            (Txn::CreateSession { timeout_ms, .. }, _) => {
                let waiting = self
                    .conns
                    .iter()
                    .find(|(_, c)| {
                        c.state
                            == ConnState::Creating {
                                session,
                                timeout_ms: *timeout_ms,
                            }
                    })
                    .map(|(id, _)| *id);
                if let Some(conn) = waiting {
                    let c = self.conns.get_mut(&conn).expect("found");
                    c.state = ConnState::Open { session };
                    self.session_conn.insert(session, conn);
                    let server = self.cfg.id;
                    self.out.clients.push((
                        conn,
                        ToClient::Connected {
                            session,
                            timeout_ms: *timeout_ms,
                            server,
                        },
                    ));
                }
            }
            (Txn::CloseSession { .. }, _) => {
                if self.peer.is_leader() {
                    self.tracker.remove(session);
                }
                self.watches.remove_session(session);
                self.orphans.remove(&session);
                if let Some(&conn) = self.session_conn.get(&session) {
                    let asked = self
                        .conns
                        .get_mut(&conn)
                        .is_some_and(|c| c.complete(logged.xid, zxid, Response::CloseSession));
                    if asked {
                        if let Some(c) = self.conns.get_mut(&conn) {
                            c.close_when_drained = true;
                        }
                        self.drain(conn);
                    } else {
                        // Expired: the server closes the connection; the
                        // client learns of the expiry when it reconnects.
                        self.close_conn(conn, CloseReason::SessionExpired);
                    }
                }
            }
            (_, result) => {
                if let Some(&conn) = self.session_conn.get(&session) {
                    let response = match result {
                        TxnResult::Create { path, stat } => Response::Create { path, stat },
                        TxnResult::Delete => Response::Delete,
                        TxnResult::SetData { stat } => Response::SetData { stat },
                        TxnResult::Check => Response::Error(ZkError::Unimplemented),
                        TxnResult::Multi(r) => Response::Multi(r),
                        TxnResult::MultiFailed(e) => Response::MultiFailed(e),
                        TxnResult::Error(e) => Response::Error(e),
                        TxnResult::CreateSession | TxnResult::CloseSession { .. } => return,
                    };
                    if let Some(c) = self.conns.get_mut(&conn) {
                        c.complete(logged.xid, zxid, response);
                    }
                    self.drain(conn);
                } else {
                    self.complete_orphan(session, logged.xid);
                }
            }
        }
    }
}
