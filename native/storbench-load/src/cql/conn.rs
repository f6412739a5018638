//! The request path's connections: each load worker has its own blocking TCP connection to each
//! node it sends to (one request in flight, so a request is one write and, mostly, one read; no
//! runtime, no task wake-ups, no locks), opened with STARTUP and the login, and a request goes to
//! the node owning its key's token (the ring the driver session read: token-aware, as the driver
//! routed). The driver session itself only connects, creates the table and prepares.

use super::wire::{self, Malformed};
use crate::core::secrets;
use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::ops::Range;
use std::time::Duration;

/// Why a request got no answer: the kinds the results count.
#[derive(Debug)]
pub enum Failure {
    /// No answer within timeout_s ("timeout").
    Timeout(String),
    /// The connection could not be opened, or broke ("connection").
    Connection(String),
    /// The answer did not parse ("protocol").
    Protocol(String),
    /// The server's ERROR: its code and message.
    Server(i32, String),
}

impl Failure {
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::Timeout(_) => "timeout",
            Failure::Connection(_) => "connection",
            Failure::Protocol(_) => "protocol",
            Failure::Server(code, _) => wire::error_kind(*code),
        }
    }

    pub fn message(&self) -> String {
        match self {
            Failure::Timeout(m) | Failure::Connection(m) | Failure::Protocol(m) => m.clone(),
            Failure::Server(_, m) => m.clone(),
        }
    }

    fn io(at: SocketAddr, e: io::Error) -> Failure {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Failure::Timeout(format!("{at}: no answer within timeout_s")),
            _ => Failure::Connection(format!("{at}: {e}")),
        }
    }
}

impl From<Malformed> for Failure {
    fn from(m: Malformed) -> Failure {
        Failure::Protocol(m.0.to_string())
    }
}

/// How workers open connections: the login, the timeouts.
#[derive(Clone)]
pub struct Opener {
    pub login: Option<(String, String)>,
    pub connect_timeout: Duration,
    pub timeout: Duration,
}

impl Opener {
    /// The job's login, else STORBENCH_CQL_USERNAME/PASSWORD (as the driver session's).
    pub fn new(cfg: &super::CqlConfig) -> Self {
        let env = secrets::var("STORBENCH_CQL_USERNAME").map(|u| (u, secrets::var("STORBENCH_CQL_PASSWORD").unwrap_or_default()));
        let job = cfg.username.clone().zip(cfg.password.as_ref().map(|p| p.0.clone()));
        Opener { login: job.or(env), connect_timeout: super::timeout(cfg.connect_timeout_s), timeout: super::timeout(cfg.timeout_s) }
    }
}

