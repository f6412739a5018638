//! What every load worker of one run shares (either loop: `load::worker_loop`, `mux_load::mux_loop`): the
//! job, its clock, the stop flag, the counters that hand out requests and keys, and the op mix. Its own
//! module so the loops and `step` depend on it rather than on each other.

use super::job::Job;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Instant;

pub(super) struct Shared<'a, Op> {
    pub(super) job: &'a Job<Op>,
    pub(super) t0: Instant,
    pub(super) measure_start: Instant,
    pub(super) end: Option<Instant>,
    pub(super) stop: AtomicBool,
    pub(super) issued: AtomicU64,
    pub(super) next_k: AtomicU64,
    pub(super) seq: Vec<AtomicU64>,
    pub(super) exhausted: Vec<AtomicBool>,
    pub(super) last_done_ns: AtomicU64,
    pub(super) weights: Vec<f64>,
    pub(super) sequential: Vec<bool>,
    pub(super) consumes: Vec<bool>,
    /// The ops' names (for the records).
    pub(super) names: Vec<String>,
}
