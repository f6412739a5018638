//! The CQL native protocol v4 frames the request path needs, written into and read from reused
//! buffers: STARTUP and AUTH_RESPONSE (once per connection), EXECUTE of a prepared statement (its
//! header, statement id, consistency and flags serialized once per run: a request copies them and
//! appends its values), and RESULT (void, rows) and ERROR answers. One request is in flight per
//! connection; its stream id is set as it is sent (`conn`).

pub const VERSION: u8 = 0x04;
pub const HEADER: usize = 9;

pub const ERROR: u8 = 0x00;
pub const STARTUP: u8 = 0x01;
pub const READY: u8 = 0x02;
pub const AUTHENTICATE: u8 = 0x03;
pub const RESULT: u8 = 0x08;
pub const PREPARE: u8 = 0x09;
pub const EXECUTE: u8 = 0x0A;
pub const AUTH_RESPONSE: u8 = 0x0F;
pub const AUTH_SUCCESS: u8 = 0x10;

/// The server's "this statement is not prepared here" (a node restarted): prepare it and retry.
pub const UNPREPARED: i32 = 0x2500;

/// A frame that does not parse as the protocol says (one line).
#[derive(Debug, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// Starts a request frame in `buf` (emptied): the header, its length patched by `finish`.
pub fn begin(buf: &mut Vec<u8>, opcode: u8) {
    buf.clear();
    buf.extend_from_slice(&[VERSION, 0, 0, 0, opcode, 0, 0, 0, 0]);
}

/// Writes the body's length into the header.
pub fn finish(buf: &mut [u8]) {
    let len = (buf.len() - HEADER) as u32;
    buf[5..HEADER].copy_from_slice(&len.to_be_bytes());
}

pub fn put_short(buf: &mut Vec<u8>, v: u16) {
    buf.extend_from_slice(&v.to_be_bytes());
}

pub fn put_string(buf: &mut Vec<u8>, s: &str) {
    put_short(buf, s.len() as u16);
    buf.extend_from_slice(s.as_bytes());
}

pub fn put_long_string(buf: &mut Vec<u8>, s: &str) {
    buf.extend_from_slice(&(s.len() as i32).to_be_bytes());
    buf.extend_from_slice(s.as_bytes());
}

