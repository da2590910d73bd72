use super::*;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

#[test]
fn versions_resolve() {
    assert_eq!(Version::Any.resolve(7), -1);
    assert_eq!(Version::Current.resolve(7), 7);
    assert_eq!(Version::CurrentPlus1.resolve(7), 8);
    assert_eq!(Version::CurrentMinus1.resolve(0), -1);
    assert_eq!(Version::MinusTwo.resolve(7), -2);
    assert_eq!(Version::CurrentPlus1.resolve(i32::MAX), i32::MIN);
}

#[test]
fn generator_covers_the_op_space() {
    let config = GenConfig::default();
    let strategy = sequence(&config);
    let mut runner = TestRunner::deterministic();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let seq = strategy.new_tree(&mut runner).expect("strategy generates").current();
        assert!(seq.len() > config.min_len && seq.len() <= 6 * config.max_len + 3);
        for s in &seq {
            assert!(s.client() < config.clients);
            let kind = match s {
                Step::Create { mode, .. } => format!("create {mode:?}"),
                Step::Multi { ops, .. } if ops.len() > 2 => "multi3+".to_string(),
                other => format!("{other}").split_whitespace().nth(1).unwrap_or("").to_string(),
            };
            seen.insert(kind);
        }
    }
    for want in [
        "create Persistent",
        "create Ephemeral",
        "create PersistentSequential",
        "create EphemeralSequential",
        "create Container",
        "create PersistentWithTtl { ttl_ms: 3600000 }",
        "delete",
        "set_data",
        "exists",
        "get_data",
        "get_children",
        "multi3+",
        "multi_read",
        "sync",
        "close",
        "add_watch",
        "disconnect",
        "reconnect",
        "expire",
    ] {
        assert!(seen.contains(want), "never generated {want}: {seen:?}");
    }
}
