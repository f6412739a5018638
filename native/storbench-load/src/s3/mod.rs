//! The S3 protocol: PUT (single and multipart), GET (whole and ranged), HEAD, LIST, DELETE,
//! signed with SigV4, path-style or virtual-host addressing, one keep-alive connection per worker.
//! Its job section is "s3" (`S3Config`); its ops are `ObjectOp`.

mod error;
pub mod http;
pub mod sigv4;
#[cfg(feature = "tls")]
pub mod tls;
mod worker;

pub use error::{PreflightError, Refusal, RequestError};
pub use worker::S3Worker;

use crate::core::payload::Payload;
use crate::core::{operations, Error, Job, JobError, Protocol};
use http::{Endpoint, Sink};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
use worker::xml_tag;

operations! {
    /// The S3 operations, by their names in the job's mix.
    pub enum ObjectOp {
        Put => Sequential,
        Get => Random,
        Head => Random,
        List => Random,
        Delete => Consume,
    }
}

/// "path" (http://host/bucket/key) or "virtual" (http://bucket.host/key).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Addressing {
    #[default]
    Path,
    Virtual,
}

/// "unsigned" (UNSIGNED-PAYLOAD, no hashing of bodies) or "signed" (SHA-256 of every body).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PayloadSigning {
    #[default]
    Unsigned,
    Signed,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct S3Config {
    pub endpoint: String,
    #[serde(default = "default_region")]
    pub region: String,
    /// The credentials: from `ACCESS_KEY_ENV`/`SECRET_KEY_ENV` (storbench passes them so, never in
    /// the job file); a job's own keys are used only when those are unset. Never echoed into the result.
    #[serde(default, skip_serializing)]
    pub access_key: String,
    #[serde(default, skip_serializing)]
    pub secret_key: String,
    pub bucket: String,
    /// Object keys are `<prefix>obj-<key number>`; LIST lists this prefix.
    #[serde(default)]
    pub prefix: String,
    #[serde(default)]
    pub addressing: Addressing,
    #[serde(default)]
    pub payload_signing: PayloadSigning,
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

/// The variables the credentials come from (`core::secrets`: storbench's secrets file, else the environment).
pub const ACCESS_KEY_ENV: &str = "STORBENCH_S3_ACCESS_KEY";
pub const SECRET_KEY_ENV: &str = "STORBENCH_S3_SECRET_KEY";

/// The section with its credentials from `lookup` (the environment): both variables set win over
/// the job's keys; neither there nor in the job is refused.
fn with_credentials(mut cfg: S3Config, lookup: impl Fn(&str) -> Option<String>) -> Result<S3Config, JobError> {
    if let (Some(key), Some(secret)) = (lookup(ACCESS_KEY_ENV), lookup(SECRET_KEY_ENV)) {
        (cfg.access_key, cfg.secret_key) = (key, secret);
    } else if cfg.access_key.is_empty() && cfg.secret_key.is_empty() {
        return Err(JobError::Invalid("no S3 credentials: set STORBENCH_S3_ACCESS_KEY and STORBENCH_S3_SECRET_KEY"));
    }
    Ok(cfg)
}

fn default_region() -> String {
    "us-east-1".into()
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

/// What the workers share.
struct Shared {
    cfg: S3Config,
    ep: Endpoint,
    payload: Payload,
    verify: bool,
    signed: bool,
    virtual_host: bool,
}

pub struct S3 {
    shared: Arc<Shared>,
}

impl Protocol for S3 {
    const NAME: &'static str = "s3";
    type Config = S3Config;
    type Worker = S3Worker;

    fn setup(job: &Job<ObjectOp>, cfg: S3Config) -> Result<Self, Error> {
        let cfg = with_credentials(cfg, crate::core::secrets::var)?;
        if cfg.bucket.is_empty() {
            return Err(JobError::Invalid("s3.bucket is empty").into());
        }
        if cfg.multipart_threshold > 0 && cfg.part_size < 5 << 20 {
            return Err(JobError::Invalid("s3.part_size must be at least 5 MiB (S3's minimum part)").into());
        }
        let ep = Endpoint::parse(
            &cfg.endpoint,
            Duration::from_secs_f64(cfg.connect_timeout_s),
            Duration::from_secs_f64(cfg.timeout_s),
            cfg.insecure_tls,
        )
        .map_err(Error::protocol)?;
        Ok(S3 {
            shared: Arc::new(Shared {
                ep,
                payload: Payload::new(job.payload_seed),
                verify: job.verify,
                signed: cfg.payload_signing == PayloadSigning::Signed,
                virtual_host: cfg.addressing == Addressing::Virtual,
                cfg,
            }),
        })
    }

    /// Lists one key of the bucket: the endpoint answers, takes the credentials, has the bucket.
    fn preflight(&self) -> Result<(), Error> {
        let mut w = self.worker(u32::MAX);
        let cfg = &self.shared.cfg;
        let mut body = Vec::new();
        let result = w.request(
            "GET",
            None,
            &[("list-type", "2"), ("max-keys", "1"), ("prefix", &cfg.prefix)],
            None,
            0,
            &mut |_| Ok(()),
            false,
            &mut Sink::Collect(&mut body),
        );
        let endpoint = cfg.endpoint.clone();
        let failure = match result {
            Ok(resp) if (200..300).contains(&resp.status) => return Ok(()),
            Err(RequestError::Timeout(_)) => PreflightError::Timeout { endpoint, seconds: cfg.timeout_s },
            Err(cause) => PreflightError::Request { endpoint, cause },
            Ok(resp) => {
                let code = xml_tag(&resp.error_body, "Code").unwrap_or_default();
                let message = xml_tag(&resp.error_body, "Message").unwrap_or_default();
                let refusal = match (resp.status, code.as_str()) {
                    (401 | 403, _) | (_, "InvalidAccessKeyId" | "SignatureDoesNotMatch" | "AccessDenied") => {
                        Refusal::Credentials
                    }
                    (404, _) | (_, "NoSuchBucket") => Refusal::NoBucket,
                    _ => Refusal::Other,
                };
                PreflightError::Refused {
                    endpoint,
                    bucket: cfg.bucket.clone(),
                    refusal,
                    status: resp.status,
                    code,
                    message,
                }
            }
        };
        Err(Error::protocol(failure))
    }

    fn worker(&self, _index: u32) -> S3Worker {
        S3Worker::new(self.shared.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{job, KeyUse, OpFailure as _, Operation as _};
    use serde_json::json;
    use std::path::Path;

    fn s3_job(extra: serde_json::Value) -> Result<(Job<ObjectOp>, S3Config), JobError> {
        let mut doc = json!({"protocol": "s3", "mix": [{"op": "put"}], "ops": 1,
                             "s3": {"endpoint": "http://127.0.0.1:9", "access_key": "AK", "secret_key": "SK",
                                    "bucket": "b"}});
        for (k, v) in extra.as_object().unwrap() {
            doc[k] = v.clone();
        }
        job::parse(doc, S3::NAME, Path::new("j.json"))
    }

    #[test]
    fn ops_parse_by_their_job_names_and_unknown_ones_are_refused() {
        for (name, op) in [
            ("put", ObjectOp::Put),
            ("get", ObjectOp::Get),
            ("head", ObjectOp::Head),
            ("list", ObjectOp::List),
            ("delete", ObjectOp::Delete),
        ] {
            assert_eq!(serde_json::from_value::<ObjectOp>(json!(name)).unwrap(), op);
            assert_eq!(op.name(), name);
            assert_eq!(serde_json::to_value(op).unwrap(), json!(name));
        }
        assert_eq!(ObjectOp::ALL.len(), 5);
        let err = serde_json::from_value::<ObjectOp>(json!("post")).unwrap_err().to_string();
        assert_eq!(err, "unknown op \"post\"; allowed: put, get, head, list, delete");
        assert!(serde_json::from_value::<ObjectOp>(json!("PUT")).is_err());
        assert!(serde_json::from_value::<ObjectOp>(json!(1)).is_err());
        let err = s3_job(json!({"mix": [{"op": "get"}, {"op": "copy"}]})).unwrap_err().to_string();
        assert_eq!(err, "job j.json: unknown op \"copy\"; allowed: put, get, head, list, delete");
        assert_eq!(
            [ObjectOp::Put, ObjectOp::Get, ObjectOp::Delete].map(ObjectOp::keys),
            [KeyUse::Sequential, KeyUse::Random, KeyUse::Consume]
        );
    }

    #[test]
    fn the_section_defaults_and_never_echoes_secrets() {
        let (job, cfg) = s3_job(json!({})).unwrap();
        assert_eq!((cfg.addressing, cfg.payload_signing), (Addressing::Path, PayloadSigning::Unsigned));
        let echoed = job::echo(&job, S3::NAME, &cfg);
        assert_eq!(echoed["protocol"], "s3");
        assert_eq!(echoed["s3"]["addressing"], "path");
        assert_eq!(echoed["s3"]["region"], "us-east-1");
        assert!(echoed["s3"].get("access_key").is_none() && echoed["s3"].get("secret_key").is_none());
        let (_, cfg) = s3_job(json!({"s3": {"endpoint": "http://h", "access_key": "", "secret_key": "", "bucket": "b",
                                            "addressing": "virtual", "payload_signing": "signed"}}))
        .unwrap();
        assert_eq!((cfg.addressing, cfg.payload_signing), (Addressing::Virtual, PayloadSigning::Signed));
        let err = s3_job(json!({"s3": {"endpoint": "http://h", "access_key": "", "secret_key": "", "bucket": "b",
                                       "addressing": "dns"}}))
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("job j.json: s3: unknown variant `dns`, expected `path` or `virtual`"), "{err}");
    }

    #[test]
    fn credentials_come_from_the_environment_and_a_job_needs_none() {
        let env = |key: Option<&'static str>, secret: Option<&'static str>| {
            move |name: &str| match name {
                ACCESS_KEY_ENV => key.map(String::from),
                SECRET_KEY_ENV => secret.map(String::from),
                _ => None,
            }
        };
        let keyless = json!({"endpoint": "http://127.0.0.1:9", "bucket": "b"});
        let (_, cfg) = s3_job(json!({ "s3": keyless })).unwrap(); // the job storbench writes holds no keys
        let cfg = with_credentials(cfg, env(Some("AK-env"), Some("SK-env"))).unwrap();
        assert_eq!((cfg.access_key.as_str(), cfg.secret_key.as_str()), ("AK-env", "SK-env"));
        let (_, cfg) = s3_job(json!({})).unwrap(); // a job's own keys: the environment still wins
        let from_env = with_credentials(cfg.clone(), env(Some("AK-env"), Some("SK-env"))).unwrap();
        assert_eq!((from_env.access_key.as_str(), from_env.secret_key.as_str()), ("AK-env", "SK-env"));
        let from_job = with_credentials(cfg.clone(), env(Some("AK-env"), None)).unwrap(); // half set: not used
        assert_eq!((from_job.access_key.as_str(), from_job.secret_key.as_str()), ("AK", "SK"));
        let (_, cfg) = s3_job(json!({ "s3": keyless })).unwrap();
        let err = with_credentials(cfg, env(None, None)).unwrap_err().to_string();
        assert_eq!(err, "job: no S3 credentials: set STORBENCH_S3_ACCESS_KEY and STORBENCH_S3_SECRET_KEY");
    }

    #[test]
    fn setup_refuses_a_bad_section() {
        let setup = |s3: serde_json::Value| {
            let (job, cfg) = s3_job(json!({ "s3": s3 })).unwrap();
            S3::setup(&job, cfg).err().map(|e| e.to_string())
        };
        let section = |extra: serde_json::Value| {
            let mut s3 = json!({"endpoint": "http://127.0.0.1:9", "access_key": "a", "secret_key": "s", "bucket": "b"});
            for (k, v) in extra.as_object().unwrap() {
                s3[k] = v.clone();
            }
            s3
        };
        assert_eq!(setup(section(json!({}))), None);
        assert_eq!(setup(section(json!({"bucket": ""}))).unwrap(), "job: s3.bucket is empty");
        assert_eq!(
            setup(section(json!({"multipart_threshold": 1, "part_size": 1024}))).unwrap(),
            "job: s3.part_size must be at least 5 MiB (S3's minimum part)"
        );
        assert_eq!(
            setup(section(json!({"endpoint": "ftp://h"}))).unwrap(),
            "endpoint \"ftp://h\": expected http://host:port or https://host:port"
        );
        assert_eq!(setup(section(json!({"endpoint": "http://h:port"}))).unwrap(), "endpoint http://h:port: bad port");
        assert_eq!(setup(section(json!({"endpoint": "http://:80"}))).unwrap(), "endpoint http://:80: no host");
    }

    #[test]
    fn request_errors_have_stable_kinds_and_one_line_messages() {
        let http = |code: Option<&str>, message: &str| RequestError::Http {
            what: "GET",
            status: 404,
            code: code.map(String::from),
            message: message.into(),
        };
        let e = http(Some("NoSuchKey"), "The specified key does not exist.");
        assert_eq!(
            (e.kind().as_ref(), e.to_string().as_str()),
            ("http_404_NoSuchKey", "GET: HTTP 404 NoSuchKey The specified key does not exist.")
        );
        let e = http(None, "");
        assert_eq!((e.kind().as_ref(), e.to_string().as_str()), ("http_404", "GET: HTTP 404"));
        let timeout = RequestError::io(std::io::ErrorKind::WouldBlock.into(), "receive");
        assert_eq!((timeout.kind().as_ref(), timeout.to_string().as_str()), ("timeout", "receive: timed out"));
        let reset = RequestError::io(std::io::Error::other("reset"), "send");
        assert_eq!((reset.kind().as_ref(), reset.to_string().as_str()), ("io", "send: reset"));
        assert_eq!(RequestError::Verify("GET k: differs".into()).kind(), "verify");
        assert_eq!(RequestError::VerifySize("GET k: 1 bytes".into()).kind(), "verify_size");
        assert_eq!(RequestError::Eof("connection closed".into()).kind(), "eof");
    }

    #[test]
    fn preflight_failures_name_the_endpoint_and_the_cause() {
        let endpoint = "http://s3:8333".to_string();
        let refused = |refusal, status, code: &str| {
            PreflightError::Refused {
                endpoint: endpoint.clone(),
                bucket: "b".into(),
                refusal,
                status,
                code: code.into(),
                message: "Denied".into(),
            }
            .to_string()
        };
        assert_eq!(
            refused(Refusal::Credentials, 403, "AccessDenied"),
            "S3 endpoint http://s3:8333 refused the credentials for bucket b (HTTP 403 AccessDenied: Denied)"
        );
        assert_eq!(
            refused(Refusal::NoBucket, 404, ""),
            "S3 endpoint http://s3:8333: bucket b does not exist (HTTP 404: Denied)"
        );
        assert_eq!(
            refused(Refusal::Other, 500, "InternalError"),
            "S3 endpoint http://s3:8333: listing bucket b failed (HTTP 500 InternalError: Denied)"
        );
        let timeout = PreflightError::Timeout { endpoint: endpoint.clone(), seconds: 60.0 };
        assert_eq!(timeout.to_string(), "S3 endpoint http://s3:8333 did not answer within 60 s");
        let cause = RequestError::Connect {
            host: "s3".into(),
            port: 8333,
            source: std::io::ErrorKind::ConnectionRefused.into(),
        };
        let unreachable = PreflightError::Request { endpoint, cause }.to_string();
        assert!(unreachable.starts_with("S3 endpoint http://s3:8333: cannot connect to s3:8333: "), "{unreachable}");
    }

    #[test]
    fn preflight_of_an_unreachable_endpoint_is_fatal() {
        let (job, cfg) = s3_job(json!({})).unwrap();
        let s3 = S3::setup(&job, cfg).unwrap();
        let err = s3.preflight().unwrap_err().to_string();
        assert!(err.starts_with("S3 endpoint http://127.0.0.1:9: cannot connect to 127.0.0.1:9"), "{err}");
    }
}
