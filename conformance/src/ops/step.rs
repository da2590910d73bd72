//! The steps of a sequence: one call by one client, and its arguments.

use std::fmt;

use serde::{Deserialize, Serialize};
use zkdst_recipes::zk::{CreateMode, ReadOp};

/// A version argument, resolved when the step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Version {
    /// -1, ZooKeeper's wildcard.
    Any,
    /// The node's version right now (0 if it does not exist).
    Current,
    CurrentPlus1,
    CurrentMinus1,
    /// -2: not a wildcard.
    MinusTwo,
}

impl Version {
    /// The concrete argument for a node whose version is `current`.
    pub fn resolve(self, current: i32) -> i32 {
        match self {
            Version::Any => -1,
            Version::Current => current,
            Version::CurrentPlus1 => current.wrapping_add(1),
            Version::CurrentMinus1 => current.wrapping_sub(1),
            Version::MinusTwo => -2,
        }
    }

    /// Whether resolving needs the node's current version.
    pub fn needs_current(self) -> bool {
        matches!(self, Version::Current | Version::CurrentPlus1 | Version::CurrentMinus1)
    }
}

/// One op inside a `multi`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MultiStep {
    Create {
        path: String,
        data: Vec<u8>,
        mode: CreateMode,
    },
    Delete {
        path: String,
        version: Version,
    },
    SetData {
        path: String,
        data: Vec<u8>,
        version: Version,
    },
    Check {
        path: String,
        version: Version,
    },
}

impl MultiStep {
    pub fn path(&self) -> &str {
        match self {
            MultiStep::Create { path, .. }
            | MultiStep::Delete { path, .. }
            | MultiStep::SetData { path, .. }
            | MultiStep::Check { path, .. } => path,
        }
    }
    pub fn version(&self) -> Option<Version> {
        match self {
            MultiStep::Create { .. } => None,
            MultiStep::Delete { version, .. }
            | MultiStep::SetData { version, .. }
            | MultiStep::Check { version, .. } => Some(*version),
        }
    }
}

/// One call by client `client` (an index into the executor's clients).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step {
    Create {
        client: usize,
        path: String,
        data: Vec<u8>,
        mode: CreateMode,
    },
    Delete {
        client: usize,
        path: String,
        version: Version,
    },
    SetData {
        client: usize,
        path: String,
        data: Vec<u8>,
        version: Version,
    },
    Exists {
        client: usize,
        path: String,
        watch: bool,
    },
    GetData {
        client: usize,
        path: String,
        watch: bool,
    },
    GetChildren {
        client: usize,
        path: String,
        watch: bool,
    },
    Multi {
        client: usize,
        ops: Vec<MultiStep>,
    },
    /// multiRead of getData / getChildren on relative paths.
    MultiRead {
        client: usize,
        ops: Vec<ReadOp>,
    },
    Sync {
        client: usize,
        path: String,
    },
    /// `addWatch`: PERSISTENT, or PERSISTENT_RECURSIVE.
    AddWatch {
        client: usize,
        path: String,
        recursive: bool,
    },
    /// Closes the client's session (its ephemerals go, its watches get
    /// `Closed`, its later calls fail).
    Close {
        client: usize,
    },
    /// Cuts the client's connection (and keeps it from reconnecting) until
    /// its `Reconnect`: the session survives, its watches are re-registered
    /// with SetWatches on the reconnect. The generator never gives the
    /// client a step in between.
    Disconnect {
        client: usize,
    },
    /// Lets a disconnected client reconnect (same session).
    Reconnect {
        client: usize,
    },
    /// The server expires the client's session while the client is cut
    /// off; the client learns it on reconnecting (`Expired`), its later
    /// calls fail with SessionExpired.
    Expire {
        client: usize,
    },
}

impl Step {
    pub fn client(&self) -> usize {
        match self {
            Step::Create { client, .. }
            | Step::Delete { client, .. }
            | Step::SetData { client, .. }
            | Step::Exists { client, .. }
            | Step::GetData { client, .. }
            | Step::GetChildren { client, .. }
            | Step::Multi { client, .. }
            | Step::MultiRead { client, .. }
            | Step::Sync { client, .. }
            | Step::AddWatch { client, .. }
            | Step::Close { client }
            | Step::Disconnect { client }
            | Step::Reconnect { client }
            | Step::Expire { client } => *client,
        }
    }

    /// The same step by another client.
    pub fn with_client(mut self, new: usize) -> Step {
        match &mut self {
            Step::Create { client, .. }
            | Step::Delete { client, .. }
            | Step::SetData { client, .. }
            | Step::Exists { client, .. }
            | Step::GetData { client, .. }
            | Step::GetChildren { client, .. }
            | Step::Multi { client, .. }
            | Step::MultiRead { client, .. }
            | Step::Sync { client, .. }
            | Step::AddWatch { client, .. }
            | Step::Close { client }
            | Step::Disconnect { client }
            | Step::Reconnect { client }
            | Step::Expire { client } => *client = new,
        }
        self
    }

    /// A write (create, delete, set_data, multi).
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Step::Create { .. } | Step::Delete { .. } | Step::SetData { .. } | Step::Multi { .. }
        )
    }

    /// A read (its result may be stale on a follower).
    pub fn is_read(&self) -> bool {
        matches!(
            self,
            Step::Exists { .. } | Step::GetData { .. } | Step::GetChildren { .. } | Step::MultiRead { .. }
        )
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = |watch: &bool| if *watch { " +watch" } else { "" };
        match self {
            Step::Create {
                client,
                path,
                data,
                mode,
            } => write!(f, "c{client} create /{path} {data:?} {mode:?}"),
            Step::Delete { client, path, version } => write!(f, "c{client} delete /{path} v={version:?}"),
            Step::SetData {
                client,
                path,
                data,
                version,
            } => write!(f, "c{client} set_data /{path} {data:?} v={version:?}"),
            Step::Exists { client, path, watch } => write!(f, "c{client} exists /{path}{}", w(watch)),
            Step::GetData { client, path, watch } => write!(f, "c{client} get_data /{path}{}", w(watch)),
            Step::GetChildren { client, path, watch } => write!(f, "c{client} get_children /{path}{}", w(watch)),
            Step::Multi { client, ops } => write!(f, "c{client} multi {ops:?}"),
            Step::MultiRead { client, ops } => write!(f, "c{client} multi_read {ops:?}"),
            Step::Sync { client, path } => write!(f, "c{client} sync /{path}"),
            Step::AddWatch {
                client,
                path,
                recursive,
            } => {
                let mode = if *recursive { "recursive" } else { "persistent" };
                write!(f, "c{client} add_watch /{path} {mode}")
            }
            Step::Close { client } => write!(f, "c{client} close"),
            Step::Disconnect { client } => write!(f, "c{client} disconnect"),
            Step::Reconnect { client } => write!(f, "c{client} reconnect"),
            Step::Expire { client } => write!(f, "c{client} expire"),
        }
    }
}
