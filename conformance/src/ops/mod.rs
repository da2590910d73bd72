//! Operation sequences for differential runs, and their proptest generator.
//!
//! A [`Step`] is one call by one of a few clients. Paths are relative to a
//! per-run root (`""` is the root itself) and come from a small alphabet so
//! that operations collide: creates hit existing nodes, deletes hit
//! non-empty ones, sequential names are guessed right often enough to be
//! read, set and deleted. Versions are symbolic ([`Version`]) and resolved
//! against the node's current version right before the call.
//!
//! Files: `step` (the vocabulary), `config` (what the generator may
//! produce), `strategy` (one step and its arguments), `sequence` (whole
//! sequences, with fault blocks).

mod config;
mod sequence;
mod step;
mod strategy;
#[cfg(test)]
mod tests;

pub use config::{GenConfig, GEN_TTL_MS};
pub use sequence::{disconnect_block, sequence};
pub use step::{MultiStep, Step, Version};
pub use strategy::step;

/// The absolute path of a relative one under `root` (`""` is the root).
pub fn absolute(root: &str, rel: &str) -> String {
    if rel.is_empty() {
        root.to_string()
    } else {
        format!("{root}/{rel}")
    }
}
