//! The SVG being drawn and its time axis. Every element placed in time
//! carries its instants (`data-t0`, `data-t1`, nanoseconds) so the page's
//! script can re-place it when zooming; the `x` written here is the
//! full-run view, so the file reads the same without the script.

use std::fmt::Write;

use crate::history::Time;

/// Where the lane names end and the plot starts.
pub const LEFT: f64 = 150.0;
/// The plot's width in the full-run view.
pub const PLOT_W: f64 = 1400.0;
pub const WIDTH: f64 = LEFT + PLOT_W + 20.0;
/// One row of a fault or violation band, or one row of operations.
pub const ROW_H: f64 = 16.0;
/// A section's title row.
pub const SECTION_H: f64 = 15.0;
/// The time axis' labels, above everything.
pub const AXIS_H: f64 = 22.0;
/// Estimated width of one character of a band label (11 px monospace).
pub const CHAR_W: f64 = 6.7;

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The width a band label needs, padding included.
pub fn label_w(text: &str) -> f64 {
    text.chars().count() as f64 * CHAR_W + 8.0
}

pub struct Canvas {
    /// What is placed in time, clipped to the plot.
    pub svg: String,
    /// Lane backgrounds, names and section titles: not clipped, not moved.
    pub frame: String,
    pub end: Time,
}

impl Canvas {
    pub fn new(end: Time) -> Self {
        Canvas {
            svg: String::new(),
            frame: String::new(),
            end: end.max(1),
        }
    }

    /// x of `t` in the full-run view.
    pub fn x(&self, t: Time) -> f64 {
        LEFT + (t.min(self.end) as f64 / self.end as f64) * PLOT_W
    }

    /// A bar from `t0` to `t1` (at least `minw` px wide at any zoom).
    #[allow(clippy::too_many_arguments)]
    pub fn bar(&mut self, class: &str, t0: Time, t1: Time, y: f64, h: f64, minw: f64, attrs: &str, tip: &str) {
        let (x0, x1) = (self.x(t0), self.x(t1));
        let _ = write!(
            self.svg,
            r#"<rect class="{class}" data-t0="{t0}" data-t1="{t1}" data-minw="{minw}" x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{h:.1}"{attrs}{}/>"#,
            (x1 - x0).max(minw),
            tip_attr(tip)
        );
    }

    /// A label starting at `t0`. With `fit_to`, it names the bar `t0..t1`
    /// and the script hides it when the bar is too narrow to hold it;
    /// otherwise, if `t1` is given, it is kept in view while its span is.
    pub fn label(&mut self, class: &str, t0: Time, t1: Option<Time>, fit: bool, y: f64, text: &str) {
        let t1_attr = t1.map(|t| format!(r#" data-t1="{t}""#)).unwrap_or_default();
        let fit_attr = if fit { r#" data-fit="1""# } else { "" };
        let _ = write!(
            self.svg,
            r#"<text class="{class}" data-t0="{t0}"{t1_attr}{fit_attr} data-dx="3" x="{:.1}" y="{y:.1}">{}</text>"#,
            self.x(t0) + 3.0,
            esc(text)
        );
    }

    /// A vertical line at `t` from `y0` to `y1`.
    pub fn vline(&mut self, class: &str, t: Time, y0: f64, y1: f64, attrs: &str) {
        let x = self.x(t);
        let _ = write!(
            self.svg,
            r#"<line class="{class}" data-t0="{t}" x1="{x:.1}" y1="{y0:.1}" x2="{x:.1}" y2="{y1:.1}"{attrs}/>"#
        );
    }

    /// A dot at `t`.
    pub fn dot(&mut self, class: &str, t: Time, y: f64, r: f64, tip: &str) {
        let _ = write!(
            self.svg,
            r#"<circle class="{class}" data-t0="{t}" cx="{:.1}" cy="{y:.1}" r="{r}"{}/>"#,
            self.x(t),
            tip_attr(tip)
        );
    }

    /// A lane's background and its name in the left margin.
    pub fn lane(&mut self, class: &str, y: f64, h: f64, name: &str, name_style: &str, attrs: &str) {
        let _ = write!(
            self.frame,
            r#"<g class="{class}"{attrs}><rect class="lane" x="0" y="{y:.1}" width="{WIDTH}" height="{h:.1}"/><text class="lname" x="6" y="{:.1}"{name_style}>{}</text></g>"#,
            y + h / 2.0 + 4.0,
            esc(name)
        );
    }

    /// A section's title row, with a rule above it; returns its height.
    pub fn section(&mut self, y: f64, title: &str, note: &str) -> f64 {
        let _ = write!(
            self.frame,
            r#"<line class="rule" x1="0" y1="{y:.1}" x2="{WIDTH}" y2="{y:.1}"/><text class="sname" x="4" y="{:.1}">{}</text><text class="snote" x="{LEFT}" y="{:.1}">{}</text>"#,
            y + 11.0,
            esc(title),
            y + 11.0,
            esc(note)
        );
        SECTION_H
    }
}

pub fn tip_attr(tip: &str) -> String {
    if tip.is_empty() {
        String::new()
    } else {
        format!(r#" data-tip="{}""#, esc(tip))
    }
}

/// Assigns rows to spans `(start_px, end_px)` given in start order: each
/// goes to the first row free by its start. Rows are packed in the
/// full-run view; zooming in only widens the gaps, so nothing packed apart
/// here ever overlaps. Returns each span's row and the number of rows.
pub fn pack(spans: &[(f64, f64)]) -> (Vec<usize>, usize) {
    let mut free_at: Vec<f64> = Vec::new();
    let rows = spans
        .iter()
        .map(|(s, e)| {
            let row = free_at.iter().position(|f| *f <= *s).unwrap_or(free_at.len());
            if row == free_at.len() {
                free_at.push(*e);
            } else {
                free_at[row] = *e;
            }
            row
        })
        .collect();
    (rows, free_at.len())
}

/// A round tick step giving about ten ticks.
pub fn nice_step(span: Time) -> Time {
    let raw = (span / 10).max(1);
    let mag = 10u64.pow(raw.ilog10());
    [1, 2, 5, 10].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(raw)
}
