//! The set-up client: the `scylla` driver's session, run once per process on the driver's small tokio runtime
//! (`Shared::connected`, at the preflight or the first request). It connects to the contact points (TLS and the
//! login as the job says), creates the keyspace and table if asked (DDL), prepares every statement on every node,
//! reads the ring (the nodes and their tokens), and ends: its connections close with it. What it hands over to
//! the request path (`request`) is a `Setup`: plain data, the statements' ids and texts and the ring.
//!
//! Why two clients: the set-up needs most of the protocol (schema agreement, the cluster's topology and token
//! metadata, preparing on every node, the authenticator's exchange), which the driver speaks and storbench should
//! not write again. The requests need little of it (EXECUTE, its answer) but must cost little per request: the
//! driver's per-request future, task wake-up and allocation were most of the client's CPU (issue 28), so the
//! request path is storbench's own blocking-thread code over a hand-written v4 wire (`request::wire`).

use super::config::{CqlConfig, Login};
use super::error::one_line;
use super::tls::Tls;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use std::fmt;
use std::net::SocketAddr;

/// The preflight failed: the contact points, credentials, keyspace or table (one line).
#[derive(Debug)]
pub struct PreflightError(pub String);

impl fmt::Display for PreflightError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PreflightError {}

/// A statement as the cluster prepared it: its id, its text, how many values it binds.
pub struct Prepared {
    pub id: Vec<u8>,
    pub cql: String,
    pub values: u16,
}

/// YCSB's statements on the job's table, one of each kind (an UPDATE of one field per field).
pub struct Statements<S> {
    pub insert: S,
    pub read: S,
    pub update_one: Vec<S>,
    pub update_all: S,
    pub scan: S,
}

impl<S> Statements<S> {
    /// The same statements, each made into a `T` by `f`.
    pub fn map<T>(self, mut f: impl FnMut(S) -> T) -> Statements<T> {
        Statements {
            insert: f(self.insert),
            read: f(self.read),
            update_one: self.update_one.into_iter().map(&mut f).collect(),
            update_all: f(self.update_all),
            scan: f(self.scan),
        }
    }
}

/// What the set-up hands over to the request path.
pub struct Setup {
    pub statements: Statements<Prepared>,
    /// The nodes the session found, by address.
    pub nodes: Vec<SocketAddr>,
    /// The ring: (token, index into nodes).
    pub tokens: Vec<(i64, usize)>,
}

/// The set-up client's runtime: `threads` threads (0: as many as cores, at most 4). It only connects and prepares.
pub fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    let threads = match threads {
        0 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).min(4),
        n => n,
    };
    tokio::runtime::Builder::new_multi_thread().worker_threads(threads).thread_name("cql-driver").enable_all().build()
}

/// Builds the session (TLS and `login` when given), creates the table if asked, prepares the statements, reads
/// the ring. Errors are one line naming the contact points.
pub async fn connect(cfg: &CqlConfig, tls: Option<&Tls>, login: Option<&Login>) -> Result<Setup, String> {
    let at = cfg.contact_points.join(",");
    let mut builder = SessionBuilder::new().known_nodes(&cfg.contact_points).connection_timeout(cfg.connect_timeout());
    if let Some(login) = login {
        builder = builder.user(&login.user, &login.password.0);
    }
    if let Some(tls) = tls {
        builder = builder.tls_context(Some(tls.config.clone()));
    }
    let session = match builder.build().await {
        Ok(session) => session,
        Err(e) => {
            let refused = tls.and_then(|tls| tls.refusal(&cfg.contact_points, cfg.connect_timeout()));
            let why = refused.unwrap_or_else(|| one_line(&e.to_string()));
            return Err(format!("CQL contact points {at}: cannot connect: {why}"));
        }
    };
    if let Some(create) = &cfg.create_table {
        create_table(&session, cfg, create.replication_factor)
            .await
            .map_err(|e| format!("CQL contact points {at}: {e}"))?;
    }
    let statements = prepare_all(&session, cfg).await.map_err(|e| format!("CQL contact points {at}: {e}"))?;
    let (nodes, tokens) = ring(&session);
    Ok(Setup { statements, nodes, tokens })
}

