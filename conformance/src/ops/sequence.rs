//! Whole sequences: a setup, then single steps mixed with fault blocks
//! (a client cut off and let back, a session expired).

use proptest::prelude::*;
use proptest::sample::select;
use zkdst_recipes::zk::CreateMode;

use super::strategy::{data, node_path, plain_mode};
use super::{step, GenConfig, Step, Version};

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
