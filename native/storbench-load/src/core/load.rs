//! Load models, protocol-neutral: closed loop (N workers back to back) and open loop (a fixed
//! schedule of intended start times, latency measured from the intended start, at most
//! `max_outstanding` requests in flight). A protocol supplies workers that execute one request.

use super::job::{Job, Load};
use super::records::Records;
use super::shared::Shared;
use super::stats::WorkerStats;
use super::step::{next, record, Draw, Next};
use super::{OpOf, Protocol, Worker};
use std::sync::atomic::Ordering;
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
    wait_until(job.start_at_unix_ms);
    let clock = Clock::start(job);
    let shared = Shared::new(job, clock.t0, clock.measure_start, clock.end);
    let cpu_start = cpu_now();
    let (stats, cpu_at_measure) = run_threads(proto, &shared, records, parent);
    let cpu_end = cpu_now();
    // no CPU snapshot at warm-up's end (the load ended first): the window's CPU counts from the start
    let cpu_measure = cpu_at_measure.unwrap_or(Cpu { user_s: cpu_start.user_s, sys_s: cpu_start.sys_s, max_rss_kb: 0 });
    let (not_issued, scheduled) = open_loop_backlog(&shared, &clock);
    LoadReport {
        stats,
        start_unix_ms: clock.start_unix_ms,
        measure_start_unix_ms: clock.start_unix_ms + clock.warmup.as_millis() as u64,
        measured_s: measured_end(&shared, &clock).saturating_duration_since(clock.measure_start).as_secs_f64(),
        warmup_seconds: clock.warmup.as_secs_f64().ceil() as usize,
        cpu_user_s: cpu_end.user_s - cpu_measure.user_s,
        cpu_sys_s: cpu_end.sys_s - cpu_measure.sys_s,
        cpu_total_s: (cpu_end.user_s + cpu_end.sys_s) - (cpu_start.user_s + cpu_start.sys_s),
        max_rss_kb: cpu_end.max_rss_kb,
        workers: job.load.workers(),
        not_issued,
        scheduled,
    }
}

/// A fan-out's processes start together: each sleeps until the job's wall-clock start (0: at once).
fn wait_until(start_at_unix_ms: u64) {
    let now = unix_ms();
    if start_at_unix_ms > now {
        std::thread::sleep(Duration::from_millis(start_at_unix_ms - now));
    }
}

/// The run's clock: its start, warm-up, and the measured window's start and end (none: the run ends with its ops).
struct Clock {
    t0: Instant,
    start_unix_ms: u64,
    warmup: Duration,
    measure_start: Instant,
    end: Option<Instant>,
}

impl Clock {
    fn start<Op>(job: &Job<Op>) -> Self {
        let t0 = Instant::now();
        let warmup = Duration::from_secs_f64(job.warmup_s.max(0.0));
        let measure_start = t0 + warmup;
        let end = (job.duration_s > 0.0).then(|| measure_start + Duration::from_secs_f64(job.duration_s));
        Clock { t0, start_unix_ms: unix_ms(), warmup, measure_start, end }
    }
}

/// The load's threads run to their end under the coordinator: their stats merged, and the CPU snapshot taken
/// when warm-up ended (None: the load ended first).
fn run_threads<P: Protocol>(
    proto: &P,
    shared: &Shared<OpOf<P>>,
    records: Option<&Records>,
    parent: i32,
) -> (WorkerStats, Option<Cpu>) {
    // Each thread says when it is done: the coordinator sleeps until then (or its next deadline) instead
    // of waking every 5 ms, and the process ends as soon as the last request does.
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let mut total = WorkerStats::new(shared.job.mix.len());
    let cpu_at_measure = std::thread::scope(|scope| {
        let handles = spawn_threads(scope, proto, shared, records, &done_tx);
        drop(done_tx); // only the threads' copies remain: all gone means all threads ended
        let cpu_at_measure = coordinate(shared, &done_rx, handles.len(), parent);
        for h in handles {
            total.merge(h.join().expect("worker panicked"));
        }
        cpu_at_measure
    });
    (total, cpu_at_measure)
}

/// One thread per worker, or one per multiplexed group when the protocol serves its workers so.
fn spawn_threads<'scope, 'env, P: Protocol>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    proto: &'env P,
    shared: &'env Shared<'env, OpOf<P>>,
    records: Option<&'env Records>,
    done_tx: &std::sync::mpsc::Sender<()>,
) -> Vec<std::thread::ScopedJoinHandle<'scope, WorkerStats>> {
    let workers = shared.job.load.workers();
    let groups = proto.multiplexed(workers);
    let spawn = |name: String, body| spawn_worker(scope, name, done_tx.clone(), body);
    if groups.is_empty() {
        return (0..workers)
            .map(|w| {
                let mut worker = proto.worker(w);
                spawn(format!("load-{w}"), Box::new(move || worker_loop(shared, &mut worker, w, records)))
            })
            .collect();
    }
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
}

/// The coordinator, until the `threads` load threads end or the measured window does (then it sets the stop
/// flag): the CPU snapshot when warm-up ends. When the parent is gone, exit at once, requests in flight cut
/// short: nobody will read the result, and the run's data is being cleaned up (a PUT cut short leaves no object).
fn coordinate<Op>(
    shared: &Shared<Op>,
    done: &std::sync::mpsc::Receiver<()>,
    threads: usize,
    parent: i32,
) -> Option<Cpu> {
    use std::sync::mpsc::RecvTimeoutError;
    let (mut finished, mut cpu_at_measure) = (0, None);
    loop {
        let now = Instant::now();
        if parent_pid() != parent {
            std::process::exit(ORPHANED);
        }
        if cpu_at_measure.is_none() && now >= shared.measure_start {
            cpu_at_measure = Some(cpu_now());
        }
        if finished == threads {
            return cpu_at_measure;
        }
        if shared.end.is_some_and(|end| now >= end) {
            shared.stop.store(true, Ordering::SeqCst);
            return cpu_at_measure;
        }
        let wait = coordinator_wait(now, cpu_at_measure.is_none().then_some(shared.measure_start), shared.end);
        match done.recv_timeout(wait) {
            Ok(()) => finished += 1,
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => finished = threads,
        }
    }
}

/// Where the measured window ended: at its end when the coordinator stopped the load, else at the last
/// request's end (the ops ran out first).
fn measured_end<Op>(shared: &Shared<Op>, clock: &Clock) -> Instant {
    let last_done = clock.t0 + Duration::from_nanos(shared.last_done_ns.load(Ordering::SeqCst));
    match clock.end {
        Some(e) if shared.stop.load(Ordering::SeqCst) => e,
        Some(e) => e.min(last_done),
        None => last_done,
    }
}

/// Open loop: (requests due before the end that were never started, requests due); closed loop: (0, 0).
fn open_loop_backlog<Op>(shared: &Shared<Op>, clock: &Clock) -> (u64, u64) {
    let job = shared.job;
    let Load::Open { rate, .. } = &job.load else { return (0, 0) };
    let rate = rate / job.process_count as f64;
    let window = clock.end.map(|e| (e - clock.t0).as_secs_f64()).unwrap_or(0.0);
    let mut due = (window * rate).ceil() as u64;
    if job.ops > 0 {
        due = if clock.end.is_some() { due.min(job.ops) } else { job.ops };
    }
    let started = shared.next_k.load(Ordering::SeqCst).min(due);
    (due - started, due)
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
