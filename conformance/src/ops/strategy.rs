//! Strategies for one step and its arguments: paths from a small
//! alphabet, weighted so that operations collide.

use proptest::prelude::*;
use proptest::sample::select;
use zkdst_recipes::zk::{CreateMode, ReadOp};

use super::{GenConfig, MultiStep, Step, Version, GEN_TTL_MS};

/// Node paths (relative to the root) that operations aim at.
const NODES: &[&str] = &[
    "",
    "a",
    "b",
    "a/b",
    "a/c",
    "b/a",
    "a/b/c",
    "s-0000000000",
    "s-0000000001",
    "s-0000000002",
    "a/s-0000000000",
    "a/s-0000000001",
    "a/0000000002",
];

/// Prefixes for sequential creates (`a/` yields `a/0000000005`).
const SEQ_PREFIXES: &[&str] = &["s-", "a/s-", "a/"];

/// Malformed relative paths: rejected by client-side validation.
const BAD: &[&str] = &["a/", "a//b", "a/./b", "a/..", "a/\u{1}"];

/// A node path, shallow ones (whose parents usually exist) most often.
pub(super) fn node_path() -> impl Strategy<Value = String> {
    let weighted: Vec<(u32, &str)> = NODES
        .iter()
        .map(|p| {
            let w = match *p {
                "a" => 8,
                "b" | "a/b" => 4,
                "" | "a/c" | "s-0000000000" | "a/s-0000000000" => 2,
                _ => 1,
            };
            (w, *p)
        })
        .collect();
    let choices: Vec<(u32, BoxedStrategy<String>)> = weighted
        .into_iter()
        .map(|(w, p)| (w, Just(p.to_string()).boxed()))
        .collect();
    proptest::strategy::Union::new_weighted(choices)
}

fn any_path(bad: bool) -> BoxedStrategy<String> {
    if bad {
        prop_oneof![
            20 => node_path(),
            1 => select(BAD).prop_map(str::to_string),
        ]
        .boxed()
    } else {
        node_path().boxed()
    }
}

pub(super) fn data() -> impl Strategy<Value = Vec<u8>> {
    select(vec![Vec::new(), b"x".to_vec(), b"yy".to_vec()])
}

fn version() -> impl Strategy<Value = Version> {
    prop_oneof![
        3 => Just(Version::Any),
        4 => Just(Version::Current),
        1 => Just(Version::CurrentPlus1),
        1 => Just(Version::CurrentMinus1),
        1 => Just(Version::MinusTwo),
    ]
}

pub(super) fn plain_mode(ttl: bool) -> BoxedStrategy<CreateMode> {
    let mut modes = vec![
        CreateMode::Persistent,
        CreateMode::Persistent,
        CreateMode::Ephemeral,
        CreateMode::Container,
    ];
    if ttl {
        modes.push(CreateMode::PersistentWithTtl { ttl_ms: GEN_TTL_MS });
    }
    select(modes).boxed()
}

fn seq_mode(ttl: bool) -> BoxedStrategy<CreateMode> {
    let mut modes = vec![CreateMode::PersistentSequential, CreateMode::EphemeralSequential];
    if ttl {
        modes.push(CreateMode::PersistentSequentialWithTtl { ttl_ms: GEN_TTL_MS });
    }
    select(modes).boxed()
}

/// A create: a plain mode on a node path, or a sequential mode on a prefix.
fn create_args(ttl: bool, bad: bool) -> impl Strategy<Value = (String, Vec<u8>, CreateMode)> {
    prop_oneof![
        3 => (any_path(bad), data(), plain_mode(ttl)),
        2 => (select(SEQ_PREFIXES).prop_map(str::to_string), data(), seq_mode(ttl)),
    ]
}

fn multi_step(ttl: bool) -> impl Strategy<Value = MultiStep> {
    prop_oneof![
        3 => create_args(ttl, false).prop_map(|(path, data, mode)| MultiStep::Create { path, data, mode }),
        1 => (node_path(), version()).prop_map(|(path, version)| MultiStep::Delete { path, version }),
        2 => (node_path(), data(), version())
            .prop_map(|(path, data, version)| MultiStep::SetData { path, data, version }),
        1 => (node_path(), version()).prop_map(|(path, version)| MultiStep::Check { path, version }),
    ]
}

/// A multi of 1–4 random ops, or one with a failing op in the middle
/// (a `Check` with version -2 always fails: BadVersion, or NoNode).
fn multi_ops(ttl: bool) -> impl Strategy<Value = Vec<MultiStep>> {
    prop_oneof![
        2 => prop::collection::vec(multi_step(ttl), 0..=4),
        1 => (
            prop::collection::vec(multi_step(ttl), 1..=2),
            node_path(),
            prop::collection::vec(multi_step(ttl), 1..=2),
        )
            .prop_map(|(mut before, path, after)| {
                before.push(MultiStep::Check { path, version: Version::MinusTwo });
                before.extend(after);
                before
            }),
    ]
}

/// One step.
pub fn step(config: &GenConfig) -> BoxedStrategy<Step> {
    let c = 0..config.clients.max(1);
    let (ttl, bad) = (config.ttl, config.bad_paths);
    let mut choices: Vec<(u32, BoxedStrategy<Step>)> = vec![
        (
            20,
            (c.clone(), create_args(ttl, bad))
                .prop_map(|(client, (path, data, mode))| Step::Create {
                    client,
                    path,
                    data,
                    mode,
                })
                .boxed(),
        ),
        (
            8,
            (c.clone(), any_path(bad), version())
                .prop_map(|(client, path, version)| Step::Delete { client, path, version })
                .boxed(),
        ),
        (
            8,
            (c.clone(), node_path(), data(), version())
                .prop_map(|(client, path, data, version)| Step::SetData {
                    client,
                    path,
                    data,
                    version,
                })
                .boxed(),
        ),
        (
            6,
            (c.clone(), node_path(), any::<bool>())
                .prop_map(|(client, path, watch)| Step::Exists { client, path, watch })
                .boxed(),
        ),
        (
            6,
            (c.clone(), node_path(), any::<bool>())
                .prop_map(|(client, path, watch)| Step::GetData { client, path, watch })
                .boxed(),
        ),
        (
            6,
            (c.clone(), node_path(), any::<bool>())
                .prop_map(|(client, path, watch)| Step::GetChildren { client, path, watch })
                .boxed(),
        ),
        (
            3,
            (
                c.clone(),
                proptest::collection::vec(
                    (any::<bool>(), node_path()).prop_map(|(data, path)| {
                        if data {
                            ReadOp::GetData { path }
                        } else {
                            ReadOp::GetChildren { path }
                        }
                    }),
                    1..4,
                ),
            )
                .prop_map(|(client, ops)| Step::MultiRead { client, ops })
                .boxed(),
        ),
        (
            6,
            (c.clone(), multi_ops(ttl))
                .prop_map(|(client, ops)| Step::Multi { client, ops })
                .boxed(),
        ),
        (
            2,
            (c.clone(), node_path())
                .prop_map(|(client, path)| Step::Sync { client, path })
                .boxed(),
        ),
    ];
    if config.close {
        choices.push((1, c.clone().prop_map(|client| Step::Close { client }).boxed()));
    }
    if config.persistent_watches {
        choices.push((
            2,
            (c, node_path(), any::<bool>())
                .prop_map(|(client, path, recursive)| Step::AddWatch {
                    client,
                    path,
                    recursive,
                })
                .boxed(),
        ));
    }
    proptest::strategy::Union::new_weighted(choices).boxed()
}
