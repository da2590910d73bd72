//! Comparing what a client was told with what the replayed model says, and
//! describing operations for explanations.

use crate::history::{MultiOpResult, Op, Stat, Value};

use super::op_text::short_op;
use super::tree::{code, DataTree};

/// Stat equality on the fields the model knows (not ctime, mtime, aversion).
/// `owner`: compare the ephemeral owner too.
pub fn stat_eq(a: &Stat, b: &Stat, owner: bool) -> bool {
    a.czxid == b.czxid
        && a.mzxid == b.mzxid
        && a.pzxid == b.pzxid
        && a.version == b.version
        && a.cversion == b.cversion
        && a.data_length == b.data_length
        && a.num_children == b.num_children
        && (!owner || a.ephemeral_owner == b.ephemeral_owner)
}

/// A stat the recorder left empty (plain `create` returns no Stat).
fn unrecorded(s: &Stat) -> bool {
    *s == Stat::default()
}

/// `None` if the recorded write reply agrees with the model's; otherwise
/// what differs. Replies with error codes the model does not decide
/// (NoAuth, SessionExpired, ...) are not compared.
pub fn write_reply_differs(recorded: &Value, model: &Value, owner: bool) -> Option<String> {
    let stat_ok = |r: &Stat, m: &Stat| unrecorded(r) || stat_eq(r, m, owner);
    let same = match (recorded, model) {
        (Value::Error { code: rc, results: rr }, Value::Error { code: mc, results: mr }) => {
            rc == mc && (rr.is_empty() || rr == mr)
        }
        (Value::Error { code: rc, .. }, _) if !code::modelled(rc) => true,
        (Value::Error { .. }, _) | (_, Value::Error { .. }) => false,
        (Value::Created { path: rp, stat: rs }, Value::Created { path: mp, stat: ms }) => rp == mp && stat_ok(rs, ms),
        (Value::Stat { stat: Some(rs) }, Value::Stat { stat: Some(ms) }) => stat_ok(rs, ms),
        (Value::Multi { results: rr }, Value::Multi { results: mr }) => {
            rr.len() == mr.len()
                && rr.iter().zip(mr).all(|(r, m)| match (r, m) {
                    (MultiOpResult::Create { path: rp, stat: rs }, MultiOpResult::Create { path: mp, stat: ms }) => {
                        rp == mp && stat_ok(rs, ms)
                    }
                    (MultiOpResult::SetData { stat: rs }, MultiOpResult::SetData { stat: ms }) => stat_ok(rs, ms),
                    (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
                })
        }
        (_, Value::Unit) => true,
        (r, m) => r == m,
    };
    if same {
        None
    } else {
        Some(format!(
            "the client was told {} but replaying the committed writes gives {}",
            short_value(recorded),
            short_value(model)
        ))
    }
}

/// What a read should have returned from `tree`; `None` for non-reads and
/// for paths the model does not track (`/zookeeper`).
pub fn expected_read(tree: &DataTree, op: &Op) -> Option<Value> {
    let no_node = || Value::Error {
        code: code::NO_NODE.into(),
        results: Vec::new(),
    };
    Some(match op {
        Op::GetData { path, .. } if !reserved(path) => match tree.get(path) {
            Some(n) => Value::Data {
                data: n.data.clone(),
                stat: n.stat(),
            },
            None => no_node(),
        },
        Op::Exists { path, .. } if !reserved(path) => Value::Stat {
            stat: tree.get(path).map(|n| n.stat()),
        },
        Op::GetChildren { path, .. } if !reserved(path) => match tree.get(path) {
            Some(n) => Value::Children {
                children: n.children.iter().cloned().collect(),
                stat: n.stat(),
            },
            None => no_node(),
        },
        // Each read on its own against the same state; `Unit` for a read
        // the model does not track. getChildren's result has no Stat here.
        Op::MultiRead { ops } => Value::Reads {
            results: ops
                .iter()
                .map(|op| match expected_read(tree, op) {
                    Some(Value::Children { children, .. }) => Value::ChildNames { children },
                    Some(v) => v,
                    None => Value::Unit,
                })
                .collect(),
        },
        _ => return None,
    })
}

/// The path a single read is on ("" for others).
fn read_path(op: &Op) -> &str {
    match op {
        Op::GetData { path, .. } | Op::Exists { path, .. } | Op::GetChildren { path, .. } => path,
        _ => "",
    }
}

/// The highest zxid a read's reply reflects (0 when it shows none).
pub fn seen_zxid(v: &Value) -> i64 {
    match v {
        Value::Data { stat, .. } | Value::Children { stat, .. } | Value::Stat { stat: Some(stat) } => {
            stat.mzxid.max(stat.czxid).max(stat.pzxid)
        }
        Value::Reads { results } => results.iter().map(seen_zxid).max().unwrap_or(0),
        _ => 0,
    }
}

/// The same child names, in any order (at the root, `zookeeper` aside).
/// Lists that are already sorted, as recorded and replayed ones are, are
/// compared in place.
fn same_names(a: &[String], b: &[String], root: bool) -> bool {
    let keep = |c: &&String| !(root && *c == "zookeeper");
    if a.is_sorted() && b.is_sorted() {
        return a.iter().filter(keep).eq(b.iter().filter(keep));
    }
    fn sorted<'a>(c: &'a [String], keep: impl Fn(&&String) -> bool) -> Vec<&'a String> {
        let mut c: Vec<&String> = c.iter().filter(keep).collect();
        c.sort();
        c
    }
    sorted(a, keep) == sorted(b, keep)
}

