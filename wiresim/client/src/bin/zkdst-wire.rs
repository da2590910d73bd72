//! `zkdst-wire`: the `zkdst` command (the same source) with zookeeper-client
//! installed, so scenarios with `[ensemble] client = "wire"` run their
//! sessions through the real client library and the simulated servers'
//! wire protocol. Every command and flag is zkdst's.

#[path = "../../../../scenarios/src/main.rs"]
#[allow(dead_code)]
mod zkdst;

fn main() -> std::process::ExitCode {
    zkdst_wiresim::install();
    zkdst::main()
}
