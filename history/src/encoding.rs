//! How a history is stored. Three encodings, all lossless, all read by
//! [`History::decode`], which tells them apart by their first bytes:
//!
//! - **json**: one pretty JSON document (`replay --history h.json`), to read
//!   and diff by eye.
//! - **jsonl**: JSON lines. A header line `{"zkdst_history":1,"meta":{..}}`,
//!   then one compact event per line: greppable, streamable, a third smaller.
//! - **jsonl.gz**: those lines gzipped, what `fuzz --store` keeps: about 20×
//!   smaller than the document (semaphore seed 3: 8.7 MB → 0.37 MB), and
//!   `zcat h.jsonl.gz | jq` reads it without zkdst.
//!
//! Gzip rather than a binary format: every machine can open it, and JSON
//! lines compress nearly as well as a binary layout would.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;

use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};

use super::{Event, History};

/// The version of the lines layout, in the header line.
pub const LINES_VERSION: u32 = 1;
const HEADER_KEY: &str = "\"zkdst_history\"";
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// A history's encoding on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// One pretty JSON document.
    Json,
    /// A header line, then one event per line.
    JsonLines,
    /// JSON lines, gzipped.
    JsonLinesGz,
}

impl Encoding {
    /// By file name: `*.gz` gzipped lines, `*.jsonl` lines, anything else
    /// the pretty document.
    pub fn for_path(path: &Path) -> Encoding {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".gz") {
            Encoding::JsonLinesGz
        } else if name.ends_with(".jsonl") {
            Encoding::JsonLines
        } else {
            Encoding::Json
        }
    }
}

/// Why bytes are not a zkdst history.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("not a valid gzip stream: {0}")]
    Gzip(String),
    #[error("not UTF-8 text: invalid byte at offset {0}")]
    Utf8(usize),
    /// `line` and `column` are 1-based; in gzipped lines, lines of the
    /// unzipped text.
    #[error("line {line}, column {column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("line {line}: history lines version {found}; this build reads version {LINES_VERSION}")]
    Version { line: usize, found: u32 },
}

#[derive(Serialize)]
struct HeaderOut<'a> {
    zkdst_history: u32,
    meta: &'a BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderIn {
    zkdst_history: u32,
    #[serde(default)]
    meta: BTreeMap<String, String>,
}

impl History {
    /// Writes the history in `encoding` to `w`.
    pub fn write_to(&self, encoding: Encoding, w: impl Write) -> io::Result<()> {
        let mut w = io::BufWriter::new(w);
        match encoding {
            Encoding::Json => serde_json::to_writer_pretty(&mut w, self)?,
            Encoding::JsonLines => self.write_lines(&mut w)?,
            Encoding::JsonLinesGz => {
                let mut gz = GzEncoder::new(&mut w, Compression::default());
                self.write_lines(&mut gz)?;
                gz.finish()?;
            }
        }
        w.flush()
    }

    /// The history's bytes in `encoding`.
    pub fn encode(&self, encoding: Encoding) -> Vec<u8> {
        let mut out = Vec::new();
        // Only a failing writer fails serialization (keys are strings),
        // and a Vec does not fail.
        let _ = self.write_to(encoding, &mut out);
        out
    }

    /// Reads a history in any of the encodings.
    pub fn decode(bytes: &[u8]) -> Result<History, DecodeError> {
        if bytes.starts_with(&GZIP_MAGIC) {
            let mut text = Vec::new();
            GzDecoder::new(bytes)
                .read_to_end(&mut text)
                .map_err(|e| DecodeError::Gzip(e.to_string()))?;
            return decode_text(&text);
        }
        decode_text(bytes)
    }

    fn write_lines(&self, w: &mut impl Write) -> io::Result<()> {
        let header = HeaderOut {
            zkdst_history: LINES_VERSION,
            meta: &self.meta,
        };
        serde_json::to_writer(&mut *w, &header)?;
        w.write_all(b"\n")?;
        for e in &self.events {
            serde_json::to_writer(&mut *w, e)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    }
}

fn decode_text(bytes: &[u8]) -> Result<History, DecodeError> {
    let text = std::str::from_utf8(bytes).map_err(|e| DecodeError::Utf8(e.valid_up_to()))?;
    if is_lines(text) {
        return from_lines(text);
    }
    serde_json::from_str(text).map_err(|e| json_error(e, 0))
}

/// JSON lines start with the header object's key.
fn is_lines(text: &str) -> bool {
    text.trim_start()
        .strip_prefix('{')
        .is_some_and(|rest| rest.trim_start().starts_with(HEADER_KEY))
}

fn from_lines(text: &str) -> Result<History, DecodeError> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (i, first) = lines.next().unwrap_or((0, ""));
    let header: HeaderIn = serde_json::from_str(first).map_err(|e| json_error(e, i))?;
    if header.zkdst_history != LINES_VERSION {
        return Err(DecodeError::Version {
            line: i + 1,
            found: header.zkdst_history,
        });
    }
    let mut events = Vec::new();
    for (i, line) in lines {
        events.push(serde_json::from_str::<Event>(line).map_err(|e| json_error(e, i))?);
    }
    Ok(History {
        meta: header.meta,
        events,
    })
}

/// A serde error, its line offset by `line0` (the 0-based line its text
/// began on) and its message without serde's own "at line L column C".
fn json_error(e: serde_json::Error, line0: usize) -> DecodeError {
    let message = e.to_string();
    let message = match message.rsplit_once(" at line ") {
        Some((m, _)) => m.to_string(),
        None => message,
    };
    DecodeError::Json {
        line: line0 + e.line().max(1),
        column: e.column(),
        message,
    }
}

#[cfg(test)]
#[path = "encoding_tests.rs"]
mod tests;
