//! Pinning sessions to ensemble members, one rule for both backends: client
//! `i` talks only to the `i`-th (mod the ensemble size) of the members
//! listed leader first, then the followers in id order. The differential
//! runs on three servers, real and simulated, both take it from here, so
//! the same sessions land on the leader on both sides.

/// `members` reordered leader first, the others following in their order.
pub fn leader_first<T: Copy + PartialEq>(leader: T, members: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut order = vec![leader];
    order.extend(members.into_iter().filter(|m| *m != leader));
    order
}

/// The member client `client` is pinned to, in a [`leader_first`] order.
pub fn pinned_member<T>(order: &[T], client: usize) -> &T {
    &order[client % order.len()]
}
