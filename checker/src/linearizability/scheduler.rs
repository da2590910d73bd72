//! Checking the partitions of a history (P-compositionality): partitions
//! are searched in slices, round-robin, on up to as many threads as there
//! are cores, so that one hard partition never blocks an easy refutation.
//! The first refutation stops everything; the budget turns into `Unknown`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::operation::LinOp;
use super::search::{Progress, Search};
use super::verdict::{Budget, UnknownReason, Verdict};
use crate::models::Model;

/// The operations on one independent object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition<I, O> {
    /// Names the object (a key, a lock, a queue); empty for a single object.
    pub label: String,
    pub ops: Vec<LinOp<I, O>>,
}

/// Steps a partition runs before it yields to the next one.
const SLICE: u64 = 1 << 15;
/// Steps between two looks at whether another thread has stopped the check.
const CHUNK: u64 = 1 << 10;

/// Checks the operations of a single object.
pub fn check_operations<M: Model>(model: &M, ops: &[LinOp<M::Input, M::Output>], budget: Budget) -> Verdict {
    let part = [Partition {
        label: String::new(),
        ops: ops.to_vec(),
    }];
    check_partitions(model, &part, budget)
}

struct Shared<'a, M: Model> {
    queue: Mutex<VecDeque<(usize, Option<Search<'a, M>>)>>,
    /// The lowest-numbered refutation found, or the reason to give up.
    outcome: Mutex<Option<(usize, Verdict)>>,
    stop: AtomicBool,
    steps: AtomicU64,
    start: Instant,
    budget: Budget,
}

/// Checks independent partitions; linearizable iff every one is.
pub fn check_partitions<M: Model>(model: &M, partitions: &[Partition<M::Input, M::Output>], budget: Budget) -> Verdict {
    let queue: VecDeque<_> = partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.ops.is_empty())
        .map(|(i, _)| (i, None))
        .collect();
    let workers = budget
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(queue.len())
        .max(1);
    let shared = Shared {
        queue: Mutex::new(queue),
        outcome: Mutex::new(None),
        stop: AtomicBool::new(false),
        steps: AtomicU64::new(0),
        start: Instant::now(),
        budget,
    };
    std::thread::scope(|s| {
        for _ in 1..workers {
            s.spawn(|| work(model, partitions, &shared));
        }
        work(model, partitions, &shared);
    });
    let outcome = shared.outcome.into_inner().unwrap_or_else(|p| p.into_inner());
    outcome.map_or(Verdict::Linearizable, |(_, v)| v)
}

fn give_up<M: Model>(shared: &Shared<'_, M>, reason: UnknownReason) {
    let mut out = shared.outcome.lock().unwrap_or_else(|p| p.into_inner());
    if out.is_none() {
        *out = Some((usize::MAX, Verdict::Unknown(reason)));
    }
    shared.stop.store(true, Ordering::SeqCst);
}

