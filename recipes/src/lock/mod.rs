//! Locks: exclusive, read/write (revocable), and the shared queue core.

pub mod core;
pub mod guard;
pub mod mutex;
pub mod revoke;
pub mod rwlock;

pub use guard::{LockGuard, Released};
pub use mutex::Lock;
pub use revoke::QueuedNode;
pub use rwlock::RwLock;
