//! A fault as a history records it: the start of a [`FaultKind`] (by the
//! plan's own word, so `kill-leader` in a plan file is `kill-leader` in the
//! stats, the history and the timeline) or the step that undid one.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::FaultKind;

crate::words! {
    /// What undoes a fault.
    pub enum FaultEnd {
        /// Every link restored (ends the network faults).
        Heal = "heal",
        /// A killed server started again.
        Restart = "restart",
        /// A paused node resumed.
        Resume = "resume",
        /// Link latency back to the default after a spike.
        RestoreLatency = "restore-latency",
        /// A flapping client's connection left alone again (ends
        /// flap-connection and lose-reply-then-flap).
        StopFlapping = "stop-flapping",
    }
}

/// One fault event: a kind starting, or an end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultStep {
    Start(FaultKind),
    End(FaultEnd),
}

/// The nemesis restored this latency after a spike; histories written
/// before [`FaultEnd::RestoreLatency`] existed said `latency` with this
/// detail for the restore.
const LEGACY_DEFAULT_LATENCY: &str = "1..10 ms";

impl FaultStep {
    /// The word a history writes.
    pub const fn name(self) -> &'static str {
        match self {
            FaultStep::Start(k) => k.name(),
            FaultStep::End(e) => e.name(),
        }
    }

    /// A current word.
    pub fn from_name(word: &str) -> Option<FaultStep> {
        FaultKind::from_name(word)
            .map(FaultStep::Start)
            .or_else(|| FaultEnd::from_name(word).map(FaultStep::End))
    }

    /// A word as any zkdst history wrote it. Histories written before the
    /// history used the plan's words recorded the simulator's mechanism:
    /// `partition` (any partition: read as partition-halves), `cut` (a
    /// one-way cut), `kill` (read as kill-server), `pause` (of a server or a
    /// client: told by the target), `latency` (a spike, or the restore when
    /// its detail is the default latency), `heal…`.
    pub fn read(word: &str, targets: &[String], detail: &str) -> Option<FaultStep> {
        if let Some(step) = FaultStep::from_name(word) {
            return Some(step);
        }
        Some(match word {
            "partition" => FaultStep::Start(FaultKind::PartitionHalves),
            "cut" => FaultStep::Start(FaultKind::OneWayCut),
            "kill" => FaultStep::Start(FaultKind::KillServer),
            "pause" if targets.iter().any(|t| t.starts_with("zk")) => FaultStep::Start(FaultKind::PauseServer),
            "pause" => FaultStep::Start(FaultKind::PauseClient),
            "latency" if detail == LEGACY_DEFAULT_LATENCY => FaultStep::End(FaultEnd::RestoreLatency),
            "latency" => FaultStep::Start(FaultKind::LatencySpike),
            w if w.starts_with("heal") => FaultStep::End(FaultEnd::Heal),
            _ => return None,
        })
    }

    /// Why `word` is not a fault: the error names it and every word.
    pub fn unknown(word: &str) -> String {
        let all: Vec<&str> = FaultKind::WORDS.iter().chain(FaultEnd::WORDS).copied().collect();
        format!("unknown fault {word:?}, expected one of: {}", all.join(", "))
    }

    pub fn kind(self) -> Option<FaultKind> {
        match self {
            FaultStep::Start(k) => Some(k),
            FaultStep::End(_) => None,
        }
    }
}

impl From<FaultKind> for FaultStep {
    fn from(k: FaultKind) -> Self {
        FaultStep::Start(k)
    }
}

impl From<FaultEnd> for FaultStep {
    fn from(e: FaultEnd) -> Self {
        FaultStep::End(e)
    }
}

impl fmt::Display for FaultStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for FaultStep {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Current words only; a history event reads older words through
/// [`FaultStep::read`], which needs the event's targets and detail.
impl<'de> Deserialize<'de> for FaultStep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FaultStep, D::Error> {
        let word = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        FaultStep::from_name(&word).ok_or_else(|| serde::de::Error::custom(FaultStep::unknown(&word)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_step_is_written_and_read_as_one_word() {
        for &k in FaultKind::ALL {
            let s = FaultStep::Start(k);
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<FaultStep>(&json).unwrap(), s);
        }
        for &e in FaultEnd::ALL {
            assert_eq!(FaultStep::from_name(e.name()), Some(FaultStep::End(e)));
        }
        let err = serde_json::from_str::<FaultStep>("\"kill\"").unwrap_err().to_string();
        assert!(err.contains("kill-leader") && err.contains("restore-latency"), "{err}");
    }

    #[test]
    fn older_simulator_words_still_read() {
        use FaultKind::*;
        let read = |w, targets: &[&str], d| FaultStep::read(w, &t(targets), d);
        assert_eq!(
            read("partition", &["zk1", "zk2,zk3"], ""),
            Some(FaultStep::Start(PartitionHalves))
        );
        assert_eq!(read("cut", &["zk1", "zk2"], ""), Some(FaultStep::Start(OneWayCut)));
        assert_eq!(read("kill", &["zk2"], ""), Some(FaultStep::Start(KillServer)));
        assert_eq!(read("pause", &["zk2"], ""), Some(FaultStep::Start(PauseServer)));
        assert_eq!(read("pause", &["client1"], ""), Some(FaultStep::Start(PauseClient)));
        assert_eq!(read("latency", &[], "16..38 ms"), Some(FaultStep::Start(LatencySpike)));
        assert_eq!(
            read("latency", &[], "1..10 ms"),
            Some(FaultStep::End(FaultEnd::RestoreLatency))
        );
        assert_eq!(read("healed", &[], ""), Some(FaultStep::End(FaultEnd::Heal)));
        assert_eq!(read("kill-leader", &["zk1"], ""), Some(FaultStep::Start(KillLeader)));
        assert_eq!(read("meteor", &[], ""), None);
    }
}
