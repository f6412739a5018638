//! One CQL load worker: its YCSB generators, and one request at a time on the shared session.

use super::{timeout, Connected, KvOp, Shared, Statements};
use crate::core::secrets;
use crate::core::payload::Rng;
use crate::core::{OpFailure, Outcome, Request, Worker};
use crate::ycsb::{field_value, KeyChooser, Phase};
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{ExecutionError, RequestAttemptError};
use scylla::statement::prepared::PreparedStatement;
use scylla::value::Row;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// The preflight failed: the contact points, credentials, keyspace or table (one line).
#[derive(Debug)]
pub struct PreflightError(pub String);

impl fmt::Display for PreflightError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PreflightError {}

/// One failed operation, counted by `kind`.
#[derive(Debug)]
pub enum OpError {
    /// The session could not be set up (the message of the first failure).
    Connect(String),
    /// A READ or SCAN found no row for its key.
    NotFound(String),
    Execution { what: &'static str, kind: String, message: String },
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpError::Connect(m) => write!(f, "connect: {m}"),
            OpError::NotFound(key) => write!(f, "no row for key {key}"),
            OpError::Execution { what, message, .. } => write!(f, "{what}: {message}"),
        }
    }
}

impl std::error::Error for OpError {}

impl OpFailure for OpError {
    fn kind(&self) -> Cow<'_, str> {
        match self {
            OpError::Connect(_) => "connect".into(),
            OpError::NotFound(_) => "not_found".into(),
            OpError::Execution { kind, .. } => Cow::Borrowed(kind),
        }
    }
}

/// A driver error's stable kind: the database's error (unavailable, read_timeout, ...) or the
/// driver's (timeout, connection, ...).
pub fn error_kind(e: &ExecutionError) -> String {
    match e {
        ExecutionError::RequestTimeout(_) => "timeout".into(),
        ExecutionError::ConnectionPoolError(_) | ExecutionError::EmptyPlan => "connection".into(),
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => snake(&format!("{db:?}")),
        ExecutionError::LastAttemptError(RequestAttemptError::BrokenConnectionError(_)) => "connection".into(),
        ExecutionError::LastAttemptError(other) => snake(&format!("{other:?}")),
        other => snake(&format!("{other:?}")),
    }
}

/// `ReadTimeout { .. }` -> "read_timeout": the variant name of a Debug text, in snake case.
fn snake(debug: &str) -> String {
    let name: String = debug.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    if out.is_empty() {
        "other".into()
    } else {
        out
    }
}

