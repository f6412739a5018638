//! A small HTTP/1.1 client for one keep-alive connection per worker: blocking sockets, no
//! allocation per request beyond the header text, body bytes streamed from/to the payload.

use super::error::{EndpointError, RequestError};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

pub trait Stream: Read + Write + Send {}
impl<T: Read + Write + Send> Stream for T {}

pub struct Endpoint {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    pub addrs: Vec<SocketAddr>,
    pub connect_timeout: Duration,
    pub io_timeout: Duration,
    #[cfg(feature = "tls")]
    pub tls_config: Option<std::sync::Arc<rustls::ClientConfig>>,
    #[allow(dead_code)]
    pub insecure: bool,
}

impl Endpoint {
    pub fn parse(
        url: &str,
        connect_timeout: Duration,
        io_timeout: Duration,
        insecure: bool,
    ) -> Result<Self, EndpointError> {
        let (tls, rest) = if let Some(r) = url.strip_prefix("http://") {
            (false, r)
        } else if let Some(r) = url.strip_prefix("https://") {
            (true, r)
        } else {
            return Err(EndpointError::Scheme(url.into()));
        };
        #[cfg(not(feature = "tls"))]
        if tls {
            return Err(EndpointError::NoTls(url.into()));
        }
        let authority = rest.split('/').next().unwrap_or("");
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (
                h.trim_matches(|c| c == '[' || c == ']').to_string(),
                p.parse::<u16>().map_err(|_| EndpointError::Port(url.into()))?,
            ),
            _ => (authority.to_string(), if tls { 443 } else { 80 }),
        };
        if host.is_empty() {
            return Err(EndpointError::NoHost(url.into()));
        }
        let addrs: Vec<SocketAddr> = (host.as_str(), port)
            .to_socket_addrs()
            .map_err(|source| EndpointError::Resolve { url: url.into(), host: host.clone(), source })?
            .collect();
        #[cfg(feature = "tls")]
        let tls_config = if tls { Some(crate::s3::tls::client_config(insecure)) } else { None };
        Ok(Endpoint {
            tls,
            host,
            port,
            addrs,
            connect_timeout,
            io_timeout,
            #[cfg(feature = "tls")]
            tls_config,
            insecure,
        })
    }

    /// host[:port] as it goes in the Host header (port omitted when it is the scheme's default).
    pub fn authority(&self) -> String {
        let default = if self.tls { 443 } else { 80 };
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        if self.port == default {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }

    pub fn connect(&self, sni_host: &str) -> Result<Box<dyn Stream>, RequestError> {
        let mut last = None;
        for addr in &self.addrs {
            match TcpStream::connect_timeout(addr, self.connect_timeout) {
                Ok(s) => {
                    s.set_nodelay(true).ok();
                    s.set_read_timeout(Some(self.io_timeout)).ok();
                    s.set_write_timeout(Some(self.io_timeout)).ok();
                    return self.wrap(s, sni_host);
                }
                Err(e) => last = Some(e),
            }
        }
        let source = last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"));
        Err(RequestError::Connect { host: self.host.clone(), port: self.port, source })
    }

    #[cfg(feature = "tls")]
    fn wrap(&self, s: TcpStream, sni_host: &str) -> Result<Box<dyn Stream>, RequestError> {
        match &self.tls_config {
            None => Ok(Box::new(s)),
            Some(cfg) => {
                let name = rustls::pki_types::ServerName::try_from(sni_host.to_string())
                    .map_err(|e| RequestError::Tls(format!("bad TLS server name {sni_host}: {e}")))?;
                let conn =
                    rustls::ClientConnection::new(cfg.clone(), name).map_err(|e| RequestError::Tls(e.to_string()))?;
                Ok(Box::new(rustls::StreamOwned::new(conn, s)))
            }
        }
    }

    #[cfg(not(feature = "tls"))]
    fn wrap(&self, s: TcpStream, _sni_host: &str) -> Result<Box<dyn Stream>, RequestError> {
        Ok(Box::new(s))
    }
}

/// Produces a request body: calls its argument with consecutive slices of it.
pub type BodyFn<'a> = dyn FnMut(&mut dyn FnMut(&[u8]) -> Result<(), RequestError>) -> Result<(), RequestError> + 'a;

