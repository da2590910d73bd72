//! The operation record an external workload writes: JSON lines in the
//! history's own vocabulary, so the checkers that judge zkdst's Rust
//! workloads judge it unchanged. Each line is one history event of type
//! `invoke`, `complete` or `session`, exactly as `zkdst` histories write
//! them, except that `time` is the client's `CLOCK_MONOTONIC` reading in
//! nanoseconds (Python's `time.monotonic_ns()`, Java's `System.nanoTime()`,
//! Go's `time.Now()` monotonic part, C's `clock_gettime`): zkdst maps it
//! onto simulated time with `ZKDST_T0_NS`, the same clock's reading at
//! simulated time zero of the served run (one real second is one simulated
//! second). For example, a lock holder:
//!
//! ```text
//! {"type":"invoke","id":1,"time":5200300400,"client":0,"session":72058693549555714,"op":{"f":"acquire","lock":"/lock","shared":false}}
//! {"type":"complete","id":1,"time":5231000000,"client":0,"outcome":{"type":"ok","value":{"kind":"token","token":4294967301}}}
//! {"type":"invoke","id":2,"time":5231100000,"client":0,"op":{"f":"fenced_write","resource":"r","token":4294967301}}
//! {"type":"complete","id":2,"time":5231200000,"client":0,"outcome":{"type":"ok","value":{"kind":"unit"}}}
//! {"type":"session","time":5300000000,"client":0,"session":72058693549555714,"state":"disconnected"}
//! ```
//!
//! [`parse`] validates a record and names the line and field of the first
//! mistake; [`merge`] puts it into the servers' record.

use std::collections::BTreeMap;
use std::io::BufRead;

use zkdst_checker::history::{Event, History, Op, OpId, Outcome};

/// A validated client record: events with client-clock times.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientRecord {
    pub events: Vec<Event>,
}

/// Reads and validates a record for a run with `clients` application
/// clients. Every mistake names its line (1-based) and field.
pub fn parse(r: impl BufRead, clients: u32) -> Result<ClientRecord, String> {
    let mut events = Vec::new();
    // Invocations by id: (client, line), and whether completed.
    let mut invoked: BTreeMap<OpId, (u32, usize, u64, bool)> = BTreeMap::new();
    for (i, line) in r.lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| format!("line {n}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let ev = decode(&line).map_err(|e| format!("line {n}: {e}"))?;
        let client = match &ev {
            Event::Invoke { client, .. } | Event::Complete { client, .. } | Event::Session { client, .. } => *client,
            other => {
                return Err(format!(
                    "line {n}: field type: {:?} is the servers' to record; a client record holds invoke, complete and session lines",
                    type_name(other)
                ))
            }
        };
        if client >= clients {
            return Err(format!(
                "line {n}: field client: {client}, but the scenario has clients 0..{clients}"
            ));
        }
        match &ev {
            Event::Invoke { id, time, .. } => {
                if let Some((_, first, _, _)) = invoked.get(id) {
                    return Err(format!("line {n}: field id: {id} was already invoked on line {first}"));
                }
                invoked.insert(*id, (client, n, *time, false));
            }
            Event::Complete { id, time, .. } => match invoked.get_mut(id) {
                None => {
                    return Err(format!(
                        "line {n}: field id: {id} completes an operation never invoked before it"
                    ))
                }
                Some((c, first, _, _)) if *c != client => {
                    return Err(format!(
                        "line {n}: field client: {client}, but operation {id} was invoked by client {c} (line {first})"
                    ))
                }
                Some((_, first, _, true)) => {
                    return Err(format!(
                        "line {n}: field id: {id} already completed (invoked on line {first})"
                    ))
                }
                Some((_, first, at, done)) => {
                    if *time < *at {
                        return Err(format!(
                            "line {n}: field time: {time} is before its invocation's {at} (line {first})"
                        ));
                    }
                    *done = true;
                }
            },
            _ => {}
        }
        events.push(ev);
    }
    Ok(ClientRecord { events })
}

/// One line as an event. serde reports an internally tagged enum's
/// mistake without its path, so the `op` and `outcome` parts are tried on
/// their own to name the field.
fn decode(line: &str) -> Result<Event, String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    if let Ok(ev) = serde_json::from_value::<Event>(v.clone()) {
        return Ok(ev);
    }
    if let Some(op) = v.get("op") {
        if let Err(e) = serde_path_to_error::deserialize::<_, Op>(op.clone()) {
            return Err(field_error("op", &e.path().to_string(), e.inner()));
        }
    }
    if let Some(o) = v.get("outcome") {
        if let Err(e) = serde_path_to_error::deserialize::<_, Outcome>(o.clone()) {
            return Err(field_error("outcome", &e.path().to_string(), e.inner()));
        }
    }
    for f in ["id", "time", "client", "session"] {
        if let Some(x) = v.get(f) {
            if !x.is_u64() {
                return Err(format!("field {f}: {x} is not a non-negative integer"));
            }
        }
    }
    match serde_path_to_error::deserialize::<_, Event>(v) {
        Ok(ev) => Ok(ev),
        Err(e) if e.path().to_string() == "." => Err(e.inner().to_string()),
        Err(e) => Err(format!("field {}: {}", e.path(), e.inner())),
    }
}

