//! zkdst-recipes: ZooKeeper coordination recipes written against one client
//! interface ([`zk::ZkClient`]), so that they run unchanged on the simulated
//! ensemble of `zkdst-sim` and on a real ZooKeeper.
//!
//! Every recipe takes a [`Ctx`] (a session handle, a [`Runtime`] for time
//! and background work, a retry policy and the session's guid counter) and
//! returns [`RecipeError`]s. Recipes never block a thread, never read real
//! time and never draw random numbers: under simulation they are
//! deterministic.

pub mod barrier;
pub mod cell;
pub mod config;
pub mod counter;
pub mod ctx;
pub mod election;
pub mod error;
pub mod guid;
pub mod lock;
pub mod membership;
pub mod monitor;
pub mod nodes;
// Its own `//!` doc only: an outer doc here would resolve the module doc's
// links from the crate root, where the planted types are not in scope.
#[cfg(feature = "planted")]
pub mod planted;
pub mod queue;
pub mod retry;
pub mod runtime;
pub mod semaphore;
pub mod seq;
pub mod session_loop;
pub mod two_phase;
pub mod wait;
pub mod zk;

pub use ctx::{Connect, Ctx};
pub use error::{RecipeError, RecipeResult};
pub use monitor::{HoldState, LostReason};
pub use retry::RetryPolicy;
pub use runtime::{Clock, Runtime, Spawn};
