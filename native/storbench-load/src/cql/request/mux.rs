//! A multiplexed group of CQL load workers ("clients") on one thread: each builds its EXECUTE frames
//! from the statements' templates (`wire`) with its own YCSB generators, and keeps one request in
//! flight on the group's connection to the key's node (`Pipe`); one `poll` waits for them all.

use super::conn::Failure;
use super::frame::error_code;
use super::pipe::Pipe;
use super::wire::{self, answer, Answer};
use super::{Connected, Templates};
use crate::core::payload::Rng;
use crate::core::{Multiplexed, Outcome, Request};
use crate::cql::error::{one_line, OpError};
use crate::cql::{KvOp, Shared};
use crate::ycsb::{field_value_into, KeyChooser, Phase};
use std::sync::Arc;
use std::time::Instant;

/// Which template a request's frame is of (to prepare it again on a node that lost it).
#[derive(Clone, Copy)]
enum Stmt {
    Insert,
    Read,
    UpdateOne(usize),
    UpdateAll,
    Scan,
}

/// What the answer completes.
#[derive(Clone, Copy, PartialEq)]
enum Step {
    /// A write: done with the values' bytes.
    Write,
    /// A read or scan: no row is `NotFound`.
    Read,
    /// A read-modify-write's read: the update follows.
    RmwRead,
}

/// One client: its generators, its frame, its request in flight.
struct Client {
    rng: Rng,
    /// Built on first use (a worker of the load phase never needs it).
    chooser: Option<KeyChooser>,
    frame: Vec<u8>,
    key: Vec<u8>,
    what: &'static str,
    stmt: Stmt,
    step: Step,
    node: usize,
    bytes: u64,
    /// A run-phase insert's counter value, acknowledged when it ends.
    ack: Option<i64>,
    /// In flight: its deadline and stream id.
    sent: Option<(Instant, i16)>,
    /// The statement was prepared again once (an UNPREPARED answer): the PREPARE is in flight.
    preparing: bool,
    retried: bool,
}

pub struct CqlMux {
    shared: Arc<Shared>,
    clients: Vec<Client>,
    pipes: Vec<Option<Pipe>>,
    /// Finished requests, handed out by the next `poll`.
    ready: Vec<(usize, Result<Outcome, OpError>)>,
    answers: Vec<(usize, Answer)>,
    scratch: Vec<u8>,
    fds: Vec<libc::pollfd>,
    /// The node of each of `fds`.
    fd_nodes: Vec<usize>,
}

/// A client's copy of the run's key chooser, taken on first use (built once per process).
fn chooser<'a>(mine: &'a mut Option<KeyChooser>, shared: &Shared) -> &'a mut KeyChooser {
    mine.get_or_insert_with(|| {
        shared.chooser.get_or_init(|| KeyChooser::new(&shared.cfg.ycsb, shared.last_insert())).clone()
    })
}

impl Client {
    fn new(shared: &Shared, index: u32) -> Self {
        Client {
            rng: Rng::new(shared.seed ^ 0x9C1_0000_0000 ^ index as u64),
            chooser: None,
            frame: Vec::with_capacity(4096),
            key: Vec::with_capacity(32),
            what: "",
            stmt: Stmt::Read,
            step: Step::Write,
            node: 0,
            bytes: 0,
            ack: None,
            sent: None,
            preparing: false,
            retried: false,
        }
    }

    /// The key of a READ, UPDATE, SCAN or READ-MODIFY-WRITE: YCSB's chooser's, or the core's when
    /// the op's mix entry asks for it.
    fn choose_key(&mut self, shared: &Shared, req: &Request<KvOp>) {
        let keynum = if shared.core_keys.contains(&req.op) {
            req.key as i64
        } else {
            chooser(&mut self.chooser, shared).next_keynum(shared.last_insert(), &mut self.rng)
        };
        self.set_key(shared, keynum);
    }

    fn set_key(&mut self, shared: &Shared, keynum: i64) {
        self.key.clear();
        shared.cfg.ycsb.key_into(keynum, &mut self.key);
    }

    /// `fieldcount` field values appended to the frame; their bytes.
    fn put_values(&mut self, shared: &Shared) -> u64 {
        let len = shared.cfg.ycsb.fieldlength as usize;
        for _ in 0..shared.cfg.ycsb.fieldcount {
            wire::put_value_with(&mut self.frame, |b| field_value_into(len, &mut self.rng, b));
        }
        len as u64 * shared.cfg.ycsb.fieldcount as u64
    }

    /// Starts the frame of `stmt`, the answer completing `step`.
    fn begin(&mut self, t: &Templates, stmt: Stmt, step: Step, what: &'static str) {
        template(t, stmt).start(&mut self.frame);
        (self.stmt, self.step, self.what, self.retried, self.preparing) = (stmt, step, what, false, false);
    }

