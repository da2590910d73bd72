//! A self-contained HTML timeline: one file, inline CSS/JS/SVG, no external
//! resources. One lane per client; operations as bars from invocation to
//! completion coloured by outcome; faults as shaded bands across all lanes;
//! session events as markers; violating operations outlined in red with a
//! ▲ marker; hover shows op details; time axis in ms.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::history::{ClientId, Event, History, OpId, Operation, Outcome, Time, Value};
use crate::properties::{describe_op, end_of_history, ms, CheckResult};

use super::{hint, outcome_text, text::summary_line};

const LEFT: f64 = 110.0;
const PLOT_W: f64 = 1240.0;
const TOP: f64 = 56.0;
const ROW_H: f64 = 14.0;
const LANE_PAD: f64 = 8.0;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
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

const STYLE: &str = "body{font:13px system-ui,sans-serif;margin:16px;color:#222}h1{font-size:18px;margin:0 0 4px}
.sum{margin:4px 0 10px}.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle;border:1px solid #555}
svg{border:1px solid #ccc;background:#fff}.lane{fill:#f7f7f7}.lane.alt{fill:#eef1f5}.lname{font-size:12px;fill:#333}
.ok{fill:#43a047}.err{fill:#fb8c00}.info{fill:#8e24aa}.fail{fill:#e53935;opacity:.6}.pending{fill:#90caf9;stroke:#1e88e5;stroke-dasharray:3 2}
.viol{stroke:#d50000;stroke-width:3}.vmark{fill:#d50000;font-size:12px}.band{fill:#ffcdd2;opacity:.45}.bandlbl{font-size:11px;fill:#b71c1c}
.heal{stroke:#2e7d32;stroke-dasharray:4 3}.tick{stroke:#bbb}.tlbl{font-size:10px;fill:#555}.sess{stroke:#000;stroke-width:.5}
.s-connected{fill:#2e7d32}.s-disconnected{fill:#f9a825}.s-expired{fill:#c62828}.s-closed{fill:#212121}.s-other{fill:#757575}.watch{fill:#0277bd}
#tip{position:fixed;display:none;background:#263238;color:#fff;padding:6px 8px;border-radius:4px;font-size:12px;max-width:520px;pointer-events:none;white-space:pre-wrap}
.v{border-left:4px solid #d50000;padding:4px 8px;margin:6px 0;background:#fff5f5}.hint{color:#555;font-style:italic}.pass{color:#2e7d32}.bad{color:#d50000}";

const SCRIPT: &str = "(function(){var t=document.getElementById('tip');document.querySelectorAll('[data-tip]').forEach(function(e){
e.addEventListener('mousemove',function(ev){t.textContent=e.getAttribute('data-tip');t.style.display='block';t.style.left=(ev.clientX+12)+'px';t.style.top=(ev.clientY+12)+'px';});
e.addEventListener('mouseleave',function(){t.style.display='none';});});})();";

/// Renders the timeline with the check results.
pub fn render_html(history: &History, results: &[CheckResult]) -> String {
    let ops = history.operations().unwrap_or_default();
    let end = end_of_history(history).max(1);
    let x = |t: Time| LEFT + (t.min(end) as f64 / end as f64) * PLOT_W;
    let violating: BTreeSet<OpId> = results
        .iter()
        .flat_map(|r| r.violations.iter().flat_map(|v| v.ops.iter().copied()))
        .collect();

    // Lanes: every client that appears; sub-rows for overlapping ops.
    let mut clients: BTreeSet<ClientId> = ops.iter().map(|o| o.client).collect();
    for e in &history.events {
        match e {
            Event::Session { client, .. } | Event::Watch { client, .. } => {
                clients.insert(*client);
            }
            Event::Note { client: Some(c), .. } => {
                clients.insert(*c);
            }
            _ => {}
        }
    }
    let mut rows: BTreeMap<OpId, usize> = BTreeMap::new();
    let mut lane_rows: BTreeMap<ClientId, usize> = BTreeMap::new();
    for c in &clients {
        let mut free_at: Vec<Time> = Vec::new();
        for o in ops.iter().filter(|o| o.client == *c) {
            let stop = o.completed.unwrap_or(end).max(o.invoked + end / 400);
            let row = free_at.iter().position(|f| *f <= o.invoked).unwrap_or(free_at.len());
            if row == free_at.len() {
                free_at.push(stop);
            } else {
                free_at[row] = stop;
            }
            rows.insert(o.id, row);
        }
        lane_rows.insert(*c, free_at.len().max(1));
    }
    let mut lane_y: BTreeMap<ClientId, (f64, f64)> = BTreeMap::new();
    let mut y = TOP;
    for c in &clients {
        let h = lane_rows[c] as f64 * ROW_H + LANE_PAD;
        lane_y.insert(*c, (y, h));
        y += h;
    }
    let height = y + 30.0;
    let width = LEFT + PLOT_W + 40.0;

    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}">"#
    );
    for (i, (c, (ly, lh))) in lane_y.iter().enumerate() {
        let alt = if i % 2 == 1 { " alt" } else { "" };
        let _ = write!(
            svg,
            r#"<g class="client-lane" data-client="{c}"><rect class="lane{alt}" x="0" y="{ly}" width="{width}" height="{lh}"/><text class="lname" x="6" y="{}">client {c}</text></g>"#,
            ly + lh / 2.0 + 4.0
        );
    }
    // Time axis.
    let step = nice_step(end);
    let mut t = 0;
    while t <= end {
        let tx = x(t);
        let _ = write!(
            svg,
            r#"<line class="tick" x1="{tx}" y1="{}" x2="{tx}" y2="{}"/><text class="tlbl" x="{tx}" y="{}" text-anchor="middle">{}</text>"#,
            TOP - 4.0,
            y,
            TOP - 8.0,
            esc(&ms(t))
        );
        t += step;
    }
    // Faults: a band from each fault to the next heal (or the end).
    let faults: Vec<(Time, &str, &Vec<String>, &str)> = history
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Fault {
                time,
                kind,
                targets,
                detail,
            } => Some((*time, kind.as_str(), targets, detail.as_str())),
            _ => None,
        })
        .collect();
    let mut label_row = 0;
    for (i, (ft, kind, targets, detail)) in faults.iter().enumerate() {
        let tip = esc(&format!(
            "fault {kind} at {} on [{}] {detail}",
            ms(*ft),
            targets.join(", ")
        ));
        if kind.starts_with("heal") {
            let _ = write!(
                svg,
                r#"<line class="heal" x1="{0}" y1="{1}" x2="{0}" y2="{y}" data-tip="{tip}"/><text class="bandlbl" x="{0}" y="{2}">{3}</text>"#,
                x(*ft),
                TOP,
                TOP - 20.0,
                esc(kind)
            );
            continue;
        }
        let until = faults[i + 1..]
            .iter()
            .find(|f| f.1.starts_with("heal"))
            .map_or(end, |f| f.0);
        let (x0, x1) = (x(*ft), x(until));
        let ly = 14.0 + (label_row % 2) as f64 * 12.0;
        label_row += 1;
        let label = if targets.is_empty() {
            kind.to_string()
        } else {
            format!("{kind} {}", targets.join(","))
        };
        let _ = write!(
            svg,
            r#"<g class="fault"><rect class="band" x="{x0}" y="{TOP}" width="{}" height="{}" data-tip="{tip}"/><text class="bandlbl" x="{x0}" y="{ly}">{}</text></g>"#,
            (x1 - x0).max(2.0),
            y - TOP,
            esc(&label)
        );
    }
    // Operations.
    for o in &ops {
        let (ly, _) = lane_y[&o.client];
        let by = ly + LANE_PAD / 2.0 + rows[&o.id] as f64 * ROW_H;
        let x0 = x(o.invoked);
        let x1 = x(o.completed.unwrap_or(end)).max(x0 + 3.0);
        let is_v = violating.contains(&o.id);
        let tip = esc(&format!(
            "op {} client {}{}\n{}\n{} → {}\n{}{}",
            o.id,
            o.client,
            o.session.map(|s| format!(" session {s:#x}")).unwrap_or_default(),
            describe_op(&o.op),
            ms(o.invoked),
            o.completed.map(ms).unwrap_or_else(|| "pending".into()),
            outcome_text(o),
            o.zxid.map(|z| format!("\nzxid {z:#x}")).unwrap_or_default()
        ));
        let vcls = if is_v { " viol" } else { "" };
        let _ = write!(
            svg,
            r#"<rect class="op {}{vcls}" data-op="{}" x="{x0:.1}" y="{by:.1}" width="{:.1}" height="{}" rx="2" data-tip="{tip}"/>"#,
            class_of(o),
            o.id,
            x1 - x0,
            ROW_H - 3.0
        );
        if is_v {
            let _ = write!(
                svg,
                r#"<text class="vmark violation-marker" x="{:.1}" y="{:.1}" text-anchor="middle" data-tip="{tip}">▲</text>"#,
                x0,
                by + ROW_H - 2.0
            );
        }
    }
    // Session and watch markers.
    for e in &history.events {
        match e {
            Event::Session {
                time,
                client,
                session,
                state,
                server,
            } => {
                let (ly, lh) = lane_y[client];
                let st = state.to_ascii_lowercase();
                let cls = ["connected", "disconnected", "expired", "closed"]
                    .iter()
                    .find(|k| st.starts_with(*k))
                    .map_or("other", |k| k);
                let tip = esc(&format!(
                    "session {session:#x} {state} at {}{}",
                    ms(*time),
                    server.map(|s| format!(" (server {s})")).unwrap_or_default()
                ));
                let _ = write!(
                    svg,
                    r#"<circle class="sess s-{cls}" cx="{:.1}" cy="{:.1}" r="4" data-tip="{tip}"/>"#,
                    x(*time),
                    ly + lh - 4.0
                );
            }
            Event::Watch {
                time,
                client,
                event,
                path,
                ..
            } => {
                let (ly, lh) = lane_y[client];
                let tip = esc(&format!(
                    "watch {event} {} at {}",
                    path.as_deref().unwrap_or(""),
                    ms(*time)
                ));
                let (cx, cy) = (x(*time), ly + lh - 4.0);
                let _ = write!(
                    svg,
                    r#"<path class="watch" d="M{cx:.1} {:.1} l3 3 l-3 3 l-3 -3z" data-tip="{tip}"/>"#,
                    cy - 3.0
                );
            }
            _ => {}
        }
    }
    svg.push_str("</svg>");

    let mut html = String::new();
    let title = history
        .meta
        .get("scenario")
        .map(|s| format!("zkdst timeline — {s}"))
        .unwrap_or_else(|| "zkdst timeline".into());
    let _ = write!(
        html,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>",
        esc(&title)
    );
    let _ = write!(html, "<h1>{}</h1>", esc(&title));
    let meta: Vec<String> = history.meta.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if !meta.is_empty() {
        let _ = write!(html, "<div>{}</div>", esc(&meta.join("  ")));
    }
    let any_bad = results.iter().any(|r| r.is_violation());
    let _ = write!(
        html,
        "<div class=\"sum {}\">{}</div>",
        if any_bad { "bad" } else { "pass" },
        esc(&summary_line(results))
    );
    html.push_str("<div class=\"legend\"><span><i class=\"sw ok\" style=\"background:#43a047\"></i>ok</span><span><i class=\"sw\" style=\"background:#fb8c00\"></i>error reply</span><span><i class=\"sw\" style=\"background:#8e24aa\"></i>info / unknown</span><span><i class=\"sw\" style=\"background:#e53935\"></i>failed (not applied)</span><span><i class=\"sw\" style=\"background:#90caf9\"></i>pending</span><span><i class=\"sw\" style=\"background:#ffcdd2\"></i>fault</span><span><b style=\"color:#d50000\">▲</b> violation</span><span>● session event</span><span style=\"color:#0277bd\">◆ watch</span></div>");
    html.push_str(&svg);
    for r in results.iter().filter(|r| !r.violations.is_empty()) {
        let _ = write!(html, "<h2>{}</h2>", esc(&r.checker));
        for v in &r.violations {
            let _ = write!(
                html,
                "<div class=\"v\"><b>[{}]</b> {}<br><span class=\"hint\">{}</span></div>",
                esc(&v.kind),
                esc(&v.explanation),
                esc(hint(&v.kind))
            );
        }
    }
    let _ = write!(html, "<div id=\"tip\"></div><script>{SCRIPT}</script></body></html>");
    html
}

