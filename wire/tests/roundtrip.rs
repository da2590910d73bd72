//! Every record survives encode → decode unchanged, and every encoded frame
//! carries its own length.

mod common;

use common::*;
use proptest::prelude::*;
use zkdst_wire::frame::{split_frame, FrameStatus};
use zkdst_wire::*;

/// The payload of a single frame, checking that the length prefix is right.
fn payload(frame: &[u8]) -> &[u8] {
    assert_eq!(
        split_frame(frame, &Limits::default()),
        Ok(FrameStatus::Complete { consumed: frame.len() })
    );
    &frame[4..]
}

proptest! {
    #![proptest_config(config(20))]
    #[test]
    fn requests_round_trip(req in client_request()) {
        let frame = encode_request(&req);
        prop_assert_eq!(decode_request(payload(&frame)), Ok(req));
    }
}

proptest! {
    #![proptest_config(config(20))]
    #[test]
    fn replies_round_trip((reply, op) in reply()) {
        let frame = encode_reply(&reply);
        let decoded = decode_server_message(payload(&frame), |xid| (xid == reply.xid).then_some(op));
        prop_assert_eq!(decoded, Ok(ServerMessage::Reply(reply)));
    }
}

proptest! {
    #![proptest_config(config(10))]
    #[test]
    fn handshake_and_notifications_round_trip(
        req in connect_request(),
        rsp in connect_response(),
        event in event(),
        zxid in any::<i64>(),
    ) {
        prop_assert_eq!(decode_connect_request(payload(&encode_connect_request(&req))), Ok(req));
        prop_assert_eq!(decode_connect_response(payload(&encode_connect_response(&rsp))), Ok(rsp));
        let frame = encode_notification(&event);
        let expected = ServerMessage::Notification { zxid: -1, event: event.clone() };
        prop_assert_eq!(decode_server_message(payload(&frame), |_| None), Ok(expected));
        let msg = ServerMessage::Notification { zxid, event };
        let frame = response::encode_server_message(&msg);
        prop_assert_eq!(decode_server_message(payload(&frame), |_| None), Ok(msg));
    }
}
