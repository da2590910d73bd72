//! The trace `zkdst replay` prints: tracing events of the simulation, each
//! stamped with its virtual time and the madsim node (server `zk1`, client
//! `client3`, ...) it happened on. Virtual time, not wall time, so two
//! replays of one seed print the same trace. `capture` collects the same
//! text instead of printing it (`fuzz --store` writes it as trace.txt).

use std::fmt::{self, Write as _};
use std::io::Write as _;
use std::str::FromStr;
use std::sync::{Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{span, Event, Subscriber};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::{LookupSpan, Registry};
use tracing_subscriber::reload;

/// How much of a run to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceLevel(LevelFilter);

impl TraceLevel {
    /// Faults, session changes and recipe operations (`replay`'s default).
    pub const INFO: TraceLevel = TraceLevel(LevelFilter::INFO);
}

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
        let line = format!("{time} {node:<9} {level:<5} {}{}\n", f.message, f.rest);
        let mut sink = SINK.lock().unwrap_or_else(|e| e.into_inner());
        match sink.as_mut() {
            Some(buf) => buf.push_str(&line),
            // A closed stdout (`| head`) ends the trace, not the program.
            None => {
                let _ = std::io::stdout().lock().write_all(line.as_bytes());
            }
        }
    }
}

/// Where trace lines go while `capture` runs (else stdout).
static SINK: Mutex<Option<String>> = Mutex::new(None);

/// The level `init` asked for (`None`: silent), restored after `capture`.
static LEVEL: Mutex<Option<LevelFilter>> = Mutex::new(None);

/// The installed subscriber's filter, or `None` if another subscriber was
/// installed first (then nothing is traced).
static FILTER: OnceLock<Option<reload::Handle<Targets, Registry>>> = OnceLock::new();

fn targets(level: Option<LevelFilter>) -> Targets {
    match level {
        None => Targets::new().with_default(LevelFilter::OFF),
        Some(level) => Targets::new()
            .with_target("zkdst", level)
            .with_target("zkdst_sim", level)
            .with_target("zkdst_recipes", level)
            .with_target("zkdst_scenarios", level)
            // The client library under zkdst-wire: its own reconnects and
            // errors, beside the simulated servers'.
            .with_target("zookeeper_client", level)
            .with_target("madsim", LevelFilter::WARN)
            .with_default(LevelFilter::WARN),
    }
}

/// Sets the printed level, installing the subscriber on first use.
fn set_level(level: Option<LevelFilter>) {
    let handle = FILTER.get_or_init(|| {
        let (filter, handle) = reload::Layer::new(targets(None));
        tracing_subscriber::registry()
            .with(Printer.with_filter(filter))
            .try_init()
            .ok()
            .map(|_| handle)
    });
    if let Some(h) = handle {
        let _ = h.reload(targets(level));
    }
}

/// Prints the run's events at `level` to stdout (the simulator's and the
/// recipes' events only; madsim's own stay quiet).
pub fn init(level: TraceLevel) {
    if level.0 == LevelFilter::OFF && FILTER.get().is_none() {
        return;
    }
    let level = (level.0 != LevelFilter::OFF).then_some(level.0);
    *LEVEL.lock().unwrap_or_else(|e| e.into_inner()) = level;
    set_level(level);
}

/// Runs `f` with the trace at `level` collected rather than printed, and
/// returns it with `f`'s value; afterwards the level is `init`'s again.
/// Every simulation running meanwhile on other threads traces into the same
/// text: capture one run while no other runs.
pub fn capture<T>(level: TraceLevel, f: impl FnOnce() -> T) -> (T, String) {
    *SINK.lock().unwrap_or_else(|e| e.into_inner()) = Some(String::new());
    set_level((level.0 != LevelFilter::OFF).then_some(level.0));
    let value = f();
    set_level(*LEVEL.lock().unwrap_or_else(|e| e.into_inner()));
    let text = SINK
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default();
    (value, text)
}
