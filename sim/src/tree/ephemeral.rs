//! Java's hashing and hash-set order, where ZooKeeper's output depends on
//! them (the order a closed session's ephemerals are deleted). The node kind
//! a raw `ephemeralOwner` encodes is `zkdst_model::EphemeralType`.

pub use zkdst_model::EphemeralType;

/// Java's `String.hashCode` (over UTF-16 code units, wrapping).
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32))
}

/// `HashMap.hash`'s bucket of `path` in a table of `capacity` slots.
fn java_bucket(path: &str, capacity: usize) -> usize {
    let h = java_string_hash(path) as u32;
    ((h ^ (h >> 16)) as usize) & (capacity - 1)
}

/// The order in which a `java.util.HashSet<String>` built by inserting
/// `(path, insertion key)` pairs in key order iterates them: by bucket of
/// `HashMap.hash` (`h ^ (h >>> 16)`) in a table of 16 slots doubled while
/// more than 3/4 full, then by insertion within a bucket. (A table only grows,
/// so one that was once larger iterates differently; and buckets with 8+
/// entries in a table of 64+ become trees — neither is modelled.)
pub fn java_hash_set_order<K: Ord + Copy>(mut entries: Vec<(String, K)>) -> Vec<String> {
    let mut capacity: usize = 16;
    while entries.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    entries.sort_by_key(|(path, key)| (java_bucket(path, capacity), *key));
    entries.into_iter().map(|(p, _)| p).collect()
}

/// The order in which ZooKeeper 3.8 deletes a closed session's ephemerals
/// (and so fires their watches): `PrepRequestProcessor` takes
/// `DataTree.getEphemerals(session)` — a `clone()` of the session's
/// `HashSet<String>` (filled in creation order) — and puts it, in the
/// clone's iteration order, into the `CloseSessionTxn` that
/// `DataTree.killSession` applies. The clone is pre-sized by JDK 17's
/// `HashMap.putMapEntries` (`tableSizeFor((int)(n / 0.75f + 1))` slots, so
/// usually fewer than the original's) and filled in the original's order.
pub fn close_session_order<K: Ord + Copy>(entries: Vec<(String, K)>) -> Vec<String> {
    let original = java_hash_set_order(entries);
    if original.is_empty() {
        return original;
    }
    let t = (original.len() as f32 / 0.75 + 1.0) as usize;
    let capacity = t.next_power_of_two();
    let mut clone: Vec<(usize, String)> = original.into_iter().enumerate().collect();
    clone.sort_by_key(|(i, path)| (java_bucket(path, capacity), *i));
    clone.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_set_iteration_order() {
        // Known Java values.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99162322);
        assert_eq!(java_string_hash("/t-1234-5/a/e"), {
            let mut h = 0i32;
            for b in "/t-1234-5/a/e".bytes() {
                h = h.wrapping_mul(31).wrapping_add(b as i32);
            }
            h
        });
        // new HashSet<>(List.of("b", "a", "q")) iterates a, b, q: buckets
        // 97 & 15 = 1, 98 & 15 = 2, 113 & 15 = 1 -> a, q (inserted later), b.
        let order = java_hash_set_order(vec![("b".to_string(), 0), ("a".to_string(), 1), ("q".to_string(), 2)]);
        assert_eq!(order, vec!["a", "q", "b"]);
        // Its clone (4 slots for 3 entries): a 97 & 3 = 1, q 113 & 3 = 1,
        // b 98 & 3 = 2 -> a, q, b again; but {b, e}: 16 slots give b (2),
        // e (5); the clone's 4 slots give e (1), b (2).
        assert_eq!(
            close_session_order(vec![("b".to_string(), 0), ("a".to_string(), 1), ("q".to_string(), 2)]),
            vec!["a", "q", "b"]
        );
        assert_eq!(
            java_hash_set_order(vec![("b".to_string(), 0), ("e".to_string(), 1)]),
            vec!["b", "e"]
        );
        assert_eq!(
            close_session_order(vec![("b".to_string(), 0), ("e".to_string(), 1)]),
            vec!["e", "b"]
        );
    }
}
