//! Operation sequences for differential runs, and their proptest generator.
//!
//! A [`Step`] is one call by one of a few clients. Paths are relative to a
//! per-run root (`""` is the root itself) and come from a small alphabet so
//! that operations collide: creates hit existing nodes, deletes hit
//! non-empty ones, sequential names are guessed right often enough to be
//! read, set and deleted. Versions are symbolic ([`Version`]) and resolved
//! against the node's current version right before the call.

use std::fmt;

use proptest::prelude::*;
use proptest::sample::select;
use serde::{Deserialize, Serialize};
use zkdst_recipes::zk::{CreateMode, ReadOp};

/// A version argument, resolved when the step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Version {
    /// -1, ZooKeeper's wildcard.
    Any,
    /// The node's version right now (0 if it does not exist).
    Current,
    CurrentPlus1,
    CurrentMinus1,
    /// -2: not a wildcard.
    MinusTwo,
}

impl Version {
    /// The concrete argument for a node whose version is `current`.
    pub fn resolve(self, current: i32) -> i32 {
        match self {
            Version::Any => -1,
            Version::Current => current,
            Version::CurrentPlus1 => current.wrapping_add(1),
            Version::CurrentMinus1 => current.wrapping_sub(1),
            Version::MinusTwo => -2,
        }
    }

    /// Whether resolving needs the node's current version.
    pub fn needs_current(self) -> bool {
        matches!(self, Version::Current | Version::CurrentPlus1 | Version::CurrentMinus1)
    }
}

/// One op inside a `multi`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MultiStep {
    Create {
        path: String,
        data: Vec<u8>,
        mode: CreateMode,
    },
    Delete {
        path: String,
        version: Version,
    },
    SetData {
        path: String,
        data: Vec<u8>,
        version: Version,
    },
    Check {
        path: String,
        version: Version,
    },
}

impl MultiStep {
    pub fn path(&self) -> &str {
        match self {
            MultiStep::Create { path, .. }
            | MultiStep::Delete { path, .. }
            | MultiStep::SetData { path, .. }
            | MultiStep::Check { path, .. } => path,
        }
    }
    pub fn version(&self) -> Option<Version> {
        match self {
            MultiStep::Create { .. } => None,
            MultiStep::Delete { version, .. }
            | MultiStep::SetData { version, .. }
            | MultiStep::Check { version, .. } => Some(*version),
        }
    }
}

/// One call by client `client` (an index into the executor's clients).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Step {
    Create {
        client: usize,
        path: String,
        data: Vec<u8>,
        mode: CreateMode,
    },
    Delete {
        client: usize,
        path: String,
        version: Version,
    },
    SetData {
        client: usize,
        path: String,
        data: Vec<u8>,
        version: Version,
    },
    Exists {
        client: usize,
        path: String,
        watch: bool,
    },
    GetData {
        client: usize,
        path: String,
        watch: bool,
    },
    GetChildren {
        client: usize,
        path: String,
        watch: bool,
    },
    Multi {
        client: usize,
        ops: Vec<MultiStep>,
    },
    /// multiRead of getData / getChildren on relative paths.
    MultiRead {
        client: usize,
        ops: Vec<ReadOp>,
    },
    Sync {
        client: usize,
        path: String,
    },
    /// `addWatch`: PERSISTENT, or PERSISTENT_RECURSIVE.
    AddWatch {
        client: usize,
        path: String,
        recursive: bool,
    },
    /// Closes the client's session (its ephemerals go, its watches get
    /// `Closed`, its later calls fail).
    Close {
        client: usize,
    },
    /// Cuts the client's connection (and keeps it from reconnecting) until
    /// its `Reconnect`: the session survives, its watches are re-registered
    /// with SetWatches on the reconnect. The generator never gives the
    /// client a step in between.
    Disconnect {
        client: usize,
    },
    /// Lets a disconnected client reconnect (same session).
    Reconnect {
        client: usize,
    },
    /// The server expires the client's session while the client is cut
    /// off; the client learns it on reconnecting (`Expired`), its later
    /// calls fail with SessionExpired.
    Expire {
        client: usize,
    },
}

impl Step {
    pub fn client(&self) -> usize {
        match self {
            Step::Create { client, .. }
            | Step::Delete { client, .. }
            | Step::SetData { client, .. }
            | Step::Exists { client, .. }
            | Step::GetData { client, .. }
            | Step::GetChildren { client, .. }
            | Step::Multi { client, .. }
            | Step::MultiRead { client, .. }
            | Step::Sync { client, .. }
            | Step::AddWatch { client, .. }
            | Step::Close { client }
            | Step::Disconnect { client }
            | Step::Reconnect { client }
            | Step::Expire { client } => *client,
        }
    }