    /// YCSB's update: one random field (writeallfields=false) or all of them; its bytes.
    fn update(&mut self, shared: &Shared, t: &Templates, step_what: &'static str) -> u64 {
        if shared.cfg.ycsb.writeallfields {
            self.begin(t, Stmt::UpdateAll, Step::Write, step_what);
            let bytes = self.put_values(shared);
            wire::put_value(&mut self.frame, &self.key);
            bytes
        } else {
            let field = chooser(&mut self.chooser, shared).field(&mut self.rng);
            let len = shared.cfg.ycsb.fieldlength as usize;
            self.begin(t, Stmt::UpdateOne(field), Step::Write, step_what);
            wire::put_value_with(&mut self.frame, |b| field_value_into(len, &mut self.rng, b));
            wire::put_value(&mut self.frame, &self.key);
            len as u64
        }
    }

    /// The request's first frame built (and its bytes, step, insert counter value set).
    fn build(&mut self, shared: &Shared, t: &Templates, req: &Request<KvOp>) {
        self.ack = None;
        match req.op {
            KvOp::Insert => {
                let keynum = if shared.cfg.ycsb.phase == Phase::Load {
                    req.key as i64
                } else {
                    let local = shared.inserts.next_value();
                    self.ack = Some(local);
                    shared.insert_keynum(local)
                };
                self.set_key(shared, keynum);
                self.begin(t, Stmt::Insert, Step::Write, "INSERT");
                wire::put_value(&mut self.frame, &self.key);
                self.bytes = self.put_values(shared);
            }
            KvOp::Read | KvOp::ReadModifyWrite => {
                self.choose_key(shared, req);
                let (step, what) =
                    if req.op == KvOp::Read { (Step::Read, "READ") } else { (Step::RmwRead, "READ-MODIFY-WRITE read") };
                self.begin(t, Stmt::Read, step, what);
                wire::put_value(&mut self.frame, &self.key);
            }
            KvOp::Update => {
                self.choose_key(shared, req);
                self.bytes = self.update(shared, t, "UPDATE");
            }
            KvOp::Scan => {
                self.choose_key(shared, req);
                let len = chooser(&mut self.chooser, shared).scan_length(&mut self.rng);
                self.begin(t, Stmt::Scan, Step::Read, "SCAN");
                wire::put_value(&mut self.frame, &self.key);
                wire::put_value(&mut self.frame, &(len as i32).to_be_bytes());
            }
        }
        wire::finish(&mut self.frame);
    }
}

fn template(t: &Templates, stmt: Stmt) -> &wire::Execute {
    match stmt {
        Stmt::Insert => &t.insert,
        Stmt::Read => &t.read,
        Stmt::UpdateOne(f) => &t.update_one[f],
        Stmt::UpdateAll => &t.update_all,
        Stmt::Scan => &t.scan,
    }
}

fn failed(what: &'static str, f: Failure) -> OpError {
    OpError::Execution { what, kind: f.kind().to_string(), message: one_line(&f.message()) }
}

impl CqlMux {
    /// The group of workers `indexes` (client i is worker indexes[i]).
    pub fn new(shared: Arc<Shared>, indexes: &[u32]) -> Self {
        let clients = indexes.iter().map(|&w| Client::new(&shared, w)).collect();
        CqlMux {
            shared,
            clients,
            pipes: Vec::new(),
            ready: Vec::new(),
            answers: Vec::new(),
            scratch: Vec::with_capacity(256),
            fds: Vec::new(),
            fd_nodes: Vec::new(),
        }
    }

    /// Client `c`'s request ended: its insert acknowledged (YCSB does so in `finally`).
    fn finish(&mut self, c: usize, result: Result<Outcome, OpError>) {
        let cl = &mut self.clients[c];
        cl.sent = None;
        if let Some(local) = cl.ack.take() {
            self.shared.inserts.acknowledge(local);
        }
        self.ready.push((c, result));
    }

    /// Queues `frame` (client `c`'s, or the scratch PREPARE) on the pipe to the client's node.
    fn send(&mut self, c: usize, conn: &Connected, prepare: bool) {
        let cl = &mut self.clients[c];
        let (node, what) = (cl.node, cl.what);
        if self.pipes[node].is_none() {
            match Pipe::open(conn.ring.nodes[node], &conn.opener, &mut self.scratch) {
                Ok(p) => self.pipes[node] = Some(p),
                Err(f) => return self.finish(c, Err(failed(what, f))),
            }
        }
        let cl = &mut self.clients[c];
        if prepare {
            wire::prepare(&mut self.scratch, &template(&conn.templates, cl.stmt).cql);
        }
        let frame = if prepare { &mut self.scratch } else { &mut cl.frame };
        match self.pipes[node].as_mut().expect("opened").queue(c, frame) {
            Ok(id) => cl.sent = Some((Instant::now() + conn.opener.timeout, id)),
            Err(f) => self.finish(c, Err(failed(what, f))),
        }
    }

