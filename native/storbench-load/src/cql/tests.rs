use super::*;
use crate::core::{job, OpFailure as _, Operation as _};
use serde_json::json;
use std::path::Path;

fn cql_job(extra: serde_json::Value, cql: serde_json::Value) -> Result<(Job<KvOp>, CqlConfig), JobError> {
    let mut doc = json!({"protocol": "cql", "mix": [{"op": "READ"}], "ops": 1,
                         "cql": {"contact_points": ["127.0.0.1:9"], "keyspace": "ks", "ycsb": {"recordcount": 100}}});
    for (k, v) in extra.as_object().unwrap() {
        doc[k] = v.clone();
    }
    for (k, v) in cql.as_object().unwrap() {
        doc["cql"][k] = v.clone();
    }
    job::parse(doc, Cql::NAME, Path::new("j.json"))
}

fn setup_error(extra: serde_json::Value, cql: serde_json::Value) -> Option<String> {
    let (job, cfg) = match cql_job(extra, cql) {
        Ok(parsed) => parsed,
        Err(e) => return Some(e.to_string()),
    };
    if let Err(e) = job.validate() {
        return Some(e.to_string());
    }
    Cql::setup(&job, cfg).err().map(|e| e.to_string())
}

#[test]
fn ops_have_ycsbs_names() {
    for (name, op) in [("READ", KvOp::Read), ("UPDATE", KvOp::Update), ("INSERT", KvOp::Insert), ("SCAN", KvOp::Scan),
                       ("READ-MODIFY-WRITE", KvOp::ReadModifyWrite)] {
        assert_eq!(serde_json::from_value::<KvOp>(json!(name)).unwrap(), op);
        assert_eq!(op.name(), name);
    }
    let err = cql_job(json!({"mix": [{"op": "read"}]}), json!({})).unwrap_err().to_string();
    assert_eq!(err, "job j.json: unknown op \"read\"; allowed: READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE");
}

#[test]
fn the_section_defaults_and_echoes_no_credentials() {
    let (job, cfg) = cql_job(json!({}), json!({})).unwrap();
    assert_eq!((cfg.table.as_str(), cfg.consistency.as_str(), cfg.create_table.is_none()), ("usertable", "ONE", true));
    let echoed = job::echo(&job, Cql::NAME, &cfg);
    assert_eq!(echoed["cql"]["ycsb"]["fieldcount"], 10);
    assert_eq!(echoed["cql"]["ycsb"]["requestdistribution"], "zipfian");
    let text = echoed.to_string();
    assert!(!text.contains("password") && !text.contains("username"), "{text}");
    // the job's login is read, never echoed nor shown by Debug
    let (job, cfg) = cql_job(json!({}), json!({"username": "storbench", "password": "pw-canary-1"})).unwrap();
    assert_eq!((cfg.username.as_deref(), cfg.password.as_ref().map(|p| p.0.as_str())), (Some("storbench"), Some("pw-canary-1")));
    let text = job::echo(&job, Cql::NAME, &cfg).to_string();
    assert!(!text.contains("pw-canary-1") && !text.contains("username"), "{text}");
    assert!(!format!("{cfg:?}").contains("pw-canary-1"));
}

#[test]
fn a_login_is_a_name_and_a_password() {
    let half = "job: cql.username and cql.password go together (a role name and its password)";
    assert_eq!(setup_error(json!({}), json!({"username": "storbench"})).unwrap(), half);
    assert_eq!(setup_error(json!({}), json!({"password": "x"})).unwrap(), half);
    assert_eq!(setup_error(json!({}), json!({"username": "", "password": "x"})).unwrap(), half);
    assert_eq!(setup_error(json!({}), json!({"username": "u", "password": "x"})), None);
}

