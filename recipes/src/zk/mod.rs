//! The ZooKeeper client interface and every ZooKeeper type: the single
//! definition the simulator, the real adapter and the recipes share.

mod client;
mod error;
mod event;
pub mod path;
mod types;
mod watch;

pub use client::ZkClient;
pub use error::{ZkError, ZkResult};
pub use event::{EventType, SessionState, WatchedEvent};
pub use path::{validate_path, PathError, PathProblem};
pub use types::{
    AddWatchMode, CreateMode, MultiError, Op, OpResult, ReadOp, ReadResult, SessionId, Stat, Zxid, ANY_VERSION,
};
pub use watch::{
    OneshotWatch, OneshotWatchSender, PersistentWatch, PersistentWatchSender, StateFanout, StateWatch, StateWatchSender,
};
pub use zkdst_model::ErrorCode;
