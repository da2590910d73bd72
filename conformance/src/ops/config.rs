//! The generator's switches, and the TTL it gives TTL nodes.

/// What the generator may produce.
#[derive(Debug, Clone)]
pub struct GenConfig {
    /// Number of clients (sessions), 2–3 is the useful range.
    pub clients: usize,
    /// Sequence length range.
    pub min_len: usize,
    pub max_len: usize,
    /// Generate TTL create modes (the server needs extended types).
    pub ttl: bool,
    /// Generate `Close` steps.
    pub close: bool,
    /// Generate a few malformed paths (rejected before sending).
    pub bad_paths: bool,
    /// Generate `addWatch` steps (persistent and persistent-recursive).
    pub persistent_watches: bool,
    /// Generate disconnect blocks: `Disconnect c`, 0–4 steps by other
    /// clients, `Reconnect c` (see [`disconnect_block`](super::disconnect_block)).
    pub disconnects: bool,
    /// Generate `Expire` steps.
    pub expiry: bool,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            clients: 3,
            min_len: 5,
            max_len: 30,
            ttl: true,
            close: true,
            bad_paths: true,
            persistent_watches: true,
            disconnects: true,
            expiry: true,
        }
    }
}

/// TTL used for generated TTL nodes: long enough never to expire in a run.
pub const GEN_TTL_MS: i64 = 3_600_000;
