//! One S3 worker: its keep-alive connection, SigV4-signed requests, and the S3 operations.

use super::error::RequestError;
use super::http::{BodyFn, Conn, Response, Sink};
use super::sigv4::{self, amz_date, canonical_query, now_unix, uri_encode, Signer, EMPTY_SHA256, UNSIGNED};
use super::{ObjectOp, Shared};
use crate::core::{Outcome, Request, Worker};
use std::sync::Arc;

pub struct S3Worker {
    shared: Arc<Shared>,
    signer: Signer,
    conn: Conn,
    list_token: Option<String>,
    stamp: (u64, String, String),
}

pub(super) fn xml_tag(body: &[u8], tag: &str) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&format!("</{tag}>"))? + start;
    Some(xml_unescape(&text[start..end]))
}

fn xml_unescape(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&apos;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// A non-2xx answer (or an S3 error document in a 2xx one) to `what` as a request error.
fn http_error(status: u16, body: &[u8], what: &'static str) -> RequestError {
    RequestError::Http {
        what,
        status,
        code: xml_tag(body, "Code"),
        message: xml_tag(body, "Message").unwrap_or_default(),
    }
}

/// The response if it is 2xx, else its S3 error.
fn success(sent: Result<Response, RequestError>, what: &'static str) -> Result<Response, RequestError> {
    let resp = sent?;
    if (200..300).contains(&resp.status) {
        Ok(resp)
    } else {
        Err(http_error(resp.status, &resp.error_body, what))
    }
}

impl S3Worker {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        let signer = Signer::new(&shared.cfg.access_key, &shared.cfg.secret_key, &shared.cfg.region);
        S3Worker { shared, signer, conn: Conn::new(), list_token: None, stamp: (0, String::new(), String::new()) }
    }

    pub fn object_name(&self, key: u64) -> String {
        format!("{}obj-{:010}", self.shared.cfg.prefix, key)
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
    pub fn request(
        &mut self,
        method: &str,
        key: Option<&str>,
        query: &[(&str, &str)],
        range: Option<(u64, u64)>,
        body_len: u64,
        body: &mut BodyFn,
        head_request: bool,
        sink: &mut Sink,
    ) -> Result<Response, RequestError> {
        let inner = self.shared.clone();
        let cfg = &inner.cfg;
        let authority = inner.ep.authority();
        let (host, path) = if inner.virtual_host {
            (
                format!("{}.{authority}", cfg.bucket),
                format!("/{}", key.map(|k| uri_encode(k, true)).unwrap_or_default()),
            )
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
                    let stale = reused && matches!(e, RequestError::Eof(_) | RequestError::Io { .. }) && attempt == 0;
                    if !stale {
                        return Err(e);
                    }
                }
            }
        }
        unreachable!()
    }

    fn put(&mut self, name: &str, key: u64, size: u64) -> Result<Outcome, RequestError> {
        let cfg_threshold = self.shared.cfg.multipart_threshold;
        if cfg_threshold > 0 && size >= cfg_threshold {
            return self.multipart_put(name, key, size);
        }
        let inner = self.shared.clone();
        let sent = self.request(
            "PUT",
            Some(name),
            &[],
            None,
            size,
            &mut |f| inner.payload.for_each_slice(key, 0, size, |s| f(s)),
            false,
            &mut Sink::Discard,
        );
        let resp = success(sent, "PUT")?;
        Ok(Outcome { bytes: size, first_byte: Some(resp.first_byte) })
    }

    fn multipart_put(&mut self, name: &str, key: u64, size: u64) -> Result<Outcome, RequestError> {
        let inner = self.shared.clone();
        let mut body = Vec::new();
        let sent = self.request(
            "POST",
            Some(name),
            &[("uploads", "")],
            None,
            0,
            &mut |_| Ok(()),
            false,
            &mut Sink::Collect(&mut body),
        );
        success(sent, "multipart initiate")?;
        let upload_id = xml_tag(&body, "UploadId")
            .ok_or_else(|| RequestError::Protocol("multipart initiate: no UploadId".into()))?;
        let part_size = inner.cfg.part_size;
        let parts = size.div_ceil(part_size).max(1);
        let mut etags = Vec::with_capacity(parts as usize);
        let result = (|| -> Result<(), RequestError> {
            for n in 0..parts {
                let off = n * part_size;
                let len = part_size.min(size - off);
                let number = (n + 1).to_string();
                let sent = self.request(
                    "PUT",
                    Some(name),
                    &[("partNumber", &number), ("uploadId", &upload_id)],
                    None,
                    len,
                    &mut |f| inner.payload.for_each_slice(key, off, len, |s| f(s)),
                    false,
                    &mut Sink::Discard,
                );
                let resp = success(sent, "multipart part")?;
                etags.push(resp.etag.clone().unwrap_or_default());
            }
            let mut xml = String::from("<CompleteMultipartUpload>");
            for (i, etag) in etags.iter().enumerate() {
                xml.push_str(&format!("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1, etag));
            }
            xml.push_str("</CompleteMultipartUpload>");
            let bytes = xml.into_bytes();
            let mut answer = Vec::new();
            let sent = self.request(
                "POST",
                Some(name),
                &[("uploadId", &upload_id)],
                None,
                bytes.len() as u64,
                &mut |f| f(&bytes),
                false,
                &mut Sink::Collect(&mut answer),
            );
            let resp = success(sent, "multipart complete")?;
            if xml_tag(&answer, "Code").is_some() {
                return Err(http_error(resp.status, &answer, "multipart complete"));
            }
            Ok(())
        })();
        if let Err(e) = result {
            let _ = self.request(
                "DELETE",
                Some(name),
                &[("uploadId", &upload_id)],
                None,
                0,
                &mut |_| Ok(()),
                false,
                &mut Sink::Discard,
            );
            return Err(e);
        }
        Ok(Outcome { bytes: size, first_byte: None })
    }

    fn get(&mut self, name: &str, key: u64, size: u64, range: Option<(u64, u64)>) -> Result<Outcome, RequestError> {
        let inner = self.shared.clone();
        let (offset, expected) = range.unwrap_or((0, size));
        let sent = if inner.verify {
            let mut check = |at: u64, data: &[u8]| inner.payload.matches(key, offset + at, data);
            self.request("GET", Some(name), &[], range, 0, &mut |_| Ok(()), false, &mut Sink::Check(&mut check))
        } else {
            self.request("GET", Some(name), &[], range, 0, &mut |_| Ok(()), false, &mut Sink::Discard)
        };
        let resp = success(sent, "GET")?;
        if inner.verify {
            if resp.body_bytes != expected {
                return Err(RequestError::VerifySize(format!(
                    "GET {name}: {} bytes, expected {expected}",
                    resp.body_bytes
                )));
            }
            if resp.mismatch {
                return Err(RequestError::Verify(format!("GET {name}: content differs from what was written")));
            }
        }
        Ok(Outcome { bytes: resp.body_bytes, first_byte: Some(resp.first_byte) })
    }

    fn head(&mut self, name: &str, size: u64) -> Result<Outcome, RequestError> {
        let sent = self.request("HEAD", Some(name), &[], None, 0, &mut |_| Ok(()), true, &mut Sink::Discard);
        let resp = success(sent, "HEAD")?;
        if self.shared.verify && resp.content_length != Some(size) {
            return Err(RequestError::VerifySize(format!(
                "HEAD {name}: size {:?}, expected {size}",
                resp.content_length
            )));
        }
        Ok(Outcome { bytes: 0, first_byte: Some(resp.first_byte) })
    }

    fn list(&mut self) -> Result<Outcome, RequestError> {
        let inner = self.shared.clone();
        let max_keys = inner.cfg.list_max_keys.to_string();
        let token = self.list_token.take();
        let mut query: Vec<(&str, &str)> =
            vec![("list-type", "2"), ("max-keys", &max_keys), ("prefix", &inner.cfg.prefix)];
        if let Some(t) = &token {
            query.push(("continuation-token", t));
        }
        let mut body = Vec::new();
        let sent = self.request("GET", None, &query, None, 0, &mut |_| Ok(()), false, &mut Sink::Collect(&mut body));
        let resp = success(sent, "LIST")?;
        if xml_tag(&body, "IsTruncated").as_deref() == Some("true") {
            self.list_token = xml_tag(&body, "NextContinuationToken");
        }
        Ok(Outcome { bytes: resp.body_bytes, first_byte: Some(resp.first_byte) })
    }

    fn delete(&mut self, name: &str) -> Result<Outcome, RequestError> {
        let sent = self.request("DELETE", Some(name), &[], None, 0, &mut |_| Ok(()), false, &mut Sink::Discard);
        let resp = success(sent, "DELETE")?;
        Ok(Outcome { bytes: 0, first_byte: Some(resp.first_byte) })
    }
}

impl Worker for S3Worker {
    type Op = ObjectOp;
    type Error = RequestError;

    fn execute(&mut self, req: &Request<ObjectOp>) -> Result<Outcome, RequestError> {
        let name = self.object_name(req.key);
        match req.op {
            ObjectOp::Put => self.put(&name, req.key, req.size),
            ObjectOp::Get => self.get(&name, req.key, req.size, req.range),
            ObjectOp::Head => self.head(&name, req.size),
            ObjectOp::List => self.list(),
            ObjectOp::Delete => self.delete(&name),
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
