//! AWS Signature Version 4 for S3 requests (header-based), with the signing key cached per day.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

type HmacSha256 = Hmac<Sha256>;

pub const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
pub const UNSIGNED: &str = "UNSIGNED-PAYLOAD";

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(key).expect("hmac key");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// RFC 3986 encoding as SigV4 wants it; `keep_slash` for paths.
pub fn uri_encode(text: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            b'/' if keep_slash => out.push('/'),
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// (YYYYMMDD'T'HHMMSS'Z', YYYYMMDD) for a Unix time in seconds.
pub fn amz_date(unix: u64) -> (String, String) {
    let days = (unix / 86400) as i64;
    let secs = unix % 86400;
    // civil from days (Howard Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    let date = format!("{y:04}{m:02}{d:02}");
    let stamp = format!("{date}T{:02}{:02}{:02}Z", secs / 3600, (secs / 60) % 60, secs % 60);
    (stamp, date)
}

pub struct Signer {
    access_key: String,
    secret_key: String,
    region: String,
    cached: Option<(String, [u8; 32])>,
}

impl Signer {
    pub fn new(access_key: &str, secret_key: &str, region: &str) -> Self {
        Signer { access_key: access_key.into(), secret_key: secret_key.into(), region: region.into(), cached: None }
    }

    fn signing_key(&mut self, date: &str) -> [u8; 32] {
        if let Some((d, k)) = &self.cached {
            if d == date {
                return *k;
            }
        }
        let k_date = hmac(format!("AWS4{}", self.secret_key).as_bytes(), date.as_bytes());
        let k_region = hmac(&k_date, self.region.as_bytes());
        let k_service = hmac(&k_region, b"s3");
        let key = hmac(&k_service, b"aws4_request");
        self.cached = Some((date.to_string(), key));
        key
    }

    /// The Authorization header value. `query` is already canonical (sorted, encoded);
    /// `headers` are (lower-case name, trimmed value) pairs sorted by name, including host,
    /// x-amz-content-sha256 and x-amz-date.
    #[allow(clippy::too_many_arguments)] // SigV4's own inputs, each a separate part of the string to sign
    pub fn authorization(
        &mut self,
        method: &str,
        canonical_path: &str,
        query: &str,
        headers: &[(&str, &str)],
        payload_hash: &str,
        stamp: &str,
        date: &str,
    ) -> String {
        let mut canonical = String::with_capacity(256);
        canonical.push_str(method);
        canonical.push('\n');
        canonical.push_str(canonical_path);
        canonical.push('\n');
        canonical.push_str(query);
        canonical.push('\n');
        let mut signed = String::new();
        for (i, (name, value)) in headers.iter().enumerate() {
            canonical.push_str(name);
            canonical.push(':');
            canonical.push_str(value);
            canonical.push('\n');
            if i > 0 {
                signed.push(';');
            }
            signed.push_str(name);
        }
        canonical.push('\n');
        canonical.push_str(&signed);
        canonical.push('\n');
        canonical.push_str(payload_hash);
        let scope = format!("{date}/{}/s3/aws4_request", self.region);
        let to_sign = format!("AWS4-HMAC-SHA256\n{stamp}\n{scope}\n{}", sha256_hex(canonical.as_bytes()));
        let signature = hex(&hmac(&self.signing_key(date), to_sign.as_bytes()));
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
            self.access_key
        )
    }
}

pub fn now_unix() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Canonical query string from (name, value) pairs (encodes and sorts).
pub fn canonical_query(pairs: &[(&str, &str)]) -> String {
    let mut encoded: Vec<(String, String)> =
        pairs.iter().map(|(k, v)| (uri_encode(k, false), uri_encode(v, false))).collect();
    encoded.sort();
    encoded.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The "GET Object" example of AWS's SigV4 documentation for S3 (header-based auth).
    #[test]
    fn aws_documented_get_object_example() {
        let mut signer = Signer::new("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "us-east-1");
        let auth = signer.authorization(
            "GET",
            "/test.txt",
            "",
            &[
                ("host", "examplebucket.s3.amazonaws.com"),
                ("range", "bytes=0-9"),
                ("x-amz-content-sha256", EMPTY_SHA256),
                ("x-amz-date", "20130524T000000Z"),
            ],
            EMPTY_SHA256,
            "20130524T000000Z",
            "20130524",
        );
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    /// The "GET Bucket (List Objects)" example: a canonical query string with two parameters.
    #[test]
    fn aws_documented_list_objects_example() {
        let mut signer = Signer::new("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "us-east-1");
        let query = canonical_query(&[("max-keys", "2"), ("prefix", "J")]);
        assert_eq!(query, "max-keys=2&prefix=J");
        let auth = signer.authorization(
            "GET",
            "/",
            &query,
            &[
                ("host", "examplebucket.s3.amazonaws.com"),
                ("x-amz-content-sha256", EMPTY_SHA256),
                ("x-amz-date", "20130524T000000Z"),
            ],
            EMPTY_SHA256,
            "20130524T000000Z",
            "20130524",
        );
        assert!(auth.ends_with("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"), "{auth}");
    }

    #[test]
    fn dates_and_encoding() {
        assert_eq!(amz_date(1369353600), ("20130524T000000Z".to_string(), "20130524".to_string()));
        assert_eq!(amz_date(951782400 + 3661).0, "20000229T010101Z");
        assert_eq!(uri_encode("a b/c~d*", true), "a%20b/c~d%2A");
        assert_eq!(uri_encode("a/b", false), "a%2Fb");
        assert_eq!(canonical_query(&[("uploads", "")]), "uploads=");
    }
}
