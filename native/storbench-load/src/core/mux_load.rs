//! The load loop of a multiplexed group (`Multiplexed`): its workers, each with one request in
//! flight as in `load::worker_loop` (closed loop: the next op when the answer came; open loop: at its
//! intended start), all on one thread that sleeps until an answer or the next intended start.

use super::records::Records;
use super::shared::Shared;
use super::stats::WorkerStats;
use super::step::{next, record, Draw, Next};
use super::{Multiplexed, Operation, Outcome, Request};
use std::time::Instant;

enum Client<Op> {
    /// To draw its next request.
    Idle,
    /// Drawn, to start at `intended` (an open loop's schedule).
    Waiting {
        intended: Instant,
        op: usize,
        req: Request<Op>,
    },
    InFlight {
        intended: Instant,
        started: Instant,
        op: usize,
        key: u64,
    },
    Done,
}

pub(super) fn mux_loop<Op: Operation, E: super::OpFailure>(
    shared: &Shared<Op>,
    mux: &mut dyn Multiplexed<Op = Op, Error = E>,
    indexes: &[u32],
    records: Option<&Records>,
) -> WorkerStats {
    let mut stats = WorkerStats::new(shared.job.mix.len());
    let mut rows = records.map(Records::writer);
    let mut draws: Vec<Draw> = indexes.iter().map(|&w| Draw::new(shared.job, w)).collect();
    let mut clients: Vec<Client<Op>> = indexes.iter().map(|_| Client::Idle).collect();
    let mut done: Vec<(usize, Result<Outcome, E>)> = Vec::new();
    loop {
        // start every client that is due; the earliest intended start still ahead
        let now = Instant::now();
        let mut wake: Option<Instant> = None;
        let mut busy = 0usize;
        for c in 0..clients.len() {
            if matches!(clients[c], Client::Idle) {
                clients[c] = loop {
                    match next(shared, &mut draws[c]) {
                        Next::Go { intended, op, req } => break Client::Waiting { intended, op, req },
                        Next::Again => continue,
                        Next::Stop => break Client::Done,
                    }
                };
            }
            if let Client::Waiting { intended, op, req } = &clients[c] {
                if *intended <= now {
                    let (intended, op, key) = (*intended, *op, req.key);
                    mux.start(c, req);
                    clients[c] = Client::InFlight { intended, started: Instant::now(), op, key };
                } else {
                    wake = Some(wake.map_or(*intended, |w| w.min(*intended)));
                }
            }
            if !matches!(clients[c], Client::Done) {
                busy += 1;
            }
        }
        if busy == 0 || shared.stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        // the window's end wakes the loop too (the requests in flight then are not counted)
        let until = match (wake, shared.end) {
            (Some(w), Some(e)) => Some(w.min(e)),
            (w, e) => w.or(e),
        };
        mux.poll(until, &mut done);
        let at = Instant::now();
        if shared.end.is_some_and(|e| at > e) {
            break;
        }
        for (c, result) in done.drain(..) {
            if let Client::InFlight { intended, started, op, key } = clients[c] {
                clients[c] = if record(shared, &mut stats, rows.as_mut(), op, key, intended, started, at, result) {
                    Client::Idle
                } else {
                    Client::Done
                };
            }
        }
    }
    stats
}
