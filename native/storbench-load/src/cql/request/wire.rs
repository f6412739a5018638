//! The request path's frames of the CQL native protocol v4, written into and read from reused buffers (the
//! protocol's numbers are `frame`'s names). Requests: STARTUP and AUTH_RESPONSE (SASL PLAIN) once per connection
//! (`conn`), an EXECUTE of a prepared statement per request (`Execute`: its header, statement id, consistency and
//! flags serialized once per run from what the driver prepared; a request copies them and appends its values),
//! and a PREPARE when a node lost a statement. Answers: the header, the body's extras its flags announce
//! (tracing id, warnings, custom payload), and RESULT (rows or not) and ERROR bodies (`answer`). The stream id is
//! set as a frame is queued on its connection (`set_stream`). No compression, no paging, no events: the driver's
//! session (`cql::driver`) is the client that speaks the rest of the protocol.

use super::frame::{
    error_code, header_flag, opcode, option, query_flag, result_kind, rows_flag, FLAGS_AT, HEADER, LENGTH_AT,
    OPCODE_AT, RESPONSE, STREAM_AT, VERSION,
};

/// A frame that does not parse as the protocol says (one line).
#[derive(Debug, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// Starts a request frame in `buf` (emptied): the header (no flags, stream 0), its length patched by `finish`.
pub fn begin(buf: &mut Vec<u8>, op: u8) {
    buf.clear();
    buf.resize(HEADER, 0);
    buf[0] = VERSION;
    buf[OPCODE_AT] = op;
}

/// Writes the body's length into the header.
pub fn finish(buf: &mut [u8]) {
    let len = (buf.len() - HEADER) as u32;
    buf[LENGTH_AT].copy_from_slice(&len.to_be_bytes());
}

/// Sets the stream id of a request frame (its answer comes on the same).
pub fn set_stream(frame: &mut [u8], id: i16) {
    frame[STREAM_AT].copy_from_slice(&id.to_be_bytes());
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
    let options =
        [("CQL_VERSION", "3.0.0"), ("DRIVER_NAME", "storbench-load"), ("DRIVER_VERSION", env!("CARGO_PKG_VERSION"))];
    begin(buf, opcode::STARTUP);
    put_short(buf, options.len() as u16);
    for (name, value) in options {
        put_string(buf, name);
        put_string(buf, value);
    }
    finish(buf);
}

/// AUTH_RESPONSE with SASL PLAIN's token (`\0user\0password`), as PasswordAuthenticator takes it.
pub fn auth_response(buf: &mut Vec<u8>, user: &str, password: &str) {
    begin(buf, opcode::AUTH_RESPONSE);
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
    begin(buf, opcode::PREPARE);
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
    /// `values` bound values follow; the RESULT comes without its metadata (the columns are known).
    pub fn new(id: &[u8], cql: &str, consistency: u16, values: u16) -> Self {
        let mut prefix = Vec::with_capacity(HEADER + 2 + id.len() + 5);
        begin(&mut prefix, opcode::EXECUTE);
        put_short(&mut prefix, id.len() as u16);
        prefix.extend_from_slice(id);
        put_short(&mut prefix, consistency);
        prefix.push(query_flag::VALUES | query_flag::SKIP_METADATA);
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
    if h[0] != RESPONSE | VERSION {
        return Err(Malformed("a response of another protocol version than v4"));
    }
    let len = i32::from_be_bytes(h[LENGTH_AT].try_into().expect("4"));
    if len < 0 {
        return Err(Malformed("a negative body length"));
    }
    Ok((h[FLAGS_AT], i16::from_be_bytes(h[STREAM_AT].try_into().expect("2")), h[OPCODE_AT], len as usize))
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
    /// A column type [option]: its id, and the names and options a collection, UDT or tuple carries.
    fn skip_option(&mut self) -> Result<(), Malformed> {
        match self.short()? {
            option::CUSTOM => drop(self.string()?),
            option::LIST | option::SET => self.skip_option()?,
            option::MAP => {
                self.skip_option()?;
                self.skip_option()?;
            }
            option::UDT => {
                self.string()?;
                self.string()?;
                for _ in 0..self.short()? {
                    self.string()?;
                    self.skip_option()?;
                }
            }
            option::TUPLE => {
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
    if flags & header_flag::TRACING != 0 {
        r.take(16)?;
    }
    if flags & header_flag::WARNING != 0 {
        for _ in 0..r.short()? {
            r.string()?;
        }
    }
    if flags & header_flag::CUSTOM_PAYLOAD != 0 {
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
    if r.int()? != result_kind::ROWS {
        return Ok((0, 0));
    }
    let flags = r.int()?;
    let columns = r.int()?;
    if columns < 1 {
        return Err(Malformed("rows without columns"));
    }
    if flags & rows_flag::HAS_MORE_PAGES != 0 {
        r.bytes()?; // paging state
    }
    if flags & rows_flag::NO_METADATA == 0 {
        let global = flags & rows_flag::GLOBAL_TABLES_SPEC != 0;
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
    use error_code::*;
    match code {
        SERVER_ERROR => "server_error",
        PROTOCOL_ERROR => "protocol_error",
        BAD_CREDENTIALS => "authentication_error",
        UNAVAILABLE => "unavailable",
        OVERLOADED => "overloaded",
        IS_BOOTSTRAPPING => "is_bootstrapping",
        TRUNCATE_ERROR => "truncate_error",
        WRITE_TIMEOUT => "write_timeout",
        READ_TIMEOUT => "read_timeout",
        READ_FAILURE => "read_failure",
        FUNCTION_FAILURE => "function_failure",
        WRITE_FAILURE => "write_failure",
        SYNTAX_ERROR => "syntax_error",
        UNAUTHORIZED => "unauthorized",
        INVALID => "invalid",
        CONFIG_ERROR => "config_error",
        ALREADY_EXISTS => "already_exists",
        UNPREPARED => "unprepared",
        _ => "other",
    }
}

/// An answer, read off the connection's buffer.
pub enum Answer {
    Rows(u64, u64),
    Error(i32, String),
    Other(u8),
    Bad(&'static str),
}

/// A RESULT (rows, bytes) or an ERROR (code, message) frame decoded; anything else by its opcode.
pub fn answer(op: u8, body: &[u8]) -> Answer {
    match op {
        opcode::RESULT => rows(body).map_or_else(|m| Answer::Bad(m.0), |(r, b)| Answer::Rows(r, b)),
        opcode::ERROR => error(body).map_or_else(|m| Answer::Bad(m.0), |(c, m)| Answer::Error(c, m)),
        other => Answer::Other(other),
    }
}
