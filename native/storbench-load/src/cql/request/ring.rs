//! Token-aware routing: the node that owns a key, from the ring the driver's session read (`driver::Setup`),
//! with the driver's own Murmur3 partitioner, so a request goes where the driver would have sent it.

use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner};
use std::net::SocketAddr;

/// Which node serves a key: the first node at or after the key's Murmur3 token on the ring.
pub struct Ring {
    pub nodes: Vec<SocketAddr>,
    /// (token, index into nodes), sorted by token.
    tokens: Vec<(i64, usize)>,
}

impl Ring {
    pub fn new(nodes: Vec<SocketAddr>, mut tokens: Vec<(i64, usize)>) -> Self {
        tokens.sort_unstable();
        Ring { nodes, tokens }
    }

    /// The index of the node for `key` (the only one without hashing when there is one).
    pub fn node(&self, key: &[u8]) -> usize {
        if self.nodes.len() < 2 || self.tokens.is_empty() {
            return 0;
        }
        let token = Murmur3Partitioner.hash_one(key).value();
        let at = self.tokens.partition_point(|(t, _)| *t < token);
        self.tokens[if at == self.tokens.len() { 0 } else { at }].1
    }

    /// Every node once, in ring order from the one owning `key` (under SimpleStrategy: its replicas first).
    pub fn clockwise<'a>(&'a self, key: &[u8]) -> impl Iterator<Item = usize> + 'a {
        let token = Murmur3Partitioner.hash_one(key).value();
        let at = self.tokens.partition_point(|(t, _)| *t < token);
        let mut seen = vec![false; self.nodes.len()];
        let n = self.tokens.len();
        (0..n).map(move |i| self.tokens[(at + i) % n].1).filter(move |&node| !std::mem::replace(&mut seen[node], true))
    }
}
