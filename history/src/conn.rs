//! The servers' record of a client connection: what a server read from it
//! and wrote to it, frame by frame, and who closed it and why. A client
//! library exposes none of this (no reply zxids, no xids), so it is the
//! evidence on which a client library is judged: the promises a client
//! keeps towards the ensemble (single system image across reconnects, xid
//! discipline, no unexplained disconnect) are read from here.
//!
//! One [`Event::Conn`](crate::Event::Conn) per frame or change, keyed by
//! server and the server's connection number.

use serde::{Deserialize, Serialize};

use crate::{SessionId, Zxid};
pub use zkdst_model::ErrorCode;

/// What happened on one connection, as its server saw it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ConnEvent {
    /// The client's ConnectRequest: `session` 0 asks for a new session;
    /// `last_zxid_seen` is what the client says it has already seen.
    Connect {
        session: SessionId,
        last_zxid_seen: Zxid,
        timeout_ms: i32,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        read_only: bool,
        /// False when a reconnect's password did not match the session's.
        password_ok: bool,
    },
    /// The server's ConnectResponse: the session it now serves on this
    /// connection, or `session` 0 and timeout 0 (expired, or refused).
    Established { session: SessionId, timeout_ms: i32 },
    /// A request frame: its xid and ZooKeeper's name of its type
    /// (`OpCode`: `GetData`, `Ping`, `SetWatches` ...).
    Request { xid: i32, op: String },
    /// A reply frame: the xid it answers, the zxid in its header, and its
    /// error (`None`: it succeeded).
    Reply {
        xid: i32,
        zxid: Zxid,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        err: Option<ErrorCode>,
    },
    /// A watch notification frame; `zxid` as its header carried it (-1 on
    /// ZooKeeper 3.8).
    Notification { path: String, event: String, zxid: Zxid },
    /// The SetWatches a reconnecting client sent: the watches it still
    /// holds, to be fired at once for what changed after `relative_zxid`.
    SetWatches {
        relative_zxid: Zxid,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        data: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        exist: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        child: Vec<String>,
    },
    /// The connection ended.
    Close { by: ClosedBy, reason: CloseReason },
}

/// Which side ended a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClosedBy {
    /// The server read end-of-stream: the client closed or reset it (or a
    /// fault on the client's side did).
    Client,
    /// The server closed it.
    Server,
}

/// Why a connection ended, in ZooKeeper's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CloseReason {
    /// End of stream from the client.
    ClientEof,
    /// A frame that does not decode, or a request out of protocol order.
    BadFrame,
    /// A four-letter word: answered, then closed.
    FourLetterWord,
    /// The client has seen a zxid this server has not ("client must try
    /// another server"): the guard of a single system image.
    ClientAhead,
    /// A request over jute.maxbuffer.
    TooLarge,
    /// The session is expired or its password is wrong: the
    /// ConnectResponse said so.
    SessionRefused,
    /// The session moved to another connection.
    SessionMoved,
    /// The client closed its session; the server closes once drained.
    SessionClosed,
    /// The session expired while connected.
    SessionExpired,
    /// The server lost its leader (or is not serving yet).
    NotServing,
    /// Authentication failed (an unknown scheme, or SASL).
    AuthFailed,
    /// The server process stopped (killed, crashed or restarted): its
    /// connections ended with it.
    ServerStopped,
}

impl ConnEvent {
    /// The session a ConnectResponse established (0 when refused).
    pub fn established(&self) -> Option<SessionId> {
        match self {
            ConnEvent::Established { session, .. } => Some(*session),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_as_json_with_words_not_numbers() {
        let events = [
            ConnEvent::Connect {
                session: 0,
                last_zxid_seen: 0,
                timeout_ms: 4000,
                read_only: false,
                password_ok: true,
            },
            ConnEvent::Reply {
                xid: 3,
                zxid: 0x1_0000_0005,
                err: Some(ErrorCode::NoNode),
            },
            ConnEvent::Close {
                by: ClosedBy::Server,
                reason: CloseReason::ClientAhead,
            },
        ];
        for e in &events {
            let json = serde_json::to_string(e).unwrap();
            assert_eq!(&serde_json::from_str::<ConnEvent>(&json).unwrap(), e, "{json}");
        }
        let json = serde_json::to_string(&events[1]).unwrap();
        assert!(json.contains(r#""err":"NoNode""#), "{json}");
        let json = serde_json::to_string(&events[2]).unwrap();
        assert!(json.contains(r#""reason":"client-ahead""#), "{json}");
    }
}
