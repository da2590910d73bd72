//! Znode data as it appears in a history: a JSON string when it is UTF-8
//! (readable in timelines and diffs), `{"hex": "..."}` otherwise. Lossless.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Data(pub Vec<u8>);

impl Data {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl From<&[u8]> for Data {
    fn from(b: &[u8]) -> Self {
        Data(b.to_vec())
    }
}

impl From<Vec<u8>> for Data {
    fn from(b: Vec<u8>) -> Self {
        Data(b)
    }
}

impl From<&str> for Data {
    fn from(s: &str) -> Self {
        Data(s.as_bytes().to_vec())
    }
}

impl fmt::Debug for Data {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Data {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match std::str::from_utf8(&self.0) {
            Ok(s) => write!(f, "{s:?}"),
            Err(_) => write!(f, "0x{}", hex(&self.0)),
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok()))
        .collect()
}

impl Serialize for Data {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(&self.0) {
            Ok(text) => s.serialize_str(text),
            Err(_) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("hex", &hex(&self.0))?;
                m.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Data {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Data;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, or {\"hex\": \"...\"}")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Data, E> {
                Ok(Data(v.as_bytes().to_vec()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Data, A::Error> {
                let mut out = None;
                while let Some(k) = map.next_key::<String>()? {
                    if k != "hex" {
                        return Err(de::Error::unknown_field(&k, &["hex"]));
                    }
                    let v: String = map.next_value()?;
                    out = Some(unhex(&v).ok_or_else(|| de::Error::custom(format!("bad hex string {v:?}")))?);
                }
                out.map(Data).ok_or_else(|| de::Error::missing_field("hex"))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_text_and_binary() {
        for bytes in [b"hello".to_vec(), vec![0xff, 0x00, 0x10], vec![]] {
            let d = Data(bytes);
            let j = serde_json::to_string(&d).unwrap();
            let back: Data = serde_json::from_str(&j).unwrap();
            assert_eq!(back, d, "{j}");
        }
        assert_eq!(serde_json::to_string(&Data::from("x")).unwrap(), "\"x\"");
        assert!(serde_json::from_str::<Data>("{\"hex\":\"zz\"}").is_err());
    }
}
