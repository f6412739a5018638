//! The CQL protocol (Cassandra, ScyllaDB): YCSB's core workload (`crate::ycsb`), with two clients and one seam
//! between them.
//!
//! - The set-up client (`driver`): the `scylla` driver's session, once per process, on the driver's small tokio
//!   runtime, at the preflight or the first request. It connects (TLS, the login), creates the keyspace and table
//!   if asked, prepares every statement on every node, reads the ring, and ends, its connections closed. The
//!   driver speaks what storbench should not write again (topology, schema agreement, preparing everywhere).
//! - The request path (`request`): every request of the load, on the load threads' own connections (a
//!   multiplexed group of workers per thread, one connection per node and group, one request in flight per
//!   worker), each an EXECUTE of a prepared statement over a hand-written protocol v4 wire, token-aware. No
//!   runtime, task wake-up or allocation per request: the driver's per-request cost was most of the client's CPU
//!   (issue 28).
//! - The seam: `driver::Setup` (the statements' ids and texts, the nodes and their tokens), plain data the
//!   request path builds its `request::Connected` from (`Shared::connected`). Both clients take the job's
//!   section and checks (`config`), the one login type (`config::Login`, SASL PLAIN) and TLS (`tls`).
//!
//! The core's closed and open loops, latency from the intended start, histograms and series are the same as
//! for any protocol.
//!
//! Its ops, as YCSB names them (the result's "ops" keys): READ (`SELECT * ... WHERE y_id = ?`,
//! readallfields), UPDATE (one field, writeallfields=false; all fields otherwise), INSERT (all
//! fields), SCAN (`SELECT * ... WHERE token(y_id) >= token(?) LIMIT n`), READ-MODIFY-WRITE (a
//! READ then an UPDATE, timed as one). A READ or SCAN that finds no row is an error of kind
//! "not_found"; errors are counted by kind: the server's ("unavailable", "write_timeout", "read_timeout",
//! "overloaded", ...: `request::wire::error_kind`), no answer within timeout_s ("timeout"), a connection that
//! could not be opened or broke ("connection": the next request to that node opens a new one). A node
//! that lost a statement (restarted) has it prepared again and the request retried once; nothing else
//! is retried.
//!
//! The job (the core's fields, then the "cql" section, `config::CqlConfig`). A cluster that asks who is calling
//! gets "username" and "password" from the job (storbench writes it 0600 in a private directory and removes it
//! when the engine exits; never the command line or the environment); the driver and each connection of the
//! request path answer the server's AUTHENTICATE with them (SASL PLAIN, as `PlainTextAuthenticator`). The
//! result's echo of the job leaves both out. Without them, STORBENCH_CQL_USERNAME and STORBENCH_CQL_PASSWORD
//! (the engine run by hand).
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

mod config;
mod driver;
mod error;
mod request;
mod tls;

pub use config::CqlConfig;
pub use request::worker::CqlWorker;

use crate::core::job::KeyOrder;
use crate::core::{mux_group, operations, Error, Job, JobError, MuxOf, Protocol};
use crate::ycsb::{AckCounter, KeyChooser, Phase};
use config::Login;
use request::conn::Opener;
use request::{Connected, CLIENTS_PER_THREAD};
use std::sync::{Arc, OnceLock};

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

/// What the workers share.
pub struct Shared {
    pub cfg: CqlConfig,
    /// The requests' consistency level (its protocol number).
    pub consistency: u16,
    /// The login both clients answer AUTHENTICATE with, when there is one.
    pub login: Option<Login>,
    /// The TLS client every connection uses, when the job asks for TLS.
    pub tls: Option<Arc<tls::Tls>>,
    /// Set up on first use (the preflight, or the first request); an error is kept as text.
    pub conn: OnceLock<Result<Connected, String>>,
    /// The set-up client's runtime (`driver::runtime`): its session runs and ends within `driver::connect`.
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
    /// The request path's statements, ring and connection opener, the set-up client run the first time.
    pub fn connected(&self) -> Result<&Connected, &str> {
        let set_up = || {
            let setup = self.rt.block_on(driver::connect(&self.cfg, self.tls.as_deref(), self.login.as_ref()))?;
            let opener = Opener::new(&self.cfg, self.tls.clone(), self.login.clone());
            Ok(Connected::new(setup, self.consistency, opener))
        };
        self.conn.get_or_init(set_up).as_ref().map_err(|e| e.as_str())
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

/// The ycsb load phase's checks: INSERT alone, each key of [insertstart, insertstart + insertcount) once.
fn check_load_phase(job: &Job<KvOp>, cfg: &CqlConfig) -> Result<(), JobError> {
    if job.mix.iter().any(|m| m.op != KvOp::Insert || m.keys != Some(KeyOrder::Once)) {
        return Err(JobError::Invalid("cql: the ycsb load phase's mix is INSERT alone, with \"keys\": \"once\""));
    }
    if job.objects as i64 != cfg.ycsb.insertcount() || job.start_key as i64 != cfg.ycsb.insertstart {
        return Err(JobError::Invalid(
            "cql: in the ycsb load phase objects must be ycsb insertcount and start_key ycsb insertstart",
        ));
    }
    Ok(())
}

impl Protocol for Cql {
    const NAME: &'static str = "cql";
    type Config = CqlConfig;
    type Worker = CqlWorker;

    fn setup(job: &Job<KvOp>, cfg: CqlConfig) -> Result<Self, Error> {
        let consistency = cfg.check()?;
        let tls = match &cfg.tls {
            Some(section) => Some(Arc::new(tls::Tls::new(section, &cfg.contact_points).map_err(Error::protocol)?)),
            None => None,
        };
        if cfg.ycsb.phase == Phase::Load {
            check_load_phase(job, &cfg)?;
        }
        let rt = driver::runtime(cfg.runtime_threads)
            .map_err(|source| Error::Io { what: "cannot start the CQL driver's runtime".into(), source })?;
        let recordcount = cfg.ycsb.recordcount;
        Ok(Cql {
            shared: Arc::new(Shared {
                consistency,
                login: cfg.login(),
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

    /// Runs the set-up client: the contact points answer, take the credentials, and have the keyspace and
    /// table (created if asked), and every node prepared the statements.
    fn preflight(&self) -> Result<(), Error> {
        self.shared.connected().map(drop).map_err(|e| Error::protocol(driver::PreflightError(e.to_string())))
    }

    fn worker(&self, index: u32) -> CqlWorker {
        CqlWorker::new(self.shared.clone(), index)
    }

    /// Groups of at most CLIENTS_PER_THREAD workers, each on one thread: one wake-up serves every
    /// answer that came, instead of one thread woken per answer.
    fn multiplexed(&self, workers: u32) -> Vec<MuxOf<Self>> {
        let n = workers.div_ceil(CLIENTS_PER_THREAD).max(1);
        (0..n)
            .map(|g| Box::new(request::mux::CqlMux::new(self.shared.clone(), &mux_group(g, n, workers))) as MuxOf<Self>)
            .collect()
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tls_tests;
