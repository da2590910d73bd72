//! One operation as the engine sees it: a model input, its output, and the
//! real-time interval in which it took effect.

use crate::history::{ClientId, OpId, Time};

/// An operation of a model, ready for the search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinOp<I, O> {
    pub id: OpId,
    pub client: ClientId,
    /// When it was invoked.
    pub call: Time,
    /// When it returned; `None` for an indeterminate operation (timed out,
    /// never returned), which may take effect at any time after `call`.
    pub ret: Option<Time>,
    pub input: I,
    /// `None` when the output is unknown (indeterminate operation).
    pub output: Option<O>,
}

impl<I, O> LinOp<I, O> {
    /// True if the operation's outcome is unknown.
    pub fn is_indeterminate(&self) -> bool {
        self.ret.is_none() || self.output.is_none()
    }
}