/// Where a response body goes.
pub enum Sink<'a> {
    Discard,
    /// Kept (up to a limit) for XML answers and error codes.
    Collect(&'a mut Vec<u8>),
    /// Compared chunk by chunk; the closure gets (offset in body, bytes) and returns false on mismatch.
    Check(&'a mut dyn FnMut(u64, &[u8]) -> bool),
}

pub struct Response {
    pub status: u16,
    pub content_length: Option<u64>,
    pub etag: Option<String>,
    pub body_bytes: u64,
    pub first_byte: Instant,
    pub close: bool,
    pub mismatch: bool,
    /// The first bytes of a non-2xx body (the S3 error document).
    pub error_body: Vec<u8>,
}

pub struct Conn {
    stream: Option<Box<dyn Stream>>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    pub reused: bool,
}

const BUF: usize = 256 << 10;
const ERROR_BODY_LIMIT: usize = 8 << 10;
const COLLECT_LIMIT: usize = 64 << 20;

impl Conn {
    pub fn new() -> Self {
        Conn { stream: None, buf: vec![0u8; BUF], start: 0, end: 0, reused: false }
    }

    pub fn close(&mut self) {
        self.stream = None;
        self.start = 0;
        self.end = 0;
    }

    pub fn ensure(&mut self, ep: &Endpoint, sni_host: &str) -> Result<(), RequestError> {
        if self.stream.is_none() {
            self.stream = Some(ep.connect(sni_host)?);
            self.start = 0;
            self.end = 0;
            self.reused = false;
        } else {
            self.reused = true;
        }
        Ok(())
    }

    /// Sends `head` then the body slices produced by `body`.
    pub fn send(&mut self, head: &[u8], body_len: u64, body: &mut BodyFn) -> Result<(), RequestError> {
        let stream = self.stream.as_mut().expect("connected");
        if body_len > 0 && body_len <= 16 << 10 {
            // one write for small requests
            let mut one = Vec::with_capacity(head.len() + body_len as usize);
            one.extend_from_slice(head);
            body(&mut |s: &[u8]| {
                one.extend_from_slice(s);
                Ok(())
            })?;
            return stream.write_all(&one).map_err(|e| RequestError::io(e, "send"));
        }
        stream.write_all(head).map_err(|e| RequestError::io(e, "send"))?;
        if body_len > 0 {
            body(&mut |s: &[u8]| {
                for chunk in s.chunks(1 << 20) {
                    stream.write_all(chunk).map_err(|e| RequestError::io(e, "send body"))?;
                }
                Ok(())
            })?;
        }
        stream.flush().map_err(|e| RequestError::io(e, "send"))
    }

    /// Bytes before the next CRLF in the buffer, reading more as needed; ``eof`` says where it ran out.
    fn line_length(&mut self, eof: &'static str) -> Result<usize, RequestError> {
        loop {
            if let Some(p) = find_crlf(&self.buf[self.start..self.end]) {
                return Ok(p);
            }
            if self.fill()? == 0 {
                return Err(RequestError::Eof(eof.into()));
            }
        }
    }

    fn fill(&mut self) -> Result<usize, RequestError> {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let stream = self.stream.as_mut().expect("connected");
        let n = stream.read(&mut self.buf[self.end..]).map_err(|e| RequestError::io(e, "receive"))?;
        self.end += n;
        Ok(n)
    }

    /// Reads one response; `head_request` responses have no body whatever their length says.
    pub fn receive(&mut self, head_request: bool, sink: &mut Sink) -> Result<Response, RequestError> {
        let mut first_byte = None;
        // headers
        let (status, content_length, chunked, close, etag, header_len) = loop {
            if self.end > self.start {
                if first_byte.is_none() {
                    first_byte = Some(Instant::now());
                }
                let mut headers = [httparse::EMPTY_HEADER; 48];
                let mut resp = httparse::Response::new(&mut headers);
                match resp.parse(&self.buf[self.start..self.end]) {
                    Ok(httparse::Status::Complete(len)) => {
                        let status = resp.code.unwrap_or(0);
                        let mut cl = None;
                        let mut chunked = false;
                        let mut close = resp.version == Some(0);
                        let mut etag = None;
                        for h in resp.headers.iter() {
                            if h.name.eq_ignore_ascii_case("content-length") {
                                cl = std::str::from_utf8(h.value).ok().and_then(|v| v.trim().parse::<u64>().ok());
                            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                                chunked = String::from_utf8_lossy(h.value).to_ascii_lowercase().contains("chunked");
                            } else if h.name.eq_ignore_ascii_case("connection") {
                                let v = String::from_utf8_lossy(h.value).to_ascii_lowercase();
                                if v.contains("close") {
                                    close = true;
                                } else if v.contains("keep-alive") {
                                    close = false;
                                }
                            } else if h.name.eq_ignore_ascii_case("etag") {
                                etag = Some(String::from_utf8_lossy(h.value).to_string());
                            }
                        }
                        if (100..200).contains(&status) {
                            // 100 Continue and friends: skip, read the real response
                            self.start += len;
                            continue;
                        }
                        break (status, cl, chunked, close, etag, len);
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(e) => return Err(RequestError::Protocol(format!("bad HTTP response: {e}"))),
                }
            }
            let n = self.fill()?;
            if n == 0 {
                return Err(RequestError::Eof("connection closed before a response".into()));
            }
        };
        self.start += header_len;
        let mut resp = Response {
            status,
            content_length,
            etag,
            body_bytes: 0,
            first_byte: first_byte.unwrap(),
            close,
            mismatch: false,
            error_body: Vec::new(),
        };
        let no_body = head_request || status == 204 || status == 304;
        if no_body {
            return Ok(resp);
        }
        if chunked {
            loop {
                // chunk-size line
                let line_end = self.line_length("connection closed inside a chunked body")?;
                let line = std::str::from_utf8(&self.buf[self.start..self.start + line_end]).unwrap_or("");
                let size = u64::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
                    .map_err(|_| RequestError::Protocol(format!("bad chunk size {line:?}")))?;
                self.start += line_end + 2;
                if size == 0 {
                    // trailers until an empty line
                    loop {
                        let p = self.line_length("connection closed in chunk trailers")?;
                        self.start += p + 2;
                        if p == 0 {
                            break;
                        }
                    }
                    break;
                }
                self.body(Some(size), &mut resp, sink, "chunk")?;
                while self.end - self.start < 2 {
                    if self.fill()? == 0 {
                        return Err(RequestError::Eof("connection closed after a chunk".into()));
                    }
                }
                self.start += 2;
            }
        } else {
            // Content-Length bytes; without a length, all until the server closes
            self.body(content_length, &mut resp, sink, "body")?;
            resp.close |= content_length.is_none();
        }
        if resp.close {
            self.close();
        }
        Ok(resp)
    }

    /// Passes `len` body bytes (None: all until the server closes) to the sink; `part` names them
    /// when the connection closes before.
    fn body(&mut self, len: Option<u64>, resp: &mut Response, sink: &mut Sink, part: &str) -> Result<(), RequestError> {
        let mut left = len.unwrap_or(u64::MAX);
        while left > 0 {
            if self.start == self.end && self.fill()? == 0 {
                return match len {
                    None => Ok(()),
                    Some(_) => Err(RequestError::Eof(format!("connection closed with {left} {part} bytes missing"))),
                };
            }
            let take = left.min((self.end - self.start) as u64) as usize;
            deliver(resp, &self.buf[self.start..self.start + take], sink);
            self.start += take;
            left -= take as u64;
        }
        Ok(())
    }
}

/// Body bytes where they go: to the sink for a 2xx answer, else (the start of) the error document.
fn deliver(resp: &mut Response, data: &[u8], sink: &mut Sink) {
    if !(200..300).contains(&resp.status) {
        let room = ERROR_BODY_LIMIT.saturating_sub(resp.error_body.len());
        resp.error_body.extend_from_slice(&data[..data.len().min(room)]);
    } else {
        match sink {
            Sink::Discard => {}
            Sink::Collect(v) => {
                let room = COLLECT_LIMIT.saturating_sub(v.len());
                v.extend_from_slice(&data[..data.len().min(room)]);
            }
            Sink::Check(f) => {
                if !resp.mismatch && !f(resp.body_bytes, data) {
                    resp.mismatch = true;
                }
            }
        }
    }
    resp.body_bytes += data.len() as u64;
}

fn find_crlf(data: &[u8]) -> Option<usize> {
    data.windows(2).position(|w| w == b"\r\n")
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
