//! The tree's hash (defined in `zkdst_history::hash`, shared with history
//! fingerprints): the digest, and the hasher of the path-keyed node map.

pub(crate) use zkdst_history::hash::Hash64;

/// Builds the node map's hasher.
pub(crate) type PathHash = zkdst_history::hash::BuildHash64;