/// A round tick step giving about ten ticks.
fn nice_step(end: Time) -> Time {
    let raw = (end / 10).max(1);
    let mag = 10u64.pow(raw.ilog10());
    [1, 2, 5, 10].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Op;
    use crate::properties::testkit::Builder;
    use crate::properties::{run_all, Params};

    fn bad_history() -> History {
        let mut b = Builder::new();
        let a = b.invoke_s(
            0,
            1,
            Some(0x10),
            Op::Acquire {
                lock: "/l".into(),
                shared: false,
            },
        );
        b.complete(
            a,
            10,
            Outcome::Ok {
                value: Value::Token { token: 1 },
            },
        );
        b.fault(12, "partition");
        b.ok(
            15,
            30,
            2,
            Op::Acquire {
                lock: "/l".into(),
                shared: false,
            },
            Value::Token { token: 2 },
        );
        b.session(20, 2, 0x20, "connected");
        b.fault(40, "heal");
        b.info(
            45,
            50,
            3,
            Op::Enqueue {
                queue: "q".into(),
                item: "<x>".into(),
                priority: 0,
            },
        );
        b.ok(60, 61, 1, Op::Release { lock: "/l".into() }, Value::Unit);
        b.watch(62, 2, "NodeDeleted", "/l/n");
        b.build()
    }

    #[test]
    fn html_is_self_contained_with_every_lane_and_the_violation() {
        let h = bad_history();
        let results = run_all(&["mutex", "queue"], &h, &Params::default()).unwrap();
        assert!(results[0].is_violation());
        let html = render_html(&h, &results);
        assert!(!html.contains("http://"));
        assert!(!html.contains("https://"));
        assert!(!html.contains("src="), "no external scripts or images");
        assert!(!html.contains("<link"), "no external stylesheets");
        for c in [1, 2, 3] {
            assert!(html.contains(&format!("data-client=\"{c}\"")), "lane {c}");
        }
        assert!(html.contains("violation-marker"));
        assert!(html.contains("class=\"op ok viol\""));
        assert!(html.contains("class=\"op info\""));
        assert!(html.contains("class=\"band\""));
        assert!(html.contains("&lt;x&gt;"), "op details are escaped");
    }

    #[test]
    fn text_report_names_ops_times_and_hint() {
        let h = bad_history();
        let results = run_all(&["mutex"], &h, &Params::default()).unwrap();
        let text = super::super::render_text(&h, &results);
        assert!(text.contains("mutex: VIOLATION (1)"), "{text}");
        assert!(text.contains("op 1: client 1 session 0x10"), "{text}");
        assert!(text.contains("10 ms"), "{text}");
        assert!(text.contains("hint:") && text.contains("fencing"), "{text}");
    }

    #[test]
    fn tick_steps_are_round() {
        assert_eq!(nice_step(1_000_000_000), 100_000_000);
        assert_eq!(nice_step(37), 5);
    }
}
