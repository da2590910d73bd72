//! The words every crate shares, defined once, below both `recipes` (the
//! client interface) and `checker` (the history): what a recipe reads back
//! from ZooKeeper is the type a history records and a checker judges, with
//! no mirror type and no conversion between them.
//!
//! `recipes` re-exports these from its `zk` interface module, so recipe
//! code names them as before.

mod code;
mod create_mode;
mod ephemeral_type;
mod exercised;
mod fault;
mod fault_step;
mod revoke;
mod session;
mod stat;
mod words;
mod zxid;

pub use code::{client_error, ErrorCode};
pub use create_mode::CreateMode;
pub use ephemeral_type::EphemeralType;
pub use exercised::{Exercised, Situation, EXERCISED_NOTE};
pub use fault::FaultKind;
pub use fault_step::{FaultEnd, FaultStep};
pub use revoke::REVOKE;
pub use session::SessionState;
pub use stat::Stat;
pub use zxid::{counter_of, epoch_of, make_zxid, Zxid};

/// A session id as the server assigns it.
pub type SessionId = i64;

#[doc(hidden)]
pub use serde as __serde;
