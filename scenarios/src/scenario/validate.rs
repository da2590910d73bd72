//! What a scenario file must satisfy beyond its types: ranges, fields that
//! apply to one recipe only. (What the registry decides — a planted
//! variant matching its recipe — is in resolve.rs, above the registry.)

use super::*;

impl Scenario {
    pub(crate) fn validate(&self, file: &str) -> Result<(), ScenarioError> {
        let bad = |field: &str, message: String| ScenarioError::Field {
            file: file.to_string(),
            field: field.to_string(),
            message,
        };
        let e = &self.ensemble;
        if !(1..=9).contains(&e.servers) {
            return Err(bad(
                "ensemble.servers",
                format!("expected 1..=9 servers, found {}", e.servers),
            ));
        }
        if e.clients == 0 || e.clients > 200 {
            return Err(bad(
                "ensemble.clients",
                format!("expected 1..=200 clients, found {}", e.clients),
            ));
        }
        if e.tick_ms == 0 {
            return Err(bad("ensemble.tick_ms", "expected a positive tick".into()));
        }
        if e.session_timeout_ms < 2 * e.tick_ms as u32 {
            return Err(bad(
                "ensemble.session_timeout_ms",
                format!("expected at least 2 ticks ({} ms)", 2 * e.tick_ms),
            ));
        }
        // Servers grant at most maxSessionTimeout = 20 ticks; a scenario
        // that asks for more would silently get less.
        if e.session_timeout_ms as u64 > 20 * e.tick_ms {
            return Err(bad(
                "ensemble.session_timeout_ms",
                format!(
                    "{} ms is more than the 20 ticks ({} ms) servers grant; ask for at most {} ms",
                    e.session_timeout_ms,
                    20 * e.tick_ms,
                    20 * e.tick_ms
                ),
            ));
        }
        let range = |field: &str, r: [u64; 2]| {
            if r[0] > r[1] {
                Err(bad(field, format!("expected [min, max] with min <= max, found {r:?}")))
            } else {
                Ok(())
            }
        };
        if !(0.0..=1.0).contains(&self.workload.long_hold) {
            return Err(bad(
                "workload.long_hold",
                format!("expected a probability in [0, 1], found {}", self.workload.long_hold),
            ));
        }
        if !(0.0..=1.0).contains(&self.workload.give_up) {
            return Err(bad(
                "workload.give_up",
                format!("expected a probability in [0, 1], found {}", self.workload.give_up),
            ));
        }
        if !(0.0..=1.0).contains(&self.workload.container_parents) {
            return Err(bad(
                "workload.container_parents",
                format!(
                    "expected a probability in [0, 1], found {}",
                    self.workload.container_parents
                ),
            ));
        }
        if e.container_check_ms == 0 {
            return Err(bad(
                "ensemble.container_check_ms",
                "expected a positive interval".into(),
            ));
        }
        if self.workload.retry_attempts.contains(&0) {
            return Err(bad(
                "workload.retry_attempts",
                "expected attempts of at least 1 (the first call counts)".into(),
            ));
        }
        range("workload.think_ms", self.workload.think_ms)?;
        range("workload.hold_ms", self.workload.hold_ms)?;
        range("faults.interval_ms", self.faults.interval_ms)?;
        range("faults.duration_ms", self.faults.duration_ms)?;
        if self.faults.interval_ms[0] == 0 {
            return Err(bad("faults.interval_ms", "expected a positive minimum interval".into()));
        }
        if self.workload.duration_s == 0 {
            return Err(bad("workload.duration_s", "expected a positive duration".into()));
        }
        for (k, p) in &self.faults.swarm {
            if !(0.0..=1.0).contains(p) {
                return Err(bad(
                    &format!("faults.swarm.{}", k.name()),
                    format!("expected a probability in 0..=1, found {p}"),
                ));
            }
        }
        if !(0.0..=1.0).contains(&self.workload.commit_probability) {
            return Err(bad(
                "workload.commit_probability",
                "expected a probability in 0..=1".into(),
            ));
        }
        if self.faults.mode == FaultMode::Plan && self.faults.plan.is_empty() {
            return Err(bad(
                "faults.plan",
                "mode = \"plan\" needs at least one [[faults.plan]] entry".into(),
            ));
        }
        self.validate_recipe_fields(file)?;
        if self.client() == Client::Wire && zkdst_sim::client::library::library().is_none() {
            return Err(bad(
                "ensemble.client",
                "\"wire\" runs the workload through a real client library, which only the zkdst-wire build \
                 installs: cargo run --release --manifest-path wiresim/Cargo.toml --bin zkdst-wire -- <command> ..."
                    .into(),
            ));
        }
        if self.ensemble.planted.is_some() && !zkdst_sim::planted::ENABLED {
            return Err(bad(
                "ensemble.planted",
                "planted simulator bugs exist only in a build with feature `planted` (cargo ... --features planted)"
                    .into(),
            ));
        }
        for (i, c) in self.check.checkers.iter().enumerate() {
            if zkdst_checker::properties::lookup(c).is_err() {
                let known: Vec<&str> = zkdst_checker::properties::names();
                return Err(bad(
                    &format!("check.checkers[{i}]"),
                    format!("unknown checker {c:?}; expected one of {}", known.join(", ")),
                ));
            }
        }
        Ok(())
    }

