//! The servers' commit log, read part by part: a multi's parts are
//! committed at the multi's zxid and time, so checkers that follow nodes
//! see each part as its own transaction.

use super::{Event, History, Time, TxnRecord, Zxid};

impl History {
    /// Every committed transaction in commit order, each multi flattened
    /// into its parts (nested multis too), with its commit's time and zxid.
    pub fn committed_parts(&self) -> impl Iterator<Item = (Time, Zxid, &TxnRecord)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Commit { time, zxid, txn, .. } => Some((*time, *zxid, txn)),
                _ => None,
            })
            .flat_map(|(time, zxid, txn)| {
                let mut parts = Vec::new();
                flatten(txn, &mut parts);
                parts.into_iter().map(move |t| (time, zxid, t))
            })
    }
}

fn flatten<'h>(t: &'h TxnRecord, out: &mut Vec<&'h TxnRecord>) {
    match t {
        TxnRecord::Multi { txns } => txns.iter().for_each(|t| flatten(t, out)),
        t => out.push(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Data;

    fn commit(time: Time, zxid: Zxid, txn: TxnRecord) -> Event {
        Event::Commit {
            time,
            server: 1,
            zxid,
            txn,
            session: None,
            xid: None,
        }
    }

    #[test]
    fn multis_are_flattened_at_their_own_zxid() {
        let delete = |p: &str| TxnRecord::Delete { path: p.into() };
        let set = TxnRecord::SetData {
            path: "/b".into(),
            data: Data(b"x".to_vec()),
            version: 1,
        };
        let mut h = History::new();
        h.events.push(commit(5, 1, delete("/a")));
        h.events.push(commit(
            9,
            2,
            TxnRecord::Multi {
                txns: vec![
                    set,
                    TxnRecord::Multi {
                        txns: vec![delete("/c")],
                    },
                ],
            },
        ));
        let seen: Vec<(Time, Zxid, &str)> = h
            .committed_parts()
            .map(|(t, z, txn)| {
                let path = match txn {
                    TxnRecord::Delete { path } | TxnRecord::SetData { path, .. } => path.as_str(),
                    _ => "?",
                };
                (t, z, path)
            })
            .collect();
        assert_eq!(seen, vec![(5, 1, "/a"), (9, 2, "/b"), (9, 2, "/c")]);
    }
}
