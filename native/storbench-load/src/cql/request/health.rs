//! Which nodes a multiplexed group passes over: a node from which nothing at all came while one of its requests
//! waited out timeout_s (its link cut, its process stopped), or to which no connection opens. Its keys go to the
//! next node of the ring (the next replica under SimpleStrategy, which coordinates them as well as the owner
//! would); after timeout_s one request tries it again, and the first answer from it brings it back. So a node
//! lost mid-run costs the requests that were on their way to it (counted by kind: "timeout", "connection") and
//! one more per timeout_s while it stays lost, not a share of every request until the run ends. A slow node that
//! answers anything is never passed over; when every node is passed over, requests go to their owners.

use super::ring::Ring;
use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
struct Down {
    /// When one request may try the node again.
    retry: Instant,
    /// That request is on its way.
    trying: bool,
}

pub struct Health {
    /// When an answer last came from each node.
    heard: Vec<Option<Instant>>,
    down: Vec<Option<Down>>,
    retry: Duration,
}

impl Health {
    pub fn new(nodes: usize, retry: Duration) -> Self {
        Health { heard: vec![None; nodes], down: vec![None; nodes], retry }
    }

    /// An answer came from `node`.
    pub fn heard(&mut self, node: usize, now: Instant) {
        self.heard[node] = Some(now);
        self.down[node] = None;
    }

    /// A request sent to `node` at `sent` got no answer by `now`: the node is passed over if nothing else came
    /// from it in that time either.
    pub fn timed_out(&mut self, node: usize, sent: Instant, now: Instant) {
        if self.heard[node].is_none_or(|heard| heard < sent) {
            self.unreachable(node, now);
        }
    }

    /// No connection to `node` opened (or the one request trying it again went unanswered).
    pub fn unreachable(&mut self, node: usize, now: Instant) {
        self.down[node] = Some(Down { retry: now + self.retry, trying: false });
    }

    /// The connection to `node` broke: a node being tried again goes back to waiting for its next try.
    pub fn broken(&mut self, node: usize, now: Instant) {
        if self.down[node].is_some() {
            self.unreachable(node, now);
        }
    }

    /// Where a request for `key` goes: its owner, unless the owner is passed over; then the next node of the
    /// ring that is not (a passed-over node due a retry takes this request as its one try).
    pub fn route(&mut self, ring: &Ring, key: &[u8]) -> usize {
        let owner = ring.node(key);
        if self.down[owner].is_none() {
            return owner;
        }
        let now = Instant::now();
        for node in ring.clockwise(key) {
            match &mut self.down[node] {
                None => return node,
                Some(down) if !down.trying && down.retry <= now => {
                    down.trying = true;
                    return node;
                }
                Some(_) => {}
            }
        }
        owner
    }
}
