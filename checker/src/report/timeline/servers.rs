//! The server lanes: who led in each epoch, and when each server was down,
//! paused or cut off. The history records no leadership events, so the
//! leader of an epoch is derived: commits are recorded by the first server
//! to apply them, which is the leader, so the server that recorded most of
//! an epoch's commits led it, from its first commit until the next epoch's
//! first commit (or until it was killed). The lanes say so.

use std::collections::{BTreeMap, BTreeSet};

use crate::history::{Event, FaultKind, History, Time};
use crate::properties::ms;

use super::canvas::Canvas;
use super::faults::{nodes_in, server_id, FaultClass, FaultSpan};

/// One bar on a server's (or client's) lane.
#[derive(Debug, Clone, PartialEq)]
pub struct StateSpan {
    pub start: Time,
    pub end: Time,
    /// `leader`, `down`, `paused` or `cut`.
    pub state: &'static str,
    pub label: String,
    pub tip: String,
}

/// Per server, its spans; the keys are every server the history names.
pub type ServerSpans = BTreeMap<u32, Vec<StateSpan>>;

/// Servers the history names: committers, the server a session is on,
/// replica checks, fault targets.
pub fn servers_seen(history: &History, faults: &[FaultSpan]) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    for e in &history.events {
        match e {
            Event::Commit { server, .. } | Event::Replica { server, .. } => {
                out.insert(*server);
            }
            Event::Session { server: Some(s), .. } => {
                out.insert(*s);
            }
            _ => {}
        }
    }
    for f in faults {
        out.extend(f.targets.iter().flat_map(|t| nodes_in(t)).filter_map(server_id));
    }
    out
}

/// The leader of each epoch, derived from the commits (see the module doc).
pub fn leaders(history: &History, faults: &[FaultSpan], end: Time) -> Vec<(u32, StateSpan)> {
    // epoch -> (first commit time, commits per server)
    let mut epochs: BTreeMap<i64, (Time, BTreeMap<u32, u32>)> = BTreeMap::new();
    for e in &history.events {
        if let Event::Commit { time, server, zxid, .. } = e {
            let ep = epochs.entry(zxid >> 32).or_insert((*time, BTreeMap::new()));
            ep.0 = ep.0.min(*time);
            *ep.1.entry(*server).or_default() += 1;
        }
    }
    let starts: Vec<Time> = epochs.values().map(|e| e.0).collect();
    let mut out = Vec::new();
    for (i, (epoch, (start, counts))) in epochs.iter().enumerate() {
        let total: u32 = counts.values().sum();
        // Most commits first; the lower id on a tie.
        let Some((&server, &n)) = counts.iter().max_by_key(|(s, n)| (**n, std::cmp::Reverse(**s))) else {
            continue;
        };
        let next = starts.get(i + 1).copied().unwrap_or(end);
        let killed = faults
            .iter()
            .filter(|f| f.class == FaultClass::Crash && f.start >= *start && f.start < next)
            .find(|f| f.targets.iter().any(|t| server_id(t) == Some(server)))
            .map(|f| f.start);
        let stop = killed.unwrap_or(next);
        let tip = format!(
            "epoch {epoch}: zk{server} led (derived: it recorded {n} of the epoch's {total} commits, the first at {})\nuntil {}{}",
            ms(*start),
            ms(stop),
            if killed.is_some() { " (killed)" } else { "" }
        );
        out.push((
            server,
            StateSpan {
                start: *start,
                end: stop,
                state: "leader",
                label: format!("leader e{epoch}"),
                tip,
            },
        ));
    }
    out
}

/// Which servers and clients a network fault cuts off, with a word on how.
/// A partition cuts every node in a group that reaches less than a
/// majority of the servers (those in its group and those in no group,
/// which keep their links); a ring or bridge cuts the servers on each lost link; a
/// one-way cut both ends; a client cut its client.
pub fn cut_nodes(f: &FaultSpan, servers: &BTreeSet<u32>) -> Vec<(String, String)> {
    let majority = servers.len() / 2 + 1;
    match f.kind.kind() {
        _ if f.is_partition() => {
            let grouped: BTreeSet<u32> = f
                .targets
                .iter()
                .flat_map(|g| nodes_in(g))
                .filter_map(server_id)
                .collect();
            let ungrouped = servers.difference(&grouped).count();
            let mut out = Vec::new();
            for g in &f.targets {
                let nodes = nodes_in(g);
                let in_group = nodes.iter().filter(|n| server_id(n).is_some()).count();
                if in_group + ungrouped < majority {
                    for n in &nodes {
                        out.push((n.to_string(), "cut: minority".to_string()));
                    }
                }
            }
            out
        }
        Some(FaultKind::ClientCut) => {
            let label = match f.detail.split_once("cut from ") {
                Some((_, from)) => format!("cut from {from}"),
                None => "cut".to_string(),
            };
            f.targets.iter().map(|n| (n.clone(), label.clone())).collect()
        }
        Some(FaultKind::OneWayCut) => f
            .targets
            .iter()
            .map(|n| (n.clone(), "cut one way".to_string()))
            .collect(),
        _ => {
            let mut lost: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for t in &f.targets {
                let ns = nodes_in(t);
                if let [a, b] = ns[..] {
                    lost.entry(a.to_string()).or_default().push(b.to_string());
                    lost.entry(b.to_string()).or_default().push(a.to_string());
                } else {
                    for n in ns {
                        lost.entry(n.to_string()).or_default();
                    }
                }
            }
            lost.into_iter()
                .map(|(n, peers)| {
                    let l = if peers.is_empty() {
                        "cut".to_string()
                    } else {
                        format!("cut from {}", peers.join(","))
                    };
                    (n, l)
                })
                .collect()
        }
    }
}

