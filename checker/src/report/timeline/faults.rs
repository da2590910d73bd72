//! Faults as spans: each injection paired with the event that undid it
//! (a heal, a restart, a resume), so one fault is one band labelled with
//! its target. The bands are packed into rows so no two labels overlap.

use crate::history::{Event, History, Time};
use crate::properties::ms;

use super::canvas::{label_w, pack, Canvas, ROW_H};

/// The latency the simulator's nemesis restores after a spike
/// (`scenarios::nemesis::DEFAULT_LATENCY`): a `latency` fault with this
/// detail ends a spike rather than starting one.
const DEFAULT_LATENCY: &str = "1..10 ms";

/// What a fault does, for its colour and for which lanes it shows on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultClass {
    /// Links cut: partition, one-way cut, ring, bridge, client cut.
    Network,
    /// A server killed.
    Crash,
    /// A node stopped the world.
    Pause,
    /// A client's connection or session hit: dropped, reply lost, expired.
    Connection,
    Other,
}

impl FaultClass {
    pub fn css(self) -> &'static str {
        match self {
            FaultClass::Network => "f-net",
            FaultClass::Crash => "f-crash",
            FaultClass::Pause => "f-pause",
            FaultClass::Connection => "f-conn",
            FaultClass::Other => "f-other",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct FaultSpan {
    pub start: Time,
    /// When it was undone; the end of the history if it never was.
    pub end: Time,
    /// A fault with nothing to undo (a dropped connection).
    pub instant: bool,
    /// What ended it ("heal", "restart", ...), if anything did.
    pub ended_by: Option<String>,
    pub kind: String,
    pub targets: Vec<String>,
    pub detail: String,
    pub class: FaultClass,
}

impl FaultSpan {
    pub fn label(&self) -> String {
        if self.targets.is_empty() {
            if self.kind == "latency" {
                format!("latency {}", self.detail)
            } else {
                self.kind.clone()
            }
        } else {
            format!("{} {}", self.kind, self.targets.join(" | "))
        }
    }

    pub fn tip(&self) -> String {
        let mut s = format!("fault {} at {}", self.kind, ms(self.start));
        if !self.targets.is_empty() {
            s += &format!("\ntargets: {}", self.targets.join(" | "));
        }
        if !self.detail.is_empty() {
            s += &format!("\n{}", self.detail);
        }
        match (&self.ended_by, self.instant) {
            (_, true) => {}
            (Some(by), _) => s += &format!("\nuntil {} ({by})", ms(self.end)),
            (None, _) => s += "\nnever undone",
        }
        s
    }
}

fn class_of(kind: &str) -> Option<(FaultClass, bool)> {
    Some(match kind {
        "partition" | "cut" | "majorities-ring" | "bridge" | "client-cut" | "isolate-leader" | "partition-halves"
        | "one-way-cut" => (FaultClass::Network, false),
        "kill" => (FaultClass::Crash, false),
        "pause" => (FaultClass::Pause, false),
        "drop-connection" | "lose-reply" | "expire-session" => (FaultClass::Connection, true),
        "delete-recipe-dir" => (FaultClass::Other, true),
        _ => return None,
    })
}

/// Pairs the history's fault events into spans, in start order.
pub fn spans(history: &History, end: Time) -> Vec<FaultSpan> {
    let mut out: Vec<FaultSpan> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut last: Option<(Time, &str, &Vec<String>)> = None;
    let close =
        |out: &mut Vec<FaultSpan>, open: &mut Vec<usize>, t: Time, by: &str, pred: &dyn Fn(&FaultSpan) -> bool| {
            open.retain(|&i| {
                if pred(&out[i]) {
                    out[i].end = t;
                    out[i].ended_by = Some(by.to_string());
                    false
                } else {
                    true
                }
            });
        };
    for e in &history.events {
        let Event::Fault {
            time,
            kind,
            targets,
            detail,
        } = e
        else {
            continue;
        };
        // Histories recorded before the nemesis left the recording to the
        // client handle carry a dropped connection twice: one band.
        if last == Some((*time, kind.as_str(), targets)) {
            continue;
        }
        last = Some((*time, kind.as_str(), targets));
        let t = *time;
        let span = |class, instant| FaultSpan {
            start: t,
            end: if instant { t } else { end },
            instant,
            ended_by: None,
            kind: kind.clone(),
            targets: targets.clone(),
            detail: detail.clone(),
            class,
        };
        let same_targets = |s: &FaultSpan| s.targets == *targets;
        match kind.as_str() {
            k if k.starts_with("heal") => {
                // A heal restores links; unknown kinds also end at one.
                close(&mut out, &mut open, t, k, &|s| {
                    matches!(s.class, FaultClass::Network | FaultClass::Other) && s.kind != "latency"
                });
                continue;
            }
            "restart" | "resume" => {
                let undoes = if kind == "restart" { "kill" } else { "pause" };
                let before = open.len();
                close(&mut out, &mut open, t, kind, &|s| s.kind == undoes && same_targets(s));
                if open.len() == before {
                    out.push(span(FaultClass::Other, true));
                }
                continue;
            }
            "latency" => {
                close(&mut out, &mut open, t, "latency restored", &|s| s.kind == "latency");
                if detail == DEFAULT_LATENCY {
                    continue;
                }
                open.push(out.len());
                out.push(span(FaultClass::Other, false));
                continue;
            }
            "partition" => {
                // A partition replaces every earlier cut.
                close(&mut out, &mut open, t, "replaced by a partition", &|s| {
                    s.class == FaultClass::Network
                });
            }
            _ => {}
        }
        let (class, instant) = class_of(kind).unwrap_or((FaultClass::Other, false));
        if !instant {
            open.push(out.len());
        }
        out.push(span(class, instant));
    }
    out
}

/// The fault bands, packed into rows from `y`; returns the rows' height.
pub fn draw(c: &mut Canvas, spans: &[FaultSpan], y: f64) -> f64 {
    let px: Vec<(f64, f64)> = spans
        .iter()
        .map(|s| {
            let x0 = c.x(s.start);
            (x0, c.x(s.end).max(x0 + 3.0).max(x0 + label_w(&s.label())))
        })
        .collect();
    let (rows, n) = pack(&px);
    for (s, row) in spans.iter().zip(rows) {
        let ry = y + row as f64 * ROW_H;
        let class = format!("band {}{}", s.class.css(), if s.instant { " instant" } else { "" });
        let attrs = format!(r#" data-row="{row}""#);
        c.bar(&class, s.start, s.end, ry + 2.0, ROW_H - 4.0, 3.0, &attrs, &s.tip());
        c.label("flbl", s.start, Some(s.end), false, ry + ROW_H - 4.5, &s.label());
    }
    n.max(1) as f64 * ROW_H
}

/// Servers (`zk2`) and clients (`client3`) a target names: a partition
/// group is "zk1,zk2,client3", a ring's link "zk1<->zk2".
pub fn nodes_in(target: &str) -> Vec<&str> {
    target
        .split([',', '|', ' '])
        .flat_map(|p| p.split("<->"))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

pub fn server_id(node: &str) -> Option<u32> {
    node.strip_prefix("zk")?.parse().ok()
}

pub fn client_id(node: &str) -> Option<u32> {
    node.strip_prefix("client")?.parse().ok()
}
