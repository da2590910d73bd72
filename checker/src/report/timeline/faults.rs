//! Faults as spans: each injection paired with the event that undid it
//! (a heal, a restart, a resume), so one fault is one band labelled with
//! its target. The bands are packed into rows so no two labels overlap.

use crate::history::{Event, FaultEnd, FaultEvent, FaultKind, FaultStep, History, Time};
use crate::properties::ms;

use super::canvas::{label_w, pack, Canvas, ROW_H};

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
    /// What ended it (`heal`, `restart`, ...), if anything did.
    pub ended_by: Option<String>,
    /// The kind that started (or, for a restart or resume with nothing
    /// to undo, that end).
    pub kind: FaultStep,
    pub targets: Vec<String>,
    pub detail: String,
    pub class: FaultClass,
}

impl FaultSpan {
    pub fn label(&self) -> String {
        if self.targets.is_empty() {
            if self.kind == FaultStep::Start(FaultKind::LatencySpike) {
                format!("{} {}", self.kind, self.detail)
            } else {
                self.kind.to_string()
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

    /// A partition: its targets are groups of nodes (see [`is_partition`]).
    pub fn is_partition(&self) -> bool {
        is_partition(self.kind, &self.targets)
    }
}

/// Faults the simulator injects as a partition into groups (targets are the
/// groups): the halves, an isolated leader, and a client cut off from every
/// server until its session expires (whereas a session expired by the
/// leader directly names the session).
pub fn is_partition(kind: FaultStep, targets: &[String]) -> bool {
    match kind {
        FaultStep::Start(FaultKind::PartitionHalves | FaultKind::IsolateLeader) => true,
        FaultStep::Start(FaultKind::ExpireSession) => targets.iter().any(|t| t.contains("zk")),
        _ => false,
    }
}

/// A started kind's class, and whether it is instant (nothing undoes it).
fn class_of(kind: FaultKind, targets: &[String]) -> (FaultClass, bool) {
    use FaultKind::*;
    match kind {
        PartitionHalves | IsolateLeader | MajoritiesRing | Bridge | OneWayCut | ClientCut => {
            (FaultClass::Network, false)
        }
        ExpireSession if is_partition(kind.into(), targets) => (FaultClass::Network, false),
        KillLeader | KillServer => (FaultClass::Crash, false),
        PauseClient | PauseServer => (FaultClass::Pause, false),
        DropConnection | LoseReply | ExpireSession | ExpireAfterRead => (FaultClass::Connection, true),
        FlapConnection | LoseReplyThenFlap => (FaultClass::Connection, false),
        DeleteRecipeDir => (FaultClass::Other, true),
        LatencySpike => (FaultClass::Other, false),
    }
}

/// Pairs the history's fault events into spans, in start order.
pub fn spans(history: &History, end: Time) -> Vec<FaultSpan> {
    let mut out: Vec<FaultSpan> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut last: Option<(Time, FaultStep, &Vec<String>)> = None;
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
    let latency = |s: &FaultSpan| s.kind == FaultStep::Start(FaultKind::LatencySpike);
    for e in &history.events {
        let Event::Fault(FaultEvent {
            time,
            kind,
            targets,
            detail,
        }) = e
        else {
            continue;
        };
        // Histories recorded before the nemesis left the recording to the
        // client handle carry a dropped connection twice: one band.
        if last == Some((*time, *kind, targets)) {
            continue;
        }
        last = Some((*time, *kind, targets));
        let t = *time;
        let span = |class, instant| FaultSpan {
            start: t,
            end: if instant { t } else { end },
            instant,
            ended_by: None,
            kind: *kind,
            targets: targets.clone(),
            detail: detail.clone(),
            class,
        };
        let same_targets = |s: &FaultSpan| s.targets == *targets;
        let started = match *kind {
            FaultStep::End(by @ FaultEnd::Heal) => {
                // A heal restores every link.
                close(&mut out, &mut open, t, by.name(), &|s| s.class == FaultClass::Network);
                continue;
            }
            FaultStep::End(by @ (FaultEnd::Restart | FaultEnd::Resume)) => {
                let undoes = if by == FaultEnd::Restart {
                    FaultClass::Crash
                } else {
                    FaultClass::Pause
                };
                let before = open.len();
                close(&mut out, &mut open, t, by.name(), &|s| {
                    s.class == undoes && same_targets(s)
                });
                if open.len() == before {
                    out.push(span(FaultClass::Other, true));
                }
                continue;
            }
            FaultStep::End(by @ FaultEnd::RestoreLatency) => {
                close(&mut out, &mut open, t, by.name(), &latency);
                continue;
            }
            FaultStep::End(by @ FaultEnd::StopFlapping) => {
                close(&mut out, &mut open, t, by.name(), &|s| {
                    let flaps = [FaultKind::FlapConnection, FaultKind::LoseReplyThenFlap];
                    flaps.iter().any(|k| s.kind == FaultStep::Start(*k)) && same_targets(s)
                });
                continue;
            }
            FaultStep::Start(k) => k,
        };
        if started == FaultKind::LatencySpike {
            // A new spike replaces the one before.
            close(&mut out, &mut open, t, FaultEnd::RestoreLatency.name(), &latency);
        }
        if is_partition(*kind, targets) {
            // A partition replaces every earlier cut.
            close(&mut out, &mut open, t, "replaced by a partition", &|s| {
                s.class == FaultClass::Network
            });
        }
        let (class, instant) = class_of(started, targets);
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
