//! The rewriting of one trace's run-specific values (see the module doc).

use std::collections::BTreeMap;

use zkdst_recipes::zk::{OpResult, PathError, PathProblem, ReadResult, SessionId, Stat, WatchedEvent, ZkError};

use super::NormalizeOptions;
use crate::exec::Outcome;

pub(super) fn for_each_stat(outcome: &Outcome, options: &NormalizeOptions, f: &mut impl FnMut(&Stat)) {
    match outcome {
        Outcome::Created { stat, .. }
        | Outcome::Data { stat, .. }
        | Outcome::Children { stat, .. }
        | Outcome::SetData(stat) => f(stat),
        Outcome::Exists(Some(stat)) => f(stat),
        Outcome::Reads(results) => {
            for r in results {
                if let ReadResult::Data { stat, .. } = r {
                    f(stat)
                }
            }
        }
        Outcome::Multi(results) => {
            for r in results {
                match r {
                    OpResult::Create { stat, .. } if options.keep_multi_create_stat => f(stat),
                    OpResult::SetData { stat } => f(stat),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

pub(super) struct Norm<'a> {
    pub(super) root: &'a str,
    pub(super) sessions: &'a [SessionId],
    pub(super) rank: &'a BTreeMap<i64, i64>,
    pub(super) options: &'a NormalizeOptions,
}

impl Norm<'_> {
    pub(super) fn path(&self, p: &str) -> String {
        if p == self.root {
            "~".to_string()
        } else if let Some(rest) = p.strip_prefix(self.root).filter(|r| r.starts_with('/')) {
            format!("~{rest}")
        } else {
            p.to_string()
        }
    }

    fn zxid(&self, z: i64) -> i64 {
        if z <= 0 {
            z
        } else {
            self.rank.get(&z).copied().unwrap_or(-1)
        }
    }

    fn stat(&self, s: &Stat) -> Stat {
        let owner = if s.ephemeral_owner == 0 {
            0
        } else {
            self.sessions
                .iter()
                .position(|id| *id == s.ephemeral_owner)
                .map(|i| i as i64 + 1)
                .unwrap_or(-1)
        };
        Stat {
            czxid: self.zxid(s.czxid),
            mzxid: self.zxid(s.mzxid),
            pzxid: self.zxid(s.pzxid),
            ctime: 0,
            mtime: 0,
            ephemeral_owner: owner,
            ..*s
        }
    }

    fn error(&self, e: &ZkError) -> ZkError {
        match e {
            ZkError::InvalidPath(pe) => {
                // Offsets into the path count from the normalised root.
                let shift = if pe.path.starts_with(self.root) {
                    self.root.len().saturating_sub(1)
                } else {
                    0
                };
                let at = |a: &usize| a.saturating_sub(shift);
                let reason = match &pe.reason {
                    PathProblem::EmptyComponent { at: a } => PathProblem::EmptyComponent { at: at(a) },
                    PathProblem::RelativeComponent { at: a } => PathProblem::RelativeComponent { at: at(a) },
                    PathProblem::BadCharacter { at: a, ch } => PathProblem::BadCharacter { at: at(a), ch: *ch },
                    other => other.clone(),
                };
                ZkError::InvalidPath(PathError {
                    path: self.path(&pe.path),
                    reason,
                })
            }
            other => other.clone(),
        }
    }

    fn op_result(&self, r: &OpResult) -> OpResult {
        match r {
            OpResult::Create { path, stat } => OpResult::Create {
                path: self.path(path),
                stat: if self.options.keep_multi_create_stat {
                    self.stat(stat)
                } else {
                    Stat::default()
                },
            },
            OpResult::SetData { stat } => OpResult::SetData { stat: self.stat(stat) },
            OpResult::Error(Some(e)) => OpResult::Error(Some(self.error(e))),
            other => other.clone(),
        }
    }

    pub(super) fn outcome(&self, o: &Outcome) -> Outcome {
        match o {
            Outcome::Created { path, stat } => Outcome::Created {
                path: self.path(path),
                stat: self.stat(stat),
            },
            Outcome::Exists(stat) => Outcome::Exists(stat.as_ref().map(|s| self.stat(s))),
            Outcome::Data { data, stat } => Outcome::Data {
                data: data.clone(),
                stat: self.stat(stat),
            },
            Outcome::Children { children, stat } => {
                let mut children = children.clone();
                children.sort();
                Outcome::Children {
                    children,
                    stat: self.stat(stat),
                }
            }
            Outcome::SetData(stat) => Outcome::SetData(self.stat(stat)),
            Outcome::Multi(results) => Outcome::Multi(results.iter().map(|r| self.op_result(r)).collect()),
            Outcome::Reads(results) => Outcome::Reads(
                results
                    .iter()
                    .map(|r| match r {
                        ReadResult::Data { data, stat } => ReadResult::Data {
                            data: data.clone(),
                            stat: self.stat(stat),
                        },
                        ReadResult::Children { children } => {
                            let mut children = children.clone();
                            children.sort();
                            ReadResult::Children { children }
                        }
                        ReadResult::Error(e) => ReadResult::Error(self.error(e)),
                    })
                    .collect(),
            ),
            Outcome::MultiFailed { error, index, results } => Outcome::MultiFailed {
                error: self.error(error),
                index: *index,
                results: results.iter().map(|r| self.op_result(r)).collect(),
            },
            Outcome::Error(e) => Outcome::Error(self.error(e)),
            other => other.clone(),
        }
    }

    pub(super) fn event(&self, e: &WatchedEvent) -> WatchedEvent {
        WatchedEvent {
            path: e.path.as_ref().map(|p| self.path(p)),
            ..e.clone()
        }
    }
}
