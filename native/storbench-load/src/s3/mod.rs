//! The S3 protocol: PUT (single and multipart), GET (whole and ranged), HEAD, LIST, DELETE,
//! signed with SigV4, path-style or virtual-host addressing, one keep-alive connection per worker.

pub mod http;
pub mod sigv4;
#[cfg(feature = "tls")]
pub mod tls;

use crate::job::Job;
use crate::load::{OpError, Outcome, Protocol, Request, Worker};
use crate::payload::Payload;
use http::{Conn, Endpoint, Response, Sink};
use serde::{Deserialize, Serialize};
use sigv4::{amz_date, canonical_query, now_unix, uri_encode, Signer, EMPTY_SHA256, UNSIGNED};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct S3Config {
    pub endpoint: String,
    #[serde(default = "default_region")]
    pub region: String,
    pub access_key: String,
    pub secret_key: String,
    pub bucket: String,
    /// Object keys are `<prefix>obj-<key number>`; LIST lists this prefix.
    #[serde(default)]
    pub prefix: String,
    /// "path" (http://host/bucket/key) or "virtual" (http://bucket.host/key).
    #[serde(default = "default_addressing")]
    pub addressing: String,
    /// "unsigned" (UNSIGNED-PAYLOAD, no hashing of bodies) or "signed" (SHA-256 of every body).
    #[serde(default = "default_signing")]
    pub payload_signing: String,
    /// Objects of at least this many bytes are written by multipart upload (0: never).
    #[serde(default)]
    pub multipart_threshold: u64,
    #[serde(default = "default_part")]
    pub part_size: u64,
    #[serde(default = "default_max_keys")]
    pub list_max_keys: u32,
    #[serde(default = "default_connect")]
    pub connect_timeout_s: f64,
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// TLS: accept any certificate (self-signed test servers).
    #[serde(default)]
    pub insecure_tls: bool,
}

fn default_region() -> String {
    "us-east-1".into()
}
fn default_addressing() -> String {
    "path".into()
}
fn default_signing() -> String {
    "unsigned".into()
}
fn default_part() -> u64 {
    8 << 20
}
fn default_max_keys() -> u32 {
    1000
}
fn default_connect() -> f64 {
    3.0
}
fn default_timeout() -> f64 {
    60.0
}

pub const OPS: &[&str] = &["put", "get", "head", "list", "delete"];

struct Inner {
    cfg: S3Config,
    ep: Endpoint,
    payload: Payload,
    verify: bool,
    ops: Vec<String>,
    signed: bool,
    virtual_host: bool,
}

pub struct S3 {
    inner: Arc<Inner>,
}

impl S3 {
    pub fn new(job: &Job) -> Result<Self, String> {
        let cfg = job.s3.clone().ok_or("job: protocol s3 needs an \"s3\" section")?;
        if cfg.bucket.is_empty() {
            return Err("job: s3.bucket is empty".into());
        }
        let virtual_host = match cfg.addressing.as_str() {
            "path" => false,
            "virtual" => true,
            other => return Err(format!("job: s3.addressing {other:?}: allowed path, virtual")),
        };
        let signed = match cfg.payload_signing.as_str() {
            "unsigned" => false,
            "signed" => true,
            other => return Err(format!("job: s3.payload_signing {other:?}: allowed unsigned, signed")),
        };
        if cfg.multipart_threshold > 0 && cfg.part_size < 5 << 20 {
            return Err("job: s3.part_size must be at least 5 MiB (S3's minimum part)".into());
        }
        let ep = Endpoint::parse(
            &cfg.endpoint,
            Duration::from_secs_f64(cfg.connect_timeout_s),
            Duration::from_secs_f64(cfg.timeout_s),
            cfg.insecure_tls,
        )?;
        Ok(S3 {
            inner: Arc::new(Inner {
                ep,
                payload: Payload::new(job.payload_seed),
                verify: job.verify,
                ops: job.mix.iter().map(|m| m.op.clone()).collect(),
                signed,
                virtual_host,
                cfg,
            }),
        })
    }
}

impl Protocol for S3 {
    type W = S3Worker;

