//! Framing: every packet in either direction is a 4-byte big-endian length
//! followed by that many bytes of payload.
//!
//! The bound is the server's: `NIOServerCnxn.readLength` /
//! `NettyServerCnxn` refuse `len < 0 || len > jute.maxbuffer` and close the
//! connection; `jute.maxbuffer` defaults to 0xfffff (1,048,575) bytes. No
//! slack is added to the frame bound because the server adds none there; the
//! 1024-byte slack of jute's `checkLength` applies to fields inside a record
//! (see [`Limits::max_field`]).
//!
//! Before a connection's first packet the server also accepts four-letter
//! words (`ruok`, `isro`, ...) in place of a length; [`four_letter_word`]
//! recognises them so the connection handler can look before framing.

use crate::error::WireError;

/// ZooKeeper's default `jute.maxbuffer`.
pub const DEFAULT_MAX_BUFFER: usize = 0xfffff;

/// Size limits, configurable as `jute.maxbuffer` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted frame payload.
    pub max_buffer: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_buffer: DEFAULT_MAX_BUFFER,
        }
    }
}

impl Limits {
    /// Jute's per-field bound that goes with this frame bound.
    pub fn max_field(&self) -> usize {
        self.max_buffer.saturating_add(1024)
    }
}

/// The outcome of looking for one frame at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameStatus {
    /// A whole frame: its payload is `buf[4..consumed]`.
    Complete { consumed: usize },
    /// At least `needed` more bytes must arrive first.
    NeedMore { needed: usize },
}

/// Looks for one frame at the start of `buf`, refusing a bad length as soon
/// as its 4 bytes are there (before waiting for, or allocating, the payload).
pub fn split_frame(buf: &[u8], limits: &Limits) -> Result<FrameStatus, WireError> {
    let Some(head) = buf.first_chunk::<4>() else {
        return Ok(FrameStatus::NeedMore { needed: 4 - buf.len() });
    };
    let len = i32::from_be_bytes(*head);
    let payload = usize::try_from(len).map_err(|_| WireError::NegativeFrameLength { len })?;
    if payload > limits.max_buffer {
        return Err(WireError::FrameTooLong {
            len,
            max: limits.max_buffer,
        });
    }
    let total = 4 + payload;
    if buf.len() < total {
        Ok(FrameStatus::NeedMore {
            needed: total - buf.len(),
        })
    } else {
        Ok(FrameStatus::Complete { consumed: total })
    }
}

/// Accumulates bytes from a stream and hands out whole frame payloads.
#[derive(Debug, Default, Clone)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    start: usize,
    limits: Limits,
}

impl FrameDecoder {
    pub fn new(limits: Limits) -> Self {
        FrameDecoder {
            buf: Vec::new(),
            start: 0,
            limits,
        }
    }

    /// Appends bytes received from the peer.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet returned as a frame.
    pub fn buffered(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// The next complete payload, `Ok(None)` when more bytes are needed. After
    /// an error the stream is unusable, as the server closes it.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, WireError> {
        match split_frame(self.buffered(), &self.limits)? {
            FrameStatus::NeedMore { .. } => Ok(None),
            FrameStatus::Complete { consumed } => {
                let payload = self.buf[self.start + 4..self.start + consumed].to_vec();
                self.start += consumed;
                Ok(Some(payload))
            }
        }
    }
}

/// Prefixes a payload with its length.
pub fn encode_frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 4);
    out.extend_from_slice(&i32::try_from(payload.len()).unwrap_or(i32::MAX).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// The four-letter words a 3.8 server knows (`FourLetterCommands`).
pub const FOUR_LETTER_WORDS: [&str; 18] = [
    "conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "hash", "isro", "mntr", "ruok", "srst", "srvr", "stat",
    "stmk", "wchc", "wchp", "wchs",
];

/// Whether the first 4 bytes of a connection are a four-letter word rather
/// than a frame length.
pub fn four_letter_word(head: [u8; 4]) -> Option<&'static str> {
    FOUR_LETTER_WORDS.iter().copied().find(|w| w.as_bytes() == head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_split_across_pushes() {
        let mut d = FrameDecoder::new(Limits::default());
        let mut stream = encode_frame(b"abc");
        stream.extend(encode_frame(b""));
        d.push(&stream[..2]);
        assert_eq!(d.next_frame(), Ok(None));
        d.push(&stream[2..6]);
        assert_eq!(d.next_frame(), Ok(None));
        d.push(&stream[6..]);
        assert_eq!(d.next_frame(), Ok(Some(b"abc".to_vec())));
        assert_eq!(d.next_frame(), Ok(Some(Vec::new())));
        assert_eq!(d.next_frame(), Ok(None));
        assert!(d.buffered().is_empty());
    }

    #[test]
    fn bad_lengths_are_refused_before_the_payload() {
        let l = Limits::default();
        assert_eq!(
            split_frame(&(-1i32).to_be_bytes(), &l),
            Err(WireError::NegativeFrameLength { len: -1 })
        );
        let too_long = (DEFAULT_MAX_BUFFER as i32 + 1).to_be_bytes();
        assert!(matches!(
            split_frame(&too_long, &l),
            Err(WireError::FrameTooLong { .. })
        ));
        let max = (DEFAULT_MAX_BUFFER as i32).to_be_bytes();
        assert_eq!(
            split_frame(&max, &l),
            Ok(FrameStatus::NeedMore {
                needed: DEFAULT_MAX_BUFFER
            })
        );
    }

    #[test]
    fn isro_is_a_word_not_a_length() {
        assert_eq!(four_letter_word(*b"isro"), Some("isro"));
        assert_eq!(four_letter_word([0, 0, 0, 40]), None);
    }
}
