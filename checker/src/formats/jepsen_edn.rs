//! Jepsen EDN histories: op maps such as
//! `{:type :invoke, :f :cas, :value [1 2], :process 3, :time 123, :index 0}`,
//! in any of the layouts Jepsen and Knossos write: one map per line, maps
//! spread over several lines, or one vector or list around them all (with
//! `;` comments, as Knossos' example histories are stored); records such as
//! `#jepsen.history.Op{...}` read as maps, other tagged values (`#inst`,
//! `#uuid`) as the values they tag, `#_` discards a form.
//!
//! Understands the functions of a cas-register (`:read`, `:write`, `:cas`),
//! of a multi-register (the same, with `[key value]` tuples as values), of
//! a mutex (`:acquire`, `:release`; an integer `:value` on an acquire is
//! its fencing token) and of a queue (`:enqueue`, `:dequeue`). Events of
//! non-integer processes (the nemesis) are skipped. Times are `:time` when
//! every event has one, else positions; `:index` is accepted and unused.
//! The text is read one op at a time.

use super::builder::{key_string, process, Builder, EventType};
use super::edn::{Edn, EdnError, Pos, Reader};
use super::FormatError;
use crate::history::{Event, History, Op, Outcome, Value};

const LOCK: &str = "mutex";
const QUEUE: &str = "queue";

pub fn parse_jepsen_edn(text: &str, file: &str) -> Result<History, FormatError> {
    let mut b = Builder::new(file);
    let syntax = |b: &Builder, e: EdnError| b.error_at(e.line, e.column, e.expected, e.found);
    let mut r = Reader::new(text);
    // One vector or list around the whole history, or a stream of maps.
    let close = r.enter_collection().map_err(|e| syntax(&b, e))?;
    // Each event's position, to fall back on when some op has no :time.
    let mut positions: Vec<u64> = Vec::new();
    let mut all_timed = true;
    let mut position = 0u64;
    loop {
        let next = match close {
            Some(c) => r.next_in(c),
            None => r.next_form(),
        };
        let Some((at, form)) = next.map_err(|e| syntax(&b, e))? else {
            break;
        };
        let time = match form.get("time") {
            Some(Edn::Int(t)) if *t >= 0 => *t as u64,
            _ => {
                all_timed = false;
                position
            }
        };
        if op_event(&mut b, at, &form, time)? {
            positions.push(position);
        }
        position += 1;
    }
    if close.is_some() && !r.at_end().map_err(|e| syntax(&b, e))? {
        let e = r.error("end of input after the history's closing bracket");
        return Err(syntax(&b, e));
    }
    let mut history = b.finish();
    if !all_timed {
        for (event, p) in history.events.iter_mut().zip(positions) {
            if let Event::Invoke { time, .. } | Event::Complete { time, .. } = event {
                *time = p;
            }
        }
    }
    Ok(history)
}

/// Adds the event of one op map; false for an op it skips (the nemesis).
fn op_event(b: &mut Builder, at: Pos, map: &Edn, time: u64) -> Result<bool, FormatError> {
    let (line, column) = (at.line, at.column);
    let err = |b: &Builder, expected: &str, found: String| b.error_at(line, column, expected, found);
    if !map.is_map() {
        return Err(err(b, "an op map {:type .. :f .. :process ..}", map.to_string()));
    }
    let Some(client) = map.get("process").and_then(process) else {
        if matches!(map.get("process"), Some(Edn::Keyword(_))) {
            return Ok(false); // the nemesis
        }
        return Err(err(b, "an integer :process", map.to_string()));
    };
    let kind = match map.get("type") {
        Some(Edn::Keyword(k)) => EventType::from_keyword(k),
        _ => None,
    };
    let kind = kind.ok_or_else(|| err(b, "a :type of :invoke, :ok, :fail or :info", map.to_string()))?;
    let f = match map.get("f") {
        Some(Edn::Keyword(f)) => f.as_str(),
        _ => return Err(err(b, "a keyword :f", map.to_string())),
    };
    let value = map.get("value").unwrap_or(&Edn::Nil);
    match kind {
        EventType::Invoke => {
            let op = invocation(f, value).ok_or_else(|| err(b, expectation(f), format!(":f :{f} :value {value}")))?;
            b.invoke(line, client, time, op)?;
        }
        EventType::Ok => {
            let result = result(b.pending(line, client)?, value)
                .ok_or_else(|| err(b, "a result matching the invoked operation", value.to_string()))?;
            b.complete(line, client, time, Outcome::Ok { value: result })?;
        }
        EventType::Fail => b.complete(line, client, time, Outcome::Fail { error: error_text(map) })?,
        EventType::Info => b.complete(line, client, time, Outcome::Info { error: error_text(map) })?,
    }
    Ok(true)
}

