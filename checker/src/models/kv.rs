//! A string key/value store with get, put and append (Porcupine's kv
//! model); a get of an absent key returns "". Keys are independent.
//!
//! A key's value is a [`KvState`]: its text and a hash of the text that an
//! append extends from the hash before (a polynomial in the bytes, so it
//! depends only on the text). Hashing a state, which the engine does for
//! every new one, then reads one word instead of the whole text; equality
//! compares the hashes first and the texts only when they agree. (A
//! persistent rope made appends O(1) but every comparison a pointer chase,
//! and was slower.)

use std::fmt;
use std::hash::{Hash, Hasher};

use super::Model;
use crate::history::{Op, Operation, Value};

/// The base of the text hash (odd; arithmetic wraps modulo 2^64).
const B: u64 = 0x9e37_79b9_7f4a_7c15;

/// Pieces up to this long are hashed with [`POW`], without a chain of
/// dependent multiplications.
const SHORT: usize = 32;

/// `POW[i]` is `B^i`.
const POW: [u64; SHORT + 1] = {
    let mut pow = [1u64; SHORT + 1];
    let mut i = 1;
    while i <= SHORT {
        pow[i] = pow[i - 1].wrapping_mul(B);
        i += 1;
    }
    pow
};

/// The hash of `text` appended to a text of hash `hash`: the text's bytes
/// (each plus one) read as the digits of a number in base `B`, modulo
/// 2^64, so it depends only on the text, not on how it was cut into
/// pieces. A collision costs only a comparison of texts.
fn extend_hash(hash: u64, text: &str) -> u64 {
    let bytes = text.as_bytes();
    if bytes.len() <= SHORT {
        let n = bytes.len();
        let digits = bytes.iter().enumerate().fold(0u64, |acc, (i, &b)| {
            acc.wrapping_add((b as u64 + 1).wrapping_mul(POW[n - 1 - i]))
        });
        hash.wrapping_mul(POW[n]).wrapping_add(digits)
    } else {
        bytes
            .iter()
            .fold(hash, |h, &b| h.wrapping_mul(B).wrapping_add(b as u64 + 1))
    }
}

/// A key's value: its text, with a hash of the text kept up to date as it
/// grows (see the module doc).
#[derive(Clone, Default)]
pub struct KvState {
    hash: u64,
    text: String,
}

impl KvState {
    /// The state holding `text`.
    pub fn new(text: &str) -> KvState {
        KvState {
            hash: extend_hash(0, text),
            text: text.to_string(),
        }
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// This text followed by `text`.
    pub fn append(&self, text: &str) -> KvState {
        let mut s = String::with_capacity(self.text.len() + text.len());
        s.push_str(&self.text);
        s.push_str(text);
        KvState {
            hash: extend_hash(self.hash, text),
            text: s,
        }
    }

    /// Whether the text is `text`.
    pub fn is(&self, text: &str) -> bool {
        self.text == text
    }

    pub fn text(&self) -> &str {
        &self.text
    }
}

impl PartialEq for KvState {
    fn eq(&self, other: &KvState) -> bool {
        self.hash == other.hash && self.text == other.text
    }
}

impl Eq for KvState {}

impl Hash for KvState {
    /// Consistent with `eq`: equal texts have equal hashes.
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.hash);
    }
}

impl fmt::Debug for KvState {
    /// As the text's `String` would print.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.text, f)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Kv;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KvInput {
    Get { key: String },
    Put { key: String, value: String },
    Append { key: String, value: String },
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KvOutput {
    Got(String),
    Done,
}

impl Model for Kv {
    type State = KvState;
    type Input = KvInput;
    type Output = KvOutput;

    fn name(&self) -> &'static str {
        "kv"
    }

    fn init(&self) -> KvState {
        KvState::default()
    }

    fn step(&self, state: &KvState, input: &KvInput, output: Option<&KvOutput>) -> Option<KvState> {
        match (input, output) {
            (KvInput::Get { .. }, Some(KvOutput::Got(v))) => state.is(v).then(|| state.clone()),
            (KvInput::Get { .. }, None) => Some(state.clone()),
            (KvInput::Get { .. }, Some(KvOutput::Done)) => None,
            (KvInput::Put { value, .. }, _) => Some(KvState::new(value)),
            (KvInput::Append { value, .. }, _) => Some(state.append(value)),
        }
    }