    /// The same step by another client.
    pub fn with_client(mut self, new: usize) -> Step {
        match &mut self {
            Step::Create { client, .. }
            | Step::Delete { client, .. }
            | Step::SetData { client, .. }
            | Step::Exists { client, .. }
            | Step::GetData { client, .. }
            | Step::GetChildren { client, .. }
            | Step::Multi { client, .. }
            | Step::MultiRead { client, .. }
            | Step::Sync { client, .. }
            | Step::AddWatch { client, .. }
            | Step::Close { client }
            | Step::Disconnect { client }
            | Step::Reconnect { client }
            | Step::Expire { client } => *client = new,
        }
        self
    }

    /// A write (create, delete, set_data, multi).
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Step::Create { .. } | Step::Delete { .. } | Step::SetData { .. } | Step::Multi { .. }
        )
    }

    /// A read (its result may be stale on a follower).
    pub fn is_read(&self) -> bool {
        matches!(
            self,
            Step::Exists { .. } | Step::GetData { .. } | Step::GetChildren { .. } | Step::MultiRead { .. }
        )
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = |watch: &bool| if *watch { " +watch" } else { "" };
        match self {
            Step::Create {
                client,
                path,
                data,
                mode,
            } => write!(f, "c{client} create /{path} {data:?} {mode:?}"),
            Step::Delete { client, path, version } => write!(f, "c{client} delete /{path} v={version:?}"),
            Step::SetData {
                client,
                path,
                data,
                version,
            } => write!(f, "c{client} set_data /{path} {data:?} v={version:?}"),
            Step::Exists { client, path, watch } => write!(f, "c{client} exists /{path}{}", w(watch)),
            Step::GetData { client, path, watch } => write!(f, "c{client} get_data /{path}{}", w(watch)),
            Step::GetChildren { client, path, watch } => write!(f, "c{client} get_children /{path}{}", w(watch)),
            Step::Multi { client, ops } => write!(f, "c{client} multi {ops:?}"),
            Step::MultiRead { client, ops } => write!(f, "c{client} multi_read {ops:?}"),
            Step::Sync { client, path } => write!(f, "c{client} sync /{path}"),
            Step::AddWatch {
                client,
                path,
                recursive,
            } => {
                let mode = if *recursive { "recursive" } else { "persistent" };
                write!(f, "c{client} add_watch /{path} {mode}")
            }
            Step::Close { client } => write!(f, "c{client} close"),
            Step::Disconnect { client } => write!(f, "c{client} disconnect"),
            Step::Reconnect { client } => write!(f, "c{client} reconnect"),
            Step::Expire { client } => write!(f, "c{client} expire"),
        }
    }
}

/// What the generator may produce.
#[derive(Debug, Clone)]
pub struct GenConfig {
    /// Number of clients (sessions), 2–3 is the useful range.
    pub clients: usize,
    /// Sequence length range.
    pub min_len: usize,
    pub max_len: usize,
    /// Generate TTL create modes (the server needs extended types).
    pub ttl: bool,
    /// Generate `Close` steps.
    pub close: bool,
    /// Generate a few malformed paths (rejected before sending).
    pub bad_paths: bool,
    /// Generate `addWatch` steps (persistent and persistent-recursive).
    pub persistent_watches: bool,
    /// Generate disconnect blocks: `Disconnect c`, 0–4 steps by other
    /// clients, `Reconnect c` (see [`disconnect_block`]).
    pub disconnects: bool,
    /// Generate `Expire` steps.
    pub expiry: bool,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            clients: 3,
            min_len: 5,
            max_len: 30,
            ttl: true,
            close: true,
            bad_paths: true,
            persistent_watches: true,
            disconnects: true,
            expiry: true,
        }
    }
}

