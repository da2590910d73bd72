//! Jepsen EDN histories: op maps such as
//! `{:type :invoke, :f :cas, :value [1 2], :process 3, :time 123}`, one per
//! line or inside one vector. Understands the functions of a cas-register
//! (`:read`, `:write`, `:cas`), of a multi-register (the same, with
//! `[key value]` tuples as values), of a mutex (`:acquire`, `:release`;
//! an integer `:value` on an acquire is its fencing token) and of a queue
//! (`:enqueue`, `:dequeue`). Events of non-integer processes (the nemesis)
//! are skipped. Times are `:time` when every event has one, else positions.

use super::builder::{key_string, process, Builder, EventType};
use super::edn::{read_all_from, Edn};
use super::FormatError;
use crate::history::{History, Op, Outcome, Value};

const LOCK: &str = "mutex";
const QUEUE: &str = "queue";

pub fn parse_jepsen_edn(text: &str, file: &str) -> Result<History, FormatError> {
    let mut b = Builder::new(file);
    let forms = read_forms(text).map_err(|e| b.error(e.line, e.expected, e.found))?;
    let all_timed = forms
        .iter()
        .all(|(_, f)| matches!(f.get("time"), Some(Edn::Int(t)) if *t >= 0));
    for (position, (line, map)) in forms.iter().enumerate() {
        let line = *line;
        if !matches!(map, Edn::Map(_)) {
            return Err(b.error(line, "an op map {:type .. :f .. :process ..}", map.to_string()));
        }
        let Some(client) = map.get("process").and_then(process) else {
            if matches!(map.get("process"), Some(Edn::Keyword(_))) {
                continue; // the nemesis
            }
            return Err(b.error(line, "an integer :process", map.to_string()));
        };
        let kind = match map.get("type") {
            Some(Edn::Keyword(k)) => EventType::from_keyword(k),
            _ => None,
        };
        let kind = kind.ok_or_else(|| b.error(line, "a :type of :invoke, :ok, :fail or :info", map.to_string()))?;
        let f = match map.get("f") {
            Some(Edn::Keyword(f)) => f.as_str(),
            _ => return Err(b.error(line, "a keyword :f", map.to_string())),
        };
        let value = map.get("value").unwrap_or(&Edn::Nil);
        let time = match map.get("time") {
            Some(Edn::Int(t)) if all_timed => *t as u64,
            _ => position as u64,
        };
        match kind {
            EventType::Invoke => {
                let op = invocation(f, value)
                    .ok_or_else(|| b.error(line, expectation(f), format!(":f :{f} :value {value}")))?;
                b.invoke(line, client, time, op)?;
            }
            EventType::Ok => {
                let result = result(b.pending(line, client)?, value)
                    .ok_or_else(|| b.error(line, "a result matching the invoked operation", value.to_string()))?;
                b.complete(line, client, time, Outcome::Ok { value: result })?;
            }
            EventType::Fail => b.complete(line, client, time, Outcome::Fail { error: error_text(map) })?,
            EventType::Info => b.complete(line, client, time, Outcome::Info { error: error_text(map) })?,
        }
    }
    Ok(b.finish())
}

/// The op maps, with their lines: a file that is one vector is unwrapped
/// without losing line numbers.
fn read_forms(text: &str) -> Result<Vec<(usize, Edn)>, super::edn::EdnError> {
    let trimmed = text.trim_start();
    if let Some(inner) = trimmed.strip_prefix('[') {
        let skipped_lines = text[..text.len() - trimmed.len()].matches('\n').count();
        let end = inner.trim_end();
        if let Some(body) = end.strip_suffix(']') {
            return read_all_from(body, 1 + skipped_lines);
        }
    }
    read_all_from(text, 1)
}

fn error_text(map: &Edn) -> String {
    map.get("error")
        .or(map.get("value"))
        .map_or_else(String::new, |v| v.to_string())
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
        (Op::Dequeue { .. }, Edn::Nil) => Value::Item { item: None },
        (Op::Dequeue { .. }, v) => Value::Item {
            item: Some(v.to_string()),
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
        assert!(e.to_string().starts_with("h.edn:2:"), "{e}");
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
                Err(e) => prop_assert!(e.line().is_some_and(|l| l >= 1 && l <= text.lines().count().max(1))),
            }
        }
    }
}
