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

/// Checks the operations of a single object.
pub fn check_operations<M: Model>(
    model: &M,
    ops: &[LinOp<M::Input, M::Output>],
    budget: Budget,
) -> Verdict {
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
pub fn check_partitions<M: Model>(
    model: &M,
    partitions: &[Partition<M::Input, M::Output>],
    budget: Budget,
) -> Verdict {
    let queue: VecDeque<_> = partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.ops.is_empty())
        .map(|(i, _)| (i, None))
        .collect();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
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
    let outcome = shared
        .outcome
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    outcome.map_or(Verdict::Linearizable, |(_, v)| v)
}

fn give_up<M: Model>(shared: &Shared<'_, M>, reason: UnknownReason) {
    let mut out = shared.outcome.lock().unwrap_or_else(|p| p.into_inner());
    if out.is_none() {
        *out = Some((usize::MAX, Verdict::Unknown(reason)));
    }
    shared.stop.store(true, Ordering::SeqCst);
}

fn work<'a, M: Model>(
    model: &'a M,
    partitions: &'a [Partition<M::Input, M::Output>],
    shared: &Shared<'a, M>,
) {
    while !shared.stop.load(Ordering::SeqCst) {
        let Some((index, search)) = shared
            .queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop_front()
        else {
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
        let progress = search.run(slice);
        shared
            .steps
            .fetch_add(search.steps() - before, Ordering::SeqCst);
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
