//! The fault plan a seed gets under a scenario: its explicit plan, none,
//! or a swarm drawn from the seed's `faults` stream (each kind on with its
//! probability, then faults drawn from the kinds on). Above the plan's
//! types and the registry (a `delete-recipe-dir` fault takes the recipe's
//! directories from it).

use rand::seq::SliceRandom;
use rand::Rng;

use crate::plan::{Fault, FaultKind, FaultPlan, Node, TimedFault};
use crate::scenario::{FaultMode, Scenario};
use crate::streams::stream;

impl FaultPlan {
    /// The plan a seed gets under a scenario.
    pub fn generate(scenario: &Scenario, seed: u64) -> FaultPlan {
        let f = &scenario.faults;
        let faults = match f.mode {
            FaultMode::None => Vec::new(),
            FaultMode::Plan => f.plan.clone(),
            FaultMode::Swarm => swarm(scenario, seed),
        };
        FaultPlan {
            faults,
            max_ops_per_client: scenario.workload.max_ops_per_client,
        }
    }
}

fn pick<T: Copy>(rng: &mut impl Rng, v: &[T]) -> T {
    v[rng.gen_range(0..v.len())]
}

fn range(rng: &mut impl Rng, r: [u64; 2]) -> u64 {
    if r[0] >= r[1] {
        r[0]
    } else {
        rng.gen_range(r[0]..=r[1])
    }
}

/// Swarm testing: per seed, each kind is on with its probability; the
/// seed's fault rate is drawn too; then faults are drawn from the kinds on.
fn swarm(scenario: &Scenario, seed: u64) -> Vec<TimedFault> {
    let mut rng = stream(seed, "faults");
    let f = &scenario.faults;
    let enabled: Vec<FaultKind> = f
        .swarm
        .iter()
        .filter(|(_, p)| **p > 0.0 && rng.gen_bool(p.clamp(0.0, 1.0)))
        .map(|(k, _)| *k)
        .collect();
    if enabled.is_empty() {
        return Vec::new();
    }
    let servers: Vec<u32> = (1..=scenario.ensemble.servers).collect();
    let clients: Vec<u32> = (0..scenario.ensemble.clients).collect();
    let timeout = scenario.ensemble.session_timeout_ms as u64;
    // The seed's rate: somewhere between the scenario's min and max interval.
    let lo = range(&mut rng, f.interval_ms);
    let hi = lo.max(range(&mut rng, [lo, f.interval_ms[1]]));
    let end = scenario.fault_phase_ms();
    let mut out = Vec::new();
    let mut t = range(&mut rng, [lo, hi]);
    while t < end {
        let kind = pick(&mut rng, &enabled);
        let mut duration = range(&mut rng, f.duration_ms);
        let fault = match kind {
            FaultKind::PartitionHalves => {
                let mut nodes: Vec<Node> = servers
                    .iter()
                    .map(|s| Node::Server(*s))
                    .chain(clients.iter().map(|c| Node::Client(*c)))
                    .collect();
                nodes.shuffle(&mut rng);
                let cut = rng.gen_range(1..nodes.len().max(2));
                let (a, b) = nodes.split_at(cut.min(nodes.len()));
                let mut a = a.to_vec();
                let mut b = b.to_vec();
                a.sort();
                b.sort();
                Fault::PartitionHalves { groups: vec![a, b] }
            }
            FaultKind::IsolateLeader => Fault::IsolateLeader,
            FaultKind::MajoritiesRing => {
                let mut order = servers.clone();
                order.shuffle(&mut rng);
                Fault::MajoritiesRing { order }
            }
            FaultKind::Bridge => {
                let mut order = servers.clone();
                order.shuffle(&mut rng);
                Fault::Bridge { order }
            }
            FaultKind::OneWayCut => {
                let a = pick(&mut rng, &servers);
                let to_client = rng.gen_bool(0.3);
                if to_client {
                    let c = pick(&mut rng, &clients);
                    if rng.gen_bool(0.5) {
                        Fault::OneWayCut {
                            from: Node::Server(a),
                            to: Node::Client(c),
                        }
                    } else {
                        Fault::OneWayCut {
                            from: Node::Client(c),
                            to: Node::Server(a),
                        }
                    }
                } else {
                    let others: Vec<u32> = servers.iter().copied().filter(|s| *s != a).collect();
                    if others.is_empty() {
                        continue_fault(&mut t, &mut rng, lo, hi);
                        continue;
                    }
                    Fault::OneWayCut {
                        from: Node::Server(a),
                        to: Node::Server(pick(&mut rng, &others)),
                    }
                }
            }
            FaultKind::ClientCut => {
                let c = pick(&mut rng, &clients);
                let mut ss: Vec<u32> = servers.iter().copied().filter(|_| rng.gen_bool(0.5)).collect();
                if ss.is_empty() {
                    ss.push(pick(&mut rng, &servers));
                }
                Fault::ClientCut { client: c, servers: ss }
            }
            FaultKind::KillLeader => Fault::KillLeader {
                lose_unsynced: rng.gen_bool(0.5),
            },
            FaultKind::KillServer => Fault::KillServer {
                server: pick(&mut rng, &servers),
                lose_unsynced: rng.gen_bool(0.5),
            },
            FaultKind::DropConnection => {
                duration = 0;
                Fault::DropConnection {
                    client: pick(&mut rng, &clients),
                }
            }
            FaultKind::LoseReply => {
                duration = 0;
                Fault::LoseReply {
                    client: pick(&mut rng, &clients),
                }
            }
            FaultKind::ExpireSession => {
                duration = timeout * 2 + range(&mut rng, [0, timeout]);
                Fault::ExpireSession {
                    client: pick(&mut rng, &clients),
                }
            }
            FaultKind::ExpireAfterRead => {
                duration = 0;
                Fault::ExpireAfterRead {
                    client: pick(&mut rng, &clients),
                }
            }
            FaultKind::FlapConnection => Fault::FlapConnection {
                client: pick(&mut rng, &clients),
            },
            FaultKind::LoseReplyThenFlap => Fault::LoseReplyThenFlap {
                client: pick(&mut rng, &clients),
            },
            FaultKind::PauseClient => {
                duration = if rng.gen_bool(0.5) {
                    timeout * 3 / 2 + range(&mut rng, [0, timeout])
                } else {
                    range(&mut rng, [10, timeout / 2])
                };
                Fault::Pause {
                    node: Node::Client(pick(&mut rng, &clients)),
                }
            }
            FaultKind::PauseServer => {
                duration = if rng.gen_bool(0.5) {
                    timeout * 3 / 2 + range(&mut rng, [0, timeout])
                } else {
                    range(&mut rng, [10, timeout / 2])
                };
                Fault::Pause {
                    node: Node::Server(pick(&mut rng, &servers)),
                }
            }
            FaultKind::LatencySpike => {
                let min_ms = range(&mut rng, [5, 50]);
                Fault::LatencySpike {
                    min_ms,
                    max_ms: min_ms + range(&mut rng, [10, 400]),
                }
            }
            FaultKind::DeleteRecipeDir => {
                let dirs = crate::registry::entry(scenario.workload.recipe).dirs;
                if dirs.is_empty() {
                    continue_fault(&mut t, &mut rng, lo, hi);
                    continue;
                }
                Fault::DeleteRecipeDir {
                    path: pick(&mut rng, dirs).to_string(),
                    client: scenario.ensemble.clients,
                }
            }
        };
        out.push(TimedFault {
            at_ms: t,
            duration_ms: duration,
            fault,
        });
        continue_fault(&mut t, &mut rng, lo, hi);
    }
    out
}