/// The spans of a node (`zk2`, `client3`) from down, paused and network
/// faults.
pub fn node_spans(node: &str, faults: &[FaultSpan], servers: &BTreeSet<u32>) -> Vec<StateSpan> {
    let mut out = Vec::new();
    for f in faults.iter().filter(|f| !f.instant) {
        let names_it = f.targets.iter().any(|t| t == node);
        let (state, label) = match f.class {
            FaultClass::Crash if names_it => ("down", "down".to_string()),
            FaultClass::Pause if names_it => ("paused", "paused".to_string()),
            FaultClass::Network => match cut_nodes(f, servers).into_iter().find(|(n, _)| n == node) {
                Some((_, l)) => ("cut", l),
                None => continue,
            },
            _ => continue,
        };
        out.push(StateSpan {
            start: f.start,
            end: f.end,
            state,
            label,
            tip: format!("{node}: {}", f.tip()),
        });
    }
    out
}

/// Every server's spans: leadership, then down/paused/cut.
pub fn server_spans(history: &History, faults: &[FaultSpan], end: Time) -> ServerSpans {
    let seen = servers_seen(history, faults);
    let mut out: ServerSpans = seen.iter().map(|s| (*s, Vec::new())).collect();
    for (s, span) in leaders(history, faults, end) {
        out.entry(s).or_default().push(span);
    }
    for (s, spans) in out.iter_mut() {
        spans.extend(node_spans(&format!("zk{s}"), faults, &seen));
    }
    out
}

/// A server's colour, shared by its lane name and the client lanes'
/// connection bars.
pub fn server_colour(server: u32) -> &'static str {
    const PALETTE: [&str; 7] = [
        "#00838f", "#6d4c41", "#c2185b", "#3949ab", "#9e9d24", "#00695c", "#ad1457",
    ];
    PALETTE[(server as usize) % PALETTE.len()]
}

/// Height of one server lane: a row for leadership, one for down/paused,
/// one for cuts.
pub const SERVER_LANE_H: f64 = 40.0;

fn row_of(state: &str) -> f64 {
    match state {
        "leader" => 0.0,
        "down" | "paused" => 1.0,
        _ => 2.0,
    }
}

/// Draws the server lanes from `y`; returns their total height.
pub fn draw(c: &mut Canvas, spans: &ServerSpans, y: f64) -> f64 {
    let mut ly = y;
    for (server, ss) in spans {
        let style = format!(r#" style="fill:{}""#, server_colour(*server));
        c.lane(
            "server-lane",
            ly,
            SERVER_LANE_H,
            &format!("zk{server}"),
            &style,
            &format!(r#" data-server="{server}""#),
        );
        for s in ss {
            let ry = ly + 3.0 + row_of(s.state) * 12.0;
            c.bar(&format!("st st-{}", s.state), s.start, s.end, ry, 10.0, 2.0, "", &s.tip);
            c.label("stlbl", s.start, Some(s.end), true, ry + 8.5, &s.label);
        }
        ly += SERVER_LANE_H;
    }
    ly - y
}

/// The client lanes' spans from faults (paused, cut), keyed by client.
pub fn client_spans(
    faults: &[FaultSpan],
    servers: &BTreeSet<u32>,
    clients: &BTreeSet<u32>,
) -> BTreeMap<u32, Vec<StateSpan>> {
    let mut out: BTreeMap<u32, Vec<StateSpan>> = BTreeMap::new();
    for c in clients {
        let spans = node_spans(&format!("client{c}"), faults, servers);
        if !spans.is_empty() {
            out.insert(*c, spans);
        }
    }
    out
}
