//! The trace `zkdst replay` prints: tracing events of the simulation, each
//! stamped with its virtual time and the madsim node (server `zk1`, client
//! `client3`, ...) it happened on. Virtual time, not wall time, so two
//! replays of one seed print the same trace.

use std::fmt::{self, Write as _};
use std::io::Write as _;
use std::str::FromStr;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{span, Event, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::LookupSpan;

/// How much of a run to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceLevel(LevelFilter);

impl FromStr for TraceLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let level = match s {
            "off" => LevelFilter::OFF,
            "info" => LevelFilter::INFO,
            "debug" => LevelFilter::DEBUG,
            "trace" => LevelFilter::TRACE,
            other => {
                return Err(format!(
                    "unknown trace level {other:?}: expected off (verdict only), info (faults, sessions, recipe \
                     operations), debug (+ every ZooKeeper call, commit and watch) or trace (+ every message a \
                     server handles)"
                ))
            }
        };
        Ok(TraceLevel(level))
    }
}

impl fmt::Display for TraceLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.to_string().to_lowercase())
    }
}

/// Simulated time since the runtime started, in milliseconds.
fn virtual_ms() -> Option<f64> {
    madsim::time::TimeHandle::try_current().map(|t| t.elapsed().as_secs_f64() * 1e3)
}

/// The name madsim gave a node span (`zk1`, `client3`), kept in the span.
struct NodeName(String);

/// Collects an event's message and fields, or a span's `name` field.
#[derive(Default)]
struct Fields {
    message: String,
    rest: String,
    name: Option<String>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "name" => self.name = Some(value.to_string()),
            "message" => self.message = value.to_string(),
            f => {
                let _ = write!(self.rest, " {f}={value}");
            }
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "name" => self.name = Some(format!("{value:?}")),
            f => {
                let _ = write!(self.rest, " {f}={value:?}");
            }
        }
    }
}

/// One line per event: virtual time, node, level, message, fields.
struct Printer;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Printer {
    fn on_new_span(&self, attrs: &span::Attributes<'_>, id: &span::Id, ctx: Context<'_, S>) {
        if attrs.metadata().name() != "node" {
            return;
        }
        let mut f = Fields::default();
        attrs.record(&mut f);
        if let (Some(name), Some(span)) = (f.name, ctx.span(id)) {
            span.extensions_mut().insert(NodeName(name));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let node = ctx
            .event_scope(event)
            .and_then(|scope| {
                scope
                    .from_root()
                    .find_map(|s| s.extensions().get::<NodeName>().map(|n| n.0.clone()))
            })
            .unwrap_or_else(|| "-".into());
        let mut f = Fields::default();
        event.record(&mut f);
        let time = virtual_ms()
            .map(|t| format!("{t:>11.3}ms"))
            .unwrap_or_else(|| format!("{:>13}", "-"));
        let level = event.metadata().level();
        // A closed stdout (`| head`) ends the trace, not the program.
        let _ = writeln!(
            std::io::stdout().lock(),
            "{time} {node:<9} {level:<5} {}{}",
            f.message,
            f.rest
        );
    }
}

/// Prints the run's events at `level` to stdout (the simulator's and the
/// recipes' events only; madsim's own stay quiet). Call once per process.
pub fn init(level: TraceLevel) {
    if level.0 == LevelFilter::OFF {
        return;
    }
    let filter = Targets::new()
        .with_target("zkdst", level.0)
        .with_target("zkdst_sim", level.0)
        .with_target("zkdst_recipes", level.0)
        .with_target("zkdst_scenarios", level.0)
        .with_target("madsim", LevelFilter::WARN)
        .with_default(LevelFilter::WARN);
    // A second call (tests) keeps the first subscriber.
    let _ = tracing_subscriber::registry()
        .with(Printer.with_filter(filter))
        .try_init();
}
