//! A connection many clients share (`Pipe`): a multiplexed group's to one node, non-blocking, each client one
//! request in flight on its own stream id; no runtime, no locks.

use super::conn::{Conn, Failure, Opener};
use super::frame::{HEADER, STREAM_IDS};
use super::wire;
use crate::cql::tls::Stream;
use std::io::{self, Read, Write};
use std::net::SocketAddr;

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
            owners: vec![0; STREAM_IDS],
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
                wire::set_stream(frame, id);
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
            while self.end - self.start >= HEADER {
                let (flags, stream, opcode, len) = wire::header(&self.rbuf[self.start..self.start + HEADER])?;
                if self.end - self.start < HEADER + len {
                    break;
                }
                let body = self.start + HEADER..self.start + HEADER + len;
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
