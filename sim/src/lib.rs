//! zkdst-sim
pub mod tree;