fn work<'a, M: Model>(model: &'a M, partitions: &'a [Partition<M::Input, M::Output>], shared: &Shared<'a, M>) {
    while !shared.stop.load(Ordering::SeqCst) {
        let Some((index, search)) = shared.queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front() else {
            return;
        };
        let mut slice = SLICE;
        if let Some(max) = shared.budget.max_steps {
            let used = shared.steps.load(Ordering::SeqCst);
            if used >= max {
                return give_up(shared, UnknownReason::StepLimit { steps: max });
            }
            slice = slice.min(max - used);
        }
        if let Some(limit) = shared.budget.deadline {
            if shared.start.elapsed() >= limit {
                return give_up(shared, UnknownReason::Deadline { after: limit });
            }
        }
        let mut search = search.unwrap_or_else(|| Search::new(model, &partitions[index].ops));
        let before = search.steps();
        // In chunks, so that a refutation found on another thread stops
        // this one within `CHUNK` steps rather than at the end of a slice.
        let progress = loop {
            let chunk = slice.min(CHUNK);
            slice -= chunk;
            match search.run(chunk) {
                Progress::Pending if slice > 0 && !shared.stop.load(Ordering::Relaxed) => {}
                p => break p,
            }
        };
        shared.steps.fetch_add(search.steps() - before, Ordering::SeqCst);
        match progress {
            Progress::Linearizable => {}
            Progress::Pending => shared
                .queue
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push_back((index, Some(search))),
            Progress::Refuted => {
                let witness = search.witness(partitions[index].label.clone());
                let mut out = shared.outcome.lock().unwrap_or_else(|p| p.into_inner());
                if out.as_ref().is_none_or(|(i, _)| index < *i) {
                    *out = Some((index, Verdict::NotLinearizable(Box::new(witness))));
                }
                shared.stop.store(true, Ordering::SeqCst);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::{Register, RegisterInput, RegisterOutput};

    type Op = LinOp<RegisterInput, RegisterOutput>;

    /// `n` overlapping writes, then a read of a value never written: refuted,
    /// but only after exploring every subset of the writes.
    fn hard(n: u64) -> Vec<Op> {
        let mut ops: Vec<Op> = (0..n)
            .map(|i| LinOp {
                id: i,
                client: i as u32,
                call: i,
                ret: Some(n + i),
                input: RegisterInput::Write {
                    key: None,
                    value: i as i64,
                },
                output: Some(RegisterOutput::Done),
            })
            .collect();
        ops.push(LinOp {
            id: n,
            client: 999,
            call: 0,
            ret: Some(3 * n),
            input: RegisterInput::Read { key: None },
            output: Some(RegisterOutput::Read(Some(-1))),
        });
        ops
    }

    fn easy() -> Vec<Op> {
        vec![LinOp {
            id: 0,
            client: 0,
            call: 0,
            ret: Some(1),
            input: RegisterInput::Read { key: None },
            output: Some(RegisterOutput::Read(Some(5))),
        }]
    }

    fn part(label: &str, ops: Vec<Op>) -> Partition<RegisterInput, RegisterOutput> {
        Partition {
            label: label.to_string(),
            ops,
        }
    }

    #[test]
    fn hard_partitions_do_not_block_an_easy_refutation() {
        let parts = vec![
            part("h1", hard(18)),
            part("h2", hard(18)),
            part("h3", hard(18)),
            part("easy", easy()),
        ];
        let budget = Budget {
            deadline: None,
            max_steps: Some(20 * SLICE),
            threads: None,
        };
        match check_partitions(&Register::cas(), &parts, budget) {
            Verdict::NotLinearizable(w) => {
                assert_eq!(w.partition, "easy");
                assert_eq!(w.state, "nil");
                assert!(w.prefix.is_empty());
                assert_eq!(w.overdue.map(|o| o.operation), Some("read -> 5".to_string()));
            }
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn budget_turns_into_unknown() {
        let parts = vec![part("h1", hard(20)), part("h2", hard(20))];
        let steps = Budget {
            deadline: None,
            max_steps: Some(3 * SLICE),
            threads: None,
        };
        assert_eq!(
            check_partitions(&Register::cas(), &parts, steps),
            Verdict::Unknown(UnknownReason::StepLimit { steps: 3 * SLICE })
        );
        let after = std::time::Duration::from_millis(20);
        let deadline = Budget {
            deadline: Some(after),
            max_steps: None,
            threads: None,
        };
        assert_eq!(
            check_partitions(&Register::cas(), &parts, deadline),
            Verdict::Unknown(UnknownReason::Deadline { after })
        );
    }

    #[test]
    fn linearizable_only_if_every_partition_is() {
        let ok = vec![LinOp {
            id: 0,
            client: 0,
            call: 0,
            ret: Some(1),
            input: RegisterInput::Read { key: None },
            output: Some(RegisterOutput::Read(None)),
        }];
        assert_eq!(
            check_partitions(
                &Register::cas(),
                &[part("a", ok.clone()), part("b", ok.clone())],
                Budget::unlimited()
            ),
            Verdict::Linearizable
        );
        assert!(check_partitions(
            &Register::cas(),
            &[part("a", ok.clone()), part("b", easy()), part("c", ok)],
            Budget::unlimited()
        )
        .is_refuted());
        assert_eq!(
            check_partitions::<Register>(&Register::cas(), &[], Budget::unlimited()),
            Verdict::Linearizable
        );
    }

    #[test]
    fn small_hard_partition_is_refuted_to_the_end() {
        assert!(check_operations(&Register::cas(), &hard(8), Budget::unlimited()).is_refuted());
    }
}
