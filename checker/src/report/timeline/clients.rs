//! The client lanes: operations as bars from invocation to completion
//! (stacked into rows where they overlap), a bottom strip saying which
//! server the client was connected to, session changes and watches as
//! markers, and the faults that hit the client.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::history::{ClientId, Event, History, OpId, Operation, Outcome, SessionState, Time, Value};
use crate::properties::{describe_op, ms};

use super::super::outcome_text;
use super::canvas::{esc, pack, tip_attr, Canvas};
use super::faults::{client_id, FaultSpan};
use super::servers::{server_colour, StateSpan};

const OP_ROW: f64 = 13.0;
const PAD: f64 = 3.0;
/// The strip under the operations: connection and session markers.
const CONN_H: f64 = 12.0;

pub struct ClientLanes {
    /// Each client's lane: its top and height.
    pub lanes: BTreeMap<ClientId, (f64, f64)>,
    rows: BTreeMap<OpId, usize>,
    pub height: f64,
}

/// Every client the history names.
pub fn clients_seen(history: &History, ops: &[Operation]) -> BTreeSet<ClientId> {
    let mut out: BTreeSet<ClientId> = ops.iter().map(|o| o.client).collect();
    for e in &history.events {
        match e {
            Event::Session { client, .. } | Event::Watch { client, .. } => {
                out.insert(*client);
            }
            Event::Note { client: Some(c), .. } => {
                out.insert(*c);
            }
            _ => {}
        }
    }
    out
}

/// Places the lanes from `y`, with a row per concurrent operation.
pub fn layout(c: &Canvas, clients: &BTreeSet<ClientId>, ops: &[Operation], y: f64) -> ClientLanes {
    let mut rows = BTreeMap::new();
    let mut lanes = BTreeMap::new();
    let mut ly = y;
    for client in clients {
        let mine: Vec<&Operation> = ops.iter().filter(|o| o.client == *client).collect();
        // Rows by true concurrency: a client's sequential calls share a
        // row (tiny ones blur together in the full view and come apart
        // when zoomed), so a lane is as tall as the client was concurrent.
        let px: Vec<(f64, f64)> = mine
            .iter()
            .map(|o| (o.invoked as f64, o.completed.unwrap_or(c.end) as f64 + 0.5))
            .collect();
        let (r, n) = pack(&px);
        for (o, row) in mine.iter().zip(r) {
            rows.insert(o.id, row);
        }
        let h = PAD + n.max(1) as f64 * OP_ROW + CONN_H + PAD;
        lanes.insert(*client, (ly, h));
        ly += h;
    }
    ClientLanes {
        lanes,
        rows,
        height: ly - y,
    }
}

fn class_of(o: &Operation) -> &'static str {
    match &o.outcome {
        None => "pending",
        Some(Outcome::Ok {
            value: Value::Error { .. },
        }) => "err",
        Some(Outcome::Ok { .. }) => "ok",
        Some(Outcome::Fail { .. }) => "fail",
        Some(Outcome::Info { .. }) => "info",
    }
}

/// The hover text of an operation: everything needed to read it alone.
pub fn op_tip(o: &Operation) -> String {
    let took = o
        .completed
        .map(|t| format!(" (took {})", ms(t - o.invoked)))
        .unwrap_or_default();
    format!(
        "op {} · client {} · session {}\n{}\ninvoked {} → completed {}{took}\nresult: {}\nzxid {}",
        o.id,
        o.client,
        o.session.map(|s| format!("{s:#x}")).unwrap_or_else(|| "none".into()),
        describe_op(&o.op),
        ms(o.invoked),
        o.completed.map(ms).unwrap_or_else(|| "never (pending)".into()),
        outcome_text(o),
        o.zxid.map(|z| format!("{z:#x}")).unwrap_or_else(|| "none".into()),
    )
}

/// Which server each client was connected to, from its session events:
/// (client, from, to, server, session).
pub fn connections(history: &History, end: Time) -> Vec<(ClientId, Time, Time, Option<u32>, i64)> {
    let mut open: BTreeMap<ClientId, (Time, Option<u32>, i64)> = BTreeMap::new();
    let mut out = Vec::new();
    for e in &history.events {
        if let Event::Session {
            time,
            client,
            session,
            state,
            server,
        } = e
        {
            if let Some((t0, s, sess)) = open.remove(client) {
                out.push((*client, t0, *time, s, sess));
            }
            if state.is_connected() {
                open.insert(*client, (*time, *server, *session));
            }
        }
    }
    out.extend(open.into_iter().map(|(c, (t0, s, sess))| (c, t0, end, s, sess)));
    out
}

