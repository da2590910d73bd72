//! Porcupine's kv files: one Clojure map per line,
//! `{:process 0, :type :invoke, :f :append, :key "0", :value "x 0 0 y"}`.
//! A string key/value store with get, put and append. Times are line
//! numbers.

use super::builder::{process, Builder, EventType};
use super::edn::{read_one, Edn};
use super::FormatError;
use crate::history::{History, Op, Outcome, Value};

pub fn parse_porcupine_kv(text: &str, file: &str) -> Result<History, FormatError> {
    let mut b = Builder::new(file);
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let map = read_one(raw, line).map_err(|e| b.error(line, e.expected, e.found))?;
        if !matches!(map, Edn::Map(_)) {
            return Err(b.error(
                line,
                "a map {:process .. :type .. :f .. :key .. :value ..}",
                map.to_string(),
            ));
        }
        let client = map
            .get("process")
            .and_then(process)
            .ok_or_else(|| b.error(line, "a :process id", map.to_string()))?;
        let kind = match map.get("type") {
            Some(Edn::Keyword(k)) => EventType::from_keyword(k),
            _ => None,
        };
        let kind = kind.ok_or_else(|| b.error(line, "a :type of :invoke, :ok, :fail or :info", map.to_string()))?;
        let f = match map.get("f") {
            Some(Edn::Keyword(f)) if matches!(f.as_str(), "get" | "put" | "append") => f.as_str(),
            _ => return Err(b.error(line, "an :f of :get, :put or :append", map.to_string())),
        };
        let key = match map.get("key") {
            Some(Edn::Str(k)) => k.clone(),
            _ => return Err(b.error(line, "a string :key", map.to_string())),
        };
        let value = match map.get("value") {
            Some(Edn::Str(v)) => Some(v.clone()),
            Some(Edn::Nil) | None => None,
            Some(other) => return Err(b.error(line, "a string :value (or nil)", other.to_string())),
        };
        let time = index as u64;
        match kind {
            EventType::Invoke => {
                let op = match (f, value) {
                    ("get", _) => Op::Get { key },
                    ("put", Some(value)) => Op::Put { key, value },
                    ("append", Some(value)) => Op::Append { key, value },
                    _ => return Err(b.error(line, "a string :value for :put or :append", "nil")),
                };
                b.invoke(line, client, time, op)?;
            }
            EventType::Ok => {
                let result = match b.pending(line, client)? {
                    Op::Get { .. } => Value::Str {
                        value: value.unwrap_or_default(),
                    },
                    _ => Value::Unit,
                };
                b.complete(line, client, time, Outcome::Ok { value: result })?;
            }
            EventType::Fail => b.complete(line, client, time, Outcome::Fail { error: "fail".into() })?,
            EventType::Info => b.complete(line, client, time, Outcome::Info { error: "info".into() })?,
        }
    }
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SAMPLE: &str = "{:process 0, :type :invoke, :f :append, :key \"0\", :value \"x 0 0 y\"}\n{:process 1, :type :invoke, :f :get, :key \"0\", :value nil}\n{:process 0, :type :ok, :f :append, :key \"0\", :value \"x 0 0 y\"}\n{:process 1, :type :ok, :f :get, :key \"0\", :value \"x 0 0 y\"}\n";

    #[test]
    fn reads_maps() {
        let ops = parse_porcupine_kv(SAMPLE, "kv.txt").unwrap().operations().unwrap();
        assert_eq!(ops.len(), 2);
        assert_eq!(
            ops[0].op,
            Op::Append {
                key: "0".into(),
                value: "x 0 0 y".into()
            }
        );
        assert_eq!(
            ops[1].outcome,
            Some(Outcome::Ok {
                value: Value::Str {
                    value: "x 0 0 y".into()
                }
            })
        );
        assert_eq!((ops[1].invoked, ops[1].completed), (1, Some(3)));
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let text = SAMPLE.replace("{:process 1, :type :ok", "{:process 1, :type :okay");
        let e = parse_porcupine_kv(&text, "kv.txt").unwrap_err();
        assert_eq!(e.line(), Some(4));
        assert!(e.to_string().starts_with("kv.txt:4: expected a :type"), "{e}");
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let text = String::from_utf8_lossy(&bytes);
            if let Err(e) = parse_porcupine_kv(&text, "g.txt") {
                prop_assert!(e.line().is_some_and(|l| l >= 1));
            }
        }

        #[test]
        fn mutated_lines_never_panic(pos in 0usize..300, len in 0usize..6, junk in "[\\[\\]:a-z0-9 ,{}\"#;-]{0,5}") {
            let mut bytes = SAMPLE.as_bytes().to_vec();
            let at = pos.min(bytes.len());
            let end = (at + len).min(bytes.len());
            bytes.splice(at..end, junk.bytes());
            let text = String::from_utf8_lossy(&bytes);
            match parse_porcupine_kv(&text, "m.txt") {
                Ok(h) => { let _ = h.operations(); }
                Err(e) => prop_assert!(e.line().is_some_and(|l| l >= 1 && l <= text.lines().count().max(1))),
            }
        }
    }
}