fn field_error(top: &str, path: &str, e: &serde_json::Error) -> String {
    if path == "." {
        format!("field {top}: {e}")
    } else {
        format!("field {top}.{path}: {e}")
    }
}

fn type_name(e: &Event) -> String {
    serde_json::to_value(e)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn set_time(e: &mut Event, t: u64) {
    match e {
        Event::Invoke { time, .. } | Event::Complete { time, .. } | Event::Session { time, .. } => *time = t,
        _ => {}
    }
}

/// Merges `record` into the servers' record `history`: client times are
/// mapped to simulated time (`sim = start_sim_ns + (t − t0_ns)`, earlier
/// readings clamp to the start), and events are ordered by time, the
/// servers' first at equal times.
pub fn merge(history: &mut History, record: ClientRecord, t0_ns: u64, start_sim_ns: u64) {
    let mut client: Vec<Event> = record
        .events
        .into_iter()
        .map(|mut e| {
            let t = start_sim_ns + e.time().saturating_sub(t0_ns);
            set_time(&mut e, t);
            e
        })
        .collect();
    // A client's own lines keep their order even if its clock readings tie.
    client.sort_by_key(Event::time);
    let servers = std::mem::take(&mut history.events);
    let mut out = Vec::with_capacity(servers.len() + client.len());
    let mut c = client.into_iter().peekable();
    for s in servers {
        while c.peek().is_some_and(|e| e.time() < s.time()) {
            out.extend(c.next());
        }
        out.push(s);
    }
    out.extend(c);
    history.events = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"type":"invoke","id":1,"time":5000,"client":0,"session":7,"op":{"f":"acquire","lock":"/l","shared":false}}
{"type":"complete","id":1,"time":6000,"client":0,"outcome":{"type":"ok","value":{"kind":"token","token":42}}}
{"type":"session","time":7000,"client":1,"session":8,"state":"disconnected"}
"#;

    #[test]
    fn a_good_record_parses() {
        let r = parse(GOOD.as_bytes(), 2).unwrap();
        assert_eq!(r.events.len(), 3);
    }

    fn err(text: &str) -> String {
        parse(text.as_bytes(), 2).unwrap_err()
    }

    #[test]
    fn mistakes_name_their_line_and_field() {
        let e = err(r#"{"type":"invoke","id":1,"time":5,"client":0,"op":{"f":"acquire"}}"#);
        assert!(e.starts_with("line 1: field op"), "{e}");
        assert!(e.contains("lock"), "{e}");
        let e = err(r#"{"type":"invoke","id":1,"time":"soon","client":0,"op":{"f":"release","lock":"/l"}}"#);
        assert!(e.starts_with("line 1: field time"), "{e}");
        let e = err(r#"{"type":"invoke","id":1,"time":5,"client":2,"op":{"f":"release","lock":"/l"}}"#);
        assert!(e.starts_with("line 1: field client: 2"), "{e}");
        let e =
            err(r#"{"type":"complete","id":9,"time":5,"client":0,"outcome":{"type":"ok","value":{"kind":"unit"}}}"#);
        assert!(e.starts_with("line 1: field id: 9 completes"), "{e}");
        let two = format!("{}{}", GOOD.lines().next().unwrap(), "\n{\"type\":\"complete\",\"id\":1,\"time\":4000,\"client\":0,\"outcome\":{\"type\":\"ok\",\"value\":{\"kind\":\"unit\"}}}\n");
        let e = err(&two);
        assert!(e.starts_with("line 2: field time: 4000 is before"), "{e}");
        let e = err(r#"{"type":"note","time":5,"text":"hi"}"#);
        assert!(e.starts_with("line 1: field type"), "{e}");
        let e = err("{not json");
        assert!(e.starts_with("line 1:"), "{e}");
    }

    #[test]
    fn merging_maps_client_time_and_keeps_order() {
        let mut h = History::new();
        h.events.push(Event::Note {
            time: 1_000,
            client: None,
            text: "a".into(),
        });
        h.events.push(Event::Note {
            time: 1_500,
            client: None,
            text: "b".into(),
        });
        let r = parse(GOOD.as_bytes(), 2).unwrap();
        // Client clock 5000 is simulated 1000 + (5000 - 4800) = 1200.
        merge(&mut h, r, 4_800, 1_000);
        let times: Vec<u64> = h.events.iter().map(Event::time).collect();
        assert_eq!(times, vec![1_000, 1_200, 1_500, 2_200, 3_200]);
    }
}
