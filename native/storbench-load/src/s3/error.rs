//! S3's errors: of one request (counted by kind in the result), of the endpoint setting, and of
//! the preflight check (both fatal).

use crate::core::OpFailure;
use std::borrow::Cow;
use std::fmt;
use std::io;

/// One request failed. `kind` names it in the result's "errors".
#[derive(Debug)]
pub enum RequestError {
    Connect {
        host: String,
        port: u16,
        source: io::Error,
    },
    /// The socket timed out while doing `0` ("send", "receive").
    Timeout(&'static str),
    Io {
        what: &'static str,
        source: io::Error,
    },
    /// The server closed the connection early: where.
    Eof(String),
    /// The answer is not HTTP (or not the S3 answer expected).
    Protocol(String),
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    Tls(String),
    /// A non-2xx answer (or a 200 carrying an S3 error document) to `what`, with its S3 error code.
    Http {
        what: &'static str,
        status: u16,
        code: Option<String>,
        message: String,
    },
    /// verify: the object's size is not the size written.
    VerifySize(String),
    /// verify: the object's content is not the content written.
    Verify(String),
}

impl RequestError {
    pub fn io(source: io::Error, what: &'static str) -> Self {
        match source.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => RequestError::Timeout(what),
            _ => RequestError::Io { what, source },
        }
    }
}

impl OpFailure for RequestError {
    fn kind(&self) -> Cow<'_, str> {
        Cow::Borrowed(match self {
            RequestError::Connect { .. } => "connect",
            RequestError::Timeout(_) => "timeout",
            RequestError::Io { .. } => "io",
            RequestError::Eof(_) => "eof",
            RequestError::Protocol(_) => "protocol",
            RequestError::Tls(_) => "tls",
            RequestError::VerifySize(_) => "verify_size",
            RequestError::Verify(_) => "verify",
            RequestError::Http { status, code: Some(code), .. } => return Cow::Owned(format!("http_{status}_{code}")),
            RequestError::Http { status, code: None, .. } => return Cow::Owned(format!("http_{status}")),
        })
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::Connect { host, port, source } => write!(f, "cannot connect to {host}:{port}: {source}"),
            RequestError::Timeout(what) => write!(f, "{what}: timed out"),
            RequestError::Io { what, source } => write!(f, "{what}: {source}"),
            RequestError::Eof(m) | RequestError::Protocol(m) | RequestError::Tls(m) => f.write_str(m),
            RequestError::VerifySize(m) | RequestError::Verify(m) => f.write_str(m),
            RequestError::Http { what, status, code, message } => {
                write!(f, "{what}: HTTP {status}")?;
                for part in [code.as_deref().unwrap_or(""), message].into_iter().filter(|p| !p.is_empty()) {
                    write!(f, " {part}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RequestError::Connect { source, .. } | RequestError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The job's s3.endpoint cannot be used.
#[derive(Debug)]
pub enum EndpointError {
    Scheme(String),
    #[cfg_attr(feature = "tls", allow(dead_code))]
    NoTls(String),
    Port(String),
    NoHost(String),
    Resolve {
        url: String,
        host: String,
        source: io::Error,
    },
}

impl fmt::Display for EndpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndpointError::Scheme(url) => write!(f, "endpoint {url:?}: expected http://host:port or https://host:port"),
            EndpointError::NoTls(url) => {
                write!(f, "endpoint {url}: this storbench-load was built without TLS (cargo feature \"tls\")")
            }
            EndpointError::Port(url) => write!(f, "endpoint {url}: bad port"),
            EndpointError::NoHost(url) => write!(f, "endpoint {url}: no host"),
            EndpointError::Resolve { url, host, source } => {
                write!(f, "endpoint {url}: cannot resolve {host}: {source}")
            }
        }
    }
}

impl std::error::Error for EndpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EndpointError::Resolve { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// How the endpoint answered the preflight listing with an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Credentials,
    NoBucket,
    Other,
}

/// The preflight check (list one key of the bucket) failed: the load does not start.
#[derive(Debug)]
pub enum PreflightError {
    /// No answer: cannot connect, connection broken...
    Request {
        endpoint: String,
        cause: RequestError,
    },
    Timeout {
        endpoint: String,
        seconds: f64,
    },
    Refused {
        endpoint: String,
        bucket: String,
        refusal: Refusal,
        status: u16,
        code: String,
        message: String,
    },
}

impl fmt::Display for PreflightError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PreflightError::Request { endpoint, cause } => write!(f, "S3 endpoint {endpoint}: {cause}"),
            PreflightError::Timeout { endpoint, seconds } => {
                write!(f, "S3 endpoint {endpoint} did not answer within {seconds:.0} s")
            }
            PreflightError::Refused { endpoint, bucket, refusal, status, code, message } => {
                let mut detail = format!("HTTP {status}");
                if !code.is_empty() {
                    detail = format!("{detail} {code}");
                }
                if !message.is_empty() {
                    detail = format!("{detail}: {message}");
                }
                match refusal {
                    Refusal::Credentials => {
                        write!(f, "S3 endpoint {endpoint} refused the credentials for bucket {bucket} ({detail})")
                    }
                    Refusal::NoBucket => write!(f, "S3 endpoint {endpoint}: bucket {bucket} does not exist ({detail})"),
                    Refusal::Other => write!(f, "S3 endpoint {endpoint}: listing bucket {bucket} failed ({detail})"),
                }
            }
        }
    }
}

impl std::error::Error for PreflightError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PreflightError::Request { cause, .. } => Some(cause),
            _ => None,
        }
    }
}