fn one_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// Builds the session (credentials from storbench's secrets file or the environment), creates the table if asked, prepares
/// the statements. Errors are one line naming the contact points.
pub(super) async fn connect(shared: &Shared) -> Result<Connected, String> {
    let cfg = &shared.cfg;
    let at = cfg.contact_points.join(",");
    let mut builder = SessionBuilder::new()
        .known_nodes(&cfg.contact_points)
        .connection_timeout(timeout(cfg.connect_timeout_s));
    if let Some(user) = secrets::var("STORBENCH_CQL_USERNAME") {
        builder = builder.user(user, secrets::var("STORBENCH_CQL_PASSWORD").unwrap_or_default());
    }
    // the job's login wins: storbench hands it over so (the job file is 0600, in a private directory)
    if let (Some(user), Some(password)) = (&cfg.username, &cfg.password) {
        builder = builder.user(user, &password.0);
    }
    let session = builder.build().await.map_err(|e| format!("CQL contact points {at}: cannot connect: {}", one_line(&e.to_string())))?;
    let (ks, table) = (&cfg.keyspace, &cfg.table);
    if let Some(create) = &cfg.create_table {
        let ddl = [
            format!("CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': {}}}",
                    create.replication_factor),
            format!("CREATE TABLE IF NOT EXISTS {ks}.{table} (y_id varchar PRIMARY KEY, {})",
                    (0..cfg.ycsb.fieldcount).map(|i| format!("field{i} varchar")).collect::<Vec<_>>().join(", ")),
        ];
        for statement in ddl {
            session.query_unpaged(statement, ()).await
                   .map_err(|e| format!("CQL contact points {at}: creating {ks}.{table}: {}", one_line(&e.to_string())))?;
        }
    }
    let fields: Vec<String> = (0..cfg.ycsb.fieldcount).map(|i| format!("field{i}")).collect();
    let at = &at;
    let prepare = |cql: String| {
        let session = &session;
        async move {
            // The driver prepares on every node and has no timeout of its own there (scylla-rust-driver
            // #1332): a node that does not answer would hang the engine until the caller gives up.
            let wait = timeout(cfg.timeout_s);
            let mut p = tokio::time::timeout(wait, session.prepare(cql)).await
                .map_err(|_| format!("CQL contact points {at}: preparing statements on every node did not finish in \
                                      {:.0} s (timeout_s): is a node not answering?", wait.as_secs_f64()))?
                .map_err(|e| {
                    let msg = one_line(&e.to_string());
                    format!("CQL contact points {at}: keyspace {ks} / table {table}: {msg}")
                })?;
            p.set_consistency(shared.consistency);
            p.set_request_timeout(Some(timeout(cfg.timeout_s)));
            Ok::<PreparedStatement, String>(p)
        }
    };
    let marks = vec!["?"; fields.len() + 1].join(", ");
    let statements = Statements {
        insert: prepare(format!("INSERT INTO {ks}.{table} (y_id, {}) VALUES ({marks})", fields.join(", "))).await?,
        read: prepare(format!("SELECT * FROM {ks}.{table} WHERE y_id = ?")).await?,
        update_one: {
            let mut v = Vec::new();
            for f in &fields {
                v.push(prepare(format!("UPDATE {ks}.{table} SET {f} = ? WHERE y_id = ?")).await?);
            }
            v
        },
        update_all: prepare(format!("UPDATE {ks}.{table} SET {} WHERE y_id = ?",
                                    fields.iter().map(|f| format!("{f} = ?")).collect::<Vec<_>>().join(", "))).await?,
        scan: prepare(format!("SELECT * FROM {ks}.{table} WHERE token(y_id) >= token(?) LIMIT ?")).await?,
    };
    Ok(Connected { session, statements })
}

pub struct CqlWorker {
    shared: Arc<Shared>,
    rng: Rng,
    /// Built on first use (a worker of the load phase never needs it).
    chooser: Option<KeyChooser>,
}

impl CqlWorker {
    pub(super) fn new(shared: Arc<Shared>, index: u32) -> Self {
        let rng = Rng::new(shared.seed ^ 0x9C1_0000_0000 ^ index as u64);
        CqlWorker { shared, rng, chooser: None }
    }

    /// The key number of a READ, UPDATE, SCAN or READ-MODIFY-WRITE: YCSB's chooser's, or the
    /// core's when the op's mix entry asks for it.
    fn keynum(&mut self, req: &Request<KvOp>) -> i64 {
        if self.shared.core_keys.contains(&req.op) {
            return req.key as i64;
        }
        let last = self.shared.last_insert();
        chooser(&mut self.chooser, &self.shared).next_keynum(last, &mut self.rng)
    }

    fn values(&mut self) -> Vec<String> {
        let len = self.shared.cfg.ycsb.fieldlength as usize;
        (0..self.shared.cfg.ycsb.fieldcount).map(|_| field_value(len, &mut self.rng)).collect()
    }

    fn field(&mut self) -> usize {
        chooser(&mut self.chooser, &self.shared).field(&mut self.rng)
    }
}

/// A worker's copy of the run's key chooser, taken on first use (the chooser is built once per
/// process: its zeta sums are computed once, not per worker).
fn chooser<'a>(mine: &'a mut Option<KeyChooser>, shared: &Shared) -> &'a mut KeyChooser {
    mine.get_or_insert_with(|| shared.chooser.get_or_init(|| KeyChooser::new(&shared.cfg.ycsb, shared.last_insert())).clone())
}

/// Bytes of the field values of the rows; no row is `NotFound`.
fn rows_bytes(result: scylla::response::query_result::QueryResult, key: &str) -> Result<u64, OpError> {
    let rows = result.into_rows_result().map_err(|e| OpError::Execution { what: "read", kind: "result".into(), message: e.to_string() })?;
    let mut bytes = 0u64;
    let mut n = 0u64;
    let iter = rows.rows::<Row>().map_err(|e| OpError::Execution { what: "read", kind: "result".into(), message: e.to_string() })?;
    for row in iter {
        let row = row.map_err(|e| OpError::Execution { what: "read", kind: "result".into(), message: e.to_string() })?;
        n += 1;
        // the fields' bytes, as YCSB counts them: SELECT * puts the key (y_id) first
        for col in row.columns.iter().skip(1).flatten() {
            if let Some(text) = col.as_text() {
                bytes += text.len() as u64;
            }
        }
    }
    if n == 0 {
        return Err(OpError::NotFound(key.to_string()));
    }
    Ok(bytes)
}