    fn input(&self, op: &Operation) -> Result<KvInput, &'static str> {
        match &op.op {
            Op::Get { key } => Ok(KvInput::Get { key: key.clone() }),
            Op::Put { key, value } => Ok(KvInput::Put {
                key: key.clone(),
                value: value.clone(),
            }),
            Op::Append { key, value } => Ok(KvInput::Append {
                key: key.clone(),
                value: value.clone(),
            }),
            _ => Err("get, put or append on a string key"),
        }
    }

    fn output(&self, input: &KvInput, value: &Value) -> Result<KvOutput, &'static str> {
        match (input, value) {
            (KvInput::Get { .. }, Value::Str { value }) => Ok(KvOutput::Got(value.clone())),
            (KvInput::Get { .. }, Value::Nil) => Ok(KvOutput::Got(String::new())),
            (KvInput::Get { .. }, _) => Err("a string for a get"),
            (_, Value::Unit | Value::Str { .. } | Value::Nil) => Ok(KvOutput::Done),
            _ => Err("unit for a put or append"),
        }
    }

    fn is_read(&self, input: &KvInput) -> bool {
        matches!(input, KvInput::Get { .. })
    }

    /// Appends only extend the text, and gets keep it.
    fn grows(&self, input: &KvInput) -> bool {
        !matches!(input, KvInput::Put { .. })
    }

    /// Appends only extend the text, so a get can later read `v` only if
    /// the text is a prefix of `v`.
    fn may_read_later(&self, state: &KvState, read: &KvInput, output: &KvOutput) -> bool {
        match (read, output) {
            (KvInput::Get { .. }, KvOutput::Got(v)) => v.as_bytes().starts_with(state.text().as_bytes()),
            (KvInput::Get { .. }, KvOutput::Done) => false,
            _ => true,
        }
    }

    /// A get is accepted without cloning the value it read.
    fn accepts_read(&self, state: &KvState, input: &KvInput, output: Option<&KvOutput>) -> bool {
        match (input, output) {
            (KvInput::Get { .. }, Some(KvOutput::Got(v))) => state.is(v),
            (KvInput::Get { .. }, None) => true,
            (KvInput::Get { .. }, Some(KvOutput::Done)) => false,
            _ => self.step(state, input, output).is_some(),
        }
    }

    fn partition_key(&self, input: &KvInput) -> Option<String> {
        match input {
            KvInput::Get { key } | KvInput::Put { key, .. } | KvInput::Append { key, .. } => Some(key.clone()),
        }
    }

    fn describe_operation(&self, input: &KvInput, output: Option<&KvOutput>) -> String {
        match (input, output) {
            (KvInput::Get { key }, Some(KvOutput::Got(v))) => format!("get({key:?}) -> {v:?}"),
            (KvInput::Get { key }, _) => format!("get({key:?}) -> ?"),
            (KvInput::Put { key, value }, _) => format!("put({key:?}, {value:?})"),
            (KvInput::Append { key, value }, _) => format!("append({key:?}, {value:?})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_concatenates_and_get_sees_it() {
        let m = Kv;
        let k = || "k".to_string();
        let s = m
            .step(
                &KvState::default(),
                &KvInput::Append {
                    key: k(),
                    value: "x".into(),
                },
                Some(&KvOutput::Done),
            )
            .unwrap();
        let s = m
            .step(
                &s,
                &KvInput::Append {
                    key: k(),
                    value: "y".into(),
                },
                Some(&KvOutput::Done),
            )
            .unwrap();
        assert_eq!(s, KvState::new("xy"));
        assert_eq!(format!("{s:?}"), format!("{:?}", "xy"));
        assert!(m
            .step(&s, &KvInput::Get { key: k() }, Some(&KvOutput::Got("x".into())))
            .is_none());
        assert!(m
            .step(&s, &KvInput::Get { key: k() }, Some(&KvOutput::Got("xy".into())))
            .is_some());
        assert_eq!(
            m.step(
                &s,
                &KvInput::Put {
                    key: k(),
                    value: "z".into()
                },
                None
            )
            .unwrap(),
            KvState::new("z")
        );
    }

    /// Builds a state and the plain text side by side: a put (`true`) or an
    /// append of each piece.
    fn build(steps: &[(bool, String)]) -> (KvState, String) {
        let (mut rope, mut text) = (KvState::default(), String::new());
        for (put, piece) in steps {
            if *put {
                rope = KvState::new(piece);
                text = piece.clone();
            } else {
                rope = rope.append(piece);
                text.push_str(piece);
            }
        }
        (rope, text)
    }

    fn hash_of(s: &KvState) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    }

    proptest::proptest! {
        /// A state behaves as its text: equal exactly when the texts are,
        /// equal hashes when equal, the same length, text and `Debug`, and
        /// `is` is string equality.
        #[test]
        fn rope_is_its_text(
            a in proptest::collection::vec((proptest::bool::weighted(0.1), "[ab]{0,3}|a{21,24}"), 0..8),
            b in proptest::collection::vec((proptest::bool::weighted(0.1), "[ab]{0,3}|a{21,24}"), 0..8),
            shared in 0usize..8,
        ) {
            let (ra, ta) = build(&a);
            // `b` continues a prefix of `a`, so the texts are often equal.
            let cut = shared.min(a.len());
            let (rb0, tb0) = build(&a[..cut]);
            let (mut rb, mut tb) = (rb0, tb0);
            for (put, piece) in &b {
                if *put { rb = KvState::new(piece); tb = piece.clone(); } else { rb = rb.append(piece); tb.push_str(piece); }
            }
            proptest::prop_assert_eq!(ra.text(), ta.as_str());
            proptest::prop_assert_eq!(ra.len(), ta.len());
            proptest::prop_assert_eq!(ra.is_empty(), ta.is_empty());
            proptest::prop_assert_eq!(format!("{ra:?}"), format!("{ta:?}"));
            proptest::prop_assert_eq!(ra == rb, ta == tb);
            proptest::prop_assert_eq!(rb == ra, ta == tb);
            proptest::prop_assert!(ra == ra.clone());
            proptest::prop_assert_eq!(ra.is(&tb), ta == tb);
            proptest::prop_assert_eq!(rb.is(&ta), ta == tb);
            if ta == tb {
                proptest::prop_assert_eq!(hash_of(&ra), hash_of(&rb));
            }
        }
    }

    proptest::proptest! {
        /// `may_read_later`'s promise: a get that some growing steps from a
        /// state make acceptable is never ruled out in that state.
        #[test]
        fn may_read_later_never_rules_out_a_reachable_read(
            start in "[ab]{0,4}",
            appends in proptest::collection::vec("[ab]{0,2}", 0..5),
            read in "[ab]{0,8}",
        ) {
            let m = Kv;
            let key = || "k".to_string();
            let get = KvInput::Get { key: key() };
            let out = KvOutput::Got(read.clone());
            let state = KvState::new(&start);
            let mut s = state.clone();
            let mut reachable = m.step(&s, &get, Some(&out)).is_some();
            for a in &appends {
                let input = KvInput::Append { key: key(), value: a.clone() };
                proptest::prop_assert!(m.grows(&input));
                s = m.step(&s, &input, Some(&KvOutput::Done)).unwrap();
                reachable |= m.step(&s, &get, Some(&out)).is_some();
            }
            if reachable {
                proptest::prop_assert!(m.may_read_later(&state, &get, &out));
            }
            // And it is exact: the text is a prefix of the read.
            proptest::prop_assert_eq!(m.may_read_later(&state, &get, &out), read.starts_with(&start));
        }
    }

    #[test]
    fn the_hash_does_not_depend_on_the_cuts() {
        let text: String = (0..100).map(|i| char::from(b'a' + (i * 7 % 26) as u8)).collect();
        let whole = extend_hash(0, &text);
        for cut in 0..=text.len() {
            let (a, b) = text.split_at(cut);
            assert_eq!(extend_hash(extend_hash(0, a), b), whole, "{cut}");
        }
        assert_ne!(extend_hash(0, "ab"), extend_hash(0, "ba"));
        assert_ne!(extend_hash(0, "a"), extend_hash(0, "a\0"));
    }
}
