//! A session's state as its client sees it (`Watcher.Event.KeeperState`),
//! one type from the client interface to the history and its checkers.

use serde::{Deserialize, Serialize};

/// The session state reported with an event (`Watcher.Event.KeeperState`).
/// In a history it is written in its history word (`connected`,
/// `disconnected`, `expired`, `closed`, `auth_failed`,
/// `connected_read_only`); ZooKeeper's own names are read too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SessionState {
    /// Not connected yet, or reconnecting; the session may still be alive.
    #[serde(rename = "disconnected", alias = "Disconnected")]
    Disconnected,
    #[serde(
        rename = "connected",
        alias = "SyncConnected",
        alias = "sync_connected",
        alias = "Connected"
    )]
    SyncConnected,
    #[serde(rename = "auth_failed", alias = "AuthFailed")]
    AuthFailed,
    #[serde(rename = "connected_read_only", alias = "ConnectedReadOnly")]
    ConnectedReadOnly,
    /// The server said the session is gone: its ephemerals are deleted.
    #[serde(rename = "expired", alias = "Expired")]
    Expired,
    /// The handle was closed by its owner.
    #[serde(rename = "closed", alias = "Closed")]
    Closed,
}

impl SessionState {
    pub const ALL: [SessionState; 6] = [
        SessionState::Disconnected,
        SessionState::SyncConnected,
        SessionState::AuthFailed,
        SessionState::ConnectedReadOnly,
        SessionState::Expired,
        SessionState::Closed,
    ];

    /// Expired, Closed and AuthFailed are terminal: the handle is dead.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            SessionState::Expired | SessionState::Closed | SessionState::AuthFailed
        )
    }

    pub fn is_connected(self) -> bool {
        matches!(self, SessionState::SyncConnected | SessionState::ConnectedReadOnly)
    }

    /// The session is over for the ensemble: expired or closed.
    pub fn is_end(self) -> bool {
        matches!(self, SessionState::Expired | SessionState::Closed)
    }

    /// `KeeperState`'s integer code.
    pub fn code(self) -> i32 {
        match self {
            SessionState::Disconnected => 0,
            SessionState::SyncConnected => 3,
            SessionState::AuthFailed => 4,
            SessionState::ConnectedReadOnly => 5,
            SessionState::Expired => -112,
            SessionState::Closed => 7,
        }
    }

    /// The word a history writes (and stats count: `session.connected`).
    pub fn name(self) -> &'static str {
        match self {
            SessionState::Disconnected => "disconnected",
            SessionState::SyncConnected => "connected",
            SessionState::AuthFailed => "auth_failed",
            SessionState::ConnectedReadOnly => "connected_read_only",
            SessionState::Expired => "expired",
            SessionState::Closed => "closed",
        }
    }
}

impl std::fmt::Display for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_words_round_trip_and_zookeeper_names_are_read() {
        for s in SessionState::ALL {
            let json = format!("\"{}\"", s.name());
            assert_eq!(serde_json::to_string(&s).unwrap(), json);
            assert_eq!(serde_json::from_str::<SessionState>(&json).unwrap(), s);
            let java = format!("\"{s:?}\"");
            assert_eq!(serde_json::from_str::<SessionState>(&java).unwrap(), s, "{java}");
        }
        assert!(serde_json::from_str::<SessionState>("\"connecting\"").is_err());
    }
}
