//! One CQL load worker: its YCSB generators, and one request at a time on its own connections
//! (`conn`), the EXECUTE frames built from the statements' templates (`wire`) into reused buffers.

use super::conn::{Failure, Lanes, Opener, Ring};
use super::wire::{self, Execute};
use super::{timeout, Connected, KvOp, Shared, Templates};
use crate::core::secrets;
use crate::core::payload::Rng;
use crate::core::{OpFailure, Outcome, Request, Worker};
use crate::ycsb::{field_value_into, KeyChooser, Phase};
use scylla::client::session_builder::SessionBuilder;
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
    let level = shared.consistency as u16;
    // each statement prepared on every node; the request path sends its EXECUTE with `values` values
    let prepare = |cql: String, values: u32| {
        let session = &session;
        async move {
            // The driver prepares on every node and has no timeout of its own there (scylla-rust-driver
            // #1332): a node that does not answer would hang the engine until the caller gives up.
            let wait = timeout(cfg.timeout_s);
            let p = tokio::time::timeout(wait, session.prepare(cql)).await
                .map_err(|_| format!("CQL contact points {at}: preparing statements on every node did not finish in \
                                      {:.0} s (timeout_s): is a node not answering?", wait.as_secs_f64()))?
                .map_err(|e| {
                    let msg = one_line(&e.to_string());
                    format!("CQL contact points {at}: keyspace {ks} / table {table}: {msg}")
                })?;
            Ok::<Execute, String>(Execute::new(p.get_id(), p.get_statement(), level, values as u16))
        }
    };
    let marks = vec!["?"; fields.len() + 1].join(", ");
    let all = cfg.ycsb.fieldcount + 1;
    let templates = Templates {
        insert: prepare(format!("INSERT INTO {ks}.{table} (y_id, {}) VALUES ({marks})", fields.join(", ")), all).await?,
        read: prepare(format!("SELECT * FROM {ks}.{table} WHERE y_id = ?"), 1).await?,
        update_one: {
            let mut v = Vec::new();
            for f in &fields {
                v.push(prepare(format!("UPDATE {ks}.{table} SET {f} = ? WHERE y_id = ?"), 2).await?);
            }
            v
        },
        update_all: prepare(format!("UPDATE {ks}.{table} SET {} WHERE y_id = ?",
                                    fields.iter().map(|f| format!("{f} = ?")).collect::<Vec<_>>().join(", ")), all).await?,
        scan: prepare(format!("SELECT * FROM {ks}.{table} WHERE token(y_id) >= token(?) LIMIT ?"), 2).await?,
    };
    // the session (its connections) ends here: the workers open their own
    Ok(Connected { ring: ring(&session), opener: Opener::new(cfg), templates })
}

/// The nodes and their tokens as the session read them.
fn ring(session: &scylla::client::session::Session) -> Ring {
    let cluster = session.get_cluster_state();
    let nodes = cluster.get_nodes_info();
    let addrs = nodes.iter().map(|n| std::net::SocketAddr::new(n.address.ip(), n.address.port())).collect();
    let tokens = cluster.replica_locator().ring().iter()
        .filter_map(|(token, node)| nodes.iter().position(|n| n.host_id == node.host_id).map(|i| (token.value(), i)))
        .collect();
    Ring::new(addrs, tokens)
}

pub struct CqlWorker {
    shared: Arc<Shared>,
    st: State,
}

/// A worker's own: its generators, connections and buffers (reused by every request).
struct State {
    rng: Rng,
    /// Built on first use (a worker of the load phase never needs it).
    chooser: Option<KeyChooser>,
    lanes: Option<Lanes>,
    /// The request frame being built.
    frame: Vec<u8>,
    /// The key's bytes.
    key: Vec<u8>,
    /// Scratch for opening a connection or preparing again.
    scratch: Vec<u8>,
}

impl CqlWorker {
    pub(super) fn new(shared: Arc<Shared>, index: u32) -> Self {
        let rng = Rng::new(shared.seed ^ 0x9C1_0000_0000 ^ index as u64);
        let st = State { rng, chooser: None, lanes: None, frame: Vec::with_capacity(4096), key: Vec::with_capacity(32),
                         scratch: Vec::with_capacity(256) };
        CqlWorker { shared, st }
    }
}

impl State {
    /// The key number of a READ, UPDATE, SCAN or READ-MODIFY-WRITE: YCSB's chooser's, or the
    /// core's when the op's mix entry asks for it.
    fn keynum(&mut self, shared: &Shared, req: &Request<KvOp>) -> i64 {
        if shared.core_keys.contains(&req.op) {
            return req.key as i64;
        }
        let last = shared.last_insert();
        chooser(&mut self.chooser, shared).next_keynum(last, &mut self.rng)
    }

    /// The key of `keynum` into `self.key`.
    fn set_key(&mut self, shared: &Shared, keynum: i64) {
        self.key.clear();
        shared.cfg.ycsb.key_into(keynum, &mut self.key);
    }

    /// `fieldcount` field values appended to the frame; their bytes.
    fn put_values(&mut self, shared: &Shared) -> u64 {
        let len = shared.cfg.ycsb.fieldlength as usize;
        for _ in 0..shared.cfg.ycsb.fieldcount {
            wire::put_value_with(&mut self.frame, |b| field_value_into(len, &mut self.rng, b));
        }
        len as u64 * shared.cfg.ycsb.fieldcount as u64
    }

