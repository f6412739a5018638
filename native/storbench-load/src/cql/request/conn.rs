//! Opening a request-path connection to a node (`Conn`: TCP, the TLS handshake with the job's "tls", STARTUP,
//! the login's AUTH_RESPONSE), blocking, and one request on it at a time (`Conn::call`); a multiplexed group
//! turns it into its shared non-blocking `Pipe`. `Failure` is why a request got no answer, by the kinds the
//! results count.

use super::frame::{error_code, opcode, HEADER};
use super::wire::{self, Malformed};
use crate::cql::config::{CqlConfig, Login};
use crate::cql::tls::{Stream, Tls};
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

/// How workers open connections: the login (the driver session's too), the timeouts, TLS (when the job asks).
#[derive(Clone)]
pub struct Opener {
    pub login: Option<Login>,
    pub connect_timeout: Duration,
    pub timeout: Duration,
    pub tls: Option<Arc<Tls>>,
}

impl Opener {
    pub fn new(cfg: &CqlConfig, tls: Option<Arc<Tls>>, login: Option<Login>) -> Self {
        Opener { login, connect_timeout: cfg.connect_timeout(), timeout: cfg.timeout(), tls }
    }
}

/// One blocking connection, its receive buffer reused.
pub struct Conn {
    at: SocketAddr,
    pub(super) stream: Stream,
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
        let (op, body) = conn.call(buf)?;
        match op {
            opcode::READY => return Ok(conn),
            opcode::AUTHENTICATE => {}
            opcode::ERROR => {
                let (code, message) = wire::error(body)?;
                return Err(Failure::Server(code, message));
            }
            _ => return Err(Failure::Protocol(format!("{at}: STARTUP answered with opcode {op}"))),
        }
        let Some(login) = &how.login else {
            let none = format!("{at}: the node asks for a login and the job has none");
            return Err(Failure::Server(error_code::BAD_CREDENTIALS, none));
        };
        wire::auth_response(buf, &login.user, &login.password.0);
        let (op, body) = conn.call(buf)?;
        match op {
            opcode::AUTH_SUCCESS => Ok(conn),
            opcode::ERROR => {
                let (code, message) = wire::error(body)?;
                Err(Failure::Server(code, message))
            }
            _ => Err(Failure::Protocol(format!(
                "{at}: the login was answered with opcode {op} (only SASL PLAIN is spoken)"
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
        wire::set_stream(frame, self.id);
        self.stream.write_all(frame).map_err(|e| Failure::io(at, e))?;
        loop {
            let (flags, stream, opcode, len) = {
                let have = self.fill(HEADER)?;
                wire::header(have)?
            };
            self.fill(HEADER + len)?;
            let body_at = self.start + HEADER;
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
