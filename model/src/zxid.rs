//! ZooKeeper transaction ids: `epoch << 32 | counter`.

/// A ZooKeeper transaction id: `epoch << 32 | counter`.
pub type Zxid = i64;

pub fn make_zxid(epoch: u32, counter: u32) -> Zxid {
    ((epoch as i64) << 32) | counter as i64
}

pub fn epoch_of(zxid: Zxid) -> u32 {
    (zxid >> 32) as u32
}

pub fn counter_of(zxid: Zxid) -> u32 {
    zxid as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_and_counter_round_trip() {
        for (e, c) in [(0, 0), (1, 1), (7, u32::MAX), (u32::MAX, 0), (u32::MAX, u32::MAX)] {
            let z = make_zxid(e, c);
            assert_eq!((epoch_of(z), counter_of(z)), (e, c));
        }
        assert_eq!(make_zxid(1, 2), 0x1_0000_0002);
    }
}
