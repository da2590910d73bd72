//! Benchmarks of the harness itself (`zkdst bench ...`).

pub mod bugs;
