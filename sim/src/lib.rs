//! zkdst-sim
