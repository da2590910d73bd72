//! Jepsen etcd logs, one event per line, fields separated by any
//! whitespace: `INFO  jepsen.util - 2 :invoke :cas [3 0]`. A single
//! compare-and-set register; `:info` is indeterminate, `:fail` did not
//! happen. Times are line numbers.

use super::builder::{Builder, EventType};
use super::edn::{read_one, Edn};
use super::FormatError;
use crate::history::{History, Op, Outcome, Value};

const PREFIX: [&str; 3] = ["INFO", "jepsen.util", "-"];

pub fn parse_jepsen_etcd(text: &str, file: &str) -> Result<History, FormatError> {
    let mut b = Builder::new(file);
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let mut fields = raw.split_whitespace();
        let mut prefix = fields.by_ref().take(3);
        let mut seen = 0;
        for want in PREFIX {
            match prefix.next() {
                None if seen == 0 => break,
                Some(f) if f == want => seen += 1,
                other => {
                    return Err(b.error(
                        line,
                        format!("{want:?} (the line prefix \"INFO  jepsen.util - \")"),
                        format!("{:?}", other.unwrap_or("end of line")),
                    ))
                }
            }
        }
        if seen == 0 {
            continue; // blank line
        }
        let client = fields
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| b.error(line, "a process id", "something else"))?;
        let kind = fields
            .next()
            .and_then(|t| t.strip_prefix(':'))
            .and_then(EventType::from_keyword);
        let kind = kind.ok_or_else(|| b.error(line, "an event type (:invoke, :ok, :fail, :info)", "something else"))?;
        let f = fields.next().unwrap_or("");
        let rest = fields.collect::<Vec<_>>().join(" ");
        let value = read_one(&rest, line).map_err(|e| b.error(line, format!("a value ({})", e.expected), e.found))?;
        let time = index as u64;
        match kind {
            EventType::Invoke => {
                let op = match (f, &value) {
                    (":read", _) => Op::Read { key: None },
                    (":write", Edn::Int(v)) => Op::Write { key: None, value: *v },
                    (":cas", Edn::Vector(v)) => match v.as_slice() {
                        [Edn::Int(e), Edn::Int(n)] => Op::Cas {
                            key: None,
                            expected: *e,
                            new: *n,
                        },
                        _ => return Err(b.error(line, "[expected new] for a :cas", value.to_string())),
                    },
                    (":write", _) => return Err(b.error(line, "an integer for a :write", value.to_string())),
                    _ => return Err(b.error(line, "a function :read, :write or :cas", format!("{f:?} {value}"))),
                };
                b.invoke(line, client, time, op)?;
            }
            EventType::Ok => {
                let result = match (b.pending(line, client)?, &value) {
                    (Op::Read { .. }, Edn::Nil) => Value::Nil,
                    (Op::Read { .. }, Edn::Int(v)) => Value::Int { value: *v },
                    (Op::Read { .. }, _) => {
                        return Err(b.error(line, "nil or an integer for a :read", value.to_string()))
                    }
                    _ => Value::Unit,
                };
                b.complete(line, client, time, Outcome::Ok { value: result })?;
            }
            EventType::Fail => b.complete(
                line,
                client,
                time,
                Outcome::Fail {
                    error: value.to_string(),
                },
            )?,
            EventType::Info => b.complete(
                line,
                client,
                time,
                Outcome::Info {
                    error: value.to_string(),
                },
            )?,
        }
    }
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SAMPLE: &str = "INFO  jepsen.util - 2\t:invoke\t:cas\t[3 0]\nINFO  jepsen.util - 1   :invoke :read  nil\n\nINFO  jepsen.util - 2\t:fail\t:cas\t[3 0]\nINFO  jepsen.util - 1 :ok :read 4\nINFO  jepsen.util - 3 :invoke :write 4\nINFO  jepsen.util - 3 :info :write :timed-out\n";

    #[test]
    fn reads_tab_and_space_separated_lines() {
        let h = parse_jepsen_etcd(SAMPLE, "s.log").unwrap();
        let ops = h.operations().unwrap();
        assert_eq!(ops.len(), 3);
        assert_eq!(
            ops[0].op,
            Op::Cas {
                key: None,
                expected: 3,
                new: 0
            }
        );
        assert!(!ops[0].may_have_happened());
        assert_eq!(
            ops[1].outcome,
            Some(Outcome::Ok {
                value: Value::Int { value: 4 }
            })
        );
        assert!(ops[2].is_indeterminate());
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let e = parse_jepsen_etcd(
            "INFO  jepsen.util - 2 :invoke :cas [3 0]\nINFO  jepsen.util - x :ok :cas [3 0]\n",
            "f.log",
        )
        .unwrap_err();
        assert_eq!(e.line(), Some(2));
        assert!(e.to_string().starts_with("f.log:2: expected a process id"), "{e}");
        let e = parse_jepsen_etcd("INFO  jepsen.util - 2 :ok :cas [3 0]\n", "f.log").unwrap_err();
        assert!(e.to_string().contains(":invoke by process 2"), "{e}");
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let text = String::from_utf8_lossy(&bytes);
            if let Err(e) = parse_jepsen_etcd(&text, "g.log") {
                prop_assert!(e.line().is_some_and(|l| l >= 1));
            }
        }

        #[test]
        fn mutated_lines_never_panic(pos in 0usize..400, len in 0usize..6, junk in "[\\[\\]:a-z0-9 \t{}\"-]{0,5}") {
            let mut bytes = SAMPLE.as_bytes().to_vec();
            let at = pos.min(bytes.len());
            let end = (at + len).min(bytes.len());
            bytes.splice(at..end, junk.bytes());
            let text = String::from_utf8_lossy(&bytes);
            match parse_jepsen_etcd(&text, "m.log") {
                Ok(h) => { let _ = h.operations(); }
                Err(e) => prop_assert!(e.line().is_some_and(|l| l >= 1 && l <= text.lines().count().max(1))),
            }
        }
    }
}
