//! Load models, protocol-neutral: closed loop (N workers back to back) and open loop (a fixed
//! schedule of intended start times, latency measured from the intended start, at most
//! `max_outstanding` requests in flight). A protocol supplies workers that execute one request.

use super::job::{Job, KeyOrder, Load};
use super::records::Records;
use super::shared::Shared;
use super::stats::WorkerStats;
use super::step::{next, record, Draw, Next};
use super::{KeyUse, OpOf, Operation, Protocol, Worker};
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
    let groups = proto.multiplexed(workers);
    let threads = if groups.is_empty() { workers as u64 } else { groups.len() as u64 };
    std::thread::scope(|scope| {
        let spawn = |name: String, body| spawn_worker(scope, name, done_tx.clone(), body);
        let shared = &shared;
        let handles: Vec<_> = if groups.is_empty() {
            (0..workers)
                .map(|w| {
                    let mut worker = proto.worker(w);
                    spawn(format!("load-{w}"), Box::new(move || worker_loop(shared, &mut worker, w, records)))
                })
                .collect()
        } else {
            let n = groups.len() as u32;
            groups
                .into_iter()
                .enumerate()
                .map(|(g, mut mux)| {
                    let indexes = super::mux_group(g as u32, n, workers);
                    spawn(
                        format!("load-mux-{g}"),
                        Box::new(move || super::mux_load::mux_loop(shared, &mut *mux, &indexes, records)),
                    )
                })
                .collect()
        };
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
            if finished == threads {
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
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => finished = threads,
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

/// A load thread running `body`, saying on `done_tx` when it ends.
fn spawn_worker<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    name: String,
    done_tx: std::sync::mpsc::Sender<()>,
    body: Box<dyn FnOnce() -> WorkerStats + Send + 'scope>,
) -> std::thread::ScopedJoinHandle<'scope, WorkerStats> {
    std::thread::Builder::new()
        .name(name)
        .stack_size(256 << 10)
        .spawn_scoped(scope, move || {
            let stats = body();
            let _ = done_tx.send(());
            stats
        })
        .expect("spawn worker")
}

/// How long the coordinator may sleep: until the next of its deadlines (warm-up's end, the window's
/// end), at most PARENT_CHECK so an orphaned engine still exits promptly; a worker's end wakes it earlier.
fn coordinator_wait(now: Instant, measure_start: Option<Instant>, end: Option<Instant>) -> Duration {
    let next = [measure_start, end].into_iter().flatten().min().unwrap_or(now + PARENT_CHECK);
    next.saturating_duration_since(now).clamp(Duration::from_micros(200), PARENT_CHECK)
}

const PARENT_CHECK: Duration = Duration::from_millis(50);

fn worker_loop<W: Worker>(
    shared: &Shared<W::Op>,
    worker: &mut W,
    index: u32,
    records: Option<&Records>,
) -> WorkerStats {
    let mut stats = WorkerStats::new(shared.job.mix.len());
    let mut rows = records.map(Records::writer);
    let mut draw = Draw::new(shared.job, index);
    loop {
        let (intended, op, req) = match next(shared, &mut draw) {
            Next::Go { intended, op, req } => (intended, op, req),
            Next::Again => continue,
            Next::Stop => break,
        };
        let now = Instant::now();
        if intended > now {
            std::thread::sleep(intended - now);
        }
        let started = Instant::now();
        let result = worker.execute(&req);
        let done = Instant::now();
        if !record(shared, &mut stats, rows.as_mut(), op, req.key, intended, started, done, result) {
            break;
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
        assert_eq!(coordinator_wait(now, Some(now), None), Duration::from_micros(200));
        // due now: a short wait
    }
}
