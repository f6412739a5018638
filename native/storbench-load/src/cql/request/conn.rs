//! The request path's connections: each multiplexed group of load workers shares one non-blocking
//! TCP connection to each node it sends to (`Pipe`: each worker one request in flight, on its own
//! stream id; no runtime, no locks), opened with STARTUP and the login, and a request goes to
//! the node owning its key's token (the ring the driver session read: token-aware, as the driver
//! routed). The driver session itself only connects, creates the table and prepares. With the job's
//! "tls" each connection is TLS over the socket (`tls::Stream`), its handshake done as it opens.

use super::tls::{Stream, Tls};
use super::wire::{self, Malformed};
use crate::core::secrets;
use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::ops::Range;
use std::sync::Arc;
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
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                Failure::Timeout(format!("{at}: no answer within timeout_s"))
            }
            _ => Failure::Connection(format!("{at}: {e}")),
        }
    }
}

impl From<Malformed> for Failure {
    fn from(m: Malformed) -> Failure {
        Failure::Protocol(m.0.to_string())
    }
}

/// How workers open connections: the login, the timeouts, TLS (when the job asks).
#[derive(Clone)]
pub struct Opener {
    pub login: Option<(String, String)>,
    pub connect_timeout: Duration,
    pub timeout: Duration,
    pub tls: Option<Arc<Tls>>,
}

impl Opener {
    /// The job's login, else STORBENCH_CQL_USERNAME/PASSWORD (as the driver session's).
    pub fn new(cfg: &super::CqlConfig, tls: Option<Arc<Tls>>) -> Self {
        let env = secrets::var("STORBENCH_CQL_USERNAME")
            .map(|u| (u, secrets::var("STORBENCH_CQL_PASSWORD").unwrap_or_default()));
        let job = cfg.username.clone().zip(cfg.password.as_ref().map(|p| p.0.clone()));
        Opener {
            login: job.or(env),
            connect_timeout: super::timeout(cfg.connect_timeout_s),
            timeout: super::timeout(cfg.timeout_s),
            tls,
        }
    }
}

/// One blocking connection, its receive buffer reused.
pub struct Conn {
    at: SocketAddr,
    stream: Stream,
    /// The stream id of the request in flight: an answer on another (one that came after its
    /// request's timeout) is skipped, so a timeout keeps the connection.
    id: i16,
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
}

