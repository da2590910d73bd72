//! Comparing two normalised traces: the first difference.

use std::fmt;

use zkdst_recipes::zk::WatchedEvent;

use super::{event_sequences, normalize, NormalizeOptions};
use crate::exec::{OpRecord, Trace, WatchRecord};

/// Where two normalised traces first differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Divergence {
    /// Different numbers of ops or watches.
    Shape {
        what: &'static str,
        left: usize,
        right: usize,
    },
    /// Op `index` returned different results (or ran a different step).
    Op {
        index: usize,
        left: Box<OpRecord>,
        right: Box<OpRecord>,
    },
    /// The watch set by step `set_at` delivered different events (for a
    /// persistent watch: a different list).
    Watch {
        set_at: usize,
        left: Box<WatchRecord>,
        right: Box<WatchRecord>,
    },
    /// A client received its watch events in a different order.
    WatchOrder {
        client: usize,
        left: Vec<WatchedEvent>,
        right: Vec<WatchedEvent>,
    },
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Divergence::Shape { what, left, right } => {
                write!(f, "different number of {what}: left {left}, right {right}")
            }
            Divergence::Op { index, left, right } => {
                writeln!(f, "op {index} diverges: {}", left.step)?;
                if left.step != right.step {
                    writeln!(f, "  right ran a different step: {}", right.step)?;
                }
                if left.versions != right.versions {
                    writeln!(
                        f,
                        "  versions sent: left {:?}, right {:?}",
                        left.versions, right.versions
                    )?;
                }
                writeln!(f, "  left:  {:?}", left.outcome)?;
                write!(f, "  right: {:?}", right.outcome)
            }
            Divergence::Watch { set_at, left, right } => {
                writeln!(
                    f,
                    "watch set by op {set_at} (client {}, {:?} {}) diverges:",
                    left.client, left.kind, left.path
                )?;
                writeln!(f, "  left:  {:?}", left.events)?;
                write!(f, "  right: {:?}", right.events)
            }
            Divergence::WatchOrder { client, left, right } => {
                writeln!(f, "client {client} received its watch events in a different order:")?;
                let show = |v: &[WatchedEvent]| {
                    v.iter()
                        .map(|e| format!("{:?} {:?} {}", e.event_type, e.state, e.path.as_deref().unwrap_or("-")))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                writeln!(f, "  left:  [{}]", show(left))?;
                write!(f, "  right: [{}]", show(right))
            }
        }
    }
}

impl std::error::Error for Divergence {}

/// Compares two traces after normalising both; the first difference.
pub fn compare(a: &Trace, b: &Trace) -> Result<(), Divergence> {
    compare_with(a, b, &NormalizeOptions::default())
}

/// [`compare`] with explicit normaliser options.
pub fn compare_with(a: &Trace, b: &Trace, options: &NormalizeOptions) -> Result<(), Divergence> {
    let (a, b) = (normalize(a, options), normalize(b, options));
    for (l, r) in a.ops.iter().zip(&b.ops) {
        if l != r {
            return Err(Divergence::Op {
                index: l.index,
                left: Box::new(l.clone()),
                right: Box::new(r.clone()),
            });
        }
    }
    if a.ops.len() != b.ops.len() {
        return Err(Divergence::Shape {
            what: "ops",
            left: a.ops.len(),
            right: b.ops.len(),
        });
    }
    for (l, r) in a.watches.iter().zip(&b.watches) {
        if l != r {
            return Err(Divergence::Watch {
                set_at: l.set_at,
                left: Box::new(l.clone()),
                right: Box::new(r.clone()),
            });
        }
    }
    if a.watches.len() != b.watches.len() {
        return Err(Divergence::Shape {
            what: "watches",
            left: a.watches.len(),
            right: b.watches.len(),
        });
    }
    let (la, lb) = (event_sequences(&a), event_sequences(&b));
    for client in 0..a.sessions.len().max(b.sessions.len()) {
        let get = |v: &[(usize, Vec<WatchedEvent>)]| {
            v.iter()
                .find(|(c, _)| *c == client)
                .map(|(_, e)| e.clone())
                .unwrap_or_default()
        };
        let (l, r) = (get(&la), get(&lb));
        if l != r {
            return Err(Divergence::WatchOrder {
                client,
                left: l,
                right: r,
            });
        }
    }
    Ok(())
}