    fn validate_recipe_fields(&self, file: &str) -> Result<(), ScenarioError> {
        let bad = |field: &str, message: String| ScenarioError::Field {
            file: file.to_string(),
            field: field.to_string(),
            message,
        };
        let w = &self.workload;
        let only = |field: &str, set: bool, r: Recipe| {
            if set && w.recipe != r {
                Err(bad(field, format!("applies to recipe {:?} only", r.name())))
            } else {
                Ok(())
            }
        };
        if w.acquire_timeout_ms.is_some() && !matches!(w.recipe, Recipe::Lock | Recipe::LibraryLock) {
            return Err(bad(
                "workload.acquire_timeout_ms",
                "applies to recipes \"lock\" and \"library-lock\" only".into(),
            ));
        }
        let claims = w.recipe == Recipe::Queue && w.consumer == Consumer::AtLeastOnce;
        if w.long_hold > 0.0 && !matches!(w.recipe, Recipe::Lock | Recipe::LibraryLock) && !claims {
            return Err(bad(
                "workload.long_hold",
                "applies to recipes \"lock\" and \"library-lock\", and to \"queue\" with consumer = \"at-least-once\", only".into(),
            ));
        }
        only("workload.lock_prefix", w.lock_prefix.is_some(), Recipe::LibraryLock)?;
        if w.recipe == Recipe::LibraryLock {
            let lock = zkdst_sim::client::library::library().and_then(|l| l.lock.map(|_| l.name));
            if self.client() != Client::Wire || lock.is_none() {
                return Err(bad(
                    "workload.recipe",
                    "\"library-lock\" is the client library's own lock: it runs with [ensemble] client = \"wire\" \
                     in the zkdst-wire build (cargo run --release --manifest-path wiresim/Cargo.toml --bin \
                     zkdst-wire -- <command> ...)"
                        .into(),
                ));
            }
        }
        only("workload.on_disconnect", !w.on_disconnect.is_keep(), Recipe::Lock)?;
        only("workload.partitions", w.partitions.is_some(), Recipe::Membership)?;
        if w.partitions == Some(0) {
            return Err(bad("workload.partitions", "expected at least 1 partition".into()));
        }
        if let Some(m) = &self.measure {
            let ok = m
                .figure
                .split_once('.')
                .is_some_and(|(c, f)| !f.is_empty() && self.check.checkers.iter().any(|x| x == c));
            if !ok {
                return Err(bad(
                    "measure.figure",
                    format!(
                        "expected \"checker.figure\" naming one of check.checkers ({}), found {:?}",
                        self.check.checkers.join(", "),
                        m.figure
                    ),
                ));
            }
        }
        Ok(())
    }
}
