//! The queue's rule: which earlier contender blocks a contender (each waits
//! on that one node only, so a release wakes one waiter, not the herd).

use crate::guid::SeqName;

/// Which node, if any, blocks the contender at `me` in `queue` (sorted by
/// creation order). The contender holds the lock when this is `None`.
pub type Blocker = fn(queue: &[SeqName], me: usize) -> Option<usize>;

/// Exclusive: every earlier node blocks; wait for the one just before.
pub fn blocker_exclusive(_queue: &[SeqName], me: usize) -> Option<usize> {
    me.checked_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guid::Guid;

    fn q(spec: &[(&str, i32)]) -> Vec<SeqName> {
        spec.iter()
            .enumerate()
            .map(|(i, (kind, seq))| {
                let g = Guid {
                    session: 1,
                    counter: i as u64,
                };
                SeqName {
                    name: format!("{}{:010}", g.prefix(kind), seq),
                    guid: g,
                    kind: (*kind).to_string(),
                    sequence: *seq,
                }
            })
            .collect()
    }

    #[test]
    fn exclusive_waits_for_immediate_predecessor() {
        let queue = q(&[("lock", 1), ("lock", 4), ("lock", 9)]);
        assert_eq!(blocker_exclusive(&queue, 0), None);
        assert_eq!(blocker_exclusive(&queue, 2), Some(1));
    }

    #[test]
    fn predecessor_across_counter_wrap() {
        let g = |c| Guid { session: 7, counter: c };
        let names = vec![
            format!("{}-2147483648", g(2).prefix("lock")),
            format!("{}2147483647", g(1).prefix("lock")),
            "foreign-node".to_string(),
            format!("{}-2147483647", g(3).prefix("lock")),
        ];
        let queue = SeqName::parse_sorted(&names, &["lock"]);
        let order: Vec<u64> = queue.iter().map(|n| n.guid.counter).collect();
        assert_eq!(order, vec![1, 2, 3]);
        assert_eq!(blocker_exclusive(&queue, 1), Some(0));
    }
}
