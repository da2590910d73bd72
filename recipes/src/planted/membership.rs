//! A broken group member: the correct [`GroupMember`] with its reaction to
//! a Disconnected session replaced.

use crate::membership::{GroupMember, MemberStatus, Steps};

/// Suspended ignored (kazoo commit f9cc08f, SetPartitioner): a Disconnected
/// session is treated as harmless — the member keeps reporting
/// [`MemberStatus::Joined`] and its last view while its session may be
/// expiring. A partitioner built on it keeps the partitions of its last view
/// after its membership expired and the others re-divided them: two members
/// own one partition.
pub type SuspendedIgnoredMember = GroupMember<IgnoreSuspension>;

/// Disconnected changes nothing the member reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct IgnoreSuspension;

impl Steps for IgnoreSuspension {
    fn on_disconnected(&self) -> Option<MemberStatus> {
        // BUG: the membership may be expiring; the member still says Joined.
        None
    }
}
