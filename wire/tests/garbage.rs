//! Hostile input: arbitrary bytes and mutated valid frames never panic,
//! every failure is a typed error pointing inside the payload, and whatever
//! does decode re-encodes to something that decodes to the same value.

mod common;

use common::*;
use proptest::prelude::*;
use zkdst_wire::*;

/// The offset an error points at, if it has one.
fn offset(err: &WireError) -> Option<usize> {
    match err {
        WireError::Truncated { offset, .. }
        | WireError::BadLength { offset, .. }
        | WireError::UnknownValue { offset, .. }
        | WireError::BadMultiOp { offset, .. } => Some(*offset),
        WireError::RequestBody { source, .. } => offset(source),
        _ => None,
    }
}

fn check_error(err: &WireError, payload: &[u8]) -> Result<(), TestCaseError> {
    prop_assert!(!err.to_string().is_empty());
    if let Some(at) = offset(err) {
        prop_assert!(
            at <= payload.len(),
            "{err} points past a {}-byte payload",
            payload.len()
        );
    }
    if let WireError::Truncated {
        offset,
        needed,
        available,
        ..
    } = err
    {
        prop_assert_eq!(offset + available, payload.len());
        prop_assert!(needed > available);
    }
    Ok(())
}

/// Decodes `payload` every way a peer might, checking errors and
/// re-encoding successes.
fn decode_every_way(payload: &[u8], op: OpCode) -> Result<(), TestCaseError> {
    match decode_request(payload) {
        Ok(req) => prop_assert_eq!(decode_request(&encode_request(&req)[4..]), Ok(req)),
        Err(e) => check_error(&e, payload)?,
    }
    match decode_connect_request(payload) {
        Ok(req) => prop_assert_eq!(decode_connect_request(&encode_connect_request(&req)[4..]), Ok(req)),
        Err(e) => check_error(&e, payload)?,
    }
    match decode_connect_response(payload) {
        Ok(rsp) => prop_assert_eq!(decode_connect_response(&encode_connect_response(&rsp)[4..]), Ok(rsp)),
        Err(e) => check_error(&e, payload)?,
    }
    match decode_server_message(payload, |_| Some(op)) {
        Ok(msg) => {
            let again = decode_server_message(&response::encode_server_message(&msg)[4..], |_| Some(op));
            prop_assert_eq!(again, Ok(msg));
        }
        Err(e) => check_error(&e, payload)?,
    }
    Ok(())
}

fn opcode() -> impl Strategy<Value = OpCode> {
    proptest::sample::select(OpCode::ALL.to_vec())
}

/// Ways to damage a valid payload.
#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(usize, u8),
    Truncate(usize),
    Extend(Vec<u8>),
    /// Overwrite 4 bytes with a value lengths and types are sensitive to.
    Poke(usize, i32),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let poke = prop_oneof![
        Just(-1),
        Just(-2),
        Just(0),
        Just(1),
        Just(i32::MAX),
        Just(i32::MIN),
        any::<i32>()
    ];
    prop_oneof![
        (any::<usize>(), 0..8u8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        proptest::collection::vec(any::<u8>(), 1..16).prop_map(Mutation::Extend),
        (any::<usize>(), poke).prop_map(|(i, v)| Mutation::Poke(i, v)),
    ]
}

fn mutate(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let n = bytes.len().max(1);
        match m {
            Mutation::FlipBit(i, b) if !bytes.is_empty() => bytes[i % n] ^= 1 << b,
            Mutation::Truncate(i) => bytes.truncate(i % n),
            Mutation::Extend(tail) => bytes.extend_from_slice(tail),
            Mutation::Poke(i, v) if bytes.len() >= 4 => {
                let at = i % (bytes.len() - 3);
                bytes[at..at + 4].copy_from_slice(&v.to_be_bytes());
            }
            _ => {}
        }
    }
    bytes
}

proptest! {
    #![proptest_config(config(15))]
    #[test]
    fn arbitrary_payloads_give_typed_errors(payload in proptest::collection::vec(any::<u8>(), 0..256), op in opcode()) {
        decode_every_way(&payload, op)?;
    }
}

proptest! {
    #![proptest_config(config(15))]
    #[test]
    fn mutated_requests_give_typed_errors(
        req in client_request(),
        connect in connect_request(),
        mutations in proptest::collection::vec(mutation(), 1..4),
        op in opcode(),
    ) {
        decode_every_way(&mutate(encode_request(&req)[4..].to_vec(), &mutations), op)?;
        decode_every_way(&mutate(encode_connect_request(&connect)[4..].to_vec(), &mutations), op)?;
    }
}

proptest! {
    #![proptest_config(config(10))]
    #[test]
    fn mutated_replies_give_typed_errors(
        (reply, op) in reply(),
        event in event(),
        mutations in proptest::collection::vec(mutation(), 1..4),
    ) {
        decode_every_way(&mutate(encode_reply(&reply)[4..].to_vec(), &mutations), op)?;
        decode_every_way(&mutate(encode_notification(&event)[4..].to_vec(), &mutations), op)?;
    }
}

proptest! {
    #![proptest_config(config(5))]
    /// A stream of frames cut anywhere comes out as the same frames, and a
    /// stream of garbage is either framed or refused, never a panic.
    #[test]
    fn frame_streams_reassemble(
        reqs in proptest::collection::vec(client_request(), 0..6),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        garbage in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let frames: Vec<Vec<u8>> = reqs.iter().map(encode_request).collect();
        let stream = frames.concat();
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
        points.push(stream.len());
        points.sort_unstable();
        let mut decoder = FrameDecoder::new(Limits::default());
        let mut out = Vec::new();
        let mut from = 0;
        for to in points {
            decoder.push(&stream[from..to]);
            from = to;
            while let Some(payload) = decoder.next_frame().map_err(|e| TestCaseError::fail(e.to_string()))? {
                out.push(decode_request(&payload).map_err(|e| TestCaseError::fail(e.to_string()))?);
            }
        }
        prop_assert_eq!(out, reqs);
        prop_assert!(decoder.buffered().is_empty());

        let mut decoder = FrameDecoder::new(Limits { max_buffer: 32 });
        decoder.push(&garbage);
        loop {
            match decoder.next_frame() {
                Ok(Some(payload)) => prop_assert!(payload.len() <= 32),
                Ok(None) => break,
                Err(e) => {
                    let framing = matches!(e, WireError::NegativeFrameLength { .. } | WireError::FrameTooLong { .. });
                    prop_assert!(framing, "{}", e);
                    break;
                }
            }
        }
    }
}
