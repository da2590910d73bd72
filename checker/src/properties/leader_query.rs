//! Who leads, as an election's `leader()` reports it (`LeaderQuery`). The
//! answer may be stale by the time it returns, but it is the answer of a
//! read: the leader is the lowest-sequence candidate node of the last
//! listing of the election's directory the query made (the listing is
//! itself checked against the servers' state by `zk-consistency`), and its
//! epoch is that node's czxid by the commit log; no candidate there, no
//! leader. A query whose answer disagrees with its own last listing is
//! `leader-misreported`.
//!
//! Judged when the history records the query's listings and the servers'
//! commit log; a query that made no listing is not judged.

use std::collections::BTreeMap;

use crate::history::{ClientId, History, Op, Operation, Value};

use super::common::{creates, describe, has_commit_log, ok_value};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// A sequential child's sequence number (`..-0000000012` → 12).
fn sequence(name: &str) -> Option<i64> {
    let (_, digits) = name.rsplit_once('-')?;
    (digits.len() == 10 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Adds a `leader-misreported` violation to `r` for each query in `ops`
/// whose answer is not its own last listing's leader.
pub fn check_into(h: &History, ops: &[Operation], r: &mut CheckResult) {
    if !has_commit_log(h) {
        return;
    }
    // Each node's czxids by path (a path recreated after its directory was
    // made again has several), from the commit log.
    let mut czxids: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for c in creates(h) {
        czxids.entry(c.path).or_default().push(c.zxid);
    }
    let mut by_client: BTreeMap<ClientId, Vec<&Operation>> = BTreeMap::new();
    for x in ops {
        by_client.entry(x.client).or_default().push(x);
    }
    let mut judged = 0;
    for q in ops {
        let Op::LeaderQuery { election } = &q.op else { continue };
        let (Some(done), Some(answer)) = (q.completed, ok_value(q)) else {
            continue;
        };
        let answer = match answer {
            Value::Token { token } => Some(*token),
            Value::Nil => None,
            _ => continue,
        };
        // The query's last listing of the directory that returned children.
        let Some((listing, children)) = by_client[&q.client]
            .iter()
            .filter(|x| x.invoked >= q.invoked && x.completed.is_some_and(|t| t <= done))
            .filter(|x| matches!(&x.op, Op::GetChildren { path, .. } if path == election))
            .filter_map(|x| match ok_value(x) {
                Some(Value::Children { children, .. }) => Some((x, children)),
                _ => None,
            })
            .max_by_key(|(x, _)| x.completed)
        else {
            continue;
        };
        judged += 1;
        let head = children
            .iter()
            .filter_map(|c| Some((sequence(c)?, c)))
            .min()
            .map(|(_, c)| format!("{}/{c}", election.trim_end_matches('/')));
        let expected: Option<Option<i64>> = match &head {
            None => Some(None),
            // The latest create of that path no later than the listing.
            Some(path) => czxids
                .get(path.as_str())
                .and_then(|zs| zs.iter().rev().find(|z| listing.zxid.is_none_or(|lz| **z <= lz)))
                .map(|z| Some(*z)),
        };
        // A head whose create the commit log lacks cannot be judged.
        let Some(expected) = expected else { continue };
        if expected == answer {
            continue;
        }
        let said = answer.map_or("nobody leads".to_string(), |t| format!("the leader's epoch is {t}"));
        let saw = match (&head, expected) {
            (Some(p), Some(z)) => format!("its listing (op {}) showed {p} (czxid {z}) first", listing.id),
            _ => format!("its listing (op {}) showed no candidate", listing.id),
        };
        r.violation(
            Violation::new(
                ViolationKind::LeaderMisreported,
                format!("election {election}: {} said {said}, though {saw}", describe(q)),
            )
            .ops([q.id, listing.id])
            .clients([q.client])
            .times([q.invoked, done]),
        );
    }
    r.figure("leader_queries_judged", judged as f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Stat, TxnRecord};
    use crate::properties::testkit::Builder;

    const DIR: &str = "/election";

    fn query() -> Op {
        Op::LeaderQuery { election: DIR.into() }
    }

    fn list() -> Op {
        Op::GetChildren {
            path: DIR.into(),
            watch: false,
        }
    }

    fn children(names: &[&str]) -> Value {
        Value::Children {
            children: names.iter().map(|s| s.to_string()).collect(),
            stat: Stat::default(),
        }
    }

    /// Candidates a (czxid 5) and b (czxid 9) committed; client 1 asks from
    /// 20 to 30 ms, its listing (21–22 ms) shows `shown`; the query answers
    /// `answer`.
    fn asked(shown: &[&str], answer: Value) -> Vec<String> {
        asked_after(shown, None, answer)
    }

    /// As [`asked`], with a second listing (26–27 ms) after the first when
    /// `relisted` (the head's read found it gone).
    fn asked_after(shown: &[&str], relisted: Option<&[&str]>, answer: Value) -> Vec<String> {
        let mut b = Builder::new();
        for (t, z, name) in [(1, 5, "g1-n-0000000003"), (2, 9, "g2-n-0000000004")] {
            b.commit(
                t,
                z,
                TxnRecord::Create {
                    path: format!("{DIR}/{name}"),
                    data: Default::default(),
                    ephemeral_owner: 7,
                    session: 7,
                },
            );
        }
        b.ok(21, 22, 1, list(), children(shown));
        if let Some(again) = relisted {
            b.ok(26, 27, 1, list(), children(again));
        }
        b.ok(20, 30, 1, query(), answer);
        let h = b.build();
        let ops = h.operations().unwrap();
        let mut r = CheckResult::new("t");
        check_into(&h, &ops, &mut r);
        r.kinds().into_iter().map(String::from).collect()
    }

    #[test]
    fn an_answer_other_than_the_listings_head_fails() {
        let both = ["g2-n-0000000004", "g1-n-0000000003"];
        assert_eq!(asked(&both, Value::Nil), vec!["leader-misreported"]);
        assert_eq!(asked(&both, Value::Token { token: 9 }), vec!["leader-misreported"]);
        assert_eq!(asked(&[], Value::Token { token: 5 }), vec!["leader-misreported"]);
    }

    #[test]
    fn the_listings_head_or_nobody_passes() {
        let both = ["g2-n-0000000004", "g1-n-0000000003"];
        assert!(asked(&both, Value::Token { token: 5 }).is_empty());
        assert!(asked(&["g2-n-0000000004"], Value::Token { token: 9 }).is_empty());
        assert!(asked(&[], Value::Nil).is_empty());
        // A name that is not a candidate node does not lead.
        assert!(asked(&["readme"], Value::Nil).is_empty());
    }

    #[test]
    fn the_last_listing_decides() {
        let both = ["g2-n-0000000004", "g1-n-0000000003"];
        let rest: &[&str] = &["g2-n-0000000004"];
        assert!(asked_after(&both, Some(rest), Value::Token { token: 9 }).is_empty());
        assert_eq!(
            asked_after(&both, Some(rest), Value::Token { token: 5 }),
            vec!["leader-misreported"]
        );
        assert_eq!(asked_after(&both, Some(rest), Value::Nil), vec!["leader-misreported"]);
    }
}
