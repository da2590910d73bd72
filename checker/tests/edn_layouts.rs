//! Jepsen EDN histories in every layout: hand-written files under
//! `tests/data/edn` read and checked to their known verdicts; any history
//! the writer writes reads back identically in every layout; mutated and
//! truncated files never panic and give a short error.

use std::path::Path;

use proptest::prelude::*;
use zkdst_checker::check_history;
use zkdst_checker::formats::{parse_jepsen_edn, write_jepsen_edn, EdnLayout, Format};
use zkdst_checker::history::{Event, History, Op, Outcome, Value};
use zkdst_checker::linearizability::{Budget, Verdict};
use zkdst_checker::models::ModelName;

const FILES: [&str; 5] = [
    "lines.edn",
    "knossos_vector.edn",
    "list.edn",
    "spread.edn",
    "tagged.edn",
];

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/edn").join(name)
}

fn read(name: &str) -> History {
    Format::Edn.read(&data(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn verdict(h: &History, model: ModelName) -> Verdict {
    check_history(h, Some(model), Budget::unlimited()).unwrap().verdict
}

#[test]
fn one_map_per_line_with_a_nemesis() {
    let h = read("lines.edn");
    let ops = h.operations().unwrap();
    assert_eq!(ops.len(), 5);
    assert_eq!(
        ops[3].outcome,
        Some(Outcome::Info {
            error: "timeout".into()
        })
    );
    // No :time: times are positions among all forms (the nemesis's too).
    assert_eq!((ops[1].invoked, ops[1].completed), (3, Some(5)));
    assert_eq!(verdict(&h, ModelName::CasRegister), Verdict::Linearizable);
}

#[test]
fn a_knossos_vector_over_many_lines_with_comments() {
    let h = read("knossos_vector.edn");
    let ops = h.operations().unwrap();
    assert_eq!(ops.len(), 4);
    assert_eq!(ops[2].op, Op::Read { key: None });
    assert!(matches!(ops[3].outcome, Some(Outcome::Fail { .. })));
    assert!(matches!(
        verdict(&h, ModelName::CasRegister),
        Verdict::NotLinearizable(_)
    ));
}

#[test]
fn a_list_over_many_lines() {
    let h = read("list.edn");
    let ops = h.operations().unwrap();
    assert_eq!(ops.len(), 4);
    assert_eq!(
        ops[1].outcome,
        Some(Outcome::Ok {
            value: Value::Token { token: 2 }
        })
    );
    assert_eq!(verdict(&h, ModelName::Mutex), Verdict::Linearizable);
}

#[test]
fn maps_spread_over_lines() {
    let h = read("spread.edn");
    let ops = h.operations().unwrap();
    assert_eq!(ops.len(), 4);
    assert_eq!(
        ops[1].op,
        Op::Write {
            key: Some("y".into()),
            value: 7
        }
    );
    assert_eq!(verdict(&h, ModelName::MultiRegister), Verdict::Linearizable);
}

#[test]
fn records_with_time_index_and_tagged_values() {
    let h = read("tagged.edn");
    let ops = h.operations().unwrap();
    assert_eq!(ops.len(), 3, "the nemesis and the discarded op are skipped");
    assert_eq!((ops[0].invoked, ops[0].completed), (1000, Some(2000)));
    assert_eq!((ops[2].invoked, ops[2].completed), (5000, Some(6000)));
    // The same item dequeued twice.
    assert!(matches!(verdict(&h, ModelName::Queue), Verdict::NotLinearizable(_)));
}

#[test]
fn errors_name_file_line_and_column() {
    let text = std::fs::read_to_string(data("knossos_vector.edn")).unwrap();
    let bad = text.replace(":value 1}\n\n", ":value}\n\n");
    let e = parse_jepsen_edn(&bad, "knossos_vector.edn").unwrap_err();
    assert_eq!(e.line(), Some(8), "{e}");
    assert!(
        e.to_string()
            .starts_with("knossos_vector.edn:8:2: expected a map of key-value pairs"),
        "{e}"
    );
}

// ---- the writer, and what the reader makes of any file ----

/// An operation outstanding: (id, op, outcome choice, result number, error).
type Pending = (u64, Op, u8, i64, String);

/// A history of register, multi-register, mutex and queue operations as
/// the reader builds one: ids in invocation order, at most one operation
/// outstanding per process, times increasing.
fn history() -> impl Strategy<Value = History> {
    let op = prop_oneof![
        Just((Op::Read { key: None }, 0u8)),
        (-5i64..5).prop_map(|v| (Op::Write { key: None, value: v }, 1)),
        (-5i64..5, -5i64..5).prop_map(|(e, n)| (
            Op::Cas {
                key: None,
                expected: e,
                new: n
            },
            1
        )),
        "[a-z]{1,3}".prop_map(|k| (Op::Read { key: Some(k) }, 0)),
        ("[a-z]{1,3}", -5i64..5).prop_map(|(k, v)| (Op::Write { key: Some(k), value: v }, 1)),
        (-5i64..5, -5i64..5).prop_map(|(e, n)| (
            Op::Cas {
                key: Some("k\"ey".into()),
                expected: e,
                new: n
            },
            1
        )),
        Just((
            Op::Acquire {
                lock: "mutex".into(),
                shared: false
            },
            2
        )),
        Just((Op::Release { lock: "mutex".into() }, 1)),
        (0i64..100).prop_map(|i| (
            Op::Enqueue {
                queue: "queue".into(),
                item: i.to_string(),
                priority: 0
            },
            1
        )),
        Just((Op::Dequeue { queue: "queue".into() }, 3)),
    ];
    // (process, op, outcome choice, result number, error text)
    let step = (0u32..4, op, 0u8..4, -5i64..5, "[a-z \"\\\\]{0,6}");
    proptest::collection::vec(step, 0..24).prop_map(|steps| {
        let mut h = History::new();
        let mut pending: Vec<Option<Pending>> = vec![None; 4];
        let (mut time, mut next_id) = (0u64, 0u64);
        let close = |h: &mut History, client: u32, (id, op, choice, n, err): Pending, time: u64| {
            let outcome = match choice % 4 {
                0 => Outcome::Fail { error: err },
                1 => Outcome::Info { error: err },
                _ => Outcome::Ok {
                    value: match (&op, n) {
                        (Op::Read { .. }, n) if n < 0 => Value::Nil,
                        (Op::Read { .. }, n) => Value::Int { value: n },
                        (Op::Acquire { .. }, n) if n < 0 => Value::Unit,
                        (Op::Acquire { .. }, n) => Value::Token { token: n },
                        (Op::Dequeue { .. }, n) if n < 0 => Value::Item {
                            item: None,
                            priority: None,
                        },
                        (Op::Dequeue { .. }, n) => Value::Item {
                            item: Some(n.to_string()),
                            priority: None,
                        },
                        _ => Value::Unit,
                    },
                },
            };
            h.events.push(Event::Complete {
                id,
                time,
                client,
                outcome,
                zxid: None,
            });
        };
        for (client, (op, _), choice, n, err) in steps {
            time += 1 + n.unsigned_abs() * 10;
            let slot = &mut pending[client as usize];
            if let Some(p) = slot.take() {
                close(&mut h, client, p, time);
                continue;
            }
            h.events.push(Event::Invoke {
                id: next_id,
                time,
                client,
                session: None,
                op: op.clone(),
                background: false,
            });
            *slot = Some((next_id, op, choice, n, err));
            next_id += 1;
        }
        h
    })
}

fn mutate(text: &str, at: usize, cut: usize, junk: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let at = at % (bytes.len() + 1);
    let end = at.saturating_add(cut).min(bytes.len());
    bytes.splice(at..end, junk.bytes());
    String::from_utf8_lossy(&bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256)
    ))]

    #[test]
    fn written_histories_read_back_identically_in_every_layout(h in history()) {
        for layout in EdnLayout::ALL {
            let text = write_jepsen_edn(&h, layout).unwrap();
            let back = parse_jepsen_edn(&text, "w.edn");
            prop_assert!(back.is_ok(), "{:?}: {}\n{}", layout, back.unwrap_err(), text);
            prop_assert_eq!(&back.unwrap(), &h, "{:?}:\n{}", layout, text);
        }
    }

    #[test]
    fn mutated_and_truncated_files_never_panic_and_say_where(
        file in 0..FILES.len(),
        at in any::<usize>(),
        cut in 0usize..40,
        junk in "[\\[\\]():a-z0-9 ,{}\"#_;\\\\/.\n-]{0,6}",
        truncate in any::<bool>(),
    ) {
        let text = std::fs::read_to_string(data(FILES[file])).unwrap();
        let text = if truncate { mutate(&text, at, usize::MAX, "") } else { mutate(&text, at, cut, &junk) };
        match parse_jepsen_edn(&text, FILES[file]) {
            Ok(h) => { let _ = h.operations(); }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with(FILES[file]), "{}", msg);
                prop_assert!(e.line().is_some_and(|l| l >= 1 && l <= text.lines().count().max(1)), "{}", msg);
                prop_assert!(msg.chars().count() <= 200, "{} chars: {}", msg.chars().count(), msg);
            }
        }
    }
}