/// Lane backgrounds, fault spans on the lanes, connection strips,
/// session and watch markers: everything under the operations.
pub fn draw_under(
    c: &mut Canvas,
    lanes: &ClientLanes,
    history: &History,
    faults: &[FaultSpan],
    spans: &BTreeMap<ClientId, Vec<StateSpan>>,
) {
    for (client, (ly, lh)) in &lanes.lanes {
        c.lane(
            "client-lane",
            *ly,
            *lh,
            &format!("client {client}"),
            "",
            &format!(r#" data-client="{client}""#),
        );
        for s in spans.get(client).into_iter().flatten() {
            c.bar(
                &format!("cst cst-{}", s.state),
                s.start,
                s.end,
                *ly + 1.0,
                lh - 2.0,
                2.0,
                "",
                &s.tip,
            );
        }
    }
    for (client, t0, t1, server, session) in connections(history, c.end) {
        let Some((ly, lh)) = lanes.lanes.get(&client).copied() else {
            continue;
        };
        let y = ly + lh - PAD - CONN_H + 2.0;
        let (name, style) = match server {
            Some(s) => (format!("zk{s}"), format!(r#" style="fill:{}""#, server_colour(s))),
            None => ("connected".to_string(), String::new()),
        };
        let tip = format!(
            "client {client} connected to {name}\nsession {session:#x}\nfrom {} to {}",
            ms(t0),
            ms(t1)
        );
        c.bar("conn", t0, t1, y, 8.0, 2.0, &style, &tip);
        c.label("connlbl", t0, Some(t1), true, y + 7.0, &name);
    }
    for f in faults.iter().filter(|f| f.instant) {
        for client in f.targets.iter().filter_map(|t| client_id(t)) {
            if let Some((ly, lh)) = lanes.lanes.get(&client).copied() {
                c.bar("cfault", f.start, f.start, ly + 1.0, lh - 2.0, 3.0, "", &f.tip());
            }
        }
    }
    for e in &history.events {
        match e {
            Event::Session {
                time,
                client,
                session,
                state,
                server,
            } => {
                let Some((ly, lh)) = lanes.lanes.get(client).copied() else {
                    continue;
                };
                let cls = match state {
                    SessionState::SyncConnected | SessionState::ConnectedReadOnly => "connected",
                    SessionState::Disconnected => "disconnected",
                    SessionState::Expired => "expired",
                    SessionState::Closed => "closed",
                    SessionState::AuthFailed => "other",
                };
                let tip = format!(
                    "session {session:#x} {state} at {}{}",
                    ms(*time),
                    server.map(|s| format!(" (server zk{s})")).unwrap_or_default()
                );
                c.dot(
                    &format!("sess s-{cls}"),
                    *time,
                    ly + lh - PAD - CONN_H / 2.0 + 1.0,
                    3.5,
                    &tip,
                );
            }
            Event::Watch {
                time,
                client,
                event,
                path,
                ..
            } => {
                let Some((ly, _)) = lanes.lanes.get(client).copied() else {
                    continue;
                };
                let tip = format!("watch {event} {} at {}", path.as_deref().unwrap_or(""), ms(*time));
                let _ = write!(
                    c.svg,
                    r#"<text class="watch" data-t0="{time}" data-dx="-4" x="{:.1}" y="{:.1}"{}>◆</text>"#,
                    c.x(*time) - 4.0,
                    ly + 9.0,
                    tip_attr(&tip)
                );
            }
            _ => {}
        }
    }
}

/// The operation bars; violating ones outlined, with a ▲ under their start.
pub fn draw_ops(c: &mut Canvas, lanes: &ClientLanes, ops: &[Operation], violating: &BTreeSet<OpId>) {
    for o in ops {
        let Some((ly, _)) = lanes.lanes.get(&o.client).copied() else {
            continue;
        };
        let by = ly + PAD + lanes.rows.get(&o.id).copied().unwrap_or(0) as f64 * OP_ROW;
        let is_v = violating.contains(&o.id);
        let class = format!("op {}{}", class_of(o), if is_v { " viol" } else { "" });
        let attrs = format!(r#" data-op="{}" rx="2""#, o.id);
        let tip = op_tip(o);
        c.bar(
            &class,
            o.invoked,
            o.completed.unwrap_or(c.end),
            by,
            OP_ROW - 3.0,
            2.0,
            &attrs,
            &tip,
        );
        if is_v {
            let _ = write!(
                c.svg,
                r#"<text class="vmark violation-marker" data-t0="{}" data-dx="0" x="{:.1}" y="{:.1}" text-anchor="middle" data-tip="{}">▲</text>"#,
                o.invoked,
                c.x(o.invoked),
                by + OP_ROW + 1.0,
                esc(&tip)
            );
        }
    }
}

/// The names of the faults on the client lanes (paused, cut from ...),
/// drawn over the operations with a halo so they stay readable.
pub fn draw_span_labels(c: &mut Canvas, lanes: &ClientLanes, spans: &BTreeMap<ClientId, Vec<StateSpan>>) {
    for (client, ss) in spans {
        let Some((ly, _)) = lanes.lanes.get(client).copied() else {
            continue;
        };
        for s in ss {
            c.label("cstlbl", s.start, Some(s.end), true, ly + 11.0, &s.label);
        }
    }
}
