//! The CQL protocol (Cassandra, ScyllaDB): YCSB's core workload (`crate::ycsb`). The `scylla`
//! driver's session connects, creates the table if asked, prepares the statements on every node and
//! reads the token ring, then ends; the requests go on the load workers' own connections (`conn`: one
//! blocking connection per worker and node, protocol v4, one request in flight), each an EXECUTE of a
//! prepared statement whose header, id, consistency and flags were serialized once (`wire`): a request
//! copies them and appends its values into a reused buffer, and goes to the node owning its key's
//! token (token-aware, as the driver routed). No runtime, task wake-up or allocation per request: the
//! core's closed and open loops, latency from the intended start, histograms and series are unchanged.
//!
//! Its ops, as YCSB names them (the result's "ops" keys): READ (`SELECT * ... WHERE y_id = ?`,
//! readallfields), UPDATE (one field, writeallfields=false; all fields otherwise), INSERT (all
//! fields), SCAN (`SELECT * ... WHERE token(y_id) >= token(?) LIMIT n`), READ-MODIFY-WRITE (a
//! READ then an UPDATE, timed as one). A READ or SCAN that finds no row is an error of kind
//! "not_found"; errors are counted by kind: the server's ("unavailable", "write_timeout", "read_timeout",
//! "overloaded", ...: `wire::error_kind`), no answer within timeout_s ("timeout"), a connection that
//! could not be opened or broke ("connection": the next request to that node opens a new one). A node
//! that lost a statement (restarted) has it prepared again and the request retried once; nothing else
//! is retried.
//!
//! The job (the core's fields, then the "cql" section). A cluster that asks who is calling gets
//! "username" and "password" from the job (storbench writes it 0600 in a private directory and removes
//! it when the engine exits; never the command line or the environment); the driver and each worker's
//! connections answer the server's AUTHENTICATE with them (SASL PLAIN, as `PlainTextAuthenticator`). The result's echo of the job
//! leaves both out. Without them, STORBENCH_CQL_USERNAME and STORBENCH_CQL_PASSWORD (the engine run by hand).
//!
//! ```json
//! {"protocol": "cql",
//!  "mix": [{"op": "READ", "weight": 0.5}, {"op": "UPDATE", "weight": 0.5}],   // YCSB's proportions
//!  "ops": 100000,              // this process's operationcount (or "duration_s")
//!  "objects": 1000, "start_key": 0,   // load phase: insertcount and insertstart (INSERT keys once, in order)
//!  "load": {"model": "closed", "concurrency": 16},
//!  "cql": {"contact_points": ["127.0.0.1:9042", "127.0.0.2:9042"],
//!          "keyspace": "storbench_run", "table": "usertable",
//!          "username": "storbench", "password": "...",   // both or neither
//!          "consistency": "ONE",          // ANY ONE TWO THREE QUORUM ALL LOCAL_QUORUM EACH_QUORUM LOCAL_ONE
//!          "connect_timeout_s": 5, "timeout_s": 12, "runtime_threads": 2,
//!          "create_table": null,          // {"replication_factor": 1}: CREATE ... IF NOT EXISTS first
//!          "tls": null,                   // {"ca_file": "/abs/ca.pem"} or {"ca_file": null}: TLS, see below
//!          "ycsb": {"phase": "run", "recordcount": 1000, "requestdistribution": "zipfian", ...}}}
//! ```
//!
//! "tls" absent or null: every connection is plain TCP. {"ca_file": PATH}: every connection (the driver
//! session's and the request path's) speaks TLS and the server's certificate chain must lead to a CA of PATH
//! (absolute; a PEM file of one or more certificates); {"ca_file": null} ({} too): to a CA of the system's trust
//! store (/etc/ssl/certs; $SSL_CERT_FILE, $SSL_CERT_DIR). The certificate must name the node: a contact point
//! given as an IP address by that address (an IP SAN), one given as a host name by that name (a DNS SAN), any
//! other node of the ring by its address. A bad "tls" is one fatal line before anything connects; a node that
//! refuses the handshake (a certificate another CA signed, for another name, no TLS on the port) is one fatal
//! line naming the node, what failed and what the chain was checked against (`tls`).
//!
//! The "ycsb" section is `crate::ycsb::YcsbConfig` (its doc lists the properties). In the load
//! phase the mix is `[{"op": "INSERT", "keys": "once"}]`: the core hands out the key numbers
//! start_key.. in order, striped over the fan-out's processes, each once (`objects` must be
//! insertcount and `start_key` insertstart; with "ops" at insertcount every process of a fan-out
//! ends when its stripe is written). In the run phase the keys come from YCSB's key chooser; a run-phase INSERT takes
//! the next number of this process's acknowledged insert counter (numbers from recordcount on,
//! striped over processes as well, so processes never insert the same key; a process knows only
//! its own acknowledged inserts, so in a fan-out a read of a recent key may rarely find another
//! process's insert not yet done: a "not_found"). A run-phase mix
//! entry with "keys": "sequential" or "once" takes the core's key numbers (start_key.., striped)
//! instead of YCSB's chooser: `[{"op": "READ", "keys": "once"}]` reads every loaded key once.