fn continue_fault(t: &mut u64, rng: &mut impl Rng, lo: u64, hi: u64) {
    *t += range(rng, [lo, hi]).max(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario() -> Scenario {
        Scenario::parse("name = \"x\"\n[workload]\nrecipe = \"lock\"\n", "x").unwrap()
    }

    /// A fault's stat name is its plan `kind` (a pause is split by the
    /// node it stops), so a plan file, the stats and a swarm's weights
    /// name each kind alike.
    #[test]
    fn stats_name_a_fault_as_its_plan_does() {
        let s = scenario();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            for f in FaultPlan::generate(&s, seed).faults {
                let json = serde_json::to_value(&f.fault).unwrap();
                let tag = json["kind"].as_str().unwrap().to_string();
                let name = f.fault.kind_name();
                match tag.as_str() {
                    "pause" => assert!(name == "pause-client" || name == "pause-server", "{name}"),
                    _ => assert_eq!(name, tag),
                }
                seen.insert(f.fault.kind());
            }
        }
        assert!(seen.contains(&FaultKind::KillServer), "{seen:?}");
    }

    #[test]
    fn plans_are_seeded_and_round_trip() {
        let s = scenario();
        let a = FaultPlan::generate(&s, 7);
        assert_eq!(a, FaultPlan::generate(&s, 7));
        let differs = (0..20).any(|seed| FaultPlan::generate(&s, seed) != a);
        assert!(differs);
        let back = FaultPlan::from_json(&a.to_json(), "p.json").unwrap();
        assert_eq!(a, back);
        assert!(a.faults.iter().all(|f| f.at_ms < s.fault_phase_ms()));
    }

    #[test]
    fn swarm_covers_every_kind_over_seeds() {
        let s = scenario();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..50 {
            for f in FaultPlan::generate(&s, seed).faults {
                seen.insert(f.fault.kind_name());
            }
        }
        assert_eq!(seen.len(), FaultKind::ALL.len(), "{seen:?}");
    }
}
