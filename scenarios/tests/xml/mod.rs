//! A strict little XML 1.0 reader for the tests: elements, attributes,
//! text, the five predefined entities and character references, comments
//! and the prolog — enough to read a JUnit report back and to reject what
//! is not well formed (unbalanced tags, raw `<` or `&`, duplicate
//! attributes, characters XML cannot carry, text after the root).

#![allow(dead_code)]

#[derive(Debug, Clone, Default)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub text: String,
}

impl Element {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub fn all(&self, name: &str) -> Vec<&Element> {
        self.children.iter().filter(|c| c.name == name).collect()
    }
}

struct Reader<'a> {
    s: &'a str,
    i: usize,
}

pub fn parse(s: &str) -> Result<Element, String> {
    let mut r = Reader { s, i: 0 };
    r.skip_ws();
    if r.rest().starts_with("<?xml") {
        let end = r.rest().find("?>").ok_or("unterminated prolog")?;
        r.i += end + 2;
    }
    r.skip_misc()?;
    let root = r.element()?;
    r.skip_misc()?;
    if r.i != s.len() {
        return Err(format!("text after the root element at byte {}", r.i));
    }
    Ok(root)
}

impl<'a> Reader<'a> {
    fn rest(&self) -> &'a str {
        &self.s[self.i..]
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!(
            "{what} at byte {}: {:?}",
            self.i,
            &self.rest()[..self.rest().len().min(40)]
        ))
    }

    fn skip_ws(&mut self) {
        let t = self.rest().trim_start_matches([' ', '\t', '\n', '\r']);
        self.i = self.s.len() - t.len();
    }

    fn skip_misc(&mut self) -> Result<(), String> {
        loop {
            self.skip_ws();
            if self.rest().starts_with("<!--") {
                let end = self.rest().find("-->").ok_or("unterminated comment")?;
                self.i += end + 3;
            } else {
                return Ok(());
            }
        }
    }

    fn name(&mut self) -> Result<String, String> {
        let n: String = self
            .rest()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-' | '.'))
            .collect();
        if n.is_empty() || n.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.') {
            return self.err("expected a name");
        }
        self.i += n.len();
        Ok(n)
    }

    fn element(&mut self) -> Result<Element, String> {
        if !self.rest().starts_with('<') {
            return self.err("expected an element");
        }
        self.i += 1;
        let mut e = Element {
            name: self.name()?,
            ..Default::default()
        };
        loop {
            self.skip_ws();
            if self.rest().starts_with("/>") {
                self.i += 2;
                return Ok(e);
            }
            if self.rest().starts_with('>') {
                self.i += 1;
                break;
            }
            let k = self.name()?;
            self.skip_ws();
            if !self.rest().starts_with('=') {
                return self.err("expected =");
            }
            self.i += 1;
            self.skip_ws();
            let q = match self.rest().chars().next() {
                Some(q @ ('"' | '\'')) => q,
                _ => return self.err("expected a quoted value"),
            };
            self.i += 1;
            let end = self.rest().find(q).ok_or("unterminated attribute value")?;
            let raw = &self.rest()[..end];
            if raw.contains('<') {
                return self.err("raw < in an attribute value");
            }
            let v = decode(raw)?;
            self.i += end + 1;
            if e.attrs.iter().any(|(x, _)| *x == k) {
                return self.err("duplicate attribute");
            }
            e.attrs.push((k, v));
        }
        loop {
            let next = self.rest().find('<').ok_or("unterminated element")?;
            e.text.push_str(&decode(&self.rest()[..next])?);
            self.i += next;
            if self.rest().starts_with("</") {
                self.i += 2;
                let n = self.name()?;
                if n != e.name {
                    return self.err(&format!("</{n}> closes <{}>", e.name));
                }
                self.skip_ws();
                if !self.rest().starts_with('>') {
                    return self.err("expected >");
                }
                self.i += 1;
                return Ok(e);
            } else if self.rest().starts_with("<!--") {
                self.skip_misc()?;
            } else {
                e.children.push(self.element()?);
            }
        }
    }
}

fn decode(raw: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = raw;
    while let Some(a) = rest.find('&') {
        out.push_str(&rest[..a]);
        let end = rest[a..]
            .find(';')
            .ok_or_else(|| format!("unterminated entity in {raw:?}"))?
            + a;
        let ent = &rest[a + 1..end];
        let c = match ent {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let n = if let Some(h) = ent.strip_prefix("#x") {
                    u32::from_str_radix(h, 16).ok()
                } else if let Some(d) = ent.strip_prefix('#') {
                    d.parse().ok()
                } else {
                    None
                };
                n.and_then(char::from_u32)
                    .ok_or_else(|| format!("unknown entity &{ent}; in {raw:?}"))?
            }
        };
        out.push(c);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    if let Some(c) = out
        .chars()
        .find(|&c| ((c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{FFFE}' || c == '\u{FFFF}')
    {
        return Err(format!("character U+{:04X} is not allowed in XML 1.0", c as u32));
    }
    Ok(out)
}

#[test]
fn the_reader_rejects_what_is_not_well_formed() {
    assert!(parse("<a x=\"1\"><b/>t&amp;<c>&#60;</c></a>").is_ok());
    for bad in [
        "<a><b></a>",
        "<a>x & y</a>",
        "<a x=\"<\"/>",
        "<a x=\"1\" x=\"2\"/>",
        "<a/><b/>",
        "<a>\u{1}</a>",
        "<a>&bogus;</a>",
    ] {
        assert!(parse(bad).is_err(), "{bad:?} accepted");
    }
}
