//! Load models, protocol-neutral: closed loop (N workers back to back) and open loop (a fixed
//! schedule of intended start times, latency measured from the intended start, at most
//! `max_outstanding` requests in flight). A protocol supplies workers that execute one request.

use super::job::{Job, KeyOrder, Load, SizeDist};
use super::payload::{size_for, Rng};
use super::records::{Records, Row};
use super::stats::WorkerStats;
use super::{KeyUse, OpFailure as _, OpOf, Operation, Protocol, Request, Worker};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub struct Cpu {
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_kb: i64,
}

pub fn cpu_now() -> Cpu {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Cpu { user_s: tv(usage.ru_utime), sys_s: tv(usage.ru_stime), max_rss_kb: usage.ru_maxrss }
}

/// This process's parent, to notice when it is gone: the engine is then an orphan (a Spark task's Python
/// worker killed when its job was cancelled, or storbench itself killed) and must stop writing at once.
fn parent_pid() -> i32 {
    unsafe { libc::getppid() }
}

/// The exit status of an engine whose parent went away during the load.
pub const ORPHANED: i32 = 4;

pub fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

pub struct LoadReport {
    pub stats: WorkerStats,
    pub start_unix_ms: u64,
    pub measure_start_unix_ms: u64,
    pub measured_s: f64,
    pub warmup_seconds: usize,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    pub cpu_total_s: f64,
    pub max_rss_kb: i64,
    pub workers: u32,
    /// Open loop: requests due before the end that were never started (the schedule fell behind).
    pub not_issued: u64,
    pub scheduled: u64,
}

struct Shared<'a, Op> {
    job: &'a Job<Op>,
    t0: Instant,
    measure_start: Instant,
    end: Option<Instant>,
    stop: AtomicBool,
    issued: AtomicU64,
    next_k: AtomicU64,
    seq: Vec<AtomicU64>,
    exhausted: Vec<AtomicBool>,
    last_done_ns: AtomicU64,
    weights: Vec<f64>,
    sequential: Vec<bool>,
    consumes: Vec<bool>,
    /// The ops' names (for the records).
    names: Vec<String>,
}

/// The job's load on workers of `proto` (preflight, if any, already done); each request's row
/// streamed to `records` when given.
pub fn run<P: Protocol>(job: &Job<OpOf<P>>, proto: &P, records: Option<&Records>) -> LoadReport {
    let parent = parent_pid();
    if job.start_at_unix_ms > 0 {
        let now = unix_ms();
        if job.start_at_unix_ms > now {
            std::thread::sleep(Duration::from_millis(job.start_at_unix_ms - now));
        }
    }
    let workers = job.load.workers();
    let t0 = Instant::now();
    let start_unix_ms = unix_ms();
    let warmup = Duration::from_secs_f64(job.warmup_s.max(0.0));
    let measure_start = t0 + warmup;
    let end = if job.duration_s > 0.0 { Some(measure_start + Duration::from_secs_f64(job.duration_s)) } else { None };
    let shared = Shared {
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
        consumes: job.mix.iter().map(|m| m.op.keys() == KeyUse::Consume || m.keys == Some(KeyOrder::Once)).collect(),
        names: job.mix.iter().map(|m| m.op.name()).collect(),
    };
    // Each worker says when it is done: the coordinator sleeps until then (or its next deadline) instead
    // of waking every 5 ms, and the process ends as soon as the last request does.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let mut finished = 0u64;
    let mut cpu_at_measure: Option<Cpu> = None;
    let cpu_start = cpu_now();
    let mut total = WorkerStats::new(job.mix.len());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let shared = &shared;
                let done_tx = done_tx.clone();
                let mut worker = proto.worker(w);
                std::thread::Builder::new()
                    .name(format!("load-{w}"))
                    .stack_size(256 << 10)
                    .spawn_scoped(scope, move || {
                        let stats = worker_loop(shared, &mut worker, w, records);
                        let _ = done_tx.send(());
                        stats
                    })
                    .expect("spawn worker")
            })
            .collect();
        drop(done_tx); // only the workers' copies remain: all gone means all workers ended
        // Coordinator: CPU snapshot when warm-up ends, stop at the end of the measured window. When the
        // parent is gone, exit at once, requests in flight cut short: nobody will read the result, and the
        // run's data is being cleaned up (a PUT cut short leaves no object).
        loop {
            let now = Instant::now();
            if parent_pid() != parent {
                std::process::exit(ORPHANED);
            }
            if cpu_at_measure.is_none() && now >= measure_start {
                cpu_at_measure = Some(cpu_now());
            }
            if finished == workers as u64 {
                break;
            }
            if let Some(end) = end {
                if now >= end {
                    shared.stop.store(true, Ordering::SeqCst);
                    break;
                }
            }
            let wait = coordinator_wait(now, cpu_at_measure.is_none().then_some(measure_start), end);
            match done_rx.recv_timeout(wait) {
                Ok(()) => finished += 1,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => finished = workers as u64,
            }
        }
        for h in handles {
            total.merge(h.join().expect("worker panicked"));
        }
    });
    let cpu_end = cpu_now();
    let cpu_measure = cpu_at_measure.unwrap_or(Cpu { user_s: cpu_start.user_s, sys_s: cpu_start.sys_s, max_rss_kb: 0 });
    let last_done = t0 + Duration::from_nanos(shared.last_done_ns.load(Ordering::SeqCst));
    let measured_end = match end {
        Some(e) if shared.stop.load(Ordering::SeqCst) => e,
        Some(e) => e.min(last_done),
        None => last_done,
    };
    let measured_s = measured_end.saturating_duration_since(measure_start).as_secs_f64();
    let (not_issued, scheduled) = match &job.load {
        Load::Open { rate, .. } => {
            let rate = rate / job.process_count as f64;
            let window = end.map(|e| (e - t0).as_secs_f64()).unwrap_or(0.0);
            let mut due = (window * rate).ceil() as u64;
            if job.ops > 0 {
                due = if end.is_some() { due.min(job.ops) } else { job.ops };
            }
            let started = shared.next_k.load(Ordering::SeqCst).min(due);
            (due - started, due)
        }
        Load::Closed { .. } => (0, 0),
    };
    LoadReport {
        stats: total,
        start_unix_ms,
        measure_start_unix_ms: start_unix_ms + warmup.as_millis() as u64,
        measured_s,
        warmup_seconds: warmup.as_secs_f64().ceil() as usize,
        cpu_user_s: cpu_end.user_s - cpu_measure.user_s,
        cpu_sys_s: cpu_end.sys_s - cpu_measure.sys_s,
        cpu_total_s: (cpu_end.user_s + cpu_end.sys_s) - (cpu_start.user_s + cpu_start.sys_s),
        max_rss_kb: cpu_end.max_rss_kb,
        workers,
        not_issued,
        scheduled,
    }
}

