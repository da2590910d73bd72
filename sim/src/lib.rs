//! zkdst-sim: a simulated ZooKeeper 3.8 ensemble under madsim.

pub mod zab;
