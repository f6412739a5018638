//! The job's "cql" section (`CqlConfig`, its checks), and the login both clients answer a cluster's
//! AUTHENTICATE with (`Login`): the driver's session (`driver`) and the request path's connections (`request`).

use super::request::frame::CONSISTENCIES;
use super::tls::TlsSection;
use crate::core::{secrets, JobError};
use crate::ycsb::YcsbConfig;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTable {
    pub replication_factor: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CqlConfig {
    pub contact_points: Vec<String>,
    pub keyspace: String,
    #[serde(default = "default_table")]
    pub table: String,
    #[serde(default = "default_consistency")]
    pub consistency: String,
    #[serde(default = "default_connect")]
    pub connect_timeout_s: f64,
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// Threads of the driver's runtime, which only connects and prepares (0: as many as cores, at most 4).
    #[serde(default)]
    pub runtime_threads: usize,
    #[serde(default)]
    pub create_table: Option<CreateTable>,
    /// TLS on every connection (`tls`): absent or null, plain TCP.
    #[serde(default)]
    pub tls: Option<TlsSection>,
    /// The login (with `password`), when the cluster wants one; never echoed.
    #[serde(default, skip_serializing)]
    pub username: Option<String>,
    #[serde(default, skip_serializing)]
    pub password: Option<Secret>,
    pub ycsb: YcsbConfig,
}

/// A password: read from the job, handed to the driver, never printed (its Debug says so).
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// A role name and its password, as PasswordAuthenticator takes them (SASL PLAIN): the one login type both
/// clients speak.
#[derive(Debug, Clone)]
pub struct Login {
    pub user: String,
    pub password: Secret,
}

fn default_table() -> String {
    "usertable".into()
}
fn default_consistency() -> String {
    "ONE".into()
}
fn default_connect() -> f64 {
    5.0
}
fn default_timeout() -> f64 {
    12.0
}

/// A consistency level's protocol number by its CQL name (any case).
pub fn consistency(name: &str) -> Option<u16> {
    CONSISTENCIES.iter().find(|(known, _)| known.eq_ignore_ascii_case(name)).map(|&(_, code)| code)
}

/// A CQL identifier storbench accepts unquoted: a letter, then letters, digits, underscores (≤ 48).
pub fn plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && name.len() <= 48
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl CqlConfig {
    /// The section's own checks (one line each); its consistency level's protocol number.
    pub fn check(&self) -> Result<u16, JobError> {
        if self.contact_points.is_empty() || self.contact_points.iter().any(|c| c.trim().is_empty()) {
            return Err(JobError::Invalid("cql.contact_points must name at least one HOST:PORT"));
        }
        if !plain_identifier(&self.keyspace) {
            return Err(JobError::Invalid(
                "cql.keyspace must be a plain identifier (a letter, then letters, digits, _)",
            ));
        }
        if !plain_identifier(&self.table) {
            return Err(JobError::Invalid("cql.table must be a plain identifier (a letter, then letters, digits, _)"));
        }
        let Some(level) = consistency(&self.consistency) else {
            return Err(JobError::Invalid(
                "cql.consistency must be one of ANY ONE TWO THREE QUORUM ALL LOCAL_QUORUM EACH_QUORUM LOCAL_ONE",
            ));
        };
        if !(self.timeout_s > 0.0 && self.connect_timeout_s > 0.0) {
            return Err(JobError::Invalid("cql.timeout_s and cql.connect_timeout_s must be > 0"));
        }
        if self.username.is_some() != self.password.is_some() || self.username.as_deref() == Some("") {
            return Err(JobError::Invalid("cql.username and cql.password go together (a role name and its password)"));
        }
        if self.create_table.as_ref().is_some_and(|create| create.replication_factor == 0) {
            return Err(JobError::Invalid("cql.create_table.replication_factor must be at least 1"));
        }
        self.ycsb.validate().map_err(JobError::Invalid)?;
        Ok(level)
    }

    /// The job's login, else the secrets STORBENCH_CQL_USERNAME and STORBENCH_CQL_PASSWORD (`core::secrets`: the
    /// environment when the engine is run by hand); none when neither names a user.
    pub fn login(&self) -> Option<Login> {
        if let (Some(user), Some(password)) = (&self.username, &self.password) {
            return Some(Login { user: user.clone(), password: password.clone() });
        }
        let user = secrets::var("STORBENCH_CQL_USERNAME")?;
        Some(Login { user, password: Secret(secrets::var("STORBENCH_CQL_PASSWORD").unwrap_or_default()) })
    }

    /// How long a connection may take to open (connect_timeout_s).
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.connect_timeout_s)
    }

    /// How long a request (and the driver's preparing) may wait for its answer (timeout_s).
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_s)
    }
}
