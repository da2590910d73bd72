//! Short content hashes for repro lines (a scenario's, a plan's).

/// FNV-1a, 64 bits, as 16 hex digits.
pub fn short_hash(bytes: &[u8]) -> String {
    format!("{:016x}", zkdst_checker::hash::fnv1a(bytes))
}
