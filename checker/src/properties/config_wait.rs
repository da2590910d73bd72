//! A watched configuration's wait for a change: `ConfigGet` with
//! `newer_than: Some(n)`, the version the client last saw, judged by
//! [`super::change_wait`] against the client's plain `ConfigGet`s (the
//! watcher's value) of the same key.

use std::collections::BTreeMap;

use crate::history::{Op, Operation, Value};

use super::change_wait::{judge, Watched};
use super::common::ok_value;
use super::result::CheckResult;

fn newer_than(o: &Operation) -> Option<i64> {
    match &o.op {
        Op::ConfigGet { newer_than, .. } => *newer_than,
        _ => None,
    }
}

/// The version a get returned.
fn returned(o: &Operation) -> Option<i64> {
    match ok_value(o) {
        Some(Value::Versioned { version, .. }) => Some(*version),
        _ => None,
    }
}

/// The version a plain read (no `newer_than`) returned.
fn read(o: &Operation) -> Option<i64> {
    returned(o).filter(|_| matches!(o.op, Op::ConfigGet { newer_than: None, .. }))
}

pub fn check(ops: &[Operation], r: &mut CheckResult) {
    let mut gets: BTreeMap<(&str, _), Vec<&Operation>> = BTreeMap::new();
    for o in ops {
        if let Op::ConfigGet { key, .. } = &o.op {
            gets.entry((key.as_str(), o.client)).or_default().push(o);
        }
    }
    for ((key, _), mut gets) in gets {
        gets.sort_by_key(|o| (o.invoked, o.id));
        let subject = format!("key {key}");
        let watched = Watched {
            subject: &subject,
            order: "version",
            newer_than,
            read,
            returned,
        };
        judge(&watched, &gets, r);
    }
}