#[test]
fn consistency_levels_by_name() {
    use scylla::frame::types::Consistency as C;
    assert_eq!(consistency("one"), Some(C::One));
    assert_eq!(consistency("QUORUM"), Some(C::Quorum));
    assert_eq!(consistency("ALL"), Some(C::All));
    assert_eq!(consistency("LOCAL_QUORUM"), Some(C::LocalQuorum));
    assert_eq!(consistency("MOST"), None);
}

#[test]
fn setup_refuses_a_bad_section_in_one_line() {
    assert_eq!(setup_error(json!({}), json!({})), None);
    assert_eq!(setup_error(json!({}), json!({"contact_points": []})).unwrap(),
               "job: cql.contact_points must name at least one HOST:PORT");
    assert_eq!(setup_error(json!({}), json!({"keyspace": "ks\"; DROP"})).unwrap(),
               "job: cql.keyspace must be a plain identifier (a letter, then letters, digits, _)");
    assert_eq!(setup_error(json!({}), json!({"table": "1t"})).unwrap(),
               "job: cql.table must be a plain identifier (a letter, then letters, digits, _)");
    assert!(setup_error(json!({}), json!({"consistency": "MOST"})).unwrap().starts_with("job: cql.consistency must be one of"));
    assert_eq!(setup_error(json!({}), json!({"ycsb": {"recordcount": 0}})).unwrap(), "job: ycsb.recordcount must be at least 1");
    assert_eq!(setup_error(json!({"load": {"model": "closed", "concurrency": 0}}), json!({})).unwrap(),
               "job: concurrency must be >= 1");
    // the load phase: INSERT alone, over [insertstart, insertstart + insertcount)
    let load = json!({"ycsb": {"phase": "load", "recordcount": 100}});
    let once = json!([{"op": "INSERT", "keys": "once"}]);
    assert_eq!(setup_error(json!({"mix": once, "objects": 100}), load.clone()), None);
    let refused = "job: cql: the ycsb load phase's mix is INSERT alone, with \"keys\": \"once\"";
    assert_eq!(setup_error(json!({"mix": [{"op": "INSERT", "keys": "once"}, {"op": "READ"}], "objects": 100}), load.clone()).unwrap(),
               refused);
    assert_eq!(setup_error(json!({"mix": [{"op": "INSERT"}], "objects": 100}), load.clone()).unwrap(), refused);
    assert_eq!(setup_error(json!({"mix": once, "objects": 50}), load).unwrap(),
               "job: cql: in the ycsb load phase objects must be ycsb insertcount and start_key ycsb insertstart");
}

#[test]
fn run_phase_inserts_are_striped_over_processes() {
    let (job, cfg) = cql_job(json!({"process_index": 1, "process_count": 3, "mix": [{"op": "INSERT"}]}), json!({})).unwrap();
    let cql = Cql::setup(&job, cfg).unwrap();
    let s = &cql.shared;
    assert_eq!(s.last_insert(), 99);
    let (a, b) = (s.inserts.next_value(), s.inserts.next_value());
    assert_eq!((s.insert_keynum(a), s.insert_keynum(b)), (101, 104));
    s.inserts.acknowledge(a);
    assert_eq!(s.last_insert(), 101);
}

#[test]
fn error_kinds_are_snake_case_variant_names() {
    assert_eq!(worker::error_kind(&scylla::errors::ExecutionError::RequestTimeout(timeout(1.0))), "timeout");
    assert_eq!(worker::error_kind(&scylla::errors::ExecutionError::EmptyPlan), "connection");
    assert_eq!(OpError::NotFound("user1".into()).kind(), "not_found");
}

#[test]
fn an_unreachable_contact_point_is_one_fatal_line() {
    let (job, cfg) = cql_job(json!({}), json!({"connect_timeout_s": 1})).unwrap();
    let cql = Cql::setup(&job, cfg).unwrap();
    let err = cql.preflight().unwrap_err().to_string();
    assert!(err.starts_with("CQL contact points 127.0.0.1:9: cannot connect: "), "{err}");
    assert!(!err.contains('\n'));
}
