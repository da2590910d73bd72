//! The simulated ensemble a scenario asks for.

use zkdst_sim::cluster::EnsembleConfig;
use zkdst_sim::recorder::Recorder;

use super::Scenario;

impl Scenario {
    /// The simulated ensemble this scenario asks for; notes in `rec` what
    /// the checkers need to know of it.
    pub fn ensemble_config(&self, rec: &Recorder) -> EnsembleConfig {
        let e = &self.ensemble;
        let mut cfg = EnsembleConfig {
            servers: e.servers,
            tick_ms: e.tick_ms,
            container_check_ms: e.container_check_ms,
            ..Default::default()
        };
        cfg.zab.snap_count = e.snap_count;
        cfg.planted = e.planted;
        cfg.prep.sequence_base = e.sequence_base;
        if e.sequence_base != 0 {
            // The checkers' model tree names sequential nodes the same way.
            rec.set_meta(
                zkdst_checker::zk_consistency::SEQUENCE_BASE,
                e.sequence_base.to_string(),
            );
        }
        cfg
    }
}