    /// Client `c`'s answer: the request done, or its next frame sent.
    fn answered(&mut self, c: usize, conn: &Connected, a: Answer) {
        let shared = self.shared.clone();
        let cl = &mut self.clients[c];
        cl.sent = None;
        let what = cl.what;
        let result = match a {
            Answer::Bad(m) => Err(failed(what, Failure::Protocol(m.to_string()))),
            Answer::Other(op) => Err(failed(what, Failure::Protocol(format!("an answer with opcode {op}")))),
            Answer::Error(code, message) => {
                if code == error_code::UNPREPARED && !cl.retried {
                    (cl.retried, cl.preparing) = (true, true);
                    return self.send(c, conn, true);
                }
                Err(failed(what, Failure::Server(code, message)))
            }
            Answer::Rows(_, _) if cl.preparing => {
                cl.preparing = false;
                return self.send(c, conn, false);
            }
            Answer::Rows(rows, bytes) => match cl.step {
                Step::Write => Ok(cl.bytes),
                Step::Read | Step::RmwRead if rows == 0 => {
                    Err(OpError::NotFound(String::from_utf8_lossy(&cl.key).into_owned()))
                }
                Step::Read => Ok(bytes),
                Step::RmwRead => {
                    cl.bytes = bytes + cl.update(&shared, &conn.templates, "UPDATE");
                    wire::finish(&mut cl.frame);
                    return self.send(c, conn, false);
                }
            },
        };
        self.finish(c, result.map(|bytes| Outcome { bytes, first_byte: None }));
    }

    /// The pipe to `node` broke: every request on it fails, the next opens a new one.
    fn broken(&mut self, node: usize, f: Failure) {
        self.pipes[node] = None;
        let message = f.message();
        for c in 0..self.clients.len() {
            if self.clients[c].sent.is_some() && self.clients[c].node == node {
                let what = self.clients[c].what;
                self.finish(c, Err(failed(what, Failure::Connection(message.clone()))));
            }
        }
    }

    /// Flushes every pipe's queued requests.
    fn flush(&mut self) {
        for n in 0..self.pipes.len() {
            if let Some(Err(f)) = self.pipes[n].as_mut().filter(|p| p.wants_write()).map(Pipe::flush) {
                self.broken(n, f);
            }
        }
    }
}

impl Multiplexed for CqlMux {
    type Op = KvOp;
    type Error = OpError;

    fn start(&mut self, c: usize, req: &Request<KvOp>) {
        let shared = self.shared.clone();
        let conn = match shared.connected() {
            Ok(conn) => conn,
            Err(e) => return self.ready.push((c, Err(OpError::Connect(e.to_string())))),
        };
        if self.pipes.is_empty() {
            self.pipes = (0..conn.ring.nodes.len()).map(|_| None).collect();
        }
        let cl = &mut self.clients[c];
        cl.build(&shared, &conn.templates, req);
        cl.node = conn.ring.node(&cl.key);
        self.send(c, conn, false);
    }

    fn poll(&mut self, until: Option<Instant>, done: &mut Vec<(usize, Result<Outcome, OpError>)>) {
        let shared = self.shared.clone();
        loop {
            self.flush();
            if !self.ready.is_empty() {
                return done.append(&mut self.ready);
            }
            let now = Instant::now();
            let expiry = self.clients.iter().filter_map(|c| c.sent.map(|s| s.0)).min();
            let wake = [until, expiry].into_iter().flatten().min();
            if until.is_some_and(|u| u <= now) {
                return;
            }
            self.fds.clear();
            self.fd_nodes.clear();
            for (n, p) in self.pipes.iter().enumerate() {
                if let Some(p) = p {
                    let events = libc::POLLIN | if p.wants_write() { libc::POLLOUT } else { 0 };
                    self.fds.push(libc::pollfd { fd: p.fd(), events, revents: 0 });
                    self.fd_nodes.push(n);
                }
            }
            if self.fds.is_empty() && wake.is_none() {
                return; // nothing in flight, nothing due
            }
            let ts = wake.map(|w| {
                let d = w.saturating_duration_since(now);
                libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long }
            });
            let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
            unsafe { libc::ppoll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, tsp, std::ptr::null()) };
            let Ok(conn) = shared.connected() else { return };
            for i in 0..self.fds.len() {
                let (pfd, n) = (self.fds[i], self.fd_nodes[i]);
                if pfd.revents == 0 || self.pipes[n].is_none() {
                    continue;
                }
                if pfd.revents & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) == 0 {
                    continue; // writable only: the flush at the top writes
                }
                let answers = &mut self.answers;
                let got = self.pipes[n]
                    .as_mut()
                    .expect("some")
                    .receive(|c, opcode, body| answers.push((c, answer(opcode, body))));
                let mut answers = std::mem::take(&mut self.answers);
                for (c, a) in answers.drain(..) {
                    self.answered(c, conn, a);
                }
                self.answers = answers;
                if let Err(f) = got {
                    self.broken(n, f);
                }
            }
            let now = Instant::now();
            for c in 0..self.clients.len() {
                if let Some((deadline, id)) = self.clients[c].sent {
                    if deadline <= now {
                        let node = self.clients[c].node;
                        let at = self.pipes[node].as_mut().map(|p| {
                            p.forget(id);
                            p.at.to_string()
                        });
                        let what = self.clients[c].what;
                        let f = Failure::Timeout(format!("{}: no answer within timeout_s", at.unwrap_or_default()));
                        self.finish(c, Err(failed(what, f)));
                    }
                }
            }
        }
    }
}
