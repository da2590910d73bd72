//! Guids that make creates recognisable after ConnectionLoss, and the node
//! names built from them.
//!
//! A guid is `(session id, per-context counter)`: deterministic (no
//! randomness) and unique, because a session id is never reused and the
//! counter never repeats within one [`crate::Ctx`]. Embedding the session id
//! also means a node named with an older session's guid is never mistaken
//! for one of ours (CURATOR-696 class), on top of the `ephemeralOwner` check
//! recipes do for ephemerals.
//!
//! Sequential node names are `{guid}-{kind}-{sequence}`, e.g.
//! `g00000001000000aa0000000000000003-lock-0000000042`.

use std::fmt;

use crate::zk::path::sequence_after_prefix;
use crate::zk::SessionId;

/// Length of a guid's text form: `g` + 16 + 16 hex digits.
pub const GUID_LEN: usize = 33;

/// A guid naming one create of one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Guid {
    pub session: SessionId,
    pub counter: u64,
}

/// The value of each hex digit (either case); 0xff for other bytes.
const HEX: [u8; 256] = {
    let mut t = [0xff; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

impl Guid {
    /// Parses the text form (exactly [`GUID_LEN`] characters).
    pub fn parse(s: &str) -> Option<Guid> {
        let hex = s.strip_prefix('g')?.as_bytes();
        if hex.len() != 32 {
            return None;
        }
        // Sixteen hex digits each, decoded directly (recipes parse every
        // child name of every listing they read).
        let word = |digits: &[u8]| {
            digits.iter().try_fold(0u64, |v, d| {
                let x = HEX[usize::from(*d)];
                (x < 16).then_some(v << 4 | u64::from(x))
            })
        };
        Some(Guid {
            session: word(&hex[..16])? as i64,
            counter: word(&hex[16..])?,
        })
    }

    /// The guid at the start of a node name, if there is one.
    pub fn at_start_of(name: &str) -> Option<Guid> {
        name.get(..GUID_LEN).and_then(Guid::parse)
    }

    /// The prefix of a sequential node of this guid: `{guid}-{kind}-`.
    pub fn prefix(&self, kind: &str) -> String {
        format!("{self}-{kind}-")
    }
}

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "g{:016x}{:016x}", self.session as u64, self.counter)
    }
}

/// A parsed sequential node name `{guid}-{kind}-{sequence}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeqName {
    /// The full node name (no parent path).
    pub name: String,
    pub guid: Guid,
    pub kind: String,
    pub sequence: i32,
}

impl SeqName {
    /// Parses `name` if its kind is one of `kinds`; names of other shapes
    /// (foreign nodes in the directory) yield `None` and are ignored.
    pub fn parse(name: &str, kinds: &[&str]) -> Option<SeqName> {
        let guid = Guid::at_start_of(name)?;
        let rest = name[GUID_LEN..].strip_prefix('-')?;
        kinds.iter().find_map(|kind| {
            let after = rest.strip_prefix(kind)?.strip_prefix('-')?;
            let sequence = sequence_after_prefix(after, "")?;
            Some(SeqName {
                name: name.to_string(),
                guid,
                kind: (*kind).to_string(),
                sequence,
            })
        })
    }

    /// Parses every name of one of `kinds` and orders them by sequence.
    pub fn parse_sorted(names: &[String], kinds: &[&str]) -> Vec<SeqName> {
        let parsed = names.iter().filter_map(|n| SeqName::parse(n, kinds)).collect();
        crate::seq::sort_by_sequence(parsed, |n| n.sequence)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guid_round_trips_including_negative_sessions() {
        for g in [
            Guid {
                session: 0x1000_0054_c310_0003,
                counter: 7,
            },
            Guid {
                session: -5,
                counter: u64::MAX,
            },
            Guid { session: 0, counter: 0 },
        ] {
            let s = g.to_string();
            assert_eq!(s.len(), GUID_LEN);
            assert_eq!(Guid::parse(&s), Some(g));
        }
        assert_eq!(Guid::parse("g123"), None);
        // Exactly 32 hex digits: upper case reads as lower, a sign or a
        // non-ASCII character (32 bytes, fewer characters) does not read.
        let upper = format!("g{}", "00000000000000AB".repeat(2));
        assert_eq!(
            Guid::parse(&upper),
            Some(Guid {
                session: 0xab,
                counter: 0xab
            })
        );
        assert_eq!(Guid::parse(&format!("g+{}", "0".repeat(31))), None);
        assert_eq!(Guid::parse(&format!("g\u{e9}{}", "0".repeat(30))), None);
        assert_eq!(Guid::parse(&"x".repeat(GUID_LEN)), None);
    }

    #[test]
    fn seq_names_parse_with_kind_and_wrapped_counter() {
        let g = Guid {
            session: 42,
            counter: 3,
        };
        let n = format!("{}0000000042", g.prefix("read"));
        let p = SeqName::parse(&n, &["read", "write"]).expect("parses");
        assert_eq!((p.guid, p.kind.as_str(), p.sequence), (g, "read", 42));
        let wrapped = format!("{}-2147483648", g.prefix("lock"));
        assert_eq!(SeqName::parse(&wrapped, &["lock"]).map(|p| p.sequence), Some(i32::MIN));
        let neg = format!("{}-000000005", g.prefix("lock"));
        assert_eq!(SeqName::parse(&neg, &["lock"]).map(|p| p.sequence), Some(-5));
        assert_eq!(SeqName::parse(&n, &["write"]), None);
        assert_eq!(SeqName::parse("lock-0000000001", &["lock"]), None);
        assert_eq!(SeqName::parse(&format!("{g}-lock-12"), &["lock"]), None);
    }
}
