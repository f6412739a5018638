//! A multiplexed group of CQL load workers ("clients", `client`) on one thread: each keeps one request in flight
//! on the group's connection to its key's node (`Pipe`); one `poll` waits for all their answers and deadlines.
//! An answer completes its request, or sends its next frame (a READ-MODIFY-WRITE's update, a statement prepared
//! again on a node that lost it). A node that went silent is passed over for a while (`health`).

use super::client::{template, Client, Step};
use super::conn::Failure;
use super::frame::error_code;
use super::health::Health;
use super::pipe::Pipe;
use super::wire::{self, answer, Answer};
use super::Connected;
use crate::core::{Multiplexed, Outcome, Request};
use crate::cql::error::{one_line, OpError};
use crate::cql::{KvOp, Shared};
use std::sync::Arc;
use std::time::Instant;

/// The group: its clients, and its connection to each node (opened when a request first goes there).
pub struct CqlMux {
    shared: Arc<Shared>,
    clients: Vec<Client>,
    pipes: Vec<Option<Pipe>>,
    health: Health,
    /// Finished requests, handed out by the next `poll`.
    ready: Vec<(usize, Result<Outcome, OpError>)>,
    answers: Vec<(usize, Answer)>,
    scratch: Vec<u8>,
    fds: Vec<libc::pollfd>,
    /// The node of each of `fds`.
    fd_nodes: Vec<usize>,
}

/// `what` failed, counted by the failure's kind.
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
            health: Health::new(0, Default::default()),
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
                Err(f) => {
                    self.health.unreachable(node, Instant::now());
                    return self.finish(c, Err(failed(what, f)));
                }
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
        self.health.broken(node, Instant::now());
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
            self.health = Health::new(conn.ring.nodes.len(), conn.opener.timeout);
        }
        let cl = &mut self.clients[c];
        cl.build(&shared, &conn.templates, req);
        cl.node = self.health.route(&conn.ring, &cl.key);
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
                if !answers.is_empty() {
                    self.health.heard(n, Instant::now());
                }
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
                        self.health.timed_out(node, deadline - conn.opener.timeout, now);
                        let what = self.clients[c].what;
                        let f = Failure::Timeout(format!("{}: no answer within timeout_s", at.unwrap_or_default()));
                        self.finish(c, Err(failed(what, f)));
                    }
                }
            }
        }
    }
}
