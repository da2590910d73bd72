//! A fault event: which [`FaultStep`] (a plan's fault kind starting, or
//! the heal, restart, resume or latency restore that undid one), on which
//! targets. Histories written before the history used the plan's words
//! still read: their simulator words are mapped by [`FaultStep::read`],
//! which needs the targets and detail beside the word.

use serde::{Deserialize, Serialize};

use super::Time;
pub use zkdst_model::{FaultEnd, FaultKind, FaultStep};

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawFault")]
pub struct FaultEvent {
    pub time: Time,
    pub kind: FaultStep,
    /// Nodes (`zk2`, `client3`), partition groups (`zk1,zk2`), links
    /// (`zk1<->zk2`), a session (`0x5`) or a path, by kind.
    pub targets: Vec<String>,
    pub detail: String,
}

impl FaultEvent {
    pub fn new(time: Time, kind: FaultStep, targets: Vec<String>, detail: impl Into<String>) -> Self {
        FaultEvent {
            time,
            kind,
            targets,
            detail: detail.into(),
        }
    }
}

/// The event as any zkdst wrote it.
#[derive(Deserialize)]
struct RawFault {
    time: Time,
    kind: String,
    #[serde(default)]
    targets: Vec<String>,
    #[serde(default)]
    detail: String,
}

impl TryFrom<RawFault> for FaultEvent {
    type Error = String;

    fn try_from(r: RawFault) -> Result<Self, String> {
        let kind = FaultStep::read(&r.kind, &r.targets, &r.detail).ok_or_else(|| FaultStep::unknown(&r.kind))?;
        Ok(FaultEvent {
            time: r.time,
            kind,
            targets: r.targets,
            detail: r.detail,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::Event;
    use super::*;

    fn decode(json: &str) -> Result<Event, String> {
        serde_json::from_str::<Event>(json).map_err(|e| e.to_string())
    }

    #[test]
    fn an_event_is_written_with_the_plans_word_and_reads_back() {
        let e = Event::Fault(FaultEvent::new(
            5,
            FaultKind::KillLeader.into(),
            vec!["zk2".into()],
            "x",
        ));
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"type":"fault","time":5,"kind":"kill-leader","targets":["zk2"],"detail":"x"}"#
        );
        assert_eq!(decode(&json), Ok(e));
    }

    #[test]
    fn an_older_history_reads_its_simulator_words_by_target_and_detail() {
        let kind = |json: &str| match decode(json) {
            Ok(Event::Fault(f)) => f.kind,
            other => panic!("{other:?}"),
        };
        let ev = |k: &str, t: &str, d: &str| {
            format!(r#"{{"type":"fault","time":1,"kind":"{k}","targets":[{t}],"detail":"{d}"}}"#)
        };
        assert_eq!(kind(&ev("pause", r#""zk2""#, "")), FaultKind::PauseServer.into());
        assert_eq!(kind(&ev("pause", r#""client4""#, "")), FaultKind::PauseClient.into());
        assert_eq!(kind(&ev("latency", "", "1..10 ms")), FaultEnd::RestoreLatency.into());
        assert_eq!(kind(&ev("latency", "", "20..40 ms")), FaultKind::LatencySpike.into());
        // Targets and detail were optional.
        assert_eq!(
            kind(r#"{"type":"fault","time":1,"kind":"kill"}"#),
            FaultKind::KillServer.into()
        );
        let err = decode(&ev("meteor", "", "")).unwrap_err();
        assert!(
            err.contains("unknown fault \"meteor\"") && err.contains("kill-leader"),
            "{err}"
        );
    }
}
