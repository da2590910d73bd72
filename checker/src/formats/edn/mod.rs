//! An EDN reader over a stream of forms: nil, booleans, integers (`7`,
//! `7N`), floats (`1.5`, `1e3`, `1.5M`, `##Inf`), ratios (`1/2`),
//! characters (`\a`, `\newline`, `\u0041`), strings, keywords, symbols,
//! vectors, lists, maps, sets, tagged literals (`#inst "..."`, `#uuid
//! "..."`, records such as `#jepsen.history.Op{...}`), `#_` discards, `,` as
//! whitespace and `;` comments. One pass, left to right, over the text.
//!
//! Never panics: garbage gives an [`EdnError`] naming the line and column
//! and quoting at most [`MAX_QUOTE`] characters of the text there.

mod value;

pub use value::Edn;

/// Where a form starts: 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

/// A syntax error at a 1-based line and column of the text read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: expected {expected}, found {found}")]
pub struct EdnError {
    pub line: usize,
    pub column: usize,
    pub expected: String,
    /// A quote of at most [`MAX_QUOTE`] characters, or `end of input`.
    pub found: String,
}

/// The longest quote of input an error carries.
pub const MAX_QUOTE: usize = 60;

/// `s` in quotes, escaped, cut to at most `max` characters with `…`.
pub fn quote(s: &str, max: usize) -> String {
    let mut out = String::from("\"");
    let mut n = 1;
    for c in s.chars() {
        let esc: String = c.escape_debug().collect();
        let len = esc.chars().count();
        if n + len + 2 > max {
            out.push_str("…\"");
            return out;
        }
        out.push_str(&esc);
        n += len;
    }
    out.push('"');
    out
}

/// `s` cut to at most `max` characters, ending in `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Nesting deeper than this is refused (no stack overflow on `[[[[...`).
const MAX_DEPTH: usize = 64;

/// Reads forms one at a time from a text.
pub struct Reader<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
    column: usize,
}

fn is_delimiter(c: char) -> bool {
    c.is_whitespace() || matches!(c, ',' | '[' | ']' | '(' | ')' | '{' | '}' | '"' | ';')
}

impl<'a> Reader<'a> {
    pub fn new(text: &'a str) -> Self {
        Reader::starting_at(text, 1)
    }

    /// A reader numbering the text's lines from `line`.
    pub fn starting_at(text: &'a str, line: usize) -> Self {
        Reader {
            text,
            pos: 0,
            line,
            column: 1,
        }
    }