/// CREATE KEYSPACE and TABLE IF NOT EXISTS: YCSB's table (y_id, then fieldcount varchar fields).
async fn create_table(session: &Session, cfg: &CqlConfig, replication_factor: u32) -> Result<(), String> {
    let (ks, table) = (&cfg.keyspace, &cfg.table);
    let fields = (0..cfg.ycsb.fieldcount).map(|i| format!("field{i} varchar")).collect::<Vec<_>>().join(", ");
    let ddl = [
        format!(
            "CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = \
             {{'class': 'SimpleStrategy', 'replication_factor': {replication_factor}}}"
        ),
        format!("CREATE TABLE IF NOT EXISTS {ks}.{table} (y_id varchar PRIMARY KEY, {fields})"),
    ];
    for statement in ddl {
        session
            .query_unpaged(statement, ())
            .await
            .map_err(|e| format!("creating {ks}.{table}: {}", one_line(&e.to_string())))?;
    }
    Ok(())
}

/// Each of YCSB's statements prepared on every node.
async fn prepare_all(session: &Session, cfg: &CqlConfig) -> Result<Statements<Prepared>, String> {
    let (ks, table) = (&cfg.keyspace, &cfg.table);
    let fields: Vec<String> = (0..cfg.ycsb.fieldcount).map(|i| format!("field{i}")).collect();
    let marks = vec!["?"; fields.len() + 1].join(", ");
    let all = cfg.ycsb.fieldcount as u16 + 1;
    let columns = fields.join(", ");
    let insert =
        prepare(session, cfg, format!("INSERT INTO {ks}.{table} (y_id, {columns}) VALUES ({marks})"), all).await?;
    let read = prepare(session, cfg, format!("SELECT * FROM {ks}.{table} WHERE y_id = ?"), 1).await?;
    let mut update_one = Vec::new();
    for f in &fields {
        update_one.push(prepare(session, cfg, format!("UPDATE {ks}.{table} SET {f} = ? WHERE y_id = ?"), 2).await?);
    }
    let set_all = fields.iter().map(|f| format!("{f} = ?")).collect::<Vec<_>>().join(", ");
    let update_all = prepare(session, cfg, format!("UPDATE {ks}.{table} SET {set_all} WHERE y_id = ?"), all).await?;
    let scan = format!("SELECT * FROM {ks}.{table} WHERE token(y_id) >= token(?) LIMIT ?");
    Ok(Statements { insert, read, update_one, update_all, scan: prepare(session, cfg, scan, 2).await? })
}

/// `cql` prepared on every node; the request path binds `values` values to it.
async fn prepare(session: &Session, cfg: &CqlConfig, cql: String, values: u16) -> Result<Prepared, String> {
    // The driver prepares on every node and has no timeout of its own there (scylla-rust-driver #1332): a node
    // that does not answer would hang the engine until the caller gives up.
    let wait = cfg.timeout();
    let p = tokio::time::timeout(wait, session.prepare(cql))
        .await
        .map_err(|_| {
            format!(
                "preparing statements on every node did not finish in {:.0} s (timeout_s): is a node not answering?",
                wait.as_secs_f64()
            )
        })?
        .map_err(|e| format!("keyspace {} / table {}: {}", cfg.keyspace, cfg.table, one_line(&e.to_string())))?;
    Ok(Prepared { id: p.get_id().to_vec(), cql: p.get_statement().to_string(), values })
}

/// The nodes and their tokens as the session read them: (addresses, (token, index into the addresses)).
fn ring(session: &Session) -> (Vec<SocketAddr>, Vec<(i64, usize)>) {
    let cluster = session.get_cluster_state();
    let nodes = cluster.get_nodes_info();
    let addrs = nodes.iter().map(|n| SocketAddr::new(n.address.ip(), n.address.port())).collect();
    let tokens = cluster
        .replica_locator()
        .ring()
        .iter()
        .filter_map(|(token, node)| nodes.iter().position(|n| n.host_id == node.host_id).map(|i| (token.value(), i)))
        .collect();
    (addrs, tokens)
}
