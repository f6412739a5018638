//! What every load worker of one run shares (either loop: `load::worker_loop`, `mux_load::mux_loop`): the
//! job, its clock, the stop flag, the counters that hand out requests and keys, and the op mix. Its own
//! module so the loops and `step` depend on it rather than on each other.

use super::job::{Job, KeyOrder};
use super::{KeyUse, Operation};
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

impl<'a, Op: Operation> Shared<'a, Op> {
    /// A run of `job` on the clock `t0` (its measured window from `measure_start` to `end`, if it has one):
    /// nothing issued yet, each mix entry's weight and key order read once.
    pub(super) fn new(job: &'a Job<Op>, t0: Instant, measure_start: Instant, end: Option<Instant>) -> Self {
        Shared {
            job,
            t0,
            measure_start,
            end,
            stop: AtomicBool::new(false),
            issued: AtomicU64::new(0),
            next_k: AtomicU64::new(0),
            seq: job.mix.iter().map(|_| AtomicU64::new(0)).collect(),
            exhausted: job.mix.iter().map(|_| AtomicBool::new(false)).collect(),
            last_done_ns: AtomicU64::new(0),
            weights: job.mix.iter().map(|m| m.weight.max(0.0)).collect(),
            sequential: job
                .mix
                .iter()
                .map(|m| m.keys.map_or(m.op.keys() != KeyUse::Random, |k| k != KeyOrder::Random))
                .collect(),
            consumes: job
                .mix
                .iter()
                .map(|m| m.op.keys() == KeyUse::Consume || m.keys == Some(KeyOrder::Once))
                .collect(),
            names: job.mix.iter().map(|m| m.op.name()).collect(),
        }
    }
}
