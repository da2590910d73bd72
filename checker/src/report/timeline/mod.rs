//! A self-contained HTML timeline a person reads in one look: one file,
//! inline CSS/JS/SVG, no external resources, a pure function of the
//! history and the results. Top to bottom: the violations as numbered
//! bands, also drawn across the client lanes they involve; one band per
//! fault with its target, packed so labels never overlap; one lane per
//! server (leader per epoch, down, paused, cut); one lane per client
//! (operations, the server it was connected to, session changes). Hover
//! shows details; wheel or buttons zoom, drag pans, `#t=FROM-TO` (ms)
//! opens zoomed.

mod assets;
mod canvas;
mod clients;
mod faults;
mod servers;
#[cfg(test)]
mod tests;
mod violations;

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::history::{History, OpId};
use crate::properties::{end_of_history, ms, CheckResult};

use super::text::summary_line;
use assets::{SCRIPT, STYLE};
use canvas::{esc, nice_step, Canvas, AXIS_H, LEFT, PLOT_W, WIDTH};

/// Renders the timeline with the check results.
pub fn render_html(history: &History, results: &[CheckResult]) -> String {
    let ops = history.operations().unwrap_or_default();
    let mut c = Canvas::new(end_of_history(history));
    let end = c.end;
    let faults = faults::spans(history, end);
    let servers = servers::server_spans(history, &faults, end);
    let clients = clients::clients_seen(history, &ops);
    let client_spans = servers::client_spans(&faults, &servers.keys().copied().collect(), &clients);
    let overlays = violations::overlays(results, &ops, end);
    let violating: BTreeSet<OpId> = results
        .iter()
        .flat_map(|r| r.violations.iter().flat_map(|v| v.ops.iter().copied()))
        .collect();

    let mut y = AXIS_H;
    if !overlays.is_empty() {
        let note = if overlays.len() > violations::MAX_DRAWN {
            format!(
                "the first {} of {} drawn; all listed below",
                violations::MAX_DRAWN,
                overlays.len()
            )
        } else {
            "each also shaded, tagged and bracketed on the client lanes it involves".to_string()
        };
        y += c.section(y, "VIOLATIONS", &note);
        y += violations::draw_bands(&mut c, &overlays, y);
    }
    y += c.section(
        y,
        "FAULTS",
        "one band per fault, from injection to its undo; hover for details",
    );
    y += faults::draw(&mut c, &faults, y);
    if !servers.is_empty() {
        y += c.section(
            y,
            "SERVERS",
            "leader per epoch (derived: the server that applied the epoch's commits first), down, paused, cut off",
        );
        y += servers::draw(&mut c, &servers, y);
    }
    y += c.section(
        y,
        "CLIENTS",
        "operations; bottom strip: the server the session was connected to",
    );
    let lanes = clients::layout(&c, &clients, &ops, y);
    clients::draw_under(&mut c, &lanes, history, &faults, &client_spans);
    violations::draw_spans(&mut c, &overlays, &lanes);
    clients::draw_ops(&mut c, &lanes, &ops, &violating);
    clients::draw_span_labels(&mut c, &lanes, &client_spans);
    violations::draw_links(&mut c, &overlays, &lanes);
    y += lanes.height;
    let height = y + 4.0;

    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg id="tl" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" data-left="{LEFT}" data-plotw="{PLOT_W}" data-end="{end}"><defs><clipPath id="plot"><rect x="{LEFT}" y="0" width="{PLOT_W}" height="{height}"/></clipPath><pattern id="hatch-paused" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eceff1"/><line x1="0" y1="0" x2="0" y2="6" stroke="#90a4ae" stroke-width="3"/></pattern><pattern id="hatch-cut" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff3e0"/><line x1="0" y1="0" x2="0" y2="6" stroke="#ffb74d" stroke-width="3"/></pattern></defs>"##
    );
    svg.push_str(&c.frame);
    svg.push_str(r#"<g clip-path="url(#plot)"><g id="axis">"#);
    let step = nice_step(end);
    let mut t = 0;
    while t <= end {
        let tx = c.x(t);
        let _ = write!(
            svg,
            r#"<line class="tick" x1="{tx:.1}" y1="18" x2="{tx:.1}" y2="{height}"/><text class="tlbl" x="{tx:.1}" y="13" text-anchor="{}">{}</text>"#,
            if t == 0 { "start" } else { "middle" },
            esc(&ms(t))
        );
        t += step;
    }
    svg.push_str("</g>");
    svg.push_str(&c.svg);
    let _ = write!(
        svg,
        r#"<rect id="guide" x="0" y="0" width="0" height="{height}" style="display:none"/></g></svg>"#
    );
    page(history, results, &overlays, &servers, &svg)
}

