use proptest::prelude::*;

use super::*;
use crate::{
    CreateMode, Data, FaultEnd, FaultEvent, FaultKind, FaultStep, Op, Outcome, ReplicaCheck, Stat, TxnRecord, Value,
};

fn fault_step() -> impl Strategy<Value = FaultStep> {
    let all: Vec<FaultStep> = FaultKind::ALL
        .iter()
        .map(|&k| k.into())
        .chain(FaultEnd::ALL.iter().map(|&e| e.into()))
        .collect();
    prop::sample::select(all)
}

const ALL: [Encoding; 3] = [Encoding::Json, Encoding::JsonLines, Encoding::JsonLinesGz];

/// Strings a line-per-event layout could trip on: newlines, quotes,
/// backslashes, non-ASCII.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z/]{0,12}",
        Just("two\nlines\r\n".to_string()),
        Just("quote \" and \\ back".to_string()),
        Just("znode-ü-✓-𝄞".to_string()),
        any::<String>(),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (text(), prop::collection::vec(any::<u8>(), 0..8)).prop_map(|(path, d)| Op::Create {
            path,
            data: Data(d),
            mode: CreateMode::EphemeralSequential,
        }),
        (text(), any::<bool>()).prop_map(|(path, watch)| Op::GetChildren { path, watch }),
        (text(), any::<i32>()).prop_map(|(path, version)| Op::Delete { path, version }),
        Just(Op::CloseSession),
    ]
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Ok { value: Value::Unit }),
        (text(), any::<i64>()).prop_map(|(path, czxid)| Outcome::Ok {
            value: Value::Created {
                path,
                stat: Stat {
                    czxid,
                    ..Default::default()
                },
            },
        }),
        prop::collection::vec(text(), 0..5).prop_map(|names| Outcome::Ok {
            value: Value::Children {
                children: names.into(),
                stat: Stat::default(),
            },
        }),
        text().prop_map(|error| Outcome::Info { error }),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (any::<u64>(), any::<u64>(), any::<u32>(), any::<Option<i64>>(), op()).prop_map(
            |(id, time, client, session, op)| Event::Invoke {
                id,
                time,
                client,
                session,
                op,
                background: false,
            }
        ),
        (
            any::<u64>(),
            any::<u64>(),
            any::<u32>(),
            outcome(),
            any::<Option<i64>>()
        )
            .prop_map(|(id, time, client, outcome, zxid)| Event::Complete {
                id,
                time,
                client,
                outcome,
                zxid
            }),
        (any::<u64>(), any::<u32>(), any::<i64>(), text()).prop_map(|(time, server, zxid, path)| Event::Commit {
            time,
            server,
            zxid,
            txn: TxnRecord::Delete { path },
            session: None,
            xid: Some(7),
        }),
        (any::<u64>(), fault_step(), prop::collection::vec(text(), 0..3), text())
            .prop_map(|(time, kind, targets, detail)| Event::Fault(FaultEvent::new(time, kind, targets, detail))),
        (any::<u64>(), any::<u32>(), any::<u64>(), text()).prop_map(|(time, server, chain, detail)| {
            Event::Replica {
                time,
                server,
                check: ReplicaCheck::Gap,
                zxid: 3,
                chain,
                expected: Some(chain ^ 1),
                missing: None,
                applied: None,
                detail,
            }
        }),
        (any::<u64>(), any::<Option<u32>>(), text()).prop_map(|(time, client, text)| Event::Note {
            time,
            client,
            text
        }),
    ]
}

fn history() -> impl Strategy<Value = History> {
    (
        prop::collection::btree_map(text(), text(), 0..4),
        prop::collection::vec(event(), 0..40),
    )
        .prop_map(|(meta, events)| History { meta, events })
}

fn sample() -> History {
    let mut h = History::new();
    h.meta.insert("scenario".into(), "lock".into());
    h.meta.insert("seed".into(), "3".into());
    for i in 0..200u64 {
        h.events.push(Event::Invoke {
            id: i,
            time: 1000 + i,
            client: (i % 5) as u32,
            session: Some(0x100 + (i % 5) as i64),
            op: Op::Create {
                path: "/locks/l/lock-".into(),
                data: Data::from("x"),
                mode: CreateMode::EphemeralSequential,
            },
            background: false,
        });
    }
    h
}

