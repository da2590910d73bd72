//! A small EDN reader: nil, booleans, integers, strings, keywords, symbols,
//! vectors, lists, maps and sets, with `,` as whitespace and `;` comments.
//! Never panics: garbage gives an error naming the line and what was
//! expected.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edn {
    Nil,
    Bool(bool),
    Int(i64),
    Str(String),
    /// Without the leading colon.
    Keyword(String),
    Symbol(String),
    Vector(Vec<Edn>),
    List(Vec<Edn>),
    Map(Vec<(Edn, Edn)>),
    Set(Vec<Edn>),
}

impl Edn {
    /// The value under keyword `key` in a map.
    pub fn get(&self, key: &str) -> Option<&Edn> {
        match self {
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
            Edn::Str(s) => write!(f, "{s:?}"),
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
        }
    }
}

/// A syntax error, at a 1-based line of the text read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: expected {expected}, found {found}")]
pub struct EdnError {
    pub line: usize,
    pub expected: &'static str,
    pub found: String,
}

/// Nesting deeper than this is refused (no stack overflow on `[[[[...`).
const MAX_DEPTH: usize = 64;

struct Reader<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | '[' | ']' | '(' | ')' | '{' | '}' | '"' | ';')
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn error(&self, expected: &'static str) -> EdnError {
        let found = match self.peek() {
            None => "end of input".to_string(),
            Some(_) => {
                let rest: String = self.text[self.pos..].chars().take(20).collect();
                format!("{rest:?}")
            }
        };
        EdnError {
            line: self.line,
            expected,
            found,
        }
    }

    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == ',' {
                self.bump();
            } else if c == ';' {
                while let Some(c) = self.bump() {
                    if c == '\n' {
                        break;
                    }
                }
            } else {
                break;
            }
        }
    }

    fn token(&mut self) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if is_delimiter(c) {
                break;
            }
            self.bump();
        }
        &self.text[start..self.pos]
    }

    fn value(&mut self, depth: usize) -> Result<Edn, EdnError> {
        self.skip_space();
        if depth > MAX_DEPTH {
            return Err(self.error("less deeply nested data"));
        }
        let Some(c) = self.peek() else {
            return Err(self.error("a value"));
        };
        match c {
            '[' => {
                self.bump();
                self.seq(']', depth).map(Edn::Vector)
            }
            '(' => {
                self.bump();
                self.seq(')', depth).map(Edn::List)
            }
            '{' => {
                self.bump();
                let items = self.seq('}', depth)?;
                if items.len() % 2 != 0 {
                    return Err(EdnError {
                        line: self.line,
                        expected: "a map with an even number of forms",
                        found: format!("{} forms", items.len()),
                    });
                }
                let mut it = items.into_iter();
                let mut entries = Vec::new();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    entries.push((k, v));
                }
                Ok(Edn::Map(entries))
            }
            '#' => {
                self.bump();
                if self.peek() != Some('{') {
                    return Err(self.error("a set #{...}"));
                }
                self.bump();
                self.seq('}', depth).map(Edn::Set)
            }
            '"' => {
                self.bump();
                self.string()
            }
            ':' => {
                self.bump();
                let t = self.token();
                if t.is_empty() {
                    return Err(self.error("a keyword name after ':'"));
                }
                Ok(Edn::Keyword(t.to_string()))
            }
            ']' | ')' | '}' => Err(self.error("a value")),
            _ => {
                let t = self.token();
                match t {
                    "" => Err(self.error("a value")),
                    "nil" => Ok(Edn::Nil),
                    "true" => Ok(Edn::Bool(true)),
                    "false" => Ok(Edn::Bool(false)),
                    _ if t.starts_with(|c: char| c.is_ascii_digit())
                        || (t.len() > 1
                            && t.starts_with(['-', '+'])
                            && t[1..].starts_with(|c: char| c.is_ascii_digit())) =>
                    {
                        let digits = t.strip_suffix('N').unwrap_or(t);
                        digits.parse::<i64>().map(Edn::Int).map_err(|_| EdnError {
                            line: self.line,
                            expected: "a 64-bit integer",
                            found: format!("{t:?}"),
                        })
                    }
                    _ => Ok(Edn::Symbol(t.to_string())),
                }
            }
        }
    }

    fn seq(&mut self, close: char, depth: usize) -> Result<Vec<Edn>, EdnError> {
        let mut items = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                None => {
                    return Err(self.error(match close {
                        ']' => "']'",
                        ')' => "')'",
                        _ => "'}'",
                    }))
                }
                Some(c) if c == close => {
                    self.bump();
                    return Ok(items);
                }
                Some(_) => items.push(self.value(depth + 1)?),
            }
        }
    }

    fn string(&mut self) -> Result<Edn, EdnError> {
        let mut s = String::new();
        loop {
            match self.bump() {
                None => return Err(self.error("a closing '\"'")),
                Some('"') => return Ok(Edn::Str(s)),
                Some('\\') => match self.bump() {
                    Some('n') => s.push('\n'),
                    Some('t') => s.push('\t'),
                    Some('r') => s.push('\r'),
                    Some('"') => s.push('"'),
                    Some('\\') => s.push('\\'),
                    _ => return Err(self.error("an escape (\\n \\t \\r \\\" \\\\)")),
                },
                Some(c) => s.push(c),
            }
        }
    }
}

