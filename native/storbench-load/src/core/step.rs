//! One request of a load worker, in either loop (`load::worker_loop`, `mux_load::mux_loop`): the
//! next op, key and intended start drawn; its answer counted.

use super::job::{Job, Load, SizeDist};
use super::payload::{size_for, Rng};
use super::records::{RecordWriter, Row};
use super::shared::Shared;
use super::stats::WorkerStats;
use super::{OpFailure, Operation, Outcome, Request};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn pick_op<Op>(shared: &Shared<Op>, rng: &mut Rng) -> Option<usize> {
    let live: f64 = shared
        .weights
        .iter()
        .enumerate()
        .filter(|(i, _)| !shared.exhausted[*i].load(Ordering::Relaxed))
        .map(|(_, w)| *w)
        .sum();
    if live <= 0.0 {
        return None;
    }
    let mut x = rng.unit() * live;
    let mut last = None;
    for (i, w) in shared.weights.iter().enumerate() {
        if shared.exhausted[i].load(Ordering::Relaxed) || *w <= 0.0 {
            continue;
        }
        last = Some(i);
        if x < *w {
            return Some(i);
        }
        x -= w;
    }
    last
}

/// The key for op `i`: sequential (striped over processes) or uniform random.
fn pick_key<Op>(shared: &Shared<Op>, i: usize, rng: &mut Rng) -> Option<u64> {
    let job = shared.job;
    if shared.sequential[i] {
        let c = shared.seq[i].fetch_add(1, Ordering::Relaxed);
        let idx = c.checked_mul(job.process_count).and_then(|v| v.checked_add(job.process_index))?;
        if idx >= job.objects {
            if shared.consumes[i] {
                shared.exhausted[i].store(true, Ordering::Relaxed);
                return None;
            }
            return Some(job.start_key + idx % job.objects);
        }
        Some(job.start_key + idx)
    } else {
        Some(job.start_key + rng.below(job.objects))
    }
}

/// A worker's next request: its intended start (in the future on an open loop's schedule), its op.
pub(super) enum Next<Op> {
    Go {
        intended: Instant,
        op: usize,
        req: Request<Op>,
    },
    /// No key for the op drawn (it ran out): draw again.
    Again,
    /// This worker is done.
    Stop,
}

/// A worker's generator state: its RNG, the open loop's per-process rate.
pub(super) struct Draw {
    pub(super) rng: Rng,
    pub(super) open: Option<f64>,
    single_size: bool,
}

impl Draw {
    pub(super) fn new<Op>(job: &Job<Op>, index: u32) -> Self {
        Draw {
            rng: Rng::new(job.seed ^ (job.process_index << 32) ^ index as u64 ^ 0xABCD_0000_0000),
            open: match &job.load {
                Load::Open { rate, .. } => Some(rate / job.process_count as f64),
                _ => None,
            },
            single_size: matches!(job.object_size, SizeDist::Fixed { .. }),
        }
    }
}

pub(super) fn next<Op: Operation>(shared: &Shared<Op>, d: &mut Draw) -> Next<Op> {
    let job = shared.job;
    if shared.stop.load(Ordering::Relaxed) {
        return Next::Stop;
    }
    let intended = if let Some(rate) = d.open {
        let k = shared.next_k.fetch_add(1, Ordering::Relaxed);
        if job.ops > 0 && k >= job.ops {
            return Next::Stop;
        }
        let at = shared.t0 + Duration::from_secs_f64(k as f64 / rate);
        if let Some(end) = shared.end {
            if at >= end {
                return Next::Stop;
            }
        }
        at
    } else {
        let n = shared.issued.fetch_add(1, Ordering::Relaxed);
        if job.ops > 0 && n >= job.ops {
            return Next::Stop;
        }
        Instant::now()
    };
    let Some(op) = pick_op(shared, &mut d.rng) else { return Next::Stop };
    let Some(key) = pick_key(shared, op, &mut d.rng) else {
        if shared.exhausted.iter().all(|e| e.load(Ordering::Relaxed)) {
            return Next::Stop;
        }
        return Next::Again;
    };
    let size = if d.single_size {
        size_for(&job.object_size, job.payload_seed, 0)
    } else {
        size_for(&job.object_size, job.payload_seed, key)
    };
    let rb = job.mix[op].range_bytes;
    let range = if rb > 0 && rb < size { Some((d.rng.below(size - rb + 1), rb)) } else { None };
    Next::Go { intended, op, req: Request { op: job.mix[op].op, key, size, range } }
}

/// One request's answer counted (and its row written); false when it came after the window (the
/// worker is done, the answer not counted).
#[allow(clippy::too_many_arguments)]
pub(super) fn record<Op, E: OpFailure>(
    shared: &Shared<Op>,
    stats: &mut WorkerStats,
    rows: Option<&mut RecordWriter<'_>>,
    op: usize,
    key: u64,
    intended: Instant,
    started: Instant,
    done: Instant,
    result: Result<Outcome, E>,
) -> bool {
    shared.last_done_ns.fetch_max((done - shared.t0).as_nanos() as u64, Ordering::Relaxed);
    if let Some(end) = shared.end {
        if done > end {
            return false; // finished after the measured window: not counted
        }
    }
    let second = (done - shared.t0).as_secs() as usize;
    let latency_us = (done - intended).as_micros() as u64;
    let measured = done >= shared.measure_start;
    if let Some(rows) = rows {
        let (bytes, status) = match &result {
            Ok(o) => (o.bytes, "ok".into()),
            Err(e) => (0, e.kind()),
        };
        rows.row(Row {
            intended_us: (intended - shared.t0).as_micros(),
            op: &shared.names[op],
            key,
            latency_us,
            service_us: (done - started).as_micros(),
            bytes,
            status: &status,
        });
    }
    match result {
        Ok(outcome) => {
            let s = stats.second(second);
            s.ops += 1;
            s.bytes += outcome.bytes;
            s.lat_sum_us += latency_us;
            s.lat_max_us = s.lat_max_us.max(latency_us);
            if measured {
                let lag = (started.saturating_duration_since(intended)).as_micros() as u64;
                if matches!(shared.job.load, Load::Open { .. }) && lag > 1000 {
                    stats.late_starts += 1;
                }
                stats.max_start_lag_us = stats.max_start_lag_us.max(lag);
                let o = &mut stats.per_op[op];
                o.ops += 1;
                o.bytes += outcome.bytes;
                o.latency.saturating_record(latency_us.max(1));
                o.service.saturating_record(((done - started).as_micros() as u64).max(1));
                if let Some(fb) = outcome.first_byte {
                    o.ttfb.saturating_record((fb.saturating_duration_since(started).as_micros() as u64).max(1));
                }
            }
        }
        Err(e) => {
            stats.second(second).errors += 1;
            if measured {
                stats.per_op[op].errors += 1;
                stats.error(&e.kind(), &e.to_string());
            }
        }
    }
    true
}
