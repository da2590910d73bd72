//! Who leads, as an election's `leader()` reports it (`LeaderQuery`). The
//! answer may be stale by the time it returns, but it is the answer of a
//! read: the leader is the first-created (least czxid, so lowest-sequence)
//! candidate node of the last listing of the election's directory the
//! query made (the listing is itself checked against the servers' state by
//! `zk-consistency`), and its epoch is that node's czxid by the commit log;
//! no candidate there, no leader. A listing answered NoNode counts: the
//! directory is gone (deleted, or a container reaped), so nobody leads. A
//! query whose answer disagrees with its own last listing is
//! `leader-misreported`.
//!
//! Judged when the history records the query's listings and the servers'
//! commit log; a query that made no listing is not judged.

use std::collections::BTreeMap;

use crate::history::{History, Op, Operation, Value};

use super::common::{by_client, creates, describe, has_commit_log, listed, ok_value};
use super::result::{CheckResult, Violation};
use super::ViolationKind;

/// Whether `name` ends in a sequential node's ten-digit suffix.
fn is_sequential(name: &str) -> bool {
    name.rsplit_once('-')
        .is_some_and(|(_, d)| d.len() == 10 && d.bytes().all(|b| b.is_ascii_digit()))
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
    let calls = by_client(ops);
    let mut judged = 0;
    'queries: for q in ops {
        let Op::LeaderQuery { election } = &q.op else { continue };
        let (Some(done), Some(answer)) = (q.completed, ok_value(q)) else {
            continue;
        };
        let answer = match answer {
            Value::Token { token } => Some(*token),
            Value::Nil => None,
            _ => continue,
        };
        // The query's last listing of the directory that was answered:
        // its children, or none when the directory was gone.
        let Some((listing, children)) = calls[&q.client]
            .iter()
            .filter(|x| x.invoked >= q.invoked && x.completed.is_some_and(|t| t <= done))
            .filter(|x| matches!(&x.op, Op::GetChildren { path, .. } if path == election))
            .filter_map(|x| Some((x, listed(ok_value(x)?)?)))
            .max_by_key(|(x, _)| x.completed)
        else {
            continue;
        };
        judged += 1;
        // The head is the candidate created first: the least czxid (the
        // latest create of each path no later than the listing), which
        // orders siblings as their sequence numbers do, wrap included.
        let dir = election.trim_end_matches('/');
        let mut head: Option<(i64, String)> = None;
        for c in children.iter().filter(|c| is_sequential(c)) {
            let path = format!("{dir}/{c}");
            let czxid = czxids
                .get(path.as_str())
                .and_then(|zs| zs.iter().rev().find(|z| listing.zxid.is_none_or(|lz| **z <= lz)));
            // A candidate whose create the commit log lacks: not judged.
            let Some(&z) = czxid else { continue 'queries };
            if head.as_ref().is_none_or(|(hz, _)| z < *hz) {
                head = Some((z, path));
            }
        }
        let expected = head.as_ref().map(|(z, _)| *z);
        if expected == answer {
            continue;
        }
        let said = answer.map_or("nobody leads".to_string(), |t| format!("the leader's epoch is {t}"));
        let saw = match &head {
            Some((z, p)) => format!("its listing (op {}) showed {p} (czxid {z}) first", listing.id),
            None => format!("its listing (op {}) showed no candidate", listing.id),
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

    /// As [`asked`], with a second listing (26–27 ms) after the first
    /// answered `relisted` (the head's read found it gone).
    fn asked_after(shown: &[&str], relisted: Option<Value>, answer: Value) -> Vec<String> {
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
            b.ok(26, 27, 1, list(), again);
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

    /// As [`asked`], the query relisting and finding the directory gone
    /// (NoNode).
    fn asked_then_gone(shown: &[&str], answer: Value) -> Vec<String> {
        let gone = Value::Error {
            code: "NoNode".into(),
            results: vec![],
        };
        asked_after(shown, Some(gone), answer)
    }

    #[test]
    fn a_directory_gone_at_the_last_listing_means_nobody() {
        // election seed 9260: the head's read found it gone, the relisting
        // found the directory gone; "nobody" was right.
        assert!(asked_then_gone(&["g1-n-0000000003"], Value::Nil).is_empty());
        assert_eq!(
            asked_then_gone(&["g1-n-0000000003"], Value::Token { token: 5 }),
            vec!["leader-misreported"]
        );
    }

    #[test]
    fn the_last_listing_decides() {
        let both = ["g2-n-0000000004", "g1-n-0000000003"];
        let rest: &[&str] = &["g2-n-0000000004"];
        assert!(asked_after(&both, Some(children(rest)), Value::Token { token: 9 }).is_empty());
        assert_eq!(
            asked_after(&both, Some(children(rest)), Value::Token { token: 5 }),
            vec!["leader-misreported"]
        );
        assert_eq!(
            asked_after(&both, Some(children(rest)), Value::Nil),
            vec!["leader-misreported"]
        );
    }
}