mod conn;
mod error;
mod mux;
mod tls;
mod wire;
mod worker;

#[cfg(test)]
use error::OpError;
pub use worker::CqlWorker;

use crate::core::job::KeyOrder;
use crate::core::{mux_group, operations, Error, Job, JobError, MuxOf, Protocol};
use crate::ycsb::{AckCounter, KeyChooser, Phase, YcsbConfig};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

operations! {
    /// YCSB's operations, by their YCSB names.
    pub enum KvOp {
        Read as "READ" => Random,
        Update as "UPDATE" => Random,
        Insert as "INSERT" => Sequential,
        Scan as "SCAN" => Random,
        ReadModifyWrite as "READ-MODIFY-WRITE" => Random,
    }
}

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
    pub tls: Option<tls::TlsSection>,
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

/// A consistency level by its CQL name.
pub fn consistency(name: &str) -> Option<scylla::frame::types::Consistency> {
    use scylla::frame::types::Consistency as C;
    Some(match name.to_ascii_uppercase().as_str() {
        "ANY" => C::Any,
        "ONE" => C::One,
        "TWO" => C::Two,
        "THREE" => C::Three,
        "QUORUM" => C::Quorum,
        "ALL" => C::All,
        "LOCAL_QUORUM" => C::LocalQuorum,
        "EACH_QUORUM" => C::EachQuorum,
        "LOCAL_ONE" => C::LocalOne,
        _ => return None,
    })
}

/// A CQL identifier storbench accepts unquoted: a letter, then letters, digits, underscores (≤ 48).
pub fn plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && name.len() <= 48
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The statements' EXECUTE frames up to their values (the request path's).
pub struct Templates {
    pub insert: wire::Execute,
    pub read: wire::Execute,
    pub update_one: Vec<wire::Execute>,
    pub update_all: wire::Execute,
    pub scan: wire::Execute,
}

/// What the driver session found (it connects, creates the table, prepares, reads the ring, and ends):
/// requests go on the workers' own connections (`conn`).
pub struct Connected {
    pub templates: Templates,
    pub ring: conn::Ring,
    pub opener: conn::Opener,
}

/// What the workers share.
pub struct Shared {
    pub cfg: CqlConfig,
    pub consistency: scylla::frame::types::Consistency,
    /// The TLS client every connection uses, when the job asks for TLS.
    pub tls: Option<Arc<tls::Tls>>,
    /// Connected on first use (the preflight, or the first request); an error is kept as text.
    /// (Declared before `rt`: the session is dropped while its runtime still runs.)
    pub conn: OnceLock<Result<Connected, String>>,
    pub rt: tokio::runtime::Runtime,
    /// The run phase's acknowledged insert counter (this process's, in its own numbering).
    pub inserts: AckCounter,
    /// The run phase's key chooser as CoreWorkload.init makes it; each worker takes a copy.
    pub chooser: OnceLock<KeyChooser>,
    /// Ops whose mix entry asks for the core's keys ("keys": "sequential" or "once") instead of
    /// YCSB's key chooser, e.g. reading every loaded key once.
    pub core_keys: Vec<KvOp>,
    pub process_index: i64,
    pub process_count: i64,
    pub seed: u64,
}

pub struct Cql {
    shared: Arc<Shared>,
}

impl Shared {
    /// The session and statements, connecting the first time.
    pub fn connected(&self) -> Result<&Connected, &str> {
        self.conn.get_or_init(|| self.rt.block_on(worker::connect(self))).as_ref().map_err(|e| e.as_str())
    }

    /// A run-phase insert counter value as a key number: recordcount + i * processes + index.
    pub fn insert_keynum(&self, local: i64) -> i64 {
        let rc = self.cfg.ycsb.recordcount;
        rc + (local - rc) * self.process_count + self.process_index
    }

    /// The highest key number every read may choose (the counter's acknowledged limit).
    pub fn last_insert(&self) -> i64 {
        let limit = self.inserts.last_value();
        if limit < self.cfg.ycsb.recordcount {
            limit
        } else {
            self.insert_keynum(limit)
        }
    }
}

impl Protocol for Cql {
    const NAME: &'static str = "cql";
    type Config = CqlConfig;
    type Worker = CqlWorker;

