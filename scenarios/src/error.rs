//! Typed errors of the scenarios library's own APIs: what failed, and where.
//! (Scenario files have `ScenarioError`; regressions `RegressError`.)

use std::path::{Path, PathBuf};

/// A file or folder the harness could not write: a history, a timeline,
/// a store entry.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot {action}: {source}", path.display())]
pub struct WriteError {
    pub path: PathBuf,
    /// `write` or `create`.
    pub action: &'static str,
    #[source]
    pub source: std::io::Error,
}

impl WriteError {
    /// A closure for `map_err` on a write to `path`.
    pub fn at(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
        move |source| WriteError {
            path: path.to_path_buf(),
            action: "write",
            source,
        }
    }

    /// A closure for `map_err` on creating the folder `path`.
    pub fn create(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
        move |source| WriteError {
            path: path.to_path_buf(),
            action: "create",
            source,
        }
    }
}

/// A `--seeds` or `--shard` argument that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeedArgError {
    #[error("expected a seed range like 0..1000, found {0:?}")]
    Range(String),
    #[error("empty seed range {0:?}: the end must be above the start")]
    EmptyRange(String),
    #[error("expected a shard like 0/4 (index/count, index < count), found {0:?}")]
    Shard(String),
}

/// A fault plan that does not parse: the file and the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: field `{field}`: {message}")]
pub struct PlanError {
    pub file: String,
    pub field: String,
    pub message: String,
}