impl Conn {
    /// Connects (the TLS handshake too, with the job's "tls"), sends STARTUP and answers AUTHENTICATE with the
    /// login. `buf` is scratch.
    pub fn open(at: SocketAddr, how: &Opener, buf: &mut Vec<u8>) -> Result<Conn, Failure> {
        let tcp = TcpStream::connect_timeout(&at, how.connect_timeout).map_err(|e| Failure::io(at, e))?;
        let set = |r: io::Result<()>| r.map_err(|e| Failure::Connection(format!("{at}: {e}")));
        set(tcp.set_nodelay(true))?;
        set(tcp.set_read_timeout(Some(how.timeout)))?;
        set(tcp.set_write_timeout(Some(how.timeout)))?;
        let stream = match &how.tls {
            None => Stream::Plain(tcp),
            Some(tls) => tls.connect(at, tcp).map_err(Failure::Connection)?,
        };
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
            _ => Err(Failure::Protocol(format!(
                "{at}: the login was answered with opcode {opcode} (only SASL PLAIN is spoken)"
            ))),
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

/// A connection many clients share (a multiplexed group's, to one node): non-blocking, requests
/// queued and written together, answers matched to their clients by stream id, so one read can bring
/// several answers. A late answer (its request timed out and was forgotten) is skipped.
pub struct Pipe {
    pub at: SocketAddr,
    stream: Stream,
    wbuf: Vec<u8>,
    rbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// By stream id: the client awaiting its answer, + 1 (0: none).
    owners: Vec<u32>,
    next: usize,
}

impl Pipe {
    /// Opens (STARTUP, the login: blocking, once) and turns non-blocking.
    pub fn open(at: SocketAddr, how: &Opener, scratch: &mut Vec<u8>) -> Result<Pipe, Failure> {
        let conn = Conn::open(at, how, scratch)?;
        conn.stream.tcp().set_nonblocking(true).map_err(|e| Failure::Connection(format!("{at}: {e}")))?;
        Ok(Pipe {
            at,
            stream: conn.stream,
            wbuf: Vec::with_capacity(1 << 16),
            rbuf: vec![0; 1 << 16],
            start: 0,
            end: 0,
            owners: vec![0; 1 << 15],
            next: 0,
        })
    }

    pub fn fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(self.stream.tcp())
    }

    /// Requests queued, or TLS records the socket did not take yet.
    pub fn wants_write(&self) -> bool {
        !self.wbuf.is_empty() || self.stream.pending()
    }

    /// Queues `frame` (its stream id set here) for `client`: the id.
    pub fn queue(&mut self, client: usize, frame: &mut [u8]) -> Result<i16, Failure> {
        for _ in 1..self.owners.len() {
            self.next = if self.next + 1 >= self.owners.len() { 1 } else { self.next + 1 };
            if self.owners[self.next] == 0 {
                self.owners[self.next] = client as u32 + 1;
                let id = self.next as i16;
                frame[2..4].copy_from_slice(&id.to_be_bytes());
                self.wbuf.extend_from_slice(frame);
                return Ok(id);
            }
        }
        Err(Failure::Connection(format!("{}: no stream id free", self.at)))
    }

    /// The request on `id` given up (timed out): its answer, if it comes, is skipped.
    pub fn forget(&mut self, id: i16) {
        self.owners[id as usize] = 0;
    }

    /// Writes what is queued, as much as the socket takes now.
    pub fn flush(&mut self) -> Result<(), Failure> {
        let mut done = 0;
        while done < self.wbuf.len() {
            match self.stream.write(&self.wbuf[done..]) {
                Ok(0) => return Err(Failure::Connection(format!("{}: the node closed the connection", self.at))),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Failure::Connection(format!("{}: {e}", self.at))),
            }
        }
        self.wbuf.drain(..done);
        if self.wbuf.is_empty() {
            match self.stream.send_pending() {
                Err(e) if e.kind() != io::ErrorKind::WouldBlock && e.kind() != io::ErrorKind::Interrupted => {
                    return Err(Failure::Connection(format!("{}: {e}", self.at)))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Reads what has come; each whole answer to a client: `each(client, opcode, body past its flags' extras)`.
    pub fn receive(&mut self, mut each: impl FnMut(usize, u8, &[u8])) -> Result<(), Failure> {
        loop {
            if self.end == self.rbuf.len() {
                if self.start > 0 {
                    self.rbuf.copy_within(self.start..self.end, 0);
                    (self.start, self.end) = (0, self.end - self.start);
                } else {
                    self.rbuf.resize(self.rbuf.len() * 2, 0);
                }
            }
            let n = match self.stream.read(&mut self.rbuf[self.end..]) {
                Ok(0) => return Err(Failure::Connection(format!("{}: the node closed the connection", self.at))),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Failure::Connection(format!("{}: {e}", self.at))),
            };
            self.end += n;
            while self.end - self.start >= wire::HEADER {
                let (flags, stream, opcode, len) = wire::header(&self.rbuf[self.start..self.start + wire::HEADER])?;
                if self.end - self.start < wire::HEADER + len {
                    break;
                }
                let body = self.start + wire::HEADER..self.start + wire::HEADER + len;
                self.start = body.end;
                let owner = if stream > 0 { std::mem::take(&mut self.owners[stream as usize]) } else { 0 };
                if owner > 0 {
                    let skip = wire::strip(flags, &self.rbuf[body.clone()])?;
                    each(owner as usize - 1, opcode, &self.rbuf[body.start + skip..body.end]);
                }
            }
            if self.start == self.end {
                (self.start, self.end) = (0, 0);
            }
            if self.end < self.rbuf.len() {
                return Ok(()); // the socket had no more: the next poll says when it has
            }
        }
    }
}