    /// Sends the frame built in `self.frame` (of statement `ex`) to the key's node: the answer's
    /// (rows, bytes of the rows' fields). A node that lost the statement gets it prepared again.
    fn send(&mut self, conn: &Connected, ex: &Execute, what: &'static str) -> Result<(u64, u64), OpError> {
        wire::finish(&mut self.frame);
        let node = conn.ring.node(&self.key);
        let lanes = self.lanes.get_or_insert_with(|| Lanes::new(conn.ring.nodes.len()));
        let fail = |f: Failure| OpError::Execution { what, kind: f.kind().to_string(), message: one_line(&f.message()) };
        for attempt in 0..2 {
            let (opcode, body) = lanes.call(&conn.ring, &conn.opener, node, &mut self.frame, &mut self.scratch).map_err(fail)?;
            match opcode {
                wire::RESULT => return wire::rows(body).map_err(|m| fail(m.into())),
                wire::ERROR => {
                    let (code, message) = wire::error(body).map_err(|m| fail(m.into()))?;
                    if code != wire::UNPREPARED || attempt > 0 {
                        return Err(fail(Failure::Server(code, message)));
                    }
                    wire::prepare(&mut self.scratch, &ex.cql);
                    let (opcode, body) = lanes.call(&conn.ring, &conn.opener, node, &mut self.scratch.clone(), &mut Vec::new()).map_err(fail)?;
                    if opcode == wire::ERROR {
                        let (code, message) = wire::error(body).map_err(|m| fail(m.into()))?;
                        return Err(fail(Failure::Server(code, message)));
                    }
                }
                other => return Err(fail(Failure::Protocol(format!("an answer with opcode {other}")))),
            }
        }
        unreachable!("the second attempt returns")
    }

    /// A read's rows: no row is `NotFound`.
    fn read(&mut self, conn: &Connected, ex: &Execute, what: &'static str) -> Result<u64, OpError> {
        let (rows, bytes) = self.send(conn, ex, what)?;
        if rows == 0 {
            return Err(OpError::NotFound(String::from_utf8_lossy(&self.key).into_owned()));
        }
        Ok(bytes)
    }

    /// YCSB's update: one random field (writeallfields=false) or all of them.
    fn update(&mut self, shared: &Shared, conn: &Connected) -> Result<u64, OpError> {
        let t = &conn.templates;
        if shared.cfg.ycsb.writeallfields {
            t.update_all.start(&mut self.frame);
            let bytes = self.put_values(shared);
            wire::put_value(&mut self.frame, &self.key);
            self.send(conn, &t.update_all, "UPDATE")?;
            Ok(bytes)
        } else {
            let field = chooser(&mut self.chooser, shared).field(&mut self.rng);
            let len = shared.cfg.ycsb.fieldlength as usize;
            t.update_one[field].start(&mut self.frame);
            wire::put_value_with(&mut self.frame, |b| field_value_into(len, &mut self.rng, b));
            wire::put_value(&mut self.frame, &self.key);
            self.send(conn, &t.update_one[field], "UPDATE")?;
            Ok(len as u64)
        }
    }
}

/// A worker's copy of the run's key chooser, taken on first use (the chooser is built once per
/// process: its zeta sums are computed once, not per worker).
fn chooser<'a>(mine: &'a mut Option<KeyChooser>, shared: &Shared) -> &'a mut KeyChooser {
    mine.get_or_insert_with(|| shared.chooser.get_or_init(|| KeyChooser::new(&shared.cfg.ycsb, shared.last_insert())).clone())
}

impl Worker for CqlWorker {
    type Op = KvOp;
    type Error = OpError;

    fn execute(&mut self, req: &Request<KvOp>) -> Result<Outcome, OpError> {
        let shared = &*self.shared;
        let st = &mut self.st;
        let conn = shared.connected().map_err(|e| OpError::Connect(e.to_string()))?;
        let t = &conn.templates;
        let ycsb = &shared.cfg.ycsb;
        let bytes = match req.op {
            KvOp::Insert => {
                let (keynum, local) = if ycsb.phase == Phase::Load {
                    (req.key as i64, None)
                } else {
                    let local = shared.inserts.next_value();
                    (shared.insert_keynum(local), Some(local))
                };
                st.set_key(shared, keynum);
                t.insert.start(&mut st.frame);
                wire::put_value(&mut st.frame, &st.key);
                let bytes = st.put_values(shared);
                let result = st.send(conn, &t.insert, "INSERT");
                if let Some(local) = local {
                    shared.inserts.acknowledge(local); // YCSB acknowledges in `finally`
                }
                result?;
                bytes
            }
            KvOp::Read => {
                let keynum = st.keynum(shared, req);
                st.set_key(shared, keynum);
                t.read.start(&mut st.frame);
                wire::put_value(&mut st.frame, &st.key);
                st.read(conn, &t.read, "READ")?
            }
            KvOp::Update => {
                let keynum = st.keynum(shared, req);
                st.set_key(shared, keynum);
                st.update(shared, conn)?
            }
            KvOp::Scan => {
                let keynum = st.keynum(shared, req);
                st.set_key(shared, keynum);
                let len = chooser(&mut st.chooser, shared).scan_length(&mut st.rng);
                t.scan.start(&mut st.frame);
                wire::put_value(&mut st.frame, &st.key);
                wire::put_value(&mut st.frame, &(len as i32).to_be_bytes());
                st.read(conn, &t.scan, "SCAN")?
            }
            KvOp::ReadModifyWrite => {
                let keynum = st.keynum(shared, req);
                st.set_key(shared, keynum);
                t.read.start(&mut st.frame);
                wire::put_value(&mut st.frame, &st.key);
                let read = st.read(conn, &t.read, "READ-MODIFY-WRITE read")?;
                read + st.update(shared, conn)?
            }
        };
        Ok(Outcome { bytes, first_byte: None })
    }
}
