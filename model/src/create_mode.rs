//! How a znode is created (`CreateMode.java`), one type from the client
//! interface to the history and its checkers.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// How a znode is created. In a history a plain mode is its word
/// (`"ephemeral_sequential"`) and a TTL mode carries its TTL
/// (`{"persistent_with_ttl":{"ttl_ms":5000}}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CreateMode {
    Persistent,
    Ephemeral,
    PersistentSequential,
    EphemeralSequential,
    /// Deleted by the server once it has had a child and has none left.
    Container,
    /// Deleted once childless and unmodified for `ttl_ms` (needs the server's
    /// `zookeeper.extendedTypesEnabled`).
    PersistentWithTtl {
        ttl_ms: i64,
    },
    PersistentSequentialWithTtl {
        ttl_ms: i64,
    },
}

impl CreateMode {
    /// The largest TTL ZooKeeper accepts (2^40 - 1 ms).
    pub const MAX_TTL_MS: i64 = (1 << 40) - 1;

    pub fn is_ephemeral(self) -> bool {
        matches!(self, CreateMode::Ephemeral | CreateMode::EphemeralSequential)
    }
    pub fn is_sequential(self) -> bool {
        matches!(
            self,
            CreateMode::PersistentSequential
                | CreateMode::EphemeralSequential
                | CreateMode::PersistentSequentialWithTtl { .. }
        )
    }
    pub fn is_container(self) -> bool {
        matches!(self, CreateMode::Container)
    }
    pub fn ttl_ms(self) -> Option<i64> {
        match self {
            CreateMode::PersistentWithTtl { ttl_ms } | CreateMode::PersistentSequentialWithTtl { ttl_ms } => {
                Some(ttl_ms)
            }
            _ => None,
        }
    }
    /// The wire flag (`CreateMode.toFlag`).
    pub fn flag(self) -> i32 {
        match self {
            CreateMode::Persistent => 0,
            CreateMode::Ephemeral => 1,
            CreateMode::PersistentSequential => 2,
            CreateMode::EphemeralSequential => 3,
            CreateMode::Container => 4,
            CreateMode::PersistentWithTtl { .. } => 5,
            CreateMode::PersistentSequentialWithTtl { .. } => 6,
        }
    }

    /// A plain mode by its history word (or ZooKeeper's name). The TTL
    /// words are accepted with a TTL of 0: histories before the TTL was
    /// recorded wrote them bare, and no checker reads the TTL.
    fn from_word(word: &str) -> Option<CreateMode> {
        Some(match word {
            "persistent" | "Persistent" | "PERSISTENT" => CreateMode::Persistent,
            "ephemeral" | "Ephemeral" | "EPHEMERAL" => CreateMode::Ephemeral,
            "persistent_sequential" | "PersistentSequential" | "PERSISTENT_SEQUENTIAL" => {
                CreateMode::PersistentSequential
            }
            "ephemeral_sequential" | "EphemeralSequential" | "EPHEMERAL_SEQUENTIAL" => CreateMode::EphemeralSequential,
            "container" | "Container" | "CONTAINER" => CreateMode::Container,
            "persistent_with_ttl" => CreateMode::PersistentWithTtl { ttl_ms: 0 },
            "persistent_sequential_with_ttl" => CreateMode::PersistentSequentialWithTtl { ttl_ms: 0 },
            _ => return None,
        })
    }
}

const WORDS: &[&str] = &[
    "persistent",
    "ephemeral",
    "persistent_sequential",
    "ephemeral_sequential",
    "container",
    "persistent_with_ttl",
    "persistent_sequential_with_ttl",
];

impl<'de> Deserialize<'de> for CreateMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ModeVisitor)
    }
}

struct ModeVisitor;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Ttl {
    ttl_ms: i64,
}

impl<'de> Visitor<'de> for ModeVisitor {
    type Value = CreateMode;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a create mode: \"persistent\", ..., or {\"persistent_with_ttl\":{\"ttl_ms\":N}}")
    }

    fn visit_str<E: de::Error>(self, word: &str) -> Result<CreateMode, E> {
        CreateMode::from_word(word).ok_or_else(|| E::unknown_variant(word, WORDS))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CreateMode, A::Error> {
        let key: String = map.next_key()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let Ttl { ttl_ms } = map.next_value()?;
        let mode = match key.as_str() {
            "persistent_with_ttl" | "PersistentWithTtl" => CreateMode::PersistentWithTtl { ttl_ms },
            "persistent_sequential_with_ttl" | "PersistentSequentialWithTtl" => {
                CreateMode::PersistentSequentialWithTtl { ttl_ms }
            }
            other => return Err(de::Error::unknown_variant(other, &WORDS[5..])),
        };
        if map.next_key::<String>()?.is_some() {
            return Err(de::Error::invalid_length(2, &self));
        }
        Ok(mode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_modes_are_words_and_ttl_modes_carry_their_ttl() {
        let json = |m: CreateMode| serde_json::to_string(&m).unwrap();
        assert_eq!(json(CreateMode::EphemeralSequential), "\"ephemeral_sequential\"");
        assert_eq!(
            json(CreateMode::PersistentWithTtl { ttl_ms: 5000 }),
            r#"{"persistent_with_ttl":{"ttl_ms":5000}}"#
        );
        for m in [
            CreateMode::Persistent,
            CreateMode::Ephemeral,
            CreateMode::PersistentSequential,
            CreateMode::EphemeralSequential,
            CreateMode::Container,
            CreateMode::PersistentWithTtl { ttl_ms: 7 },
            CreateMode::PersistentSequentialWithTtl { ttl_ms: 9 },
        ] {
            assert_eq!(serde_json::from_str::<CreateMode>(&json(m)).unwrap(), m);
        }
    }

    #[test]
    fn older_histories_and_java_names_read() {
        let read = |s: &str| serde_json::from_str::<CreateMode>(s);
        assert_eq!(
            read("\"persistent_sequential_with_ttl\"").unwrap(),
            CreateMode::PersistentSequentialWithTtl { ttl_ms: 0 }
        );
        assert_eq!(read("\"EPHEMERAL\"").unwrap(), CreateMode::Ephemeral);
        let err = read("\"ephemral\"").unwrap_err().to_string();
        assert!(err.contains("ephemral"), "{err}");
        assert!(read(r#"{"persistent_with_ttl":{"ttl":5}}"#).is_err());
        assert!(read(r#"{"ephemeral":{"ttl_ms":5}}"#).is_err());
    }
}
