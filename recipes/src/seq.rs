//! Ordering of sequential nodes when the parent's counter may have wrapped.
//!
//! ZooKeeper's suffix is `%010d` of a signed 32-bit counter: after
//! 2147483647 comes -2147483648 (ZOOKEEPER-4372). Read as `u32` the counter
//! simply keeps counting (2^31 follows 2^31 - 1), and only wraps back to 0
//! after 2^32 creates. Live nodes of one directory span far less than 2^31
//! creates, so when the `u32` values span more than half the ring, the small
//! ones were created after the wrap and sort last.

/// The position of `seq` on the creation timeline of a directory whose live
/// sequences are `all` (ring-aware; see the module docs).
fn ring_key(seq: i32, wrapped: bool) -> u64 {
    let v = seq as u32;
    if wrapped && v < (1 << 31) {
        u64::from(v) + (1 << 32)
    } else {
        u64::from(v)
    }
}

/// True when the live sequences straddle the `u32` wrap point.
fn straddles(seqs: impl Iterator<Item = i32>) -> bool {
    let (mut lo, mut hi) = (u32::MAX, 0u32);
    for s in seqs {
        lo = lo.min(s as u32);
        hi = hi.max(s as u32);
    }
    lo <= hi && hi - lo > (1 << 31)
}

/// Sorts items by creation order of their sequence numbers, wrap-aware.
pub fn sort_by_sequence<T>(mut items: Vec<T>, seq: impl Fn(&T) -> i32) -> Vec<T> {
    let wrapped = straddles(items.iter().map(&seq));
    items.sort_by_key(|t| ring_key(seq(t), wrapped));
    items
}

/// Sorts items by `group`, then by creation order of `seq` (wrap-aware
/// across all items); stable. The same order as [`sort_by_sequence`]
/// followed by a stable sort by `group`, in one sort.
pub fn sort_by_group_then_sequence<T>(items: &mut [T], group: impl Fn(&T) -> u32, seq: impl Fn(&T) -> i32) {
    let wrapped = straddles(items.iter().map(&seq));
    items.sort_by_key(|t| (group(t), ring_key(seq(t), wrapped)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_order() {
        assert_eq!(sort_by_sequence(vec![5, 1, 3], |s| *s), vec![1, 3, 5]);
    }

    #[test]
    fn signed_wrap_keeps_creation_order() {
        let live = vec![i32::MIN + 1, i32::MAX, i32::MIN, i32::MAX - 1];
        assert_eq!(
            sort_by_sequence(live, |s| *s),
            vec![i32::MAX - 1, i32::MAX, i32::MIN, i32::MIN + 1]
        );
    }

    #[test]
    fn unsigned_wrap_keeps_creation_order() {
        // -1 (u32::MAX) is followed by 0 after 2^32 creates.
        let live = vec![1, -1, 0, -2];
        assert_eq!(sort_by_sequence(live, |s| *s), vec![-2, -1, 0, 1]);
    }

    proptest::proptest! {
        /// One sort gives the order of the two stable sorts it replaces,
        /// ties (same group and sequence) in their original order.
        #[test]
        fn group_then_sequence_is_the_two_sorts(items in proptest::collection::vec((0u32..3, proptest::prop_oneof![proptest::prelude::any::<i32>(), -3i32..3, (i32::MAX - 2)..=i32::MAX], 0u8..4), 0..40)) {
            let mut two = sort_by_sequence(items.clone(), |i| i.1);
            two.sort_by_key(|i| i.0);
            let mut one = items;
            sort_by_group_then_sequence(&mut one, |i| i.0, |i| i.1);
            proptest::prop_assert_eq!(one, two);
        }
    }

    #[test]
    fn negative_only_after_wrap() {
        let live = vec![-3, -5, -4];
        assert_eq!(sort_by_sequence(live, |s| *s), vec![-5, -4, -3]);
    }
}