fn reserved(path: &str) -> bool {
    path == "/zookeeper" || path.starts_with("/zookeeper/")
}

/// `None` if a recorded read of `op` agrees with the expected value. The
/// root's child counts are not compared (servers create `/zookeeper` there),
/// nor the order of children (unspecified in ZooKeeper).
pub fn read_differs(op: &Op, recorded: &Value, expected: &Value) -> Option<String> {
    if let (Op::MultiRead { ops }, Value::Reads { results: rr }, Value::Reads { results: er }) =
        (op, recorded, expected)
    {
        if rr.len() != er.len() {
            return Some(format!("it returned {} results for {} reads", rr.len(), er.len()));
        }
        return ops
            .iter()
            .zip(rr.iter().zip(er))
            .enumerate()
            .find_map(|(i, (op, (r, e)))| {
                if *e == Value::Unit {
                    return None;
                }
                read_differs(op, r, e).map(|why| format!("read {i} ({}): {why}", short_op(op)))
            });
    }
    let root = read_path(op) == "/";
    let names = |rc: &[String], ec: &[String]| same_names(rc, ec, root);
    let stat_ok = |r: &Stat, e: &Stat| root || stat_eq(r, e, true);
    let same = match (recorded, expected) {
        (Value::Error { code: rc, .. }, _) if !code::modelled(rc) => true,
        (Value::Data { data: rd, stat: rs }, Value::Data { data: ed, stat: es }) => rd == ed && stat_ok(rs, es),
        (Value::Stat { stat: Some(rs) }, Value::Stat { stat: Some(es) }) => stat_ok(rs, es),
        (Value::Stat { stat: None }, Value::Stat { stat: None }) => true,
        (Value::Children { children: rc, stat: rs }, Value::Children { children: ec, stat: es }) => {
            names(rc, ec) && stat_ok(rs, es)
        }
        (Value::ChildNames { children: rc }, Value::ChildNames { children: ec }) => names(rc, ec),
        (r, e) => r == e,
    };
    if same {
        None
    } else {
        Some(format!(
            "it returned {} but the replayed state is {}",
            short_value(recorded),
            short_value(expected)
        ))
    }
}

