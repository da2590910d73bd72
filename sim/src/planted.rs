//! Planted simulator bugs: deliberately broken server behaviour, for the
//! harness's self-tests (the `replicas` checker must catch them). A bug is
//! named here always, so scenario files can say which one they plant; the
//! broken code path exists only with the cargo feature `planted`, which a
//! normal build does not enable — there `EnsembleConfig::planted` has no
//! effect, and the scenario loader refuses a planted scenario.

use serde::{Deserialize, Serialize};

/// Whether this build carries the planted code paths.
pub const ENABLED: bool = cfg!(feature = "planted");

/// A planted simulator bug, selected by `EnsembleConfig::planted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SimBug {
    /// A follower drops the first entry of a DIFF sync of two or more
    /// entries: its log has a hole, and when the txns after the hole
    /// commit it applies them without the one it skipped — while it acks
    /// NEWLEADER at the leader's last zxid, as if fully synced.
    DiffSkipsEntry,
}

impl SimBug {
    pub const ALL: [SimBug; 1] = [SimBug::DiffSkipsEntry];

    /// The name as written in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            SimBug::DiffSkipsEntry => "DiffSkipsEntry",
        }
    }

    /// The bug class, for `zkdst bench bugs`.
    pub fn class(self) -> &'static str {
        match self {
            SimBug::DiffSkipsEntry => "follower skips a DIFF entry",
        }
    }
}

/// A message as the planted bug makes the receiving server see it.
#[cfg(feature = "planted")]
pub(crate) fn tamper<T, S>(bug: Option<SimBug>, msg: crate::zab::Msg<T, S>) -> crate::zab::Msg<T, S> {
    use crate::zab::{Msg, SyncKind};
    match (bug, msg) {
        (
            Some(SimBug::DiffSkipsEntry),
            Msg::Sync {
                epoch,
                kind: SyncKind::Diff,
                mut entries,
                commit,
            },
        ) if entries.len() >= 2 => {
            entries.remove(0);
            Msg::Sync {
                epoch,
                kind: SyncKind::Diff,
                entries,
                commit,
            }
        }
        (_, msg) => msg,
    }
}
