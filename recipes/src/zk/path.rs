//! Znode path validation, as ZooKeeper's `PathUtils.validatePath` does it.
//!
//! The Java client rejects a bad path before sending anything (with an
//! `IllegalArgumentException`); this module is that check. Servers run the
//! same check and answer `BadArguments` to requests that bypass it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a path is not a valid znode path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, thiserror::Error)]
#[error("invalid path {path:?}: {reason}")]
pub struct PathError {
    pub path: String,
    pub reason: PathProblem,
}

/// The rule a path broke.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PathProblem {
    Empty,
    NotAbsolute,
    TrailingSlash,
    EmptyComponent { at: usize },
    RelativeComponent { at: usize },
    BadCharacter { at: usize, ch: char },
}

impl fmt::Display for PathProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathProblem::Empty => write!(f, "path length must be > 0"),
            PathProblem::NotAbsolute => write!(f, "path must start with / character"),
            PathProblem::TrailingSlash => write!(f, "path must not end with / character"),
            PathProblem::EmptyComponent { at } => write!(f, "empty node name specified @{at}"),
            PathProblem::RelativeComponent { at } => write!(f, "relative paths not allowed @{at}"),
            PathProblem::BadCharacter { at, ch } => {
                write!(f, "invalid character {:?} (U+{:04X}) @{at}", ch, *ch as u32)
            }
        }
    }
}

/// Validates a znode path. For a sequential create pass `sequential = true`:
/// ZooKeeper validates `path + "1"` then, so `/p/` is a legal sequential prefix.
pub fn validate_path(path: &str, sequential: bool) -> Result<(), PathError> {
    let err = |reason| {
        Err(PathError {
            path: path.to_string(),
            reason,
        })
    };
    if sequential {
        let with_suffix = format!("{path}1");
        return validate_path(&with_suffix, false).map_err(|e| PathError {
            path: path.to_string(),
            reason: e.reason,
        });
    }
    if path.is_empty() {
        return err(PathProblem::Empty);
    }
    if !path.starts_with('/') {
        return err(PathProblem::NotAbsolute);
    }
    if path.len() == 1 {
        return Ok(());
    }
    if path.ends_with('/') {
        return err(PathProblem::TrailingSlash);
    }
    // One pass over the bytes, no allocation (this runs on every request
    // a simulated client sends and server prepares). `/`, `.` and NUL are
    // ASCII and never part of a multi-byte character, so only those
    // characters are decoded; `at` counts characters, as Java's index does
    // for the BMP, and is counted only for an error.
    let bytes = path.as_bytes();
    // Most paths are printable ASCII with no `.` and no `//`: nothing to
    // find, in two quick passes.
    if bytes.iter().all(|b| (0x20..0x7f).contains(b) && *b != b'.') && !path.contains("//") {
        return Ok(());
    }
    let at = |i: usize| path[..i].chars().count();
    // The two bytes before the current one; a multi-byte character counts
    // as one, neither `/` nor `.`.
    let (mut last2, mut last) = (0u8, b'/');
    let mut i = 1;
    while i < bytes.len() {
        let b = bytes[i];
        if !b.is_ascii() {
            let c = path[i..].chars().next().unwrap_or('\u{fffd}');
            if is_forbidden(c) {
                return err(PathProblem::BadCharacter { at: at(i), ch: c });
            }
            (last2, last) = (last, 0x80);
            i += c.len_utf8();
            continue;
        }
        let component_ends = i + 1 == bytes.len() || bytes[i + 1] == b'/';
        if b == 0 {
            return err(PathProblem::BadCharacter { at: at(i), ch: '\0' });
        } else if b == b'/' && last == b'/' {
            return err(PathProblem::EmptyComponent { at: at(i) });
        } else if b == b'.' && last == b'.' {
            // `..` as a whole component
            if last2 == b'/' && component_ends {
                return err(PathProblem::RelativeComponent { at: at(i) });
            }
        } else if b == b'.' {
            // `.` as a whole component
            if last == b'/' && component_ends {
                return err(PathProblem::RelativeComponent { at: at(i) });
            }
        } else if is_forbidden(char::from(b)) {
            return err(PathProblem::BadCharacter {
                at: at(i),
                ch: char::from(b),
            });
        }
        (last2, last) = (last, b);
        i += 1;
    }
    Ok(())
}

fn is_forbidden(c: char) -> bool {
    let u = c as u32;
    (u > 0x00 && u <= 0x1f)
        || (0x7f..=0x9f).contains(&u)
        || (0xd800..=0xf8ff).contains(&u)
        || (0xfff0..=0xffff).contains(&u)
        // Outside the BMP: Java checks UTF-16 units, and such a character is
        // a surrogate pair (0xD800–0xDFFF), so ZooKeeper refuses it.
        || u > 0xffff
}