/// TTL used for generated TTL nodes: long enough never to expire in a run.
pub const GEN_TTL_MS: i64 = 3_600_000;

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
fn node_path() -> impl Strategy<Value = String> {
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

fn data() -> impl Strategy<Value = Vec<u8>> {
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

fn plain_mode(ttl: bool) -> BoxedStrategy<CreateMode> {
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

/// A disconnect block: client `c` sets 0–3 one-shot watches, is cut off,
/// 0–4 writes by the other clients run (what `c`'s watches must learn
/// about on the reconnect — SetWatches' verdicts, or the documented miss),
/// and `c` reconnects. With a single client, no writes in between.
pub fn disconnect_block(config: &GenConfig) -> impl Strategy<Value = Vec<Step>> {
    let n = config.clients.max(1);
    let watch = (0..3usize, node_path()).prop_map(|(kind, path)| (kind, path));
    let write = step(&plain(config)).prop_filter("a write", Step::is_write);
    // Writes aimed at the watched nodes: (which watch, what write).
    let aimed = (0..3usize, 0..4u8);
    (
        0..n,
        prop::collection::vec(watch, 0..=3),
        prop::collection::vec(write, 0..=3),
        prop::collection::vec(aimed, 0..=3),
    )
        .prop_map(move |(c, watches, generic, aimed)| {
            let other = (c + 1) % n;
            let mut inner: Vec<Step> = aimed
                .iter()
                .filter_map(|&(w, kind)| {
                    let path = watches.get(w % watches.len().max(1))?.1.clone();
                    Some(aimed_write(other, path, kind))
                })
                .collect();
            inner.extend(generic);
            let mut steps: Vec<Step> = watches
                .into_iter()
                .map(|(kind, path)| match kind {
                    0 => Step::Exists {
                        client: c,
                        path,
                        watch: true,
                    },
                    1 => Step::GetData {
                        client: c,
                        path,
                        watch: true,
                    },
                    _ => Step::GetChildren {
                        client: c,
                        path,
                        watch: true,
                    },
                })
                .collect();
            steps.push(Step::Disconnect { client: c });
            steps.extend(inner.into_iter().filter(|_| n > 1).map(|s| {
                let k = s.client();
                if k == c {
                    s.with_client((c + 1) % n)
                } else {
                    s
                }
            }));
            steps.push(Step::Reconnect { client: c });
            steps
        })
}

/// A write by `client` on (or under) `path`: kind 0 sets its data, 1
/// creates it, 2 deletes it, 3 creates a child.
fn aimed_write(client: usize, path: String, kind: u8) -> Step {
    match kind {
        0 => Step::SetData {
            client,
            path,
            data: b"w".to_vec(),
            version: Version::Any,
        },
        1 => Step::Create {
            client,
            path,
            data: Vec::new(),
            mode: CreateMode::Persistent,
        },
        2 => Step::Delete {
            client,
            path,
            version: Version::Any,
        },
        _ => Step::Create {
            client,
            path: if path.is_empty() {
                "k".to_string()
            } else {
                format!("{path}/k")
            },
            data: Vec::new(),
            mode: CreateMode::Persistent,
        },
    }
}

/// `config` without the fault steps (for the steps inside a block).
fn plain(config: &GenConfig) -> GenConfig {
    GenConfig {
        disconnects: false,
        expiry: false,
        ..config.clone()
    }
}

/// A chunk of the body: one step, a disconnect block, or an expiry.
fn chunk(config: &GenConfig) -> BoxedStrategy<Vec<Step>> {
    let one = step(&plain(config)).prop_map(|s| vec![s]).boxed();
    let mut choices: Vec<(u32, BoxedStrategy<Vec<Step>>)> = vec![(40, one)];
    if config.disconnects {
        choices.push((2, disconnect_block(config).boxed()));
    }
    if config.expiry {
        let n = config.clients.max(1);
        choices.push((1, (0..n).prop_map(|client| vec![Step::Expire { client }]).boxed()));
    }
    proptest::strategy::Union::new_weighted(choices).boxed()
}

/// A sequence of steps: 1–3 creates of shallow nodes (so that most later
/// steps find something to act on), then the random body (steps, and the
/// fault blocks the config allows).
pub fn sequence(config: &GenConfig) -> impl Strategy<Value = Vec<Step>> {
    let clients = config.clients.max(1);
    let setup = prop::collection::vec(
        (
            0..clients,
            select(vec!["a", "b", "a/b", "a/c"]),
            data(),
            plain_mode(config.ttl),
        )
            .prop_map(|(client, path, data, mode)| Step::Create {
                client,
                path: path.to_string(),
                data,
                mode,
            }),
        1..=3,
    );
    let body = prop::collection::vec(chunk(config), config.min_len..=config.max_len.max(config.min_len));
    (setup, body).prop_map(|(mut steps, body)| {
        steps.extend(body.into_iter().flatten());
        steps
    })
}

/// The absolute path of a relative one under `root` (`""` is the root).
pub fn absolute(root: &str, rel: &str) -> String {
    if rel.is_empty() {
        root.to_string()
    } else {
        format!("{root}/{rel}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::ValueTree;
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
}