/// The page around the chart: title, facts, verdicts, controls, legend,
/// the chart, and every violation in words with a link that zooms to it.
fn page(
    history: &History,
    results: &[CheckResult],
    overlays: &[violations::Overlay],
    servers: &servers::ServerSpans,
    svg: &str,
) -> String {
    let mut html = String::new();
    let title = history
        .meta
        .get("scenario")
        .map(|s| format!("zkdst timeline — {s}"))
        .unwrap_or_else(|| "zkdst timeline".into());
    let _ = write!(
        html,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>",
        esc(&title),
        esc(&title)
    );
    let meta: Vec<String> = history.meta.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if !meta.is_empty() {
        let _ = write!(html, "<div class=\"meta\">{}</div>", esc(&meta.join("  ")));
    }
    let any_bad = results.iter().any(|r| r.is_violation());
    let _ = write!(
        html,
        "<div class=\"sum {}\">{}</div>",
        if any_bad { "bad" } else { "pass" },
        esc(&summary_line(results))
    );
    html.push_str("<div class=\"controls\"><button data-zoom=\"in\">zoom in</button><button data-zoom=\"out\">zoom out</button><button data-zoom=\"left\">◀</button><button data-zoom=\"right\">▶</button><button data-zoom=\"reset\">whole run</button><span class=\"view\">wheel to zoom, drag to pan, hover for details</span> <span id=\"view\" class=\"view\"></span></div>");
    html.push_str(&legend(servers));
    html.push_str(svg);
    let mut n = 0;
    for r in results.iter().filter(|r| !r.violations.is_empty()) {
        let _ = write!(html, "<h2>{}</h2>", esc(&r.checker));
        for v in &r.violations {
            n += 1;
            let o = overlays.iter().find(|o| o.n == n);
            let zoom = o
                .map(|o| {
                    let pad = (o.t1 - o.t0).max(200_000_000) / 2;
                    format!(
                        " <a href=\"#t={}-{}\">show</a>",
                        o.t0.saturating_sub(pad) / 1_000_000,
                        (o.t1 + pad) / 1_000_000
                    )
                })
                .unwrap_or_default();
            let _ = write!(
                html,
                "<div class=\"v\" id=\"v{n}\"><b>V{n} [{}]</b>{zoom} {}<br><span class=\"hint\">{}</span></div>",
                esc(v.kind.name()),
                esc(&v.explanation),
                esc(v.kind.hint())
            );
        }
    }
    let _ = write!(html, "<div id=\"tip\"></div><script>{SCRIPT}</script></body></html>");
    html
}

fn legend(servers: &servers::ServerSpans) -> String {
    let sw = |style: &str, text: &str| format!("<span><i class=\"sw\" style=\"{style}\"></i>{text}</span>");
    // (what the group opens with, its swatches: style, text)
    let groups: [(&str, &[(&str, &str)]); 3] = [
        (
            "<div class=\"legend\"><b>operations</b>",
            &[
                ("background:#43a047", "ok"),
                ("background:#fb8c00", "error reply"),
                ("background:#8e24aa", "unknown outcome"),
                ("background:#e53935;opacity:.6", "failed (not applied)"),
                ("background:#90caf9", "pending"),
                ("background:#fff;border:2px solid #d50000", "violating (▲ at its start)"),
            ],
        ),
        (
            "</div><div class=\"legend\"><b>faults</b>",
            &[
                ("background:#ffcc80", "network"),
                ("background:#bdbdbd", "crash"),
                ("background:#cfd8dc", "pause"),
                ("background:#8e24aa", "connection (instant)"),
                ("background:#f8bbd0", "other"),
            ],
        ),
        (
            "<b>servers</b>",
            &[
                ("background:#fbc02d", "leader"),
                ("background:#424242", "down"),
                ("background:#78909c", "paused"),
                ("background:#ef6c00", "cut off"),
            ],
        ),
    ];
    let mut s = String::new();
    for (open, swatches) in groups {
        s += open;
        for (style, text) in swatches {
            s += &sw(style, text);
        }
    }
    s += "<b>clients</b>";
    for id in servers.keys() {
        s += &sw(
            &format!("background:{}", servers::server_colour(*id)),
            &format!("on zk{id}"),
        );
    }
    s += &sw(
        "background:repeating-linear-gradient(45deg,#90a4ae 0 3px,#eceff1 3px 6px)",
        "paused",
    );
    s += &sw(
        "background:repeating-linear-gradient(45deg,#ffb74d 0 3px,#fff3e0 3px 6px)",
        "cut off",
    );
    for (colour, mark, t) in [
        ("#2e7d32", "●", "connected"),
        ("#f9a825", "●", "disconnected"),
        ("#c62828", "●", "expired"),
        ("#212121", "●", "closed"),
        ("#8e24aa", "▮", "connection dropped"),
        ("#0277bd", "◆", "watch"),
    ] {
        s += &format!("<span><i style=\"color:{colour};font-style:normal\">{mark}</i> {t}</span>");
    }
    s += "</div>";
    s
}