fn failed(what: &'static str) -> impl Fn(ExecutionError) -> OpError {
    move |e| OpError::Execution { what, kind: error_kind(&e), message: one_line(&e.to_string()) }
}

impl Worker for CqlWorker {
    type Op = KvOp;
    type Error = OpError;

    fn execute(&mut self, req: &Request<KvOp>) -> Result<Outcome, OpError> {
        let shared = self.shared.clone();
        let conn = shared.connected().map_err(|e| OpError::Connect(e.to_string()))?;
        let st = &conn.statements;
        let session = &conn.session;
        let ycsb = &shared.cfg.ycsb;
        match req.op {
            KvOp::Insert => {
                let (keynum, local) = if ycsb.phase == Phase::Load {
                    (req.key as i64, None)
                } else {
                    let local = shared.inserts.next_value();
                    (shared.insert_keynum(local), Some(local))
                };
                let key = ycsb.key_name(keynum);
                let values = self.values();
                let bytes = values.iter().map(|v| v.len() as u64).sum();
                let mut row: Vec<&str> = Vec::with_capacity(values.len() + 1);
                row.push(&key);
                row.extend(values.iter().map(String::as_str));
                let result = shared.rt.block_on(session.execute_unpaged(&st.insert, &row));
                if let Some(local) = local {
                    shared.inserts.acknowledge(local); // YCSB acknowledges in `finally`
                }
                result.map_err(failed("INSERT"))?;
                Ok(Outcome { bytes, first_byte: None })
            }
            KvOp::Read => {
                let key = ycsb.key_name(self.keynum(req));
                let result = shared.rt.block_on(session.execute_unpaged(&st.read, (&key,))).map_err(failed("READ"))?;
                Ok(Outcome { bytes: rows_bytes(result, &key)?, first_byte: None })
            }
            KvOp::Update => {
                let key = ycsb.key_name(self.keynum(req));
                let bytes = self.update(&key, st, session)?;
                Ok(Outcome { bytes, first_byte: None })
            }
            KvOp::Scan => {
                let key = ycsb.key_name(self.keynum(req));
                let len = chooser(&mut self.chooser, &shared).scan_length(&mut self.rng);
                let result = shared.rt.block_on(session.execute_unpaged(&st.scan, (&key, len as i32))).map_err(failed("SCAN"))?;
                Ok(Outcome { bytes: rows_bytes(result, &key)?, first_byte: None })
            }
            KvOp::ReadModifyWrite => {
                let key = ycsb.key_name(self.keynum(req));
                let result = shared.rt.block_on(session.execute_unpaged(&st.read, (&key,))).map_err(failed("READ-MODIFY-WRITE read"))?;
                let read = rows_bytes(result, &key)?;
                let written = self.update(&key, st, session)?;
                Ok(Outcome { bytes: read + written, first_byte: None })
            }
        }
    }
}

impl CqlWorker {
    /// YCSB's update: one random field (writeallfields=false) or all of them.
    fn update(&mut self, key: &str, st: &Statements, session: &scylla::client::session::Session) -> Result<u64, OpError> {
        let shared = self.shared.clone();
        if shared.cfg.ycsb.writeallfields {
            let values = self.values();
            let bytes = values.iter().map(|v| v.len() as u64).sum();
            let mut row: Vec<&str> = values.iter().map(String::as_str).collect();
            row.push(key);
            shared.rt.block_on(session.execute_unpaged(&st.update_all, &row)).map_err(failed("UPDATE"))?;
            Ok(bytes)
        } else {
            let field = self.field();
            let value = field_value(shared.cfg.ycsb.fieldlength as usize, &mut self.rng);
            shared.rt.block_on(session.execute_unpaged(&st.update_one[field], (&value, key))).map_err(failed("UPDATE"))?;
            Ok(value.len() as u64)
        }
    }
}
