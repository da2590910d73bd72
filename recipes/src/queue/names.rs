//! Item node names: `p{priority}-{guid}-item-{sequence}`.

use crate::guid::{Guid, GUID_LEN};
use crate::zk::path::sequence_after_prefix;

/// A parsed item node name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemName {
    pub name: String,
    pub priority: i32,
    pub guid: Guid,
    pub sequence: i32,
}

/// Priorities biased into `0..2^32` so ten decimal digits sort lexically.
fn encode_priority(p: i32) -> u32 {
    (p as u32) ^ 0x8000_0000
}

fn decode_priority(v: u32) -> i32 {
    (v ^ 0x8000_0000) as i32
}

impl ItemName {
    /// The sequential-create prefix of an item.
    pub fn prefix(priority: i32, guid: &Guid) -> String {
        format!("p{:010}-{guid}-item-", encode_priority(priority))
    }

    pub fn parse(name: &str) -> Option<ItemName> {
        let (priority, guid, sequence) = Self::fields(name)?;
        Some(ItemName {
            name: name.to_string(),
            priority,
            guid,
            sequence,
        })
    }

    /// True if `name` is an item's name (what [`ItemName::parse`] accepts,
    /// without building one).
    pub fn is_item(name: &str) -> bool {
        Self::fields(name).is_some()
    }

    /// Priority, guid and sequence of an item name.
    fn fields(name: &str) -> Option<(i32, Guid, i32)> {
        let rest = name.strip_prefix('p')?;
        let digits = rest.get(..10)?;
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let priority = decode_priority(digits.parse::<u32>().ok()?);
        let rest = rest[10..].strip_prefix('-')?;
        let guid = Guid::at_start_of(rest)?;
        let seq = rest[GUID_LEN..].strip_prefix("-item-")?;
        Some((priority, guid, sequence_after_prefix(seq, "")?))
    }

    /// The item names among `names`, in dequeue order: priority, then
    /// creation (wrap-aware). Each name is copied only when the iterator
    /// reaches it: a consumer usually takes the first of hundreds.
    pub fn parse_sorted(names: &[String]) -> impl Iterator<Item = ItemName> + '_ {
        let mut items: Vec<(u32, i32, Guid, &String)> = names
            .iter()
            .filter_map(|n| {
                let (priority, guid, sequence) = Self::fields(n)?;
                Some((encode_priority(priority), sequence, guid, n))
            })
            .collect();
        crate::seq::sort_by_group_then_sequence(&mut items, |i| i.0, |i| i.1);
        items.into_iter().map(|(priority, sequence, guid, name)| ItemName {
            name: name.clone(),
            priority: decode_priority(priority),
            guid,
            sequence,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(p: i32, c: u64, seq: &str) -> String {
        format!("{}{seq}", ItemName::prefix(p, &Guid { session: 9, counter: c }))
    }

    #[test]
    fn priority_encoding_sorts_lexically() {
        let ps = [i32::MIN, -7, -1, 0, 1, 42, i32::MAX];
        let enc: Vec<String> = ps
            .iter()
            .map(|p| ItemName::prefix(*p, &Guid { session: 1, counter: 1 }))
            .collect();
        let mut sorted = enc.clone();
        sorted.sort();
        assert_eq!(enc, sorted);
        for p in ps {
            let n = name(p, 3, "0000000005");
            let parsed = ItemName::parse(&n).expect("parses");
            assert_eq!((parsed.priority, parsed.sequence), (p, 5));
        }
    }

    #[test]
    fn dequeue_order_is_priority_then_creation_across_wrap() {
        let names = vec![
            name(0, 1, "-2147483648"),
            name(0, 2, "2147483647"),
            name(-1, 3, "-2147483647"),
            "garbage".to_string(),
        ];
        let order: Vec<u64> = ItemName::parse_sorted(&names).map(|i| i.guid.counter).collect();
        assert_eq!(order, vec![3, 2, 1]);
    }
}
