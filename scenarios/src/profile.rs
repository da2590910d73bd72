//! Where a seed's wall time goes: the phases of one run ([`Phases`]) and
//! their totals over a campaign ([`Profile`], `zkdst fuzz --profile`).
//! Wall time is not part of any history or verdict: only this report
//! reads it.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// One run's phases in the order they ran: `simulate` (the ensemble, the
/// workload, the nemesis and the recorder, inside madsim), `pair` (the
/// history's operations paired), `stats`, one `check:<name>` per checker,
/// `fingerprint` (the history hashed as serialized).
#[derive(Debug, Clone, Default)]
pub struct Phases(pub Vec<(String, Duration)>);

impl Phases {
    /// Records the time since `*mark` as `name`, and moves the mark.
    pub fn lap(&mut self, name: impl Into<String>, mark: &mut Instant) {
        let now = Instant::now();
        self.0.push((name.into(), now - *mark));
        *mark = now;
    }
}

/// Phase totals over many runs.
#[derive(Debug, Default)]
pub struct Profile {
    totals: BTreeMap<String, Duration>,
    order: Vec<String>,
    runs: u64,
}

impl Profile {
    pub fn add(&mut self, phases: &Phases) {
        self.runs += 1;
        for (name, d) in &phases.0 {
            if !self.totals.contains_key(name) {
                self.order.push(name.clone());
            }
            *self.totals.entry(name.clone()).or_default() += *d;
        }
    }

    /// A table: phase, total seconds, milliseconds per seed, share.
    pub fn render(&self) -> String {
        let all: Duration = self.totals.values().sum();
        let mut out = format!(
            "\nwhere the time went ({} seeds, summed over worker threads):\n",
            self.runs
        );
        for name in &self.order {
            let d = self.totals[name];
            out.push_str(&format!(
                "  {name:<28} {:>9.2} s  {:>8.2} ms/seed  {:>5.1}%\n",
                d.as_secs_f64(),
                d.as_secs_f64() * 1000.0 / self.runs.max(1) as f64,
                100.0 * d.as_secs_f64() / all.as_secs_f64().max(1e-12)
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_keep_first_seen_order_and_sum() {
        let mut p = Profile::default();
        let ms = Duration::from_millis;
        p.add(&Phases(vec![("simulate".into(), ms(30)), ("check:a".into(), ms(10))]));
        p.add(&Phases(vec![("simulate".into(), ms(10)), ("check:b".into(), ms(20))]));
        let text = p.render();
        let (s, a, b) = (
            text.find("simulate").unwrap(),
            text.find("check:a").unwrap(),
            text.find("check:b").unwrap(),
        );
        assert!(s < a && a < b, "{text}");
        assert!(text.contains("2 seeds"), "{text}");
        // simulate: 40 ms of 70 → 20 ms/seed, 57.1%.
        assert!(text.contains("20.00 ms/seed   57.1%"), "{text}");
    }
}
