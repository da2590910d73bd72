//! The leader's session tracker (ZooKeeper's SessionTrackerImpl with its
//! ExpiryQueue): sessions expire at the first tick boundary after
//! `last heard + timeout`, and an expiring session is closed exactly once.

use std::collections::BTreeMap;

use zkdst_recipes::zk::SessionId;

/// Clamps a requested timeout to `[2, 20]` ticks, as the server negotiates it.
pub fn negotiate_timeout(requested_ms: i32, tick_ms: u64) -> i32 {
    let lo = (2 * tick_ms) as i64;
    let hi = (20 * tick_ms) as i64;
    (requested_ms as i64).clamp(lo, hi) as i32
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tracked {
    timeout_ms: u64,
    expires_at_ms: u64,
    closing: bool,
    /// Force-expired: expires at the next tick whatever it hears meanwhile.
    forced: bool,
    /// The server the session's connection is on: requests forwarded by
    /// any other server are stale (SessionMoved).
    owner: u32,
}

/// Live sessions and their deadlines, in virtual milliseconds.
#[derive(Debug, Clone, Default)]
pub struct SessionTracker {
    tick_ms: u64,
    sessions: BTreeMap<SessionId, Tracked>,
}

impl SessionTracker {
    pub fn new(tick_ms: u64) -> Self {
        SessionTracker {
            tick_ms: tick_ms.max(1),
            sessions: BTreeMap::new(),
        }
    }

    /// `roundToNextInterval(now + timeout)`.
    fn deadline(&self, now_ms: u64, timeout_ms: u64) -> u64 {
        ((now_ms + timeout_ms) / self.tick_ms + 1) * self.tick_ms
    }

    /// Starts tracking a session (created, or inherited by a new leader,
    /// which restarts every session's clock).
    pub fn add(&mut self, session: SessionId, timeout_ms: u64, now_ms: u64, owner: u32) {
        let expires_at_ms = self.deadline(now_ms, timeout_ms);
        self.sessions.insert(
            session,
            Tracked {
                timeout_ms,
                expires_at_ms,
                closing: false,
                forced: false,
                owner,
            },
        );
    }

    /// The session's connection moved to `owner` (a revalidated reconnect).
    pub fn set_owner(&mut self, session: SessionId, owner: u32) {
        if let Some(t) = self.sessions.get_mut(&session) {
            t.owner = owner;
        }
    }

    pub fn owner(&self, session: SessionId) -> Option<u32> {
        self.sessions.get(&session).map(|t| t.owner)
    }

    /// Traffic from the session: pushes its deadline. False if the session
    /// is unknown or already closing (the client must be told it expired).
    pub fn touch(&mut self, session: SessionId, now_ms: u64) -> bool {
        let tick = self.tick_ms;
        match self.sessions.get_mut(&session) {
            Some(t) if !t.closing => {
                if !t.forced {
                    let d = ((now_ms + t.timeout_ms) / tick + 1) * tick;
                    t.expires_at_ms = t.expires_at_ms.max(d);
                }
                true
            }
            _ => false,
        }
    }

    /// Marks a session as closing (a close request was accepted).
    pub fn set_closing(&mut self, session: SessionId) {
        if let Some(t) = self.sessions.get_mut(&session) {
            t.closing = true;
        }
    }

    /// Makes the session expire at the next check (a fault).
    pub fn expire_now(&mut self, session: SessionId) -> bool {
        match self.sessions.get_mut(&session) {
            Some(t) if !t.closing => {
                t.expires_at_ms = 0;
                t.forced = true;
                true
            }
            _ => false,
        }
    }

    pub fn remove(&mut self, session: SessionId) {
        self.sessions.remove(&session);
    }

    pub fn is_live(&self, session: SessionId) -> bool {
        self.sessions.get(&session).is_some_and(|t| !t.closing)
    }

    pub fn timeout_ms(&self, session: SessionId) -> Option<u64> {
        self.sessions.get(&session).map(|t| t.timeout_ms)
    }

    /// Sessions whose deadline has passed, now marked closing, in id order.
    pub fn expire(&mut self, now_ms: u64) -> Vec<SessionId> {
        let mut out = Vec::new();
        for (id, t) in self.sessions.iter_mut() {
            if !t.closing && t.expires_at_ms <= now_ms {
                t.closing = true;
                out.push(*id);
            }
        }
        out
    }

    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_is_clamped_to_ticks() {
        assert_eq!(negotiate_timeout(1000, 2000), 4000);
        assert_eq!(negotiate_timeout(10_000, 2000), 10_000);
        assert_eq!(negotiate_timeout(100_000, 2000), 40_000);
        assert_eq!(negotiate_timeout(4000, 500), 4000);
    }

    #[test]
    fn expiry_rounds_up_to_the_next_tick() {
        // T = 6 s, tick = 2 s, last heard at 0 → expires at 8 s (between T
        // and T + tick), as the verified 7.2 s observation implies.
        let mut t = SessionTracker::new(2000);
        t.add(1, 6000, 0, 1);
        assert!(t.expire(6000).is_empty());
        assert!(t.expire(7999).is_empty());
        assert_eq!(t.expire(8000), vec![1]);
        assert!(!t.touch(1, 8000), "a closing session cannot be revived");
        assert!(t.expire(9000).is_empty(), "expired once");
    }

    #[test]
    fn a_forced_expiry_is_not_undone_by_a_ping() {
        let mut t = SessionTracker::new(500);
        t.add(3, 4000, 0, 1);
        assert!(t.expire_now(3));
        assert!(t.touch(3, 100), "still live until the leader's next tick");
        assert_eq!(t.expire(500), vec![3]);
    }

    #[test]
    fn touch_pushes_the_deadline() {
        let mut t = SessionTracker::new(1000);
        t.add(7, 3000, 0, 1);
        assert!(t.touch(7, 2500));
        assert!(t.expire(4000).is_empty());
        assert_eq!(t.expire(6000), vec![7]);
        assert!(!t.touch(99, 0));
    }
}