    /// Where the reader is.
    pub fn position(&self) -> Pos {
        Pos {
            line: self.line,
            column: self.column,
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.text[self.pos..].chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    /// An error at the reader's position, quoting the text there (to the
    /// end of its line). At the end of input, the position is just after
    /// the last character that is not whitespace.
    pub fn error(&self, expected: impl Into<String>) -> EdnError {
        if self.pos >= self.text.len() {
            let at = self.end_of_text();
            return EdnError {
                line: at.line,
                column: at.column,
                expected: expected.into(),
                found: "end of input".into(),
            };
        }
        self.error_at(self.position(), self.pos, expected)
    }

    fn error_at(&self, at: Pos, byte: usize, expected: impl Into<String>) -> EdnError {
        let rest = &self.text[byte.min(self.text.len())..];
        let rest = rest.split('\n').next().unwrap_or("");
        EdnError {
            line: at.line,
            column: at.column,
            expected: expected.into(),
            found: if rest.is_empty() {
                "end of line".into()
            } else {
                quote(rest, MAX_QUOTE)
            },
        }
    }

    /// The position after the last non-whitespace character (the reader
    /// is at the end of the text).
    fn end_of_text(&self) -> Pos {
        let body = self.text.trim_end();
        let trailing_newlines = self.text[body.len()..].matches('\n').count();
        let last_line = &body[body.rfind('\n').map_or(0, |i| i + 1)..];
        Pos {
            line: self.line.saturating_sub(trailing_newlines).max(1),
            column: last_line.chars().count() + 1,
        }
    }

    /// Skips whitespace, commas, `;` comments and `#_` discarded forms.
    pub fn skip_space(&mut self) -> Result<(), EdnError> {
        self.skip_space_at(0)
    }

    fn skip_space_at(&mut self, depth: usize) -> Result<(), EdnError> {
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == ',' {
                self.bump();
            } else if c == ';' {
                while let Some(c) = self.bump() {
                    if c == '\n' {
                        break;
                    }
                }
            } else if c == '#' && self.peek_second() == Some('_') {
                self.bump();
                self.bump();
                self.value(depth + 1)?;
            } else {
                break;
            }
        }
        Ok(())
    }

    /// True when only whitespace and comments are left.
    pub fn at_end(&mut self) -> Result<bool, EdnError> {
        self.skip_space()?;
        Ok(self.peek().is_none())
    }

    /// The next top-level form and where it starts; `None` at the end.
    pub fn next_form(&mut self) -> Result<Option<(Pos, Edn)>, EdnError> {
        if self.at_end()? {
            return Ok(None);
        }
        let at = self.position();
        Ok(Some((at, self.value(0)?)))
    }

    /// If the next form opens a vector or a list, steps inside it and
    /// returns its closing delimiter, for [`Reader::next_in`].
    pub fn enter_collection(&mut self) -> Result<Option<char>, EdnError> {
        self.skip_space()?;
        let close = match self.peek() {
            Some('[') => ']',
            Some('(') => ')',
            _ => return Ok(None),
        };
        self.bump();
        Ok(Some(close))
    }

    /// The next element of a collection entered with
    /// [`Reader::enter_collection`]; `None` once `close` is consumed.
    pub fn next_in(&mut self, close: char) -> Result<Option<(Pos, Edn)>, EdnError> {
        self.skip_space_at(1)?;
        match self.peek() {
            None => Err(self.error(format!("'{close}' to close the collection the text opens"))),
            Some(c) if c == close => {
                self.bump();
                Ok(None)
            }
            Some(_) => {
                let at = self.position();
                Ok(Some((at, self.value(1)?)))
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
        if depth > MAX_DEPTH {
            return Err(self.error("less deeply nested data"));
        }
        self.skip_space_at(depth)?;
        let (at, start) = (self.position(), self.pos);
        let Some(c) = self.peek() else {
            return Err(self.error("a value"));
        };
        match c {
            '[' => {
                self.bump();
                self.seq(']', at, depth).map(Edn::Vector)
            }
            '(' => {
                self.bump();
                self.seq(')', at, depth).map(Edn::List)
            }
            '{' => {
                self.bump();
                let items = self.seq('}', at, depth)?;
                if items.len() % 2 != 0 {
                    return Err(self.error_at(at, start, format!("a map of key-value pairs ({} forms)", items.len())));
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
                self.dispatch(at, start, depth)
            }
            '"' => {
                self.bump();
                self.string(at, start)
            }
            '\\' => {
                self.bump();
                self.character(at, start)
            }
            ':' => {
                self.bump();
                let t = self.token();
                if t.is_empty() {
                    return Err(self.error_at(at, start, "a keyword name after ':'"));
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
                        number(t).ok_or_else(|| self.error_at(at, start, "a number (64-bit integer, float or ratio)"))
                    }
                    _ => Ok(Edn::Symbol(t.to_string())),
                }
            }
        }
    }

    /// After `#`: a set, a symbolic float, or a tagged value.
    fn dispatch(&mut self, at: Pos, start: usize, depth: usize) -> Result<Edn, EdnError> {
        match self.peek() {
            Some('{') => {
                self.bump();
                self.seq('}', at, depth).map(Edn::Set)
            }
            Some('#') => {
                self.bump();
                match self.token() {
                    t @ ("Inf" | "-Inf" | "NaN") => Ok(Edn::Float(format!("##{t}"))),
                    _ => Err(self.error_at(at, start, "##Inf, ##-Inf or ##NaN")),
                }
            }
            Some(c) if c.is_alphabetic() => {
                let tag = self.token();
                let v = self.value(depth + 1)?;
                Ok(Edn::Tagged(tag.to_string(), Box::new(v)))
            }
            _ => Err(self.error_at(at, start, "a set #{..}, a discard #_ or a tagged value #tag ..")),
        }
    }

    fn seq(&mut self, close: char, open_at: Pos, depth: usize) -> Result<Vec<Edn>, EdnError> {
        let mut items = Vec::new();
        loop {
            self.skip_space_at(depth + 1)?;
            match self.peek() {
                None => {
                    return Err(self.error(format!(
                        "'{close}' closing the one opened at line {}, column {}",
                        open_at.line, open_at.column
                    )))
                }
                Some(c) if c == close => {
                    self.bump();
                    return Ok(items);
                }
                Some(c @ (']' | ')' | '}')) => {
                    return Err(self.error(format!(
                        "'{close}' closing the one opened at line {}, column {}, not '{c}'",
                        open_at.line, open_at.column
                    )))
                }
                Some(_) => items.push(self.value(depth + 1)?),
            }
        }
    }

    fn string(&mut self, at: Pos, start: usize) -> Result<Edn, EdnError> {
        let mut s = String::new();
        loop {
            match self.bump() {
                None => return Err(self.error_at(at, start, "a closing '\"' for this string")),
                Some('"') => return Ok(Edn::Str(s)),
                Some('\\') => {
                    let (p, esc) = (self.position(), self.pos);
                    let c = match self.bump() {
                        Some('n') => '\n',
                        Some('t') => '\t',
                        Some('r') => '\r',
                        Some('b') => '\u{8}',
                        Some('f') => '\u{c}',
                        Some('"') => '"',
                        Some('\\') => '\\',
                        Some('u') => self.unicode().ok_or_else(|| self.error("four hex digits after \\u"))?,
                        _ => {
                            return Err(self.error_at(p, esc, "an escape (\\n \\t \\r \\b \\f \\\" \\\\ \\uXXXX)"));
                        }
                    };
                    s.push(c);
                }
                Some(c) => s.push(c),
            }
        }
    }

    /// The four hex digits of a `\uXXXX`, as a character.
    fn unicode(&mut self) -> Option<char> {
        let hex = self.text.get(self.pos..self.pos + 4)?;
        let code = u32::from_str_radix(hex, 16).ok()?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        for _ in 0..4 {
            self.bump();
        }
        char::from_u32(code)
    }

    /// After `\`: `\a`, `\newline`, `\space`, `\tab`, `\return`,
    /// `\backspace`, `\formfeed`, `\uXXXX`.
    fn character(&mut self, at: Pos, start: usize) -> Result<Edn, EdnError> {
        let Some(first) = self.bump() else {
            return Err(self.error("a character after '\\'"));
        };
        let rest = if first.is_alphanumeric() { self.token() } else { "" };
        if rest.is_empty() {
            return Ok(Edn::Char(first));
        }
        let c = match (first, rest) {
            ('n', "ewline") => Some('\n'),
            ('s', "pace") => Some(' '),
            ('t', "ab") => Some('\t'),
            ('r', "eturn") => Some('\r'),
            ('b', "ackspace") => Some('\u{8}'),
            ('f', "ormfeed") => Some('\u{c}'),
            ('u', hex) if hex.len() == 4 && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
                u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
            }
            _ => None,
        };
        c.map(Edn::Char)
            .ok_or_else(|| self.error_at(at, start, "a character (\\a, \\newline, \\space, \\tab, \\uXXXX ...)"))
    }
}

/// A numeric token: integer, float or ratio.
fn number(t: &str) -> Option<Edn> {
    if let Some((n, d)) = t.split_once('/') {
        let (n, d) = (n.parse::<i64>().ok()?, d.parse::<i64>().ok()?);
        return (d > 0).then_some(Edn::Ratio(n, d));
    }
    if let Some(digits) = t.strip_suffix('N') {
        return digits.parse::<i64>().ok().map(Edn::Int);
    }
    let decimal = t.strip_suffix('M');
    let body = decimal.unwrap_or(t);
    if decimal.is_some() || body.contains(['.', 'e', 'E']) {
        let ok = body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
            && body.parse::<f64>().is_ok();
        return ok.then(|| Edn::Float(t.to_string()));
    }
    t.parse::<i64>().ok().map(Edn::Int)
}

/// Reads every top-level form, each with the line it starts on.
pub fn read_all(text: &str) -> Result<Vec<(usize, Edn)>, EdnError> {
    let mut r = Reader::new(text);
    let mut out = Vec::new();
    while let Some((at, v)) = r.next_form()? {
        out.push((at.line, v));
    }
    Ok(out)
}

/// Reads exactly one form from `text`, whose first line is `line`.
pub fn read_one(text: &str, line: usize) -> Result<Edn, EdnError> {
    let mut r = Reader::starting_at(text, line);
    let Some((_, v)) = r.next_form()? else {
        return Err(r.error("a value"));
    };
    if !r.at_end()? {
        return Err(r.error("end of line after one value"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests;
