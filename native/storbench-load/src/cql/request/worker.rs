//! The CQL session set-up (the driver connects, creates the table, prepares; the ring read), the
//! request errors, and one load worker alone.

use super::conn::{Opener, Ring};
use super::error::{one_line, OpError};
use super::mux::CqlMux;
use super::wire::Execute;
use super::{timeout, Connected, KvOp, Shared, Templates};
use crate::core::secrets;
use crate::core::{Multiplexed as _, Outcome, Request, Worker};
use scylla::client::session_builder::SessionBuilder;
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

/// Builds the session (credentials from storbench's secrets file or the environment), creates the table if asked, prepares
/// the statements. Errors are one line naming the contact points.
pub(super) async fn connect(shared: &Shared) -> Result<Connected, String> {
    let cfg = &shared.cfg;
    let at = cfg.contact_points.join(",");
    let mut builder =
        SessionBuilder::new().known_nodes(&cfg.contact_points).connection_timeout(timeout(cfg.connect_timeout_s));
    if let Some(user) = secrets::var("STORBENCH_CQL_USERNAME") {
        builder = builder.user(user, secrets::var("STORBENCH_CQL_PASSWORD").unwrap_or_default());
    }
    // the job's login wins: storbench hands it over so (the job file is 0600, in a private directory)
    if let (Some(user), Some(password)) = (&cfg.username, &cfg.password) {
        builder = builder.user(user, &password.0);
    }
    if let Some(tls) = &shared.tls {
        builder = builder.tls_context(Some(tls.config.clone()));
    }
    let session = match builder.build().await {
        Ok(session) => session,
        Err(e) => {
            let tls =
                shared.tls.as_ref().and_then(|tls| tls.refusal(&cfg.contact_points, timeout(cfg.connect_timeout_s)));
            return Err(format!(
                "CQL contact points {at}: cannot connect: {}",
                tls.unwrap_or_else(|| one_line(&e.to_string()))
            ));
        }
    };
    let (ks, table) = (&cfg.keyspace, &cfg.table);
    if let Some(create) = &cfg.create_table {
        let ddl = [
            format!("CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': {}}}",
                    create.replication_factor),
            format!("CREATE TABLE IF NOT EXISTS {ks}.{table} (y_id varchar PRIMARY KEY, {})",
                    (0..cfg.ycsb.fieldcount).map(|i| format!("field{i} varchar")).collect::<Vec<_>>().join(", ")),
        ];
        for statement in ddl {
            session
                .query_unpaged(statement, ())
                .await
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
            let p = tokio::time::timeout(wait, session.prepare(cql))
                .await
                .map_err(|_| {
                    format!(
                        "CQL contact points {at}: preparing statements on every node did not finish in \
                                      {:.0} s (timeout_s): is a node not answering?",
                        wait.as_secs_f64()
                    )
                })?
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
        insert: prepare(format!("INSERT INTO {ks}.{table} (y_id, {}) VALUES ({marks})", fields.join(", ")), all)
            .await?,
        read: prepare(format!("SELECT * FROM {ks}.{table} WHERE y_id = ?"), 1).await?,
        update_one: {
            let mut v = Vec::new();
            for f in &fields {
                v.push(prepare(format!("UPDATE {ks}.{table} SET {f} = ? WHERE y_id = ?"), 2).await?);
            }
            v
        },
        update_all: prepare(
            format!(
                "UPDATE {ks}.{table} SET {} WHERE y_id = ?",
                fields.iter().map(|f| format!("{f} = ?")).collect::<Vec<_>>().join(", ")
            ),
            all,
        )
        .await?,
        scan: prepare(format!("SELECT * FROM {ks}.{table} WHERE token(y_id) >= token(?) LIMIT ?"), 2).await?,
    };
    // the session (its connections) ends here: the workers open their own
    Ok(Connected { ring: ring(&session), opener: Opener::new(cfg, shared.tls.clone()), templates })
}

/// The nodes and their tokens as the session read them.
fn ring(session: &scylla::client::session::Session) -> Ring {
    let cluster = session.get_cluster_state();
    let nodes = cluster.get_nodes_info();
    let addrs = nodes.iter().map(|n| std::net::SocketAddr::new(n.address.ip(), n.address.port())).collect();
    let tokens = cluster
        .replica_locator()
        .ring()
        .iter()
        .filter_map(|(token, node)| nodes.iter().position(|n| n.host_id == node.host_id).map(|i| (token.value(), i)))
        .collect();
    Ring::new(addrs, tokens)
}

/// One load worker alone (the load runs them in multiplexed groups, `mux`): a group of one.
pub struct CqlWorker {
    mux: CqlMux,
    done: Vec<(usize, Result<Outcome, OpError>)>,
}

impl CqlWorker {
    pub(super) fn new(shared: Arc<Shared>, index: u32) -> Self {
        CqlWorker { mux: CqlMux::new(shared, &[index]), done: Vec::new() }
    }
}

impl Worker for CqlWorker {
    type Op = KvOp;
    type Error = OpError;

    fn execute(&mut self, req: &Request<KvOp>) -> Result<Outcome, OpError> {
        self.mux.start(0, req);
        loop {
            self.mux.poll(None, &mut self.done);
            if let Some((_, result)) = self.done.pop() {
                return result;
            }
        }
    }
}
