//! Writes a history as a Jepsen EDN history, in each layout the reader
//! accepts, such that [`parse_jepsen_edn`](super::parse_jepsen_edn) reads
//! it back identically: the operations of a cas-register, a multi-register,
//! a mutex (lock `mutex`) or a queue (queue `queue`, priority 0).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::edn::Edn;
use crate::history::{Event, History, Op, OpId, Outcome, Value};

/// How the op maps are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdnLayout {
    /// One map per line.
    Lines,
    /// One vector spanning many lines, with `;` comments.
    Vector,
    /// One list spanning many lines.
    List,
    /// Each map spread over several lines, with comments between keys.
    Spread,
    /// `#jepsen.history.Op{...}` records with `:index`, `#inst` and `#_`
    /// discarded forms, inside a vector.
    Tagged,
}

impl EdnLayout {
    pub const ALL: [EdnLayout; 5] = [
        EdnLayout::Lines,
        EdnLayout::Vector,
        EdnLayout::List,
        EdnLayout::Spread,
        EdnLayout::Tagged,
    ];
}

/// An event the EDN format cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {index} cannot be written as a Jepsen op: {why}")]
pub struct Unwritable {
    pub index: usize,
    pub why: String,
}

/// `history` as Jepsen EDN in `layout`; every event gets its `:time`.
pub fn write_jepsen_edn(history: &History, layout: EdnLayout) -> Result<String, Unwritable> {
    let mut maps = Vec::new();
    let mut invoked: HashMap<OpId, &Op> = HashMap::new();
    for (index, e) in history.events.iter().enumerate() {
        let bad = |why: &str| Unwritable {
            index,
            why: why.to_string(),
        };
        let (kind, client, time, op, value, error) = match e {
            Event::Invoke {
                id, time, client, op, ..
            } => {
                invoked.insert(*id, op);
                (
                    ":invoke",
                    *client,
                    *time,
                    op,
                    invocation_value(op).ok_or_else(|| bad("unsupported op"))?,
                    None,
                )
            }
            Event::Complete {
                id,
                time,
                client,
                outcome,
                ..
            } => {
                let op = invoked
                    .get(id)
                    .copied()
                    .ok_or_else(|| bad("completion without invocation"))?;
                match outcome {
                    Outcome::Ok { value } => {
                        let v = result_value(op, value).ok_or_else(|| bad("unsupported result"))?;
                        (":ok", *client, *time, op, v, None)
                    }
                    Outcome::Fail { error } => (":fail", *client, *time, op, Edn::Nil, Some(error)),
                    Outcome::Info { error } => (":info", *client, *time, op, Edn::Nil, Some(error)),
                }
            }
            _ => return Err(bad("not an invocation or completion")),
        };
        let mut fields = vec![
            (":type", kind.to_string()),
            (":f", f_name(op).to_string()),
            (":value", value.to_string()),
            (":process", client.to_string()),
            (":time", time.to_string()),
            (":index", maps.len().to_string()),
        ];
        if let Some(error) = error {
            fields.push((":error", Edn::Str(error.clone()).to_string()));
        }
        maps.push(fields);
    }
    let mut out = String::new();
    let joined = |fields: &[(&str, String)], sep: &str| {
        fields
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(sep)
    };
    match layout {
        EdnLayout::Lines => {
            for m in &maps {
                let _ = writeln!(out, "{{{}}}", joined(m, ", "));
            }
        }
        EdnLayout::Vector | EdnLayout::List => {
            let (open, close) = if layout == EdnLayout::Vector {
                ('[', ']')
            } else {
                ('(', ')')
            };
            let _ = writeln!(out, ";; a history of {} events\n{open}", maps.len());
            for (i, m) in maps.iter().enumerate() {
                let _ = writeln!(out, " {{{}}} ; event {i}", joined(m, " "));
            }
            let _ = writeln!(out, "{close}\n; end");
        }
        EdnLayout::Spread => {
            for m in &maps {
                let _ = writeln!(out, "{{{}\n}}\n", joined(m, ",\n ; next key\n  "));
            }
        }
        EdnLayout::Tagged => {
            let _ = writeln!(out, "[#_ {{:type :info, :f :start, :process :nemesis}}");
            for m in &maps {
                let _ = writeln!(
                    out,
                    "#jepsen.history.Op{{{}, :wall #inst \"2024-01-01T00:00:00.000-00:00\" #_ :dropped}}",
                    joined(m, ", ")
                );
            }
            let _ = writeln!(out, "]");
        }
    }
    Ok(out)
}

fn f_name(op: &Op) -> &'static str {
    match op {
        Op::Read { .. } => ":read",
        Op::Write { .. } => ":write",
        Op::Cas { .. } => ":cas",
        Op::Acquire { .. } => ":acquire",
        Op::Release { .. } => ":release",
        Op::Enqueue { .. } => ":enqueue",
        Op::Dequeue { .. } => ":dequeue",
        _ => ":unsupported",
    }
}

fn key(k: &str) -> Edn {
    Edn::Str(k.to_string())
}

/// An item as the reader takes it: the text of one EDN value.
fn item(text: &str) -> Option<Edn> {
    let v = super::edn::read_one(text, 1).ok()?;
    (v.to_string() == text).then_some(v)
}

fn invocation_value(op: &Op) -> Option<Edn> {
    Some(match op {
        Op::Read { key: None } => Edn::Nil,
        Op::Read { key: Some(k) } => Edn::Vector(vec![key(k), Edn::Nil]),
        Op::Write { key: None, value } => Edn::Int(*value),
        Op::Write { key: Some(k), value } => Edn::Vector(vec![key(k), Edn::Int(*value)]),
        Op::Cas {
            key: None,
            expected,
            new,
        } => Edn::Vector(vec![Edn::Int(*expected), Edn::Int(*new)]),
        Op::Cas {
            key: Some(k),
            expected,
            new,
        } => Edn::Vector(vec![key(k), Edn::Vector(vec![Edn::Int(*expected), Edn::Int(*new)])]),
        Op::Acquire { lock, shared: false } if lock == "mutex" => Edn::Nil,
        Op::Release { lock } if lock == "mutex" => Edn::Nil,
        Op::Enqueue {
            queue,
            item: text,
            priority: 0,
        } if queue == "queue" => item(text)?,
        Op::Dequeue { queue } if queue == "queue" => Edn::Nil,
        _ => return None,
    })
}

fn result_value(op: &Op, value: &Value) -> Option<Edn> {
    Some(match (op, value) {
        (Op::Read { key: None }, Value::Nil) => Edn::Nil,
        (Op::Read { key: None }, Value::Int { value }) => Edn::Int(*value),
        (Op::Read { key: Some(k) }, Value::Nil) => Edn::Vector(vec![key(k), Edn::Nil]),
        (Op::Read { key: Some(k) }, Value::Int { value }) => Edn::Vector(vec![key(k), Edn::Int(*value)]),
        (Op::Acquire { .. }, Value::Token { token }) => Edn::Int(*token),
        (Op::Dequeue { .. }, Value::Item { item: None, .. }) => Edn::Nil,
        (Op::Dequeue { .. }, Value::Item { item: Some(text), .. }) => item(text).filter(|v| *v != Edn::Nil)?,
        (
            Op::Write { .. } | Op::Cas { .. } | Op::Acquire { .. } | Op::Release { .. } | Op::Enqueue { .. },
            Value::Unit,
        ) => Edn::Nil,
        _ => return None,
    })
}
