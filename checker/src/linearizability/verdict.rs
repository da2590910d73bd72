//! What the engine concludes, and the evidence it gives a person.

use std::fmt;
use std::time::Duration;

use crate::history::{ClientId, OpId};

/// How much effort a check may spend before answering `Unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Budget {
    /// Wall-clock limit for the whole check.
    pub deadline: Option<Duration>,
    /// Limit on search steps, summed over all partitions.
    pub max_steps: Option<u64>,
    /// Worker threads (default: all cores). With one thread the partitions
    /// are searched in round-robin slices in a fixed order, so the witness
    /// reported for a history with several refuted objects is always the
    /// same one: use it where reports must be reproducible byte for byte.
    pub threads: Option<usize>,
}

impl Budget {
    /// No limit: the search runs to a verdict.
    pub fn unlimited() -> Self {
        Budget::default()
    }
}

/// Why the engine gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownReason {
    StepLimit { steps: u64 },
    Deadline { after: Duration },
}

impl fmt::Display for UnknownReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownReason::StepLimit { steps } => write!(f, "search step limit of {steps} reached"),
            UnknownReason::Deadline { after } => write!(f, "deadline of {after:?} reached"),
        }
    }
}

/// One operation in a witness, described in the model's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WitnessStep {
    pub id: OpId,
    pub client: ClientId,
    pub operation: String,
    /// For a step of the prefix: the model state after it. For an operation
    /// that cannot be placed: why not.
    pub note: String,
}

/// Evidence that a history is not linearizable: the longest linearizable
/// prefix the search found, and what could not come next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    /// The independent object (partition) that was refuted; empty when the
    /// model has a single object.
    pub partition: String,
    pub initial_state: String,
    /// The longest linearizable prefix, in linearization order.
    pub prefix: Vec<WitnessStep>,
    /// The model state after the prefix.
    pub state: String,
    /// The operation whose response had come, so it had to be linearized
    /// before anything else could be, if any.
    pub overdue: Option<WitnessStep>,
    /// The operations that were pending at that point: none of them can be
    /// placed next.
    pub blocked: Vec<WitnessStep>,
}

impl fmt::Display for Witness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.partition.is_empty() {
            writeln!(f, "object: {}", self.partition)?;
        }
        writeln!(
            f,
            "longest linearizable prefix ({} operations), from state {}:",
            self.prefix.len(),
            self.initial_state
        )?;
        for s in &self.prefix {
            writeln!(f, "  op {} (client {}): {}  => {}", s.id, s.client, s.operation, s.note)?;
        }
        writeln!(f, "state after the prefix: {}", self.state)?;
        if let Some(o) = &self.overdue {
            writeln!(
                f,
                "op {} (client {}) {} had returned, but cannot be linearized next",
                o.id, o.client, o.operation
            )?;
        }
        writeln!(f, "no pending operation can be placed next:")?;
        for s in &self.blocked {
            writeln!(f, "  op {} (client {}): {}  -- {}", s.id, s.client, s.operation, s.note)?;
        }
        Ok(())
    }
}

/// The engine's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Linearizable,
    NotLinearizable(Box<Witness>),
    Unknown(UnknownReason),
}

impl Verdict {
    pub fn is_linearizable(&self) -> bool {
        matches!(self, Verdict::Linearizable)
    }
    pub fn is_refuted(&self) -> bool {
        matches!(self, Verdict::NotLinearizable(_))
    }
}
