//! EDN values, and how they print (in syntax the reader reads back).

use std::fmt;

/// An EDN value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edn {
    Nil,
    Bool(bool),
    Int(i64),
    /// A float's literal text, as written (`1.5`, `-2e3`, `0.1M`, `##NaN`).
    Float(String),
    /// `numerator/denominator`, as written (the denominator is not zero).
    Ratio(i64, i64),
    Char(char),
    Str(String),
    /// Without the leading colon.
    Keyword(String),
    Symbol(String),
    Vector(Vec<Edn>),
    List(Vec<Edn>),
    Map(Vec<(Edn, Edn)>),
    Set(Vec<Edn>),
    /// `#tag value`: the tag without `#` (`inst`, `jepsen.history.Op`).
    Tagged(String, Box<Edn>),
}

impl Edn {
    /// The value itself, under any tags (`#jepsen.history.Op{..}` is a map).
    pub fn untagged(&self) -> &Edn {
        let mut v = self;
        while let Edn::Tagged(_, inner) = v {
            v = inner;
        }
        v
    }

    /// True for a map, tagged or not.
    pub fn is_map(&self) -> bool {
        matches!(self.untagged(), Edn::Map(_))
    }

    /// The value under keyword `key` in a map (or a tagged record).
    pub fn get(&self, key: &str) -> Option<&Edn> {
        match self.untagged() {
            Edn::Map(entries) => entries
                .iter()
                .find(|(k, _)| matches!(k, Edn::Keyword(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }
}

impl fmt::Display for Edn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn seq(f: &mut fmt::Formatter<'_>, open: &str, items: &[Edn], close: &str) -> fmt::Result {
            f.write_str(open)?;
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(" ")?;
                }
                write!(f, "{x}")?;
            }
            f.write_str(close)
        }
        match self {
            Edn::Nil => f.write_str("nil"),
            Edn::Bool(b) => write!(f, "{b}"),
            Edn::Int(i) => write!(f, "{i}"),
            Edn::Float(t) => f.write_str(t),
            Edn::Ratio(n, d) => write!(f, "{n}/{d}"),
            Edn::Char(c) => match c {
                '\n' => f.write_str("\\newline"),
                ' ' => f.write_str("\\space"),
                '\t' => f.write_str("\\tab"),
                '\r' => f.write_str("\\return"),
                c if (*c as u32) <= 0xFFFF && !(c.is_alphanumeric() || c.is_ascii_punctuation()) => {
                    write!(f, "\\u{:04x}", *c as u32)
                }
                c => write!(f, "\\{c}"),
            },
            Edn::Str(s) => write_string(f, s),
            Edn::Keyword(k) => write!(f, ":{k}"),
            Edn::Symbol(s) => f.write_str(s),
            Edn::Vector(v) => seq(f, "[", v, "]"),
            Edn::List(v) => seq(f, "(", v, ")"),
            Edn::Set(v) => seq(f, "#{", v, "}"),
            Edn::Map(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k} {v}")?;
                }
                f.write_str("}")
            }
            Edn::Tagged(tag, v) => write!(f, "#{tag} {v}"),
        }
    }
}

/// A string in EDN syntax (only the escapes EDN defines).
fn write_string(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            c if c.is_control() => write!(f, "\\u{:04x}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}
