//! What the real clients delivered to a served ensemble, each with the
//! simulated instant the bridge took it in: the only input of a served run
//! that the seed does not decide. Fed back in at the same instants, it
//! re-runs the server side bit for bit (`zkdst replay --frames`).
//!
//! Stored as JSON lines, one arrival per line:
//! `{"at_ns":12000000,"client":0,"server":2,"conn":3,"kind":"data","hex":"0000002c..."}`
//! with `kind` one of `open` (a client connected to that server's port),
//! `data` (bytes it sent, hex), `eof` (it closed or reset its end) and
//! `end` (the run stopped: the last line).

use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// What arrived on one real connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Open,
    Data(Vec<u8>),
    Eof,
    /// The run ended here (the last line; client, server and conn are 0).
    End,
}

/// One arrival, as the bridge took it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival {
    /// Simulated time since the bridge started, ns.
    pub at_ns: u64,
    /// The application client whose ports it came in on.
    pub client: u32,
    /// The server whose port it came in on.
    pub server: u32,
    /// The real connection, numbered from 1 in accept order.
    pub conn: u64,
    pub input: Input,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    at_ns: u64,
    client: u32,
    server: u32,
    conn: u64,
    kind: Kind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hex: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Open,
    Data,
    Eof,
    End,
}

fn to_hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn from_hex(s: &str) -> Result<Vec<u8>, String> {
    if s.len() & 1 == 1 {
        return Err(format!("odd number of hex digits ({})", s.len()));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&s[i..i + 2], 16)
                .map_err(|_| format!("not hex at character {}: {:?}", i + 1, &s[i..i + 2]))
        })
        .collect()
}

impl Arrival {
    fn to_line(&self) -> Line {
        let (kind, hex) = match &self.input {
            Input::Open => (Kind::Open, None),
            Input::Data(b) => (Kind::Data, Some(to_hex(b))),
            Input::Eof => (Kind::Eof, None),
            Input::End => (Kind::End, None),
        };
        Line {
            at_ns: self.at_ns,
            client: self.client,
            server: self.server,
            conn: self.conn,
            kind,
            hex,
        }
    }

    fn from_line(l: Line) -> Result<Arrival, String> {
        let input = match (l.kind, l.hex) {
            (Kind::Open, None) => Input::Open,
            (Kind::Eof, None) => Input::Eof,
            (Kind::End, None) => Input::End,
            (Kind::Data, Some(h)) => Input::Data(from_hex(&h).map_err(|e| format!("field hex: {e}"))?),
            (Kind::Data, None) => return Err("field hex: missing (kind \"data\" carries its bytes)".into()),
            (_, Some(_)) => return Err("field hex: only kind \"data\" carries bytes".into()),
        };
        Ok(Arrival {
            at_ns: l.at_ns,
            client: l.client,
            server: l.server,
            conn: l.conn,
            input,
        })
    }
}

/// Writes `arrivals` as JSON lines.
pub fn write(path: &Path, arrivals: &[Arrival]) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for a in arrivals {
        serde_json::to_writer(&mut out, &a.to_line())?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// Reads an arrival log; an error names the file, line and what is wrong.
pub fn read(path: &Path) -> Result<Vec<Arrival>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(std::io::BufReader::new(f)).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses an arrival log: times must not go back.
pub fn parse(r: impl BufRead) -> Result<Vec<Arrival>, String> {
    let mut out: Vec<Arrival> = Vec::new();
    for (i, line) in r.lines().enumerate() {
        let n = i + 1;
        let line = line.map_err(|e| format!("line {n}: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        let l: Line = serde_json::from_str(&line).map_err(|e| format!("line {n}: {e}"))?;
        let a = Arrival::from_line(l).map_err(|e| format!("line {n}: {e}"))?;
        if let Some(prev) = out.last() {
            if a.at_ns < prev.at_ns {
                return Err(format!(
                    "line {n}: field at_ns: {} is before the previous line's {}",
                    a.at_ns, prev.at_ns
                ));
            }
        }
        out.push(a);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_reads_back_as_written() {
        let log = vec![
            Arrival {
                at_ns: 1_000_000,
                client: 0,
                server: 1,
                conn: 1,
                input: Input::Open,
            },
            Arrival {
                at_ns: 2_000_000,
                client: 0,
                server: 1,
                conn: 1,
                input: Input::Data(vec![0, 0, 0, 2, 0xab, 0xff]),
            },
            Arrival {
                at_ns: 2_000_000,
                client: 1,
                server: 3,
                conn: 2,
                input: Input::Eof,
            },
        ];
        let dir = std::env::temp_dir().join(format!("zkdst-frames-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("frames.jsonl");
        write(&p, &log).unwrap();
        assert_eq!(read(&p).unwrap(), log);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_bad_line_is_named() {
        let text = "{\"at_ns\":5,\"client\":0,\"server\":1,\"conn\":1,\"kind\":\"open\"}\n\
                    {\"at_ns\":6,\"client\":0,\"server\":1,\"conn\":1,\"kind\":\"data\",\"hex\":\"0g\"}\n";
        let e = parse(text.as_bytes()).unwrap_err();
        assert!(e.starts_with("line 2: field hex: not hex"), "{e}");
        let back = "{\"at_ns\":5,\"client\":0,\"server\":1,\"conn\":1,\"kind\":\"open\"}\n\
                    {\"at_ns\":4,\"client\":0,\"server\":1,\"conn\":1,\"kind\":\"eof\"}\n";
        let e = parse(back.as_bytes()).unwrap_err();
        assert!(e.starts_with("line 2: field at_ns"), "{e}");
        let e = parse("{\"at_ns\":5,\"client\":0,\"server\":1,\"conn\":1,\"kind\":\"data\"}".as_bytes()).unwrap_err();
        assert!(e.contains("hex: missing"), "{e}");
    }
}