    fn known_ops(&self) -> &'static [&'static str] {
        OPS
    }
    fn consumes_keys(&self, op: &str) -> bool {
        op == "delete"
    }
    fn default_sequential(&self, op: &str) -> bool {
        op == "put" || op == "delete"
    }

    fn preflight(&self) -> Result<(), String> {
        let mut w = self.worker(u32::MAX);
        let cfg = &self.inner.cfg;
        let mut body = Vec::new();
        let result = w.request("GET", None, &[("list-type", "2"), ("max-keys", "1"), ("prefix", &cfg.prefix)], None, 0,
                               &mut |_| Ok(()), false, &mut Sink::Collect(&mut body));
        let where_ = format!("S3 endpoint {}", cfg.endpoint);
        match result {
            Err(e) if e.kind == "connect" => Err(format!("{where_}: {}", e.message)),
            Err(e) if e.kind == "timeout" => Err(format!("{where_} did not answer within {:.0} s", cfg.timeout_s)),
            Err(e) => Err(format!("{where_}: {}", e.message)),
            Ok(resp) if (200..300).contains(&resp.status) => Ok(()),
            Ok(resp) => {
                let code = xml_tag(&resp.error_body, "Code").unwrap_or_default();
                let message = xml_tag(&resp.error_body, "Message").unwrap_or_default();
                let detail = if code.is_empty() { format!("HTTP {}", resp.status) } else { format!("HTTP {} {code}", resp.status) };
                let detail = if message.is_empty() { detail } else { format!("{detail}: {message}") };
                match (resp.status, code.as_str()) {
                    (403, _) | (401, _) | (_, "InvalidAccessKeyId") | (_, "SignatureDoesNotMatch") | (_, "AccessDenied") => {
                        Err(format!("{where_} refused the credentials for bucket {} ({detail})", cfg.bucket))
                    }
                    (404, _) | (_, "NoSuchBucket") => Err(format!("{where_}: bucket {} does not exist ({detail})", cfg.bucket)),
                    _ => Err(format!("{where_}: listing bucket {} failed ({detail})", cfg.bucket)),
                }
            }
        }
    }

    fn worker(&self, _index: u32) -> S3Worker {
        let inner = self.inner.clone();
        let signer = Signer::new(&inner.cfg.access_key, &inner.cfg.secret_key, &inner.cfg.region);
        S3Worker { inner, signer, conn: Conn::new(), list_token: None, stamp: (0, String::new(), String::new()) }
    }
}

pub struct S3Worker {
    inner: Arc<Inner>,
    signer: Signer,
    conn: Conn,
    list_token: Option<String>,
    stamp: (u64, String, String),
}

pub fn xml_tag(body: &[u8], tag: &str) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&format!("</{tag}>"))? + start;
    Some(xml_unescape(&text[start..end]))
}

