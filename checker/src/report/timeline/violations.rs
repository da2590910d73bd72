//! The violations drawn where they happened: a numbered band in the
//! violations row, and the time it covers shaded and tagged on every
//! client lane it involves, with a red bracket joining those lanes.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::history::{ClientId, OpId, Operation, Time};
use crate::properties::{ms, CheckResult};

use super::canvas::{label_w, pack, Canvas, ROW_H};
use super::clients::ClientLanes;

/// Violations beyond this many are listed below the chart, not drawn:
/// past a dozen brackets the chart stops being readable.
pub const MAX_DRAWN: usize = 8;

pub struct Overlay {
    /// 1-based, as in the list under the chart.
    pub n: usize,
    pub kind: String,
    pub t0: Time,
    pub t1: Time,
    /// The client lanes it involves, top to bottom.
    pub clients: Vec<ClientId>,
    pub ops: Vec<OpId>,
}

impl Overlay {
    pub fn label(&self) -> String {
        format!("V{} {}", self.n, self.kind)
    }
}

/// One overlay per violation, numbered across checkers in report order.
/// Its time range is the violation's instants, or else its operations'.
pub fn overlays(results: &[CheckResult], ops: &[Operation], end: Time) -> Vec<Overlay> {
    let by_id: BTreeMap<OpId, &Operation> = ops.iter().map(|o| (o.id, o)).collect();
    let mut out = Vec::new();
    let all = results.iter().flat_map(|r| r.violations.iter().map(move |v| (r, v)));
    for (i, (r, v)) in all.enumerate() {
        let vops: Vec<&Operation> = v.ops.iter().filter_map(|id| by_id.get(id).copied()).collect();
        let (t0, t1) = if v.times.is_empty() {
            let t0 = vops.iter().map(|o| o.invoked).min();
            let t1 = vops.iter().map(|o| o.completed.unwrap_or(end)).max();
            match (t0, t1) {
                (Some(a), Some(b)) => (a, b),
                _ => continue,
            }
        } else {
            (*v.times.iter().min().unwrap_or(&0), *v.times.iter().max().unwrap_or(&0))
        };
        let mut clients: Vec<ClientId> = v.clients.clone();
        for o in &vops {
            if !clients.contains(&o.client) {
                clients.push(o.client);
            }
        }
        clients.sort();
        out.push(Overlay {
            n: i + 1,
            kind: format!("{}: {}", r.checker, v.kind),
            t0: t0.min(end),
            t1: t1.min(end),
            clients,
            ops: v.ops.clone(),
        });
    }
    out
}

/// The numbered bands, packed into rows from `y`; returns their height.
pub fn draw_bands(c: &mut Canvas, overlays: &[Overlay], y: f64) -> f64 {
    let shown = &overlays[..overlays.len().min(MAX_DRAWN)];
    let mut order: Vec<usize> = (0..shown.len()).collect();
    order.sort_by_key(|i| (shown[*i].t0, shown[*i].n));
    let px: Vec<(f64, f64)> = order
        .iter()
        .map(|i| {
            let o = &shown[*i];
            let x0 = c.x(o.t0);
            (x0, c.x(o.t1).max(x0 + 3.0).max(x0 + label_w(&o.label())))
        })
        .collect();
    let (rows, n) = pack(&px);
    for (i, row) in order.into_iter().zip(rows) {
        let o = &shown[i];
        let ry = y + row as f64 * ROW_H;
        let tip = format!("V{} {}\nfrom {} to {}", o.n, o.kind, ms(o.t0), ms(o.t1));
        let attrs = format!(r#" data-violation="{}""#, o.n);
        c.bar("vband", o.t0, o.t1, ry + 2.0, ROW_H - 4.0, 3.0, &attrs, &tip);
        c.label("vlbl", o.t0, Some(o.t1), false, ry + ROW_H - 4.5, &o.label());
    }
    n.max(1) as f64 * ROW_H
}

/// The shading on each involved lane, under the operations.
pub fn draw_spans(c: &mut Canvas, overlays: &[Overlay], lanes: &ClientLanes) {
    for o in overlays.iter().take(MAX_DRAWN) {
        let ids: Vec<String> = o.clients.iter().map(|c| c.to_string()).collect();
        let _ = write!(
            c.svg,
            r#"<g class="violation-overlay" data-violation="{}" data-clients="{}" data-ops="{}">"#,
            o.n,
            ids.join(" "),
            o.ops.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
        );
        for client in &o.clients {
            if let Some((ly, lh)) = lanes.lanes.get(client).copied() {
                let attrs = format!(r#" data-client="{client}""#);
                let tip = format!("V{} {}: client {client} from {} to {}", o.n, o.kind, ms(o.t0), ms(o.t1));
                c.bar("vspan", o.t0, o.t1, ly + 1.0, lh - 2.0, 3.0, &attrs, &tip);
            }
        }
        c.svg.push_str("</g>");
    }
}

/// The bracket: a red line at each end of the range joining the lanes
/// involved, over the operations, and the violation's number on each of
/// those lanes (tags that would collide in the full view stack down).
pub fn draw_links(c: &mut Canvas, overlays: &[Overlay], lanes: &ClientLanes) {
    let shown = &overlays[..overlays.len().min(MAX_DRAWN)];
    for o in shown {
        let involved: Vec<(f64, f64)> = o.clients.iter().filter_map(|c| lanes.lanes.get(c).copied()).collect();
        let Some(top) = involved.iter().map(|l| l.0).reduce(f64::min) else {
            continue;
        };
        let bottom = involved.iter().map(|l| l.0 + l.1).fold(top, f64::max);
        let attrs = format!(r#" data-violation="{}""#, o.n);
        c.vline("vlink", o.t0, top + 1.0, bottom - 1.0, &attrs);
        if o.t1 > o.t0 {
            c.vline("vlink", o.t1, top + 1.0, bottom - 1.0, &attrs);
        }
    }
    for (client, (ly, lh)) in &lanes.lanes {
        let mut mine: Vec<&Overlay> = shown.iter().filter(|o| o.clients.contains(client)).collect();
        mine.sort_by_key(|o| (o.t0, o.n));
        let px: Vec<(f64, f64)> = mine
            .iter()
            .map(|o| (c.x(o.t0), c.x(o.t0) + label_w(&format!("V{}", o.n))))
            .collect();
        let (rows, _) = pack(&px);
        let last_row = ((lh - 14.0) / 11.0).floor().max(0.0) as usize;
        for (o, row) in mine.into_iter().zip(rows) {
            let y = ly + 11.0 + row.min(last_row) as f64 * 11.0;
            c.label("vtag", o.t0, Some(o.t1), false, y, &format!("V{}", o.n));
        }
    }
}
