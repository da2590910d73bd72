//! Locks: exclusive, read/write (revocable), and the shared queue core.

pub mod blocker;
pub mod core;
pub mod guard;
pub mod mutex;
pub mod revoke;
pub mod rwlock;
pub mod steps;

pub use guard::LockGuard;
pub use mutex::Lock;
pub use revoke::QueuedNode;
pub use rwlock::RwLock;
pub use steps::{Exact, Released, Steps};