/// How long the coordinator may sleep: until the next of its deadlines (warm-up's end, the window's
/// end), at most PARENT_CHECK so an orphaned engine still exits promptly; a worker's end wakes it earlier.
fn coordinator_wait(now: Instant, measure_start: Option<Instant>, end: Option<Instant>) -> Duration {
    let next = [measure_start, end].into_iter().flatten().min().unwrap_or(now + PARENT_CHECK);
    next.saturating_duration_since(now).clamp(Duration::from_micros(200), PARENT_CHECK)
}

const PARENT_CHECK: Duration = Duration::from_millis(50);

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

fn worker_loop<W: Worker>(shared: &Shared<W::Op>, worker: &mut W, index: u32, records: Option<&Records>) -> WorkerStats {
    let job = shared.job;
    let mut stats = WorkerStats::new(job.mix.len());
    let mut rows = records.map(Records::writer);
    let mut rng = Rng::new(job.seed ^ (job.process_index << 32) ^ index as u64 ^ 0xABCD_0000_0000);
    let open = match &job.load {
        Load::Open { rate, .. } => Some(rate / job.process_count as f64),
        _ => None,
    };
    let single_size = matches!(job.object_size, SizeDist::Fixed { .. });
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let intended = if let Some(rate) = open {
            let k = shared.next_k.fetch_add(1, Ordering::Relaxed);
            if job.ops > 0 && k >= job.ops {
                break;
            }
            let at = shared.t0 + Duration::from_secs_f64(k as f64 / rate);
            if let Some(end) = shared.end {
                if at >= end {
                    break;
                }
            }
            let now = Instant::now();
            if at > now {
                std::thread::sleep(at - now);
            }
            at
        } else {
            let n = shared.issued.fetch_add(1, Ordering::Relaxed);
            if job.ops > 0 && n >= job.ops {
                break;
            }
            Instant::now()
        };
        let Some(op) = pick_op(shared, &mut rng) else { break };
        let Some(key) = pick_key(shared, op, &mut rng) else {
            if shared.exhausted.iter().all(|e| e.load(Ordering::Relaxed)) {
                break;
            }
            continue;
        };
        let size = if single_size { size_for(&job.object_size, job.payload_seed, 0) } else { size_for(&job.object_size, job.payload_seed, key) };
        let rb = job.mix[op].range_bytes;
        let range = if rb > 0 && rb < size { Some((rng.below(size - rb + 1), rb)) } else { None };
        let req = Request { op: job.mix[op].op, key, size, range };
        let started = Instant::now();
        let result = worker.execute(&req);
        let done = Instant::now();
        shared.last_done_ns.fetch_max((done - shared.t0).as_nanos() as u64, Ordering::Relaxed);
        if let Some(end) = shared.end {
            if done > end {
                break; // finished after the measured window: not counted
            }
        }
        let second = (done - shared.t0).as_secs() as usize;
        let latency_us = (done - intended).as_micros() as u64;
        let measured = done >= shared.measure_start;
        if let Some(rows) = rows.as_mut() {
            let (bytes, status) = match &result {
                Ok(o) => (o.bytes, "ok".into()),
                Err(e) => (0, e.kind()),
            };
            rows.row(Row { intended_us: (intended - shared.t0).as_micros(), op: &shared.names[op], key, latency_us,
                           service_us: (done - started).as_micros(), bytes, status: &status });
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
                    if open.is_some() && lag > 1000 {
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
    }
    stats
}

#[cfg(test)]
mod coordinator_tests {
    use super::*;

    #[test]
    fn the_coordinator_sleeps_until_its_next_deadline_within_bounds() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        assert_eq!(coordinator_wait(now, None, None), PARENT_CHECK); // nothing due: parent checks only
        assert_eq!(coordinator_wait(now, Some(now + ms(20)), Some(now + ms(30))), ms(20));
        assert_eq!(coordinator_wait(now, None, Some(now + ms(7))), ms(7));
        assert_eq!(coordinator_wait(now, Some(now + ms(900)), None), PARENT_CHECK);
        assert_eq!(coordinator_wait(now, Some(now), None), Duration::from_micros(200)); // due now: a short wait
    }
}