/// The parent of a valid non-root path (`/a/b` → `/a`, `/a` → `/`).
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The last component of a valid path (`/a/b` → `b`; `/` → ``).
pub fn basename(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// Joins a parent path and a child name.
pub fn join(parent: &str, child: &str) -> String {
    if parent == "/" {
        format!("/{child}")
    } else {
        format!("{parent}/{child}")
    }
}

/// The sequence number ZooKeeper appended to a sequential node created with
/// `prefix`: the rest of the name, `%010d` of the parent's counter, which is
/// negative after the counter wraps past 2^31 - 1 (`-000000005`,
/// `-2147483648`). Exact, because the prefix is known.
pub fn sequence_after_prefix(name: &str, prefix: &str) -> Option<i32> {
    let rest = name.strip_prefix(prefix)?;
    let digits = rest.strip_prefix('-').unwrap_or(rest);
    if rest.len() < 10 || digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    rest.parse::<i32>().ok()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The earlier, index-based form of `validate_path`'s loop (on a path
    /// that starts with `/`, is longer than one character and does not end
    /// with one): the oracle for the one-pass version.
    fn reference(path: &str) -> Result<(), PathProblem> {
        let chars: Vec<char> = path.chars().collect();
        let mut last = '/';
        for i in 1..chars.len() {
            let c = chars[i];
            if c == '\0' {
                return Err(PathProblem::BadCharacter { at: i, ch: c });
            } else if c == '/' && last == '/' {
                return Err(PathProblem::EmptyComponent { at: i });
            } else if c == '.' && last == '.' {
                if chars[i - 2] == '/' && (i + 1 == chars.len() || chars[i + 1] == '/') {
                    return Err(PathProblem::RelativeComponent { at: i });
                }
            } else if c == '.' {
                if chars[i - 1] == '/' && (i + 1 == chars.len() || chars[i + 1] == '/') {
                    return Err(PathProblem::RelativeComponent { at: i });
                }
            } else if is_forbidden(c) {
                return Err(PathProblem::BadCharacter { at: i, ch: c });
            }
            last = c;
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn one_pass_agrees_with_the_reference(
            parts in proptest::collection::vec(
                prop_oneof![Just("/"), Just("."), Just(".."), Just("a"), Just("\0"), Just("\u{1}"),
                            Just("\u{7f}"), Just("\u{e000}"), Just("\u{1F600}"), Just("é")],
                0..12,
            ),
            tail in prop_oneof![Just("a"), Just("."), Just(".."), Just("\0"), Just("\u{1}"), Just("\u{1F600}")],
        ) {
            let path = format!("/{}{tail}", parts.concat());
            prop_assert_eq!(validate_path(&path, false).map_err(|e| e.reason), reference(&path));
        }
    }

    #[test]
    fn accepts_what_zookeeper_accepts() {
        for p in [
            "/",
            "/a",
            "/a.b",
            "/...",
            "/a/.b",
            "/a/b/c",
            "/zookeeper/x",
            "/é",
            "/\u{fb00}",
        ] {
            assert_eq!(validate_path(p, false), Ok(()), "{p}");
        }
        assert_eq!(validate_path("/p/", true), Ok(()));
        assert_eq!(validate_path("/p/q-", true), Ok(()));
    }

    #[test]
    fn rejects_what_zookeeper_rejects() {
        let bad = [
            "",
            "a",
            "/a/",
            "//",
            "/a//b",
            "/a/./b",
            "/a/..",
            "/a/.",
            "/..",
            "/a\u{0}",
            "/a\u{1}",
            "/\u{7f}",
            "/\u{fff0}",
            // A surrogate pair in Java's UTF-16.
            "/\u{1f600}",
            "/a\u{10000}b",
        ];
        for p in bad {
            assert!(validate_path(p, false).is_err(), "{p:?} should be rejected");
        }
        assert!(validate_path("/p//", true).is_err());
    }

    #[test]
    fn parent_and_basename() {
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(parent("/a"), "/");
        assert_eq!(basename("/a/b-0000000003"), "b-0000000003");
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("/a", "b"), "/a/b");
    }

    #[test]
    fn sequence_numbers() {
        assert_eq!(sequence_after_prefix("lock--2147483648", "lock-"), Some(i32::MIN));
        assert_eq!(sequence_after_prefix("lock-0000000042", "lock-"), Some(42));
        assert_eq!(sequence_after_prefix("lock--000000005", "lock-"), Some(-5));
        assert_eq!(sequence_after_prefix("other-0000000042", "lock-"), None);
    }
}