/// Reads every top-level form, each with the line it starts on.
pub fn read_all(text: &str) -> Result<Vec<(usize, Edn)>, EdnError> {
    read_all_from(text, 1)
}

/// As [`read_all`], numbering lines from `first_line`.
pub fn read_all_from(text: &str, first_line: usize) -> Result<Vec<(usize, Edn)>, EdnError> {
    let mut r = Reader {
        text,
        pos: 0,
        line: first_line,
    };
    let mut out = Vec::new();
    loop {
        r.skip_space();
        if r.peek().is_none() {
            return Ok(out);
        }
        let line = r.line;
        let v = r.value(0).map_err(|e| clamp(e, text, first_line))?;
        out.push((line, v));
    }
}

/// An error at the end of input is reported on the last line that has text.
fn clamp(mut e: EdnError, text: &str, first_line: usize) -> EdnError {
    e.line = e.line.min(first_line + text.lines().count().max(1) - 1);
    e
}

/// Reads exactly one form.
pub fn read_one(text: &str, line: usize) -> Result<Edn, EdnError> {
    let mut r = Reader { text, pos: 0, line };
    let v = r.value(0).map_err(|e| clamp(e, text, line))?;
    r.skip_space();
    if r.peek().is_some() {
        return Err(clamp(r.error("end of line after one value"), text, line));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_a_jepsen_op() {
        let v = read_one(
            r#"{:type :invoke, :f :cas, :value [1 -2], :process 3, :time 123, :s "a\"b", :n nil, :ok true}"#,
            1,
        )
        .unwrap();
        assert_eq!(v.get("type"), Some(&Edn::Keyword("invoke".into())));
        assert_eq!(v.get("value"), Some(&Edn::Vector(vec![Edn::Int(1), Edn::Int(-2)])));
        assert_eq!(v.get("process"), Some(&Edn::Int(3)));
        assert_eq!(v.get("s"), Some(&Edn::Str("a\"b".into())));
        assert_eq!(v.get("n"), Some(&Edn::Nil));
        assert_eq!(v.get("ok"), Some(&Edn::Bool(true)));
        assert_eq!(v.get("missing"), None);
    }

    #[test]
    fn reports_line_of_errors() {
        let e = read_all("[1 2]\n{:a 1}\n{:a}\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = read_all("[1 2\n\n").unwrap_err();
        assert_eq!(e.expected, "']'");
        assert!(read_one("99999999999999999999", 1).is_err());
        assert!(read_one("1 2", 1).is_err());
        assert!(read_one(&"[".repeat(10_000), 1).is_err());
    }

    #[test]
    fn forms_know_their_lines() {
        let all = read_all("; comment\n:a\n\n[1,\n2] #{:x}").unwrap();
        assert_eq!(all.iter().map(|f| f.0).collect::<Vec<_>>(), vec![2, 4, 5]);
        assert_eq!(all[2].1, Edn::Set(vec![Edn::Keyword("x".into())]));
    }

    proptest! {
        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let text = String::from_utf8_lossy(&bytes);
            if let Err(e) = read_all(&text) {
                prop_assert!(e.line >= 1);
            }
        }

        #[test]
        fn printed_values_read_back(v in edn_value()) {
            prop_assert_eq!(read_one(&v.to_string(), 1).unwrap(), v);
        }
    }

    fn edn_value() -> impl Strategy<Value = Edn> {
        let leaf = prop_oneof![
            Just(Edn::Nil),
            any::<bool>().prop_map(Edn::Bool),
            any::<i64>().prop_map(Edn::Int),
            "[a-z \"\\\\]{0,8}".prop_map(Edn::Str),
            "[a-z][a-z0-9-]{0,6}".prop_map(Edn::Keyword),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Edn::Vector),
                proptest::collection::vec((inner.clone(), inner), 0..3).prop_map(Edn::Map),
            ]
        })
    }
}
