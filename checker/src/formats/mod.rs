//! Third-party history formats, each read into a [`History`] so that every
//! check goes through the same path.

mod builder;
pub mod edn;
mod jepsen_edn;
mod jepsen_edn_writer;
mod jepsen_etcd;
mod porcupine_kv;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

pub use jepsen_edn::parse_jepsen_edn;
pub use jepsen_edn_writer::{write_jepsen_edn, EdnLayout, Unwritable};
pub use jepsen_etcd::parse_jepsen_etcd;
pub use porcupine_kv::parse_porcupine_kv;

use crate::history::{DecodeError, History};

/// A history file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Jepsen etcd logs (`INFO  jepsen.util - 2 :invoke :cas [3 0]`).
    JepsenEtcd,
    /// Porcupine's kv files: one Clojure map per line.
    PorcupineKv,
    /// Jepsen EDN histories: op maps, one per line, spread over lines, or in
    /// one vector or list.
    Edn,
    /// zkdst's own JSON history.
    Zkdst,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::JepsenEtcd, Format::PorcupineKv, Format::Edn, Format::Zkdst];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::JepsenEtcd => "jepsen-etcd",
            Format::PorcupineKv => "porcupine-kv",
            Format::Edn => "edn",
            Format::Zkdst => "zkdst",
        }
    }

    /// Reads `text` (from `file`, named in errors) in this format.
    pub fn parse(self, text: &str, file: &str) -> Result<History, FormatError> {
        match self {
            Format::JepsenEtcd => parse_jepsen_etcd(text, file),
            Format::PorcupineKv => parse_porcupine_kv(text, file),
            Format::Edn => parse_jepsen_edn(text, file),
            Format::Zkdst => decode_zkdst(text.as_bytes(), file),
        }
    }

    /// Reads a file in this format. A zkdst history may be any of its
    /// encodings (JSON, JSON lines, gzipped JSON lines).
    pub fn read(self, path: &Path) -> Result<History, FormatError> {
        let file = path.display().to_string();
        let io = |e: std::io::Error| FormatError::Io {
            file: file.clone(),
            message: e.to_string(),
        };
        if self == Format::Zkdst {
            return decode_zkdst(&std::fs::read(path).map_err(io)?, &file);
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        self.parse(&text, &file)
    }
}

fn decode_zkdst(bytes: &[u8], file: &str) -> Result<History, FormatError> {
    History::decode(bytes).map_err(|e| {
        let (line, column, found) = match e {
            DecodeError::Json { line, column, message } => (line, Some(column), message),
            DecodeError::Version { line, .. } => (line, None, e.to_string()),
            DecodeError::Gzip(_) | DecodeError::Utf8(_) => (1, None, e.to_string()),
        };
        FormatError::Malformed {
            file: file.to_string(),
            line,
            column,
            expected: "a zkdst history (JSON, JSON lines, or gzipped JSON lines)".to_string(),
            found: edn::truncate(&found, builder::MAX_FOUND),
        }
    })
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {0:?}; expected one of jepsen-etcd, porcupine-kv, edn, zkdst")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// Why a history file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("{file}: {message}")]
    Io { file: String, message: String },
    #[error("{file}:{line}{}: expected {expected}, found {found}", .column.map(|c| format!(":{c}")).unwrap_or_default())]
    Malformed {
        file: String,
        line: usize,
        /// 1-based, in characters, where the format knows it.
        column: Option<usize>,
        expected: String,
        found: String,
    },
}

impl FormatError {
    /// The 1-based line of a malformed file.
    pub fn line(&self) -> Option<usize> {
        match self {
            FormatError::Malformed { line, .. } => Some(*line),
            FormatError::Io { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in Format::ALL {
            assert_eq!(f.as_str().parse::<Format>(), Ok(f));
        }
        assert!("json".parse::<Format>().is_err());
    }

    #[test]
    fn missing_file_is_an_error_naming_it() {
        let e = Format::Edn.read(Path::new("/nonexistent/h.edn")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/h.edn"), "{e}");
    }
}
