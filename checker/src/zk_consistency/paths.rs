//! Client-side path validation: ZooKeeper's client refuses a bad path
//! before sending anything (`PathUtils.validatePath`, an
//! `IllegalArgumentException` in Java, `InvalidPath` in a history), and
//! refuses nothing else for its path. The rules are written here from the
//! Java source, over UTF-16 units as Java sees a string: an oracle of their
//! own, apart from the client's validator that they judge.

use zkdst_model::client_error::{INVALID_ARGUMENT, INVALID_PATH};

use crate::history::{Op, Operation, Outcome};
use crate::properties::{CheckResult, Violation, ViolationKind};

use super::op_text::short_op;

/// Why `PathUtils.validatePath` refuses `path`, or `None` for a valid path.
pub fn path_problem(path: &str) -> Option<String> {
    let chars: Vec<u16> = path.encode_utf16().collect();
    let (slash, dot) = (u16::from(b'/'), u16::from(b'.'));
    if chars.is_empty() {
        return Some("path length must be > 0".into());
    }
    if chars[0] != slash {
        return Some("path must start with / character".into());
    }
    if chars.len() == 1 {
        return None;
    }
    if chars[chars.len() - 1] == slash {
        return Some("path must not end with / character".into());
    }
    let ends_component = |i: usize| i + 1 == chars.len() || chars[i + 1] == slash;
    let mut last = slash;
    for i in 1..chars.len() {
        let c = chars[i];
        if c == 0 {
            return Some(format!("null character not allowed @{i}"));
        } else if c == slash && last == slash {
            return Some(format!("empty node name specified @{i}"));
        } else if c == dot && last == dot {
            if chars[i - 2] == slash && ends_component(i) {
                return Some(format!("relative paths not allowed @{i}"));
            }
        } else if c == dot {
            if chars[i - 1] == slash && ends_component(i) {
                return Some(format!("relative paths not allowed @{i}"));
            }
        } else if (0x01..=0x1f).contains(&c)
            || (0x7f..=0x9f).contains(&c)
            || (0xd800..=0xf8ff).contains(&c)
            || c >= 0xfff0
        {
            return Some(format!("invalid character @{i}"));
        }
        last = c;
    }
    None
}

/// What the client checks before sending: a sequential create's path is
/// checked with a `1` appended (so `/p/` is a valid sequential prefix).
pub fn client_refuses(path: &str, sequential: bool) -> Option<String> {
    if sequential {
        path_problem(&format!("{path}1"))
    } else {
        path_problem(path)
    }
}

/// Every path a ZooKeeper call names, with whether the client checks it as
/// a sequential prefix; empty for calls that name none.
fn paths_of(op: &Op) -> Vec<(&str, bool)> {
    match op {
        Op::Create { path, mode, .. } => vec![(path.as_str(), mode.is_sequential())],
        Op::Delete { path, .. }
        | Op::SetData { path, .. }
        | Op::Check { path, .. }
        | Op::GetData { path, .. }
        | Op::Exists { path, .. }
        | Op::GetChildren { path, .. }
        | Op::Sync { path }
        | Op::AddWatch { path, .. } => vec![(path.as_str(), false)],
        Op::Multi { ops } | Op::MultiRead { ops } => ops.iter().flat_map(paths_of).collect(),
        _ => Vec::new(),
    }
}

/// `s` with the characters the rules refuse, and other controls, escaped: a
/// report stays printable whatever path it quotes.
fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            let u = c as u32;
            if c.is_control() || (0xd800..=0xf8ff).contains(&u) || u >= 0xfff0 {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A call naming a path the rules refuse must be refused by the client
/// without a reply (`InvalidPath`; a library that calls it a bad argument
/// refuses it too); a call whose paths are all valid must not be refused
/// `InvalidPath`.
pub fn client_validation(ops: &[Operation], r: &mut CheckResult) {
    for o in ops {
        let paths = paths_of(&o.op);
        if paths.is_empty() {
            continue;
        }
        let problem = paths
            .iter()
            .find_map(|(p, seq)| client_refuses(p, *seq).map(|why| format!("\"{}\": {why}", printable(p))));
        let error = match &o.outcome {
            Some(Outcome::Fail { error }) => error.as_str(),
            _ => "",
        };
        let explanation = match &problem {
            Some(_) if matches!(error, INVALID_PATH | INVALID_ARGUMENT) => continue,
            None if error != INVALID_PATH => continue,
            Some(why) => {
                let outcome = match &o.outcome {
                    None => "never returned".to_string(),
                    Some(Outcome::Ok { .. }) => "was answered by a server".to_string(),
                    Some(Outcome::Fail { error } | Outcome::Info { error }) => format!("ended {error}"),
                };
                format!(
                    "client {}'s {} names an invalid path ({why}) and {outcome}: the client must refuse it before sending (InvalidPath)",
                    o.client,
                    printable(&short_op(&o.op))
                )
            }
            None => format!(
                "client {}'s {} was refused InvalidPath, but every path it names is valid",
                o.client,
                printable(&short_op(&o.op))
            ),
        };
        r.violation(Violation::of_op(ViolationKind::PathValidation, explanation, o));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_java_rules() {
        for ok in [
            "/",
            "/a",
            "/a/b",
            "/...",
            "/.a",
            "/a.",
            "/a..b",
            "/..a",
            "/ ",
            "/é",
            "/\u{a0}",
            "/\u{d7ff}",
            "/\u{f900}",
            "/\u{ffef}",
        ] {
            assert_eq!(path_problem(ok), None, "{ok:?}");
        }
        for bad in [
            "",
            "a",
            "a/b",
            "/a/",
            "//",
            "/a//b",
            "/.",
            "/..",
            "/a/.",
            "/a/..",
            "/./a",
            "/../a",
            "/\0",
            "/a\u{1}",
            "/\u{1f}",
            "/\u{7f}",
            "/\u{9f}",
            "/\u{e000}",
            "/\u{f8ff}",
            "/\u{fff0}",
            "/\u{ffff}",
            "/😀",
        ] {
            assert!(path_problem(bad).is_some(), "{bad:?} passed");
        }
        assert_eq!(client_refuses("/p/", true), None);
        assert!(client_refuses("/p/", false).is_some());
        assert!(client_refuses("/p/.", true).is_none(), "`/p/.1` is a valid name");
        assert!(client_refuses("/p//", true).is_some());
    }
}