fn xml_unescape(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&apos;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

fn http_error(resp: &Response, what: &str) -> OpError {
    let code = xml_tag(&resp.error_body, "Code");
    let kind = match &code {
        Some(c) => format!("http_{}_{}", resp.status, c),
        None => format!("http_{}", resp.status),
    };
    let message = xml_tag(&resp.error_body, "Message").unwrap_or_default();
    OpError::new(kind, format!("{what}: HTTP {} {} {}", resp.status, code.unwrap_or_default(), message).trim().to_string())
}

type BodyFn<'a> = dyn FnMut(&mut dyn FnMut(&[u8]) -> Result<(), OpError>) -> Result<(), OpError> + 'a;

impl S3Worker {
    pub fn object_name(&self, key: u64) -> String {
        format!("{}obj-{:010}", self.inner.cfg.prefix, key)
    }

    fn dates(&mut self) -> (String, String) {
        let now = now_unix();
        if self.stamp.0 != now {
            let (s, d) = amz_date(now);
            self.stamp = (now, s, d);
        }
        (self.stamp.1.clone(), self.stamp.2.clone())
    }

    /// One signed request on the worker's connection; a stale keep-alive connection is retried once.
    #[allow(clippy::too_many_arguments)]
    pub fn request(&mut self, method: &str, key: Option<&str>, query: &[(&str, &str)], range: Option<(u64, u64)>,
                   body_len: u64, body: &mut BodyFn, head_request: bool, sink: &mut Sink) -> Result<Response, OpError> {
        let inner = self.inner.clone();
        let cfg = &inner.cfg;
        let authority = inner.ep.authority();
        let (host, path) = if inner.virtual_host {
            (format!("{}.{authority}", cfg.bucket), format!("/{}", key.map(|k| uri_encode(k, true)).unwrap_or_default()))
        } else {
            let mut p = format!("/{}", uri_encode(&cfg.bucket, false));
            if let Some(k) = key {
                p.push('/');
                p.push_str(&uri_encode(k, true));
            }
            (authority.clone(), p)
        };
        let sni = if inner.virtual_host { format!("{}.{}", cfg.bucket, inner.ep.host) } else { inner.ep.host.clone() };
        let q = canonical_query(query);
        let hash_owned;
        let payload_hash: &str = if body_len == 0 {
            EMPTY_SHA256
        } else if inner.signed {
            let mut hasher = <sha2::Sha256 as sha2::Digest>::new();
            body(&mut |s: &[u8]| {
                sha2::Digest::update(&mut hasher, s);
                Ok(())
            })?;
            hash_owned = sigv4::hex(&sha2::Digest::finalize(hasher));
            &hash_owned
        } else {
            UNSIGNED
        };
        let range_value = range.map(|(off, len)| format!("bytes={}-{}", off, off + len - 1));
        let (stamp, date) = self.dates();
        let mut signed_headers: Vec<(&str, &str)> = vec![("host", &host)];
        if let Some(r) = &range_value {
            signed_headers.push(("range", r));
        }
        signed_headers.push(("x-amz-content-sha256", payload_hash));
        signed_headers.push(("x-amz-date", &stamp));
        let auth = self.signer.authorization(method, &path, &q, &signed_headers, payload_hash, &stamp, &date);
        let mut head = String::with_capacity(512);
        head.push_str(method);
        head.push(' ');
        head.push_str(&path);
        if !q.is_empty() {
            head.push('?');
            head.push_str(&q);
        }
        head.push_str(" HTTP/1.1\r\nHost: ");
        head.push_str(&host);
        head.push_str("\r\nx-amz-date: ");
        head.push_str(&stamp);
        head.push_str("\r\nx-amz-content-sha256: ");
        head.push_str(payload_hash);
        head.push_str("\r\nAuthorization: ");
        head.push_str(&auth);
        if let Some(r) = &range_value {
            head.push_str("\r\nRange: ");
            head.push_str(r);
        }
        if body_len > 0 || method == "PUT" || method == "POST" {
            head.push_str("\r\nContent-Length: ");
            head.push_str(&body_len.to_string());
        }
        head.push_str("\r\n\r\n");
        for attempt in 0..2 {
            self.conn.ensure(&inner.ep, &sni)?;
            let reused = self.conn.reused;
            let sent = self.conn.send(head.as_bytes(), body_len, body);
            let result = sent.and_then(|_| self.conn.receive(head_request, sink));
            match result {
                Ok(resp) => return Ok(resp),
                Err(e) => {
                    self.conn.close();
                    let stale = reused && (e.kind == "eof" || e.kind == "io") && attempt == 0;
                    if !stale {
                        return Err(e);
                    }
                }
            }
        }
        unreachable!()
    }

    fn put(&mut self, name: &str, key: u64, size: u64) -> Result<Outcome, OpError> {
        let cfg_threshold = self.inner.cfg.multipart_threshold;
        if cfg_threshold > 0 && size >= cfg_threshold {
            return self.multipart_put(name, key, size);
        }
        let inner = self.inner.clone();
        let resp = self.request("PUT", Some(name), &[], None, size,
                                &mut |f| inner.payload.for_each_slice(key, 0, size, |s| f(s)), false, &mut Sink::Discard)?;
        if !(200..300).contains(&resp.status) {
            return Err(http_error(&resp, "PUT"));
        }
        Ok(Outcome { bytes: size, first_byte: Some(resp.first_byte) })
    }

    fn multipart_put(&mut self, name: &str, key: u64, size: u64) -> Result<Outcome, OpError> {
        let inner = self.inner.clone();
        let mut body = Vec::new();
        let resp = self.request("POST", Some(name), &[("uploads", "")], None, 0, &mut |_| Ok(()), false, &mut Sink::Collect(&mut body))?;
        if !(200..300).contains(&resp.status) {
            return Err(http_error(&resp, "multipart initiate"));
        }
        let upload_id = xml_tag(&body, "UploadId").ok_or_else(|| OpError::new("protocol", "multipart initiate: no UploadId"))?;
        let part_size = inner.cfg.part_size;
        let parts = size.div_ceil(part_size).max(1);
        let mut etags = Vec::with_capacity(parts as usize);
        let result = (|| -> Result<(), OpError> {
            for n in 0..parts {
                let off = n * part_size;
                let len = part_size.min(size - off);
                let number = (n + 1).to_string();
                let resp = self.request("PUT", Some(name), &[("partNumber", &number), ("uploadId", &upload_id)], None, len,
                                        &mut |f| inner.payload.for_each_slice(key, off, len, |s| f(s)), false, &mut Sink::Discard)?;
                if !(200..300).contains(&resp.status) {
                    return Err(http_error(&resp, "multipart part"));
                }
                etags.push(resp.etag.clone().unwrap_or_default());
            }
            let mut xml = String::from("<CompleteMultipartUpload>");
            for (i, etag) in etags.iter().enumerate() {
                xml.push_str(&format!("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1, etag));
            }
            xml.push_str("</CompleteMultipartUpload>");
            let bytes = xml.into_bytes();
            let mut answer = Vec::new();
            let resp = self.request("POST", Some(name), &[("uploadId", &upload_id)], None, bytes.len() as u64,
                                    &mut |f| f(&bytes), false, &mut Sink::Collect(&mut answer))?;
            if !(200..300).contains(&resp.status) {
                return Err(http_error(&resp, "multipart complete"));
            }
            if xml_tag(&answer, "Code").is_some() {
                let code = xml_tag(&answer, "Code").unwrap_or_default();
                return Err(OpError::new(format!("http_200_{code}"), format!("multipart complete: {code}")));
            }
            Ok(())
        })();
        if let Err(e) = result {
            let _ = self.request("DELETE", Some(name), &[("uploadId", &upload_id)], None, 0, &mut |_| Ok(()), false, &mut Sink::Discard);
            return Err(e);
        }
        Ok(Outcome { bytes: size, first_byte: None })
    }

    fn get(&mut self, name: &str, key: u64, size: u64, range: Option<(u64, u64)>) -> Result<Outcome, OpError> {
        let inner = self.inner.clone();
        let (offset, expected) = range.unwrap_or((0, size));
        let resp = if inner.verify {
            let mut check = |at: u64, data: &[u8]| inner.payload.matches(key, offset + at, data);
            self.request("GET", Some(name), &[], range, 0, &mut |_| Ok(()), false, &mut Sink::Check(&mut check))?
        } else {
            self.request("GET", Some(name), &[], range, 0, &mut |_| Ok(()), false, &mut Sink::Discard)?
        };
        if !(200..300).contains(&resp.status) {
            return Err(http_error(&resp, "GET"));
        }
        if inner.verify {
            if resp.body_bytes != expected {
                return Err(OpError::new("verify_size", format!("GET {name}: {} bytes, expected {expected}", resp.body_bytes)));
            }
            if resp.mismatch {
                return Err(OpError::new("verify", format!("GET {name}: content differs from what was written")));
            }
        }
        Ok(Outcome { bytes: resp.body_bytes, first_byte: Some(resp.first_byte) })
    }

    fn head(&mut self, name: &str, size: u64) -> Result<Outcome, OpError> {
        let resp = self.request("HEAD", Some(name), &[], None, 0, &mut |_| Ok(()), true, &mut Sink::Discard)?;
        if !(200..300).contains(&resp.status) {
            return Err(http_error(&resp, "HEAD"));
        }
        if self.inner.verify && resp.content_length != Some(size) {
            return Err(OpError::new("verify_size", format!("HEAD {name}: size {:?}, expected {size}", resp.content_length)));
        }
        Ok(Outcome { bytes: 0, first_byte: Some(resp.first_byte) })
    }

    fn list(&mut self) -> Result<Outcome, OpError> {
        let inner = self.inner.clone();
        let max_keys = inner.cfg.list_max_keys.to_string();
        let token = self.list_token.take();
        let mut query: Vec<(&str, &str)> = vec![("list-type", "2"), ("max-keys", &max_keys), ("prefix", &inner.cfg.prefix)];
        if let Some(t) = &token {
            query.push(("continuation-token", t));
        }
        let mut body = Vec::new();
        let resp = self.request("GET", None, &query, None, 0, &mut |_| Ok(()), false, &mut Sink::Collect(&mut body))?;
        if !(200..300).contains(&resp.status) {
            return Err(http_error(&resp, "LIST"));
        }
        if xml_tag(&body, "IsTruncated").as_deref() == Some("true") {
            self.list_token = xml_tag(&body, "NextContinuationToken");
        }
        Ok(Outcome { bytes: resp.body_bytes, first_byte: Some(resp.first_byte) })
    }

    fn delete(&mut self, name: &str) -> Result<Outcome, OpError> {
        let resp = self.request("DELETE", Some(name), &[], None, 0, &mut |_| Ok(()), false, &mut Sink::Discard)?;
        if !(200..300).contains(&resp.status) {
            return Err(http_error(&resp, "DELETE"));
        }
        Ok(Outcome { bytes: 0, first_byte: Some(resp.first_byte) })
    }
}

impl Worker for S3Worker {
    fn execute(&mut self, req: &Request) -> Result<Outcome, OpError> {
        let name = self.object_name(req.key);
        let op = self.inner.ops[req.op].clone();
        match op.as_str() {
            "put" => self.put(&name, req.key, req.size),
            "get" => self.get(&name, req.key, req.size, req.range),
            "head" => self.head(&name, req.size),
            "list" => self.list(),
            "delete" => self.delete(&name),
            other => Err(OpError::new("job", format!("unknown op {other}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_tags() {
        let body = b"<Error><Code>NoSuchKey</Code><Message>The key &amp; more</Message></Error>";
        assert_eq!(xml_tag(body, "Code").as_deref(), Some("NoSuchKey"));
        assert_eq!(xml_tag(body, "Message").as_deref(), Some("The key & more"));
        assert_eq!(xml_tag(body, "UploadId"), None);
    }

    #[test]
    fn sha_of_empty() {
        assert_eq!(sigv4::sha256_hex(b""), EMPTY_SHA256);
    }
}
