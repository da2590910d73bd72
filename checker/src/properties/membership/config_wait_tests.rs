//! Tests of `config_wait`, run through the `membership` checker that owns it: a
//! child of `membership`, so the sub-check does not import its family.

use super::*;
use crate::properties::membership::check_config;
use crate::properties::testkit::Builder;
use crate::properties::{Params, Verdict};

fn get() -> Op {
    Op::ConfigGet {
        key: "k".into(),
        newer_than: None,
    }
}
fn wait(after: i64) -> Op {
    Op::ConfigGet {
        key: "k".into(),
        newer_than: Some(after),
    }
}
fn ver(v: &str, version: i64) -> Value {
    Value::Versioned {
        value: Some(v.into()),
        version,
    }
}

#[test]
fn a_wait_for_a_change_that_returns_no_newer_version_is_flagged() {
    let mut b = Builder::new();
    b.ok(0, 1, 2, get(), ver("x", 1));
    b.ok(2, 3, 2, wait(1), ver("y", 2));
    assert_eq!(
        check_config(&b.clone_build(), &Params::default()).verdict,
        Verdict::Pass
    );
    b.ok(4, 5, 2, wait(2), ver("y", 2));
    let r = check_config(&b.build(), &Params::default());
    assert_eq!(r.kinds(), vec!["change-not-newer"], "{r:#?}");
}

#[test]
fn a_wait_that_gives_up_while_its_watcher_holds_a_newer_value_is_flagged() {
    let mut b = Builder::new();
    b.ok(0, 1, 2, get(), ver("x", 1));
    // Nothing newer came: giving up is right.
    b.fail(2, 1002, 2, wait(1));
    b.ok(1002, 1002, 2, get(), ver("x", 1));
    // Another client's read of a newer version is no evidence about
    // this client's watcher.
    b.ok(1003, 1003, 3, get(), ver("y", 2));
    b.fail(1003, 1013, 2, wait(1));
    let r = check_config(&b.clone_build(), &Params::default());
    assert_eq!(r.verdict, Verdict::Pass, "{r:#?}");
    // Its own watcher showed version 2 just before it waited again.
    b.ok(2000, 2000, 2, get(), ver("y", 2));
    b.fail(2000, 2010, 2, wait(1));
    let r = check_config(&b.clone_build(), &Params::default());
    assert_eq!(r.kinds(), vec!["missed-change"], "{r:#?}");
    // Returning it instead keeps the promise.
    let mut b = Builder::new();
    b.ok(0, 1, 2, get(), ver("y", 2));
    b.ok(1, 1, 2, wait(1), ver("y", 2));
    assert_eq!(check_config(&b.build(), &Params::default()).verdict, Verdict::Pass);
}
