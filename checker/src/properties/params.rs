//! Parameters a scenario hands to the checkers. Every field has a default,
//! so a scenario file lists only what its recipe promises differently.
//! Durations are in milliseconds of virtual time (history times are ns).

use serde::{Deserialize, Serialize};

use crate::history::{Event, FaultEnd, FaultEvent, FaultStep, History, Time};

/// The delivery contract a queue recipe declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    /// Every acknowledged item is delivered exactly once.
    #[default]
    ExactlyOnce,
    /// Every acknowledged item is delivered at least once; duplicates allowed.
    AtLeastOnce,
}

/// Checker parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Queue delivery contract.
    pub delivery: Delivery,
    /// The queue promises FIFO order.
    pub fifo: bool,
    /// The queue is a priority queue: lower `priority` values come out first
    /// (Curator's convention); FIFO applies among equal priorities.
    pub priority: bool,
    /// The workload drained every queue at the end, so undelivered
    /// acknowledged items are lost. When false, the checker still decides
    /// loss if a dequeue observed the queue empty after all enqueues ended.
    pub drained: bool,
    /// Barrier size N; `None`: the number of distinct clients that entered.
    pub barrier_size: Option<usize>,
    /// The counter's value before the run.
    pub counter_initial: i64,
    /// Liveness: how long after the last fault healed an operation may stay
    /// pending.
    pub liveness_bound_ms: u64,
    /// Liveness: overrides the heal time (ms); otherwise see [`healed_at`].
    pub healed_at_ms: Option<u64>,
    /// Election: how long a leader may keep acting after its session was
    /// Disconnected (ms); otherwise the history's meta `leader_grace_ms`,
    /// which the application records as it configures its recipe.
    pub leader_grace_ms: Option<u64>,
    /// Progress: how many operations must succeed after the heal. A
    /// scenario sets it from `check.min_progress`.
    #[serde(skip)]
    pub min_progress: u64,
    /// Semaphore: the permits; `None`: the history's meta `permits`. A
    /// scenario sets it from `workload.permits`.
    #[serde(skip)]
    pub permits: Option<u32>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            delivery: Delivery::ExactlyOnce,
            fifo: true,
            priority: false,
            drained: false,
            barrier_size: None,
            counter_initial: 0,
            liveness_bound_ms: 30_000,
            healed_at_ms: None,
            leader_grace_ms: None,
            min_progress: 1,
            permits: None,
        }
    }
}

/// The history meta key under which a run records its checkers' parameters.
pub const META_KEY: &str = "check_params";

/// A history's recorded parameters (meta [`META_KEY`]) do not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the history's meta \"check_params\": {0}")]
pub struct RecordedParamsError(String);

/// The fields a scenario sets from elsewhere (not from `[check.params]`),
/// recorded beside the others.
const SET_ELSEWHERE: [&str; 2] = ["min_progress", "permits"];

impl Params {
    /// This, as JSON for the history's meta [`META_KEY`]: every field,
    /// `min_progress` and `permits` included.
    pub fn to_meta(&self) -> String {
        let mut v = serde_json::to_value(self).expect("params serialize");
        if let serde_json::Value::Object(m) = &mut v {
            m.insert(SET_ELSEWHERE[0].into(), self.min_progress.into());
            m.insert(SET_ELSEWHERE[1].into(), self.permits.into());
        }
        v.to_string()
    }

    /// The parameters the run that wrote `history` judged it with (its meta
    /// [`META_KEY`]), so that a stored history is judged again as its run
    /// did; the defaults when it recorded none.
    pub fn recorded(history: &History) -> Result<Params, RecordedParamsError> {
        let Some(json) = history.meta.get(META_KEY) else {
            return Ok(Params::default());
        };
        let bad = |e: String| RecordedParamsError(e);
        let mut v: serde_json::Value = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
        let m = v.as_object_mut().ok_or_else(|| bad("expected a JSON object".into()))?;
        let min_progress = m.remove(SET_ELSEWHERE[0]);
        let permits = m.remove(SET_ELSEWHERE[1]);
        // Every other key must be a `Params` field (unknown ones are refused).
        let mut p: Params = serde_json::from_value(v).map_err(|e| bad(e.to_string()))?;
        if let Some(n) = min_progress {
            p.min_progress = serde_json::from_value(n).map_err(|e| bad(format!("min_progress: {e}")))?;
        }
        if let Some(n) = permits {
            p.permits = serde_json::from_value(n).map_err(|e| bad(format!("permits: {e}")))?;
        }
        Ok(p)
    }
}