/// One blocking connection, its receive buffer reused.
pub struct Conn {
    at: SocketAddr,
    stream: TcpStream,
    /// The stream id of the request in flight: an answer on another (one that came after its
    /// request's timeout) is skipped, so a timeout keeps the connection.
    id: i16,
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Conn {
    /// Connects, sends STARTUP and answers AUTHENTICATE with the login. `buf` is scratch.
    pub fn open(at: SocketAddr, how: &Opener, buf: &mut Vec<u8>) -> Result<Conn, Failure> {
        let stream = TcpStream::connect_timeout(&at, how.connect_timeout).map_err(|e| Failure::io(at, e))?;
        let set = |r: io::Result<()>| r.map_err(|e| Failure::Connection(format!("{at}: {e}")));
        set(stream.set_nodelay(true))?;
        set(stream.set_read_timeout(Some(how.timeout)))?;
        set(stream.set_write_timeout(Some(how.timeout)))?;
        let mut conn = Conn { at, stream, id: 0, rbuf: vec![0; 1 << 16], start: 0, end: 0 };
        wire::startup(buf);
        let (opcode, body) = conn.call(buf)?;
        match opcode {
            wire::READY => return Ok(conn),
            wire::AUTHENTICATE => {}
            wire::ERROR => {
                let (code, message) = wire::error(body)?;
                return Err(Failure::Server(code, message));
            }
            _ => return Err(Failure::Protocol(format!("{at}: STARTUP answered with opcode {opcode}"))),
        }
        let Some((user, password)) = &how.login else {
            return Err(Failure::Server(0x0100, format!("{at}: the node asks for a login and the job has none")));
        };
        wire::auth_response(buf, user, password);
        let (opcode, body) = conn.call(buf)?;
        match opcode {
            wire::AUTH_SUCCESS => Ok(conn),
            wire::ERROR => {
                let (code, message) = wire::error(body)?;
                Err(Failure::Server(code, message))
            }
            _ => Err(Failure::Protocol(format!("{at}: the login was answered with opcode {opcode} (only SASL PLAIN is spoken)"))),
        }
    }

    /// Sends one request frame (its stream id set here) and returns the answer on its stream: (opcode, body
    /// past its flags' extras).
    pub fn call(&mut self, frame: &mut [u8]) -> Result<(u8, &[u8]), Failure> {
        let (opcode, body) = self.exchange(frame)?;
        Ok((opcode, &self.rbuf[body]))
    }

    /// `call`, the body as a range of the receive buffer.
    fn exchange(&mut self, frame: &mut [u8]) -> Result<(u8, Range<usize>), Failure> {
        let at = self.at;
        self.id = if self.id == i16::MAX { 1 } else { self.id + 1 };
        frame[2..4].copy_from_slice(&self.id.to_be_bytes());
        self.stream.write_all(frame).map_err(|e| Failure::io(at, e))?;
        loop {
            let (flags, stream, opcode, len) = {
                let have = self.fill(wire::HEADER)?;
                wire::header(have)?
            };
            self.fill(wire::HEADER + len)?;
            let body_at = self.start + wire::HEADER;
            self.start = body_at + len;
            if stream == self.id {
                let skip = wire::strip(flags, &self.rbuf[body_at..body_at + len])?;
                return Ok((opcode, body_at + skip..body_at + len));
            }
            // an answer to an earlier request that timed out (or an event): not this one's
        }
    }

    /// At least `need` bytes from `start` in the buffer (reading as many as come), the buffer moved
    /// or grown when it has no room.
    fn fill(&mut self, need: usize) -> Result<&[u8], Failure> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        if self.start + need > self.rbuf.len() {
            self.rbuf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
            if need > self.rbuf.len() {
                self.rbuf.resize(need.next_power_of_two(), 0);
            }
        }
        while self.end - self.start < need {
            match self.stream.read(&mut self.rbuf[self.end..]) {
                Ok(0) => return Err(Failure::Connection(format!("{}: the node closed the connection", self.at))),
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Failure::io(self.at, e)),
            }
        }
        Ok(&self.rbuf[self.start..self.start + need])
    }
}

/// Which node serves a key: the first node at or after the key's Murmur3 token on the ring.
pub struct Ring {
    pub nodes: Vec<SocketAddr>,
    /// (token, index into nodes), sorted by token.
    tokens: Vec<(i64, usize)>,
}

impl Ring {
    pub fn new(nodes: Vec<SocketAddr>, mut tokens: Vec<(i64, usize)>) -> Self {
        tokens.sort_unstable();
        Ring { nodes, tokens }
    }

    /// The index of the node for `key` (the only one without hashing when there is one).
    pub fn node(&self, key: &[u8]) -> usize {
        if self.nodes.len() < 2 || self.tokens.is_empty() {
            return 0;
        }
        let token = Murmur3Partitioner.hash_one(key).value();
        let at = self.tokens.partition_point(|(t, _)| *t < token);
        self.tokens[if at == self.tokens.len() { 0 } else { at }].1
    }
}

/// A worker's connections, one per node, opened on first use and dropped when one breaks (the next
/// request to that node opens a new one); a timeout keeps it (its late answer is skipped).
pub struct Lanes {
    conns: Vec<Option<Conn>>,
}

impl Lanes {
    pub fn new(nodes: usize) -> Self {
        Lanes { conns: (0..nodes).map(|_| None).collect() }
    }

    /// Sends `frame` to node `node` and returns its answer; a broken connection is dropped.
    pub fn call(&mut self, ring: &Ring, how: &Opener, node: usize, frame: &mut [u8], scratch: &mut Vec<u8>) -> Result<(u8, &[u8]), Failure> {
        if self.conns[node].is_none() {
            self.conns[node] = Some(Conn::open(ring.nodes[node], how, scratch)?);
        }
        match self.conns[node].as_mut().expect("opened").exchange(frame) {
            Ok((opcode, body)) => Ok((opcode, &self.conns[node].as_ref().expect("kept").rbuf[body])),
            Err(e) => {
                if !matches!(e, Failure::Timeout(_)) {
                    self.conns[node] = None;
                }
                Err(e)
            }
        }
    }
}
