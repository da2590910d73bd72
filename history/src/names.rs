//! Child names as a history records them (a getChildren result): shared,
//! because a long run lists the same large directories thousands of times
//! and pairing, checking and reporting copy outcomes. Written as a plain
//! JSON list of strings.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Names(Arc<[String]>);

impl Deref for Names {
    type Target = [String];

    fn deref(&self) -> &[String] {
        &self.0
    }
}

impl From<Vec<String>> for Names {
    fn from(v: Vec<String>) -> Self {
        Names(v.into())
    }
}

impl FromIterator<String> for Names {
    fn from_iter<I: IntoIterator<Item = String>>(iter: I) -> Self {
        Names(iter.into_iter().collect())
    }
}

impl fmt::Debug for Names {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl Serialize for Names {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter())
    }
}

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<String>::deserialize(d).map(Names::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_a_plain_list_and_round_trips() {
        let n = Names::from(vec!["a".to_string(), "b\"c".to_string()]);
        let json = serde_json::to_string(&n).unwrap();
        assert_eq!(json, r#"["a","b\"c"]"#);
        assert_eq!(serde_json::from_str::<Names>(&json).unwrap(), n);
        assert_eq!(format!("{n:?}"), r#"["a", "b\"c"]"#);
        assert_eq!(n.len(), 2);
    }
}