proptest! {
    #[test]
    fn every_encoding_round_trips(h in history()) {
        for enc in ALL {
            let back = History::decode(&h.encode(enc)).map_err(|e| TestCaseError::fail(format!("{enc:?}: {e}")))?;
            prop_assert_eq!(&back, &h, "{:?}", enc);
            prop_assert_eq!(back.fingerprint(), h.fingerprint());
        }
    }

    /// Damaged files of any encoding are an error or (where the damage
    /// happens to stay valid) a history; never a panic.
    #[test]
    fn damaged_bytes_never_panic(h in history(), enc in 0..3usize, at in any::<prop::sample::Index>(), byte in any::<u8>(), cut in any::<bool>()) {
        let mut bytes = h.encode(ALL[enc]);
        if !bytes.is_empty() {
            let i = at.index(bytes.len());
            if cut { bytes.truncate(i) } else { bytes[i] = byte }
        }
        let _ = History::decode(&bytes);
    }
}

#[test]
fn lines_are_a_header_then_one_event_each() {
    let h = sample();
    let text = String::from_utf8(h.encode(Encoding::JsonLines)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + h.events.len());
    assert_eq!(lines[0], r#"{"zkdst_history":1,"meta":{"scenario":"lock","seed":"3"}}"#);
    assert!(lines[1].starts_with(r#"{"type":"invoke","id":0,"#), "{}", lines[1]);
}

#[test]
fn gzip_is_compact_and_deterministic() {
    let h = sample();
    let json = h.encode(Encoding::Json);
    let gz = h.encode(Encoding::JsonLinesGz);
    assert_eq!(gz[..2], GZIP_MAGIC);
    assert!(gz.len() * 10 < json.len(), "{} vs {}", gz.len(), json.len());
    assert_eq!(gz, h.encode(Encoding::JsonLinesGz), "the same history, the same bytes");
}

#[test]
fn decoding_tells_encodings_apart_by_content() {
    let h = sample();
    // A header with spaces, and blank lines, as a person might write them.
    let mut hand = String::from("\n{ \"zkdst_history\": 1, \"meta\": {\"scenario\": \"lock\", \"seed\": \"3\"}}\n\n");
    for line in String::from_utf8(h.encode(Encoding::JsonLines))
        .unwrap()
        .lines()
        .skip(1)
    {
        hand.push_str(line);
        hand.push_str("\r\n");
    }
    assert_eq!(History::decode(hand.as_bytes()).unwrap(), h);
    // A history with no meta and no events, in each encoding.
    for enc in ALL {
        assert_eq!(History::decode(&History::new().encode(enc)).unwrap(), History::new());
    }
}

#[test]
fn the_file_name_picks_the_encoding() {
    let e = |p: &str| Encoding::for_path(Path::new(p));
    assert_eq!(e("store/x/history.jsonl.gz"), Encoding::JsonLinesGz);
    assert_eq!(e("h.gz"), Encoding::JsonLinesGz);
    assert_eq!(e("h.jsonl"), Encoding::JsonLines);
    assert_eq!(e("h.json"), Encoding::Json);
    assert_eq!(e("history"), Encoding::Json);
}

#[test]
fn errors_name_the_line_and_column() {
    let h = sample();
    let mut text = String::from_utf8(h.encode(Encoding::JsonLines)).unwrap();
    // Break the third line (the second event).
    let third = text.match_indices('\n').nth(1).unwrap().0 + 1;
    text.insert_str(third + 1, "oops");
    match History::decode(text.as_bytes()) {
        Err(DecodeError::Json { line: 3, column, .. }) => assert!(column >= 2, "{column}"),
        other => panic!("{other:?}"),
    }
    // The same damage, gzipped: the line of the unzipped text.
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    assert!(matches!(
        History::decode(&gz.finish().unwrap()),
        Err(DecodeError::Json { line: 3, .. })
    ));
    // The pretty document: serde's own line.
    let mut doc = String::from_utf8(h.encode(Encoding::Json)).unwrap();
    doc.insert(doc.find("\"events\"").unwrap(), ']');
    assert!(
        matches!(History::decode(doc.as_bytes()), Err(DecodeError::Json { line: 6, .. })),
        "{:?}",
        History::decode(doc.as_bytes())
    );
}

#[test]
fn other_versions_truncated_gzip_and_binary_are_refused() {
    let text = "{\"zkdst_history\":2,\"meta\":{}}\n";
    assert_eq!(
        History::decode(text.as_bytes()),
        Err(DecodeError::Version { line: 1, found: 2 })
    );
    let gz = sample().encode(Encoding::JsonLinesGz);
    assert!(matches!(
        History::decode(&gz[..gz.len() / 2]),
        Err(DecodeError::Gzip(_))
    ));
    assert_eq!(History::decode(&[b'{', 0xff, 0xfe]), Err(DecodeError::Utf8(1)));
    let unknown = "{\"zkdst_history\":1,\"meta\":{},\"extra\":1}\n";
    assert!(matches!(
        History::decode(unknown.as_bytes()),
        Err(DecodeError::Json { line: 1, .. })
    ));
}