pub const NS_PER_MS: u64 = 1_000_000;

/// When the faults healed, by this convention (first match wins):
/// 1. `params.healed_at_ms`;
/// 2. the history's meta `healed_at` (virtual nanoseconds, like event times);
/// 3. the last `Fault` event whose kind is `heal` or starts with `heal`
///    (`heal`, `heal-all`, `heal_partition`), provided no non-heal fault
///    follows it;
/// 4. 0 when the history has no `Fault` events at all.
///
/// `None` means a fault was never healed: liveness is undecidable.
pub fn healed_at(history: &History, params: &Params) -> Option<Time> {
    if let Some(ms) = params.healed_at_ms {
        return Some(ms.saturating_mul(NS_PER_MS));
    }
    if let Some(t) = history
        .meta
        .get("healed_at")
        .and_then(|s| s.trim().parse::<Time>().ok())
    {
        return Some(t);
    }
    let mut last_heal = None;
    let mut last_fault = None;
    for e in &history.events {
        if let Event::Fault(FaultEvent { time, kind, .. }) = e {
            if *kind == FaultStep::End(FaultEnd::Heal) {
                last_heal = Some(last_heal.map_or(*time, |h: Time| h.max(*time)));
            } else {
                last_fault = Some(last_fault.map_or(*time, |f: Time| f.max(*time)));
            }
        }
    }
    match (last_heal, last_fault) {
        (None, None) => Some(0),
        (Some(h), None) => Some(h),
        (Some(h), Some(f)) if h >= f => Some(h),
        _ => None,
    }
}

/// The time of the last event in the history.
pub fn end_of_history(history: &History) -> Time {
    history.events.iter().map(Event::time).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(time: Time, kind: impl Into<FaultStep>) -> Event {
        Event::Fault(FaultEvent::new(time, kind.into(), vec![], ""))
    }

    #[test]
    fn heal_convention() {
        let p = Params::default();
        let mut h = History::new();
        assert_eq!(healed_at(&h, &p), Some(0));
        h.events.push(fault(10, crate::history::FaultKind::PartitionHalves));
        assert_eq!(healed_at(&h, &p), None);
        h.events.push(fault(20, FaultEnd::Heal));
        assert_eq!(healed_at(&h, &p), Some(20));
        h.meta.insert("healed_at".into(), "25".into());
        assert_eq!(healed_at(&h, &p), Some(25));
        let p2 = Params {
            healed_at_ms: Some(1),
            ..Params::default()
        };
        assert_eq!(healed_at(&h, &p2), Some(NS_PER_MS));
    }

    #[test]
    fn params_parse_from_json_with_defaults() {
        let p: Params = serde_json::from_str(r#"{"delivery":"at-least-once","barrier_size":3}"#).unwrap();
        assert_eq!(p.delivery, Delivery::AtLeastOnce);
        assert_eq!(p.barrier_size, Some(3));
        assert!(p.fifo);
        assert!(serde_json::from_str::<Params>(r#"{"fifoo":true}"#).is_err());
    }

    #[test]
    fn recorded_params_round_trip_through_the_meta() {
        let mut h = History::new();
        assert_eq!(Params::recorded(&h).unwrap(), Params::default());
        let p = Params {
            delivery: Delivery::AtLeastOnce,
            fifo: false,
            min_progress: 7,
            permits: Some(3),
            ..Params::default()
        };
        h.meta.insert(META_KEY.into(), p.to_meta());
        assert_eq!(Params::recorded(&h).unwrap(), p);
        h.meta.insert(
            META_KEY.into(),
            r#"{"fifoo":true,"min_progress":1,"permits":null}"#.into(),
        );
        let err = Params::recorded(&h).unwrap_err().to_string();
        assert!(err.contains("check_params") && err.contains("fifoo"), "{err}");
    }
}