/// A compact rendering of a value for explanations.
pub fn short_value(v: &Value) -> String {
    let st = |s: &Stat| {
        format!(
            "version {}, czxid {:#x}, mzxid {:#x}, cversion {}, owner {:#x}",
            s.version, s.czxid, s.mzxid, s.cversion, s.ephemeral_owner
        )
    };
    match v {
        Value::Error { code, .. } => format!("error {code}"),
        Value::Created { path, stat } => format!("created {path} ({})", st(stat)),
        Value::Stat { stat: Some(s) } => format!("stat ({})", st(s)),
        Value::Stat { stat: None } => "no node".into(),
        Value::Data { data, stat } => format!("data {data} ({})", st(stat)),
        Value::Children { children, .. } => {
            let mut c = children.to_vec();
            c.sort();
            format!("children [{}]", c.join(", "))
        }
        Value::Multi { results } => format!("multi ok ({} results)", results.len()),
        Value::Reads { results } => format!("[{}]", results.iter().map(short_value).collect::<Vec<_>>().join("; ")),
        Value::ChildNames { children } => {
            let mut c = children.to_vec();
            c.sort();
            format!("children [{}]", c.join(", "))
        }
        Value::Unit => "ok".into(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Data;

    #[test]
    fn unrecorded_stats_and_unmodelled_errors_are_not_compared() {
        let m = Value::Created {
            path: "/a".into(),
            stat: Stat {
                czxid: 5,
                ..Default::default()
            },
        };
        assert!(write_reply_differs(
            &Value::Created {
                path: "/a".into(),
                stat: Stat::default()
            },
            &m,
            true
        )
        .is_none());
        assert!(write_reply_differs(
            &Value::Created {
                path: "/b".into(),
                stat: Stat::default()
            },
            &m,
            true
        )
        .is_some());
        assert!(write_reply_differs(
            &Value::Error {
                code: "NoAuth".into(),
                results: vec![]
            },
            &m,
            true
        )
        .is_none());
        assert!(write_reply_differs(
            &Value::Error {
                code: "NodeExists".into(),
                results: vec![]
            },
            &m,
            true
        )
        .is_some());
    }

    #[test]
    fn multi_read_results_are_compared_read_by_read() {
        let mut tree = DataTree::default();
        let create = Op::Create {
            path: "/a".into(),
            data: Data(b"v".to_vec()),
            mode: crate::history::CreateMode::Persistent,
        };
        tree.apply_op(&create, 1, 5).expect("create applies");
        let op = Op::MultiRead {
            ops: vec![
                Op::GetData {
                    path: "/a".into(),
                    watch: false,
                },
                Op::GetChildren {
                    path: "/".into(),
                    watch: false,
                },
                Op::GetData {
                    path: "/zookeeper".into(),
                    watch: false,
                },
                Op::GetData {
                    path: "/b".into(),
                    watch: false,
                },
            ],
        };
        let expected = expected_read(&tree, &op).expect("a read");
        let Value::Reads { results } = &expected else {
            panic!("{expected:?}")
        };
        let data = results[0].clone();
        let recorded = |first: Value, missing: &str| Value::Reads {
            results: vec![
                first,
                Value::ChildNames {
                    children: vec!["zookeeper".to_string(), "a".into()].into(),
                },
                Value::Data {
                    data: Data(Vec::new()),
                    stat: Stat::default(),
                },
                Value::Error {
                    code: missing.into(),
                    results: vec![],
                },
            ],
        };
        assert_eq!(read_differs(&op, &recorded(data.clone(), "NoNode"), &expected), None);
        let stale = Value::Error {
            code: "NoNode".into(),
            results: vec![],
        };
        let why = read_differs(&op, &recorded(stale, "NoNode"), &expected).expect("a stale read differs");
        assert!(why.starts_with("read 0 (getData /a)"), "{why}");
        assert!(read_differs(&op, &recorded(data, "NodeExists"), &expected).is_some());
        assert_eq!(seen_zxid(&expected), 5);
    }

    #[test]
    fn children_order_is_ignored_and_root_zookeeper_filtered() {
        let e = Value::Children {
            children: vec!["a".to_string(), "b".into()].into(),
            stat: Stat::default(),
        };
        let r = Value::Children {
            children: vec!["b".to_string(), "zookeeper".into(), "a".into()].into(),
            stat: Stat {
                num_children: 3,
                ..Default::default()
            },
        };
        let get = |path: &str| Op::GetChildren {
            path: path.into(),
            watch: false,
        };
        assert!(read_differs(&get("/"), &r, &e).is_none());
        assert!(read_differs(&get("/x"), &r, &e).is_some());
    }

    #[test]
    fn sorted_child_lists_compare_in_place() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(same_names(&names(&["a", "b"]), &names(&["a", "b"]), false));
        assert!(!same_names(&names(&["a", "b"]), &names(&["a", "c"]), false));
        assert!(!same_names(&names(&["a"]), &names(&["a", "b"]), false));
        assert!(same_names(&names(&["a", "zookeeper"]), &names(&["a"]), true));
        assert!(!same_names(&names(&["a", "zookeeper"]), &names(&["a"]), false));
        // Unsorted on one side: still order-blind.
        assert!(same_names(&names(&["b", "a"]), &names(&["a", "b"]), false));
        assert!(!same_names(&names(&["b", "a"]), &names(&["a", "a"]), false));
    }
}