/// A [bytes] value: its length, then what `write` appends.
pub fn put_value_with(buf: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let at = buf.len();
    buf.extend_from_slice(&[0; 4]);
    write(buf);
    let len = (buf.len() - at - 4) as i32;
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

pub fn put_value(buf: &mut Vec<u8>, v: &[u8]) {
    buf.extend_from_slice(&(v.len() as i32).to_be_bytes());
    buf.extend_from_slice(v);
}

/// STARTUP with CQL 3 and no compression, naming the engine as the driver (a node lists its clients by that name:
/// system_views.clients, nodetool clientstats).
pub fn startup(buf: &mut Vec<u8>) {
    begin(buf, STARTUP);
    put_short(buf, 3);
    for (name, value) in
        [("CQL_VERSION", "3.0.0"), ("DRIVER_NAME", "storbench-load"), ("DRIVER_VERSION", env!("CARGO_PKG_VERSION"))]
    {
        put_string(buf, name);
        put_string(buf, value);
    }
    finish(buf);
}

/// AUTH_RESPONSE with SASL PLAIN's token (`\0user\0password`), as PasswordAuthenticator takes it.
pub fn auth_response(buf: &mut Vec<u8>, user: &str, password: &str) {
    begin(buf, AUTH_RESPONSE);
    put_value_with(buf, |b| {
        b.push(0);
        b.extend_from_slice(user.as_bytes());
        b.push(0);
        b.extend_from_slice(password.as_bytes());
    });
    finish(buf);
}

/// PREPARE of `cql` (after an UNPREPARED answer).
pub fn prepare(buf: &mut Vec<u8>, cql: &str) {
    begin(buf, PREPARE);
    put_long_string(buf, cql);
    finish(buf);
}

/// An EXECUTE of one prepared statement, serialized up to its values once per run.
pub struct Execute {
    prefix: Vec<u8>,
    /// The statement's text (to prepare it again on a node that lost it).
    pub cql: String,
}

impl Execute {
    /// `values` bound values follow; flags: values, skip the result's metadata (the columns are known).
    pub fn new(id: &[u8], cql: &str, consistency: u16, values: u16) -> Self {
        let mut prefix = Vec::with_capacity(HEADER + 2 + id.len() + 5);
        begin(&mut prefix, EXECUTE);
        put_short(&mut prefix, id.len() as u16);
        prefix.extend_from_slice(id);
        put_short(&mut prefix, consistency);
        prefix.push(0x01 | 0x02);
        put_short(&mut prefix, values);
        Execute { prefix, cql: cql.to_string() }
    }

    /// Starts a request in `buf` (emptied): the values are appended next, then `finish`.
    pub fn start(&self, buf: &mut Vec<u8>) {
        buf.clear();
        buf.extend_from_slice(&self.prefix);
    }
}

/// A response header: (flags, stream, opcode, body length).
pub fn header(h: &[u8]) -> Result<(u8, i16, u8, usize), Malformed> {
    if h[0] != 0x80 | VERSION {
        return Err(Malformed("a response of another protocol version than v4"));
    }
    let len = i32::from_be_bytes([h[5], h[6], h[7], h[8]]);
    if len < 0 {
        return Err(Malformed("a negative body length"));
    }
    Ok((h[1], i16::from_be_bytes([h[2], h[3]]), h[4], len as usize))
}

/// A cursor over a response body.
pub struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.0.len() < n {
            return Err(Malformed("a response body shorter than its contents"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    pub fn short(&mut self) -> Result<u16, Malformed> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().expect("2")))
    }
    pub fn int(&mut self) -> Result<i32, Malformed> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().expect("4")))
    }
    pub fn string(&mut self) -> Result<&'a [u8], Malformed> {
        let n = self.short()? as usize;
        self.take(n)
    }
    /// A [bytes]: None for null (a negative length).
    pub fn bytes(&mut self) -> Result<Option<&'a [u8]>, Malformed> {
        let n = self.int()?;
        if n < 0 {
            return Ok(None);
        }
        self.take(n as usize).map(Some)
    }
    fn skip_option(&mut self) -> Result<(), Malformed> {
        match self.short()? {
            0x0000 => drop(self.string()?),
            0x0020 | 0x0022 => self.skip_option()?,
            0x0021 => {
                self.skip_option()?;
                self.skip_option()?;
            }
            0x0030 => {
                self.string()?;
                self.string()?;
                for _ in 0..self.short()? {
                    self.string()?;
                    self.skip_option()?;
                }
            }
            0x0031 => {
                for _ in 0..self.short()? {
                    self.skip_option()?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// How many bytes of the body a response's flags put first: a tracing id, warnings, a custom payload.
pub fn strip(flags: u8, body: &[u8]) -> Result<usize, Malformed> {
    let mut r = Reader(body);
    if flags & 0x02 != 0 {
        r.take(16)?;
    }
    if flags & 0x08 != 0 {
        for _ in 0..r.short()? {
            r.string()?;
        }
    }
    if flags & 0x04 != 0 {
        for _ in 0..r.short()? {
            r.string()?;
            r.bytes()?;
        }
    }
    Ok(body.len() - r.0.len())
}

/// An ERROR body: its code and message.
pub fn error(body: &[u8]) -> Result<(i32, String), Malformed> {
    let mut r = Reader(body);
    let code = r.int()?;
    Ok((code, String::from_utf8_lossy(r.string()?).into_owned()))
}

/// A RESULT of rows: (rows, bytes of every column's value but the first, the key's); any other
/// result kind (void: a write) is (0, 0).
pub fn rows(body: &[u8]) -> Result<(u64, u64), Malformed> {
    let mut r = Reader(body);
    if r.int()? != 0x0002 {
        return Ok((0, 0));
    }
    let flags = r.int()?;
    let columns = r.int()?;
    if columns < 1 {
        return Err(Malformed("rows without columns"));
    }
    if flags & 0x0002 != 0 {
        r.bytes()?; // paging state
    }
    if flags & 0x0004 == 0 {
        let global = flags & 0x0001 != 0;
        if global {
            r.string()?;
            r.string()?;
        }
        for _ in 0..columns {
            if !global {
                r.string()?;
                r.string()?;
            }
            r.string()?;
            r.skip_option()?;
        }
    }
    let count = r.int()?;
    let mut bytes = 0u64;
    for _ in 0..count.max(0) {
        r.bytes()?;
        for _ in 1..columns {
            bytes += r.bytes()?.map_or(0, |v| v.len() as u64);
        }
    }
    Ok((count.max(0) as u64, bytes))
}

/// A server error's stable kind, as the driver's error names it ("read_timeout", ...).
pub fn error_kind(code: i32) -> &'static str {
    match code {
        0x0000 => "server_error",
        0x000A => "protocol_error",
        0x0100 => "authentication_error",
        0x1000 => "unavailable",
        0x1001 => "overloaded",
        0x1002 => "is_bootstrapping",
        0x1003 => "truncate_error",
        0x1100 => "write_timeout",
        0x1200 => "read_timeout",
        0x1300 => "read_failure",
        0x1400 => "function_failure",
        0x1500 => "write_failure",
        0x2000 => "syntax_error",
        0x2100 => "unauthorized",
        0x2200 => "invalid",
        0x2300 => "config_error",
        0x2400 => "already_exists",
        UNPREPARED => "unprepared",
        _ => "other",
    }
}

/// An answer, read off the connection's buffer.
pub(super) enum Answer {
    Rows(u64, u64),
    Error(i32, String),
    Other(u8),
    Bad(&'static str),
}

/// A RESULT (rows, bytes) or an ERROR (code, message) frame decoded; anything else by its opcode.
pub(super) fn answer(opcode: u8, body: &[u8]) -> Answer {
    match opcode {
        RESULT => rows(body).map_or_else(|m| Answer::Bad(m.0), |(r, b)| Answer::Rows(r, b)),
        ERROR => error(body).map_or_else(|m| Answer::Bad(m.0), |(c, m)| Answer::Error(c, m)),
        other => Answer::Other(other),
    }
}
