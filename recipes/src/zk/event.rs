//! Watch events and session states (`Watcher.java`).

use serde::{Deserialize, Serialize};

/// What happened to a watched node (`Watcher.Event.EventType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventType {
    /// A session event: see the state.
    None,
    NodeCreated,
    NodeDeleted,
    NodeDataChanged,
    NodeChildrenChanged,
    DataWatchRemoved,
    ChildWatchRemoved,
    PersistentWatchRemoved,
}

impl EventType {
    pub fn code(self) -> i32 {
        match self {
            EventType::None => -1,
            EventType::NodeCreated => 1,
            EventType::NodeDeleted => 2,
            EventType::NodeDataChanged => 3,
            EventType::NodeChildrenChanged => 4,
            EventType::DataWatchRemoved => 5,
            EventType::ChildWatchRemoved => 6,
            EventType::PersistentWatchRemoved => 7,
        }
    }
}

pub use zkdst_model::SessionState;

/// A watch notification.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WatchedEvent {
    pub event_type: EventType,
    pub state: SessionState,
    /// The node's path; `None` for session events.
    pub path: Option<String>,
}

impl WatchedEvent {
    pub fn node(event_type: EventType, path: impl Into<String>) -> Self {
        WatchedEvent {
            event_type,
            state: SessionState::SyncConnected,
            path: Some(path.into()),
        }
    }
    pub fn session(state: SessionState) -> Self {
        WatchedEvent {
            event_type: EventType::None,
            state,
            path: None,
        }
    }
    /// True for a session event (no node changed).
    pub fn is_session_event(&self) -> bool {
        self.event_type == EventType::None
    }
}