/// The `:error` (or `:value`) of a failed op: a string's text, or the
/// value as EDN.
fn error_text(map: &Edn) -> String {
    match map.get("error").or(map.get("value")) {
        None => String::new(),
        Some(Edn::Str(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

fn expectation(f: &str) -> &'static str {
    match f {
        "read" => "a :read with nil, or a [key nil] tuple",
        "write" => "a :write of an integer, or a [key integer] tuple",
        "cas" => "a :cas of [expected new], or [key [expected new]]",
        "acquire" | "release" | "enqueue" | "dequeue" => "a value this operation can take",
        _ => "an :f of :read, :write, :cas, :acquire, :release, :enqueue or :dequeue",
    }
}

fn invocation(f: &str, value: &Edn) -> Option<Op> {
    Some(match (f, value) {
        ("read", Edn::Nil | Edn::Int(_)) => Op::Read { key: None },
        ("read", Edn::Vector(kv)) => match kv.as_slice() {
            [k, _] => Op::Read {
                key: Some(key_string(k)?),
            },
            _ => return None,
        },
        ("write", Edn::Int(v)) => Op::Write { key: None, value: *v },
        ("write", Edn::Vector(kv)) => match kv.as_slice() {
            [k, Edn::Int(v)] => Op::Write {
                key: Some(key_string(k)?),
                value: *v,
            },
            _ => return None,
        },
        ("cas", Edn::Vector(kv)) => match kv.as_slice() {
            [Edn::Int(e), Edn::Int(n)] => Op::Cas {
                key: None,
                expected: *e,
                new: *n,
            },
            [k, Edn::Vector(en)] => match en.as_slice() {
                [Edn::Int(e), Edn::Int(n)] => Op::Cas {
                    key: Some(key_string(k)?),
                    expected: *e,
                    new: *n,
                },
                _ => return None,
            },
            _ => return None,
        },
        ("acquire", _) => Op::Acquire {
            lock: LOCK.to_string(),
            shared: false,
        },
        ("release", _) => Op::Release { lock: LOCK.to_string() },
        ("enqueue", v) => Op::Enqueue {
            queue: QUEUE.to_string(),
            item: v.to_string(),
            priority: 0,
        },
        ("dequeue", _) => Op::Dequeue {
            queue: QUEUE.to_string(),
        },
        _ => return None,
    })
}

fn result(op: &Op, value: &Edn) -> Option<Value> {
    Some(match (op, value) {
        (Op::Read { key: None }, Edn::Nil) => Value::Nil,
        (Op::Read { key: None }, Edn::Int(v)) => Value::Int { value: *v },
        (Op::Read { key: Some(_) }, Edn::Vector(kv)) => match kv.as_slice() {
            [_, Edn::Nil] => Value::Nil,
            [_, Edn::Int(v)] => Value::Int { value: *v },
            _ => return None,
        },
        (Op::Read { .. }, _) => return None,
        (Op::Acquire { .. }, Edn::Int(t)) => Value::Token { token: *t },
        (Op::Dequeue { .. }, Edn::Nil) => Value::Item {
            item: None,
            priority: None,
        },
        (Op::Dequeue { .. }, v) => Value::Item {
            item: Some(v.to_string()),
            priority: None,
        },
        _ => Value::Unit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CAS: &str = "[{:type :invoke, :f :cas, :value [1 2], :process 3, :time 10}\n {:type :invoke, :f :read, :value nil, :process 1, :time 11}\n {:type :info, :f :start, :process :nemesis, :time 12}\n {:type :ok, :f :cas, :value [1 2], :process 3, :time 13}\n {:type :ok, :f :read, :value 2, :process 1, :time 14}]\n";

    #[test]
    fn reads_a_vector_of_ops_with_times() {
        let ops = parse_jepsen_edn(CAS, "h.edn").unwrap().operations().unwrap();
        assert_eq!(ops.len(), 2);
        assert_eq!(
            ops[0].op,
            Op::Cas {
                key: None,
                expected: 1,
                new: 2
            }
        );
        assert_eq!((ops[0].invoked, ops[0].completed), (10, Some(13)));
        assert_eq!(
            ops[1].outcome,
            Some(Outcome::Ok {
                value: Value::Int { value: 2 }
            })
        );
    }

    #[test]
    fn reads_multi_register_and_mutex_ops() {
        let text = "{:type :invoke, :f :write, :value [:x 3], :process 0}\n{:type :ok, :f :write, :value [:x 3], :process 0}\n{:type :invoke, :f :read, :value [:x nil], :process 1}\n{:type :ok, :f :read, :value [:x 3], :process 1}\n{:type :invoke, :f :acquire, :process 2}\n{:type :ok, :f :acquire, :value 7, :process 2}\n";
        let ops = parse_jepsen_edn(text, "h.edn").unwrap().operations().unwrap();
        assert_eq!(
            ops[0].op,
            Op::Write {
                key: Some("x".into()),
                value: 3
            }
        );
        assert_eq!(
            ops[1].outcome,
            Some(Outcome::Ok {
                value: Value::Int { value: 3 }
            })
        );
        assert_eq!(
            ops[2].outcome,
            Some(Outcome::Ok {
                value: Value::Token { token: 7 }
            })
        );
    }

    #[test]
    fn malformed_op_names_its_line() {
        let text = CAS.replace(":f :read, :value nil", ":f :read, :value \"x\"");
        let e = parse_jepsen_edn(&text, "h.edn").unwrap_err();
        assert_eq!(e.line(), Some(2));
        let e = parse_jepsen_edn(
            "{:type :invoke, :f :cas, :value [1 2], :process 3}\n{:type :ok :f}\n",
            "h.edn",
        )
        .unwrap_err();
        assert_eq!(e.line(), Some(2));
        assert!(e.to_string().starts_with("h.edn:2:1: "), "{e}");
    }

    #[test]
    fn errors_quote_a_bounded_part_of_a_huge_op() {
        let huge = format!(
            "[{{:type :invoke, :f :write, :value [{}], :process 0}}]",
            "1 ".repeat(10_000)
        );
        let e = parse_jepsen_edn(&huge, "h.edn").unwrap_err();
        assert!(e.to_string().starts_with("h.edn:1:2: expected a :write"), "{e}");
        assert!(e.to_string().chars().count() <= 200, "{e}");
    }

    #[test]
    fn text_after_the_closing_bracket_is_an_error() {
        let e = parse_jepsen_edn(&format!("{CAS}\n  :extra"), "h.edn").unwrap_err();
        assert_eq!(
            e.to_string(),
            "h.edn:7:3: expected end of input after the history's closing bracket, found \":extra\""
        );
        let e = parse_jepsen_edn(CAS.trim_end().trim_end_matches(']'), "h.edn").unwrap_err();
        assert_eq!(e.line(), Some(5), "{e}");
        assert!(e.to_string().contains("']' to close"), "{e}");
    }

    #[test]
    fn without_a_time_on_every_op_times_are_positions() {
        let text = CAS.replace(", :time 12", "");
        let ops = parse_jepsen_edn(&text, "h.edn").unwrap().operations().unwrap();
        assert_eq!((ops[0].invoked, ops[0].completed), (0, Some(3)));
        assert_eq!((ops[1].invoked, ops[1].completed), (1, Some(4)));
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let text = String::from_utf8_lossy(&bytes);
            if let Err(e) = parse_jepsen_edn(&text, "g.edn") {
                prop_assert!(e.line().is_some_and(|l| l >= 1));
            }
        }

        #[test]
        fn mutated_lines_never_panic(pos in 0usize..400, len in 0usize..6, junk in "[\\[\\]:a-z0-9 ,{}\"#;-]{0,5}") {
            let mut bytes = CAS.as_bytes().to_vec();
            let at = pos.min(bytes.len());
            let end = (at + len).min(bytes.len());
            bytes.splice(at..end, junk.bytes());
            let text = String::from_utf8_lossy(&bytes);
            match parse_jepsen_edn(&text, "m.edn") {
                Ok(h) => { let _ = h.operations(); }
                Err(e) => {
                    prop_assert!(e.line().is_some_and(|l| l >= 1 && l <= text.lines().count().max(1)), "{}", e);
                    prop_assert!(e.to_string().chars().count() <= 200, "{}", e);
                }
            }
        }
    }
}