    fn setup(job: &Job<KvOp>, cfg: CqlConfig) -> Result<Self, Error> {
        if cfg.contact_points.is_empty() || cfg.contact_points.iter().any(|c| c.trim().is_empty()) {
            return Err(JobError::Invalid("cql.contact_points must name at least one HOST:PORT").into());
        }
        if !plain_identifier(&cfg.keyspace) {
            return Err(JobError::Invalid(
                "cql.keyspace must be a plain identifier (a letter, then letters, digits, _)",
            )
            .into());
        }
        if !plain_identifier(&cfg.table) {
            return Err(
                JobError::Invalid("cql.table must be a plain identifier (a letter, then letters, digits, _)").into()
            );
        }
        let Some(level) = consistency(&cfg.consistency) else {
            return Err(JobError::Invalid(
                "cql.consistency must be one of ANY ONE TWO THREE QUORUM ALL LOCAL_QUORUM EACH_QUORUM LOCAL_ONE",
            )
            .into());
        };
        if !(cfg.timeout_s > 0.0 && cfg.connect_timeout_s > 0.0) {
            return Err(JobError::Invalid("cql.timeout_s and cql.connect_timeout_s must be > 0").into());
        }
        if cfg.username.is_some() != cfg.password.is_some() || cfg.username.as_deref() == Some("") {
            return Err(
                JobError::Invalid("cql.username and cql.password go together (a role name and its password)").into()
            );
        }
        if let Some(create) = &cfg.create_table {
            if create.replication_factor == 0 {
                return Err(JobError::Invalid("cql.create_table.replication_factor must be at least 1").into());
            }
        }
        cfg.ycsb.validate().map_err(JobError::Invalid)?;
        let tls = match &cfg.tls {
            Some(section) => Some(Arc::new(tls::Tls::new(section, &cfg.contact_points).map_err(Error::protocol)?)),
            None => None,
        };
        if cfg.ycsb.phase == Phase::Load {
            if job.mix.iter().any(|m| m.op != KvOp::Insert || m.keys != Some(KeyOrder::Once)) {
                return Err(JobError::Invalid(
                    "cql: the ycsb load phase's mix is INSERT alone, with \"keys\": \"once\"",
                )
                .into());
            }
            if job.objects as i64 != cfg.ycsb.insertcount() || job.start_key as i64 != cfg.ycsb.insertstart {
                return Err(JobError::Invalid(
                    "cql: in the ycsb load phase objects must be ycsb insertcount and start_key ycsb insertstart",
                )
                .into());
            }
        }
        let threads = match cfg.runtime_threads {
            0 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(4),
            n => n,
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("cql-driver")
            .enable_all()
            .build()
            .map_err(|source| Error::Io { what: "cannot start the CQL driver's runtime".into(), source })?;
        let recordcount = cfg.ycsb.recordcount;
        Ok(Cql {
            shared: Arc::new(Shared {
                consistency: level,
                tls,
                conn: OnceLock::new(),
                rt,
                inserts: AckCounter::new(recordcount),
                chooser: OnceLock::new(),
                core_keys: job
                    .mix
                    .iter()
                    .filter(|m| matches!(m.keys, Some(KeyOrder::Sequential | KeyOrder::Once)))
                    .map(|m| m.op)
                    .collect(),
                process_index: job.process_index as i64,
                process_count: job.process_count as i64,
                seed: job.seed ^ (job.process_index << 40),
                cfg,
            }),
        })
    }

    /// Connects, (creates the table if asked) and prepares the statements: the contact points
    /// answer, take the credentials, and have the keyspace and table.
    fn preflight(&self) -> Result<(), Error> {
        self.shared.connected().map(drop).map_err(|e| Error::protocol(worker::PreflightError(e.to_string())))
    }

    fn worker(&self, index: u32) -> CqlWorker {
        CqlWorker::new(self.shared.clone(), index)
    }

    /// Groups of at most CLIENTS_PER_THREAD workers, each on one thread: one wake-up serves every
    /// answer that came, instead of one thread woken per answer.
    fn multiplexed(&self, workers: u32) -> Vec<MuxOf<Self>> {
        let n = workers.div_ceil(CLIENTS_PER_THREAD).max(1);
        (0..n)
            .map(|g| Box::new(mux::CqlMux::new(self.shared.clone(), &mux_group(g, n, workers))) as MuxOf<Self>)
            .collect()
    }
}

/// The most workers one thread serves (issue 28: the client's CPU was mostly the kernel waking one
/// thread per answer).
const CLIENTS_PER_THREAD: u32 = 64;

pub(crate) fn timeout(secs: f64) -> Duration {
    Duration::from_secs_f64(secs)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tls_tests;
