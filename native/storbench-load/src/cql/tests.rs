use super::config::consistency;
use super::error::OpError;
use super::request::frame::opcode;
use super::request::ring::Ring;
use super::request::{conn, wire};
use super::*;
use crate::core::{job, OpFailure as _, Operation as _};
use serde_json::json;
use std::path::Path;

pub(super) fn cql_job(extra: serde_json::Value, cql: serde_json::Value) -> Result<(Job<KvOp>, CqlConfig), JobError> {
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

pub(super) fn setup_error(extra: serde_json::Value, cql: serde_json::Value) -> Option<String> {
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
    for (name, op) in [
        ("READ", KvOp::Read),
        ("UPDATE", KvOp::Update),
        ("INSERT", KvOp::Insert),
        ("SCAN", KvOp::Scan),
        ("READ-MODIFY-WRITE", KvOp::ReadModifyWrite),
    ] {
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
    assert_eq!(
        (cfg.username.as_deref(), cfg.password.as_ref().map(|p| p.0.as_str())),
        (Some("storbench"), Some("pw-canary-1"))
    );
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
fn consistency_levels_by_name_are_the_drivers_numbers() {
    use scylla::frame::types::Consistency as C;
    let levels = [
        ("ANY", C::Any),
        ("one", C::One),
        ("TWO", C::Two),
        ("THREE", C::Three),
        ("QUORUM", C::Quorum),
        ("ALL", C::All),
        ("LOCAL_QUORUM", C::LocalQuorum),
        ("each_quorum", C::EachQuorum),
        ("LOCAL_ONE", C::LocalOne),
    ];
    for (name, level) in levels {
        assert_eq!(consistency(name), Some(level as u16), "{name}");
    }
    assert_eq!(consistency("MOST"), None);
    assert_eq!(consistency("SERIAL"), None); // a lightweight transaction's, not a request's
}

#[test]
fn setup_refuses_a_bad_section_in_one_line() {
    assert_eq!(setup_error(json!({}), json!({})), None);
    assert_eq!(
        setup_error(json!({}), json!({"contact_points": []})).unwrap(),
        "job: cql.contact_points must name at least one HOST:PORT"
    );
    assert_eq!(
        setup_error(json!({}), json!({"keyspace": "ks\"; DROP"})).unwrap(),
        "job: cql.keyspace must be a plain identifier (a letter, then letters, digits, _)"
    );
    assert_eq!(
        setup_error(json!({}), json!({"table": "1t"})).unwrap(),
        "job: cql.table must be a plain identifier (a letter, then letters, digits, _)"
    );
    assert!(setup_error(json!({}), json!({"consistency": "MOST"}))
        .unwrap()
        .starts_with("job: cql.consistency must be one of"));
    assert_eq!(
        setup_error(json!({}), json!({"ycsb": {"recordcount": 0}})).unwrap(),
        "job: ycsb.recordcount must be at least 1"
    );
    assert_eq!(
        setup_error(json!({"load": {"model": "closed", "concurrency": 0}}), json!({})).unwrap(),
        "job: concurrency must be >= 1"
    );
    // the load phase: INSERT alone, over [insertstart, insertstart + insertcount)
    let load = json!({"ycsb": {"phase": "load", "recordcount": 100}});
    let once = json!([{"op": "INSERT", "keys": "once"}]);
    assert_eq!(setup_error(json!({"mix": once, "objects": 100}), load.clone()), None);
    let refused = "job: cql: the ycsb load phase's mix is INSERT alone, with \"keys\": \"once\"";
    assert_eq!(
        setup_error(json!({"mix": [{"op": "INSERT", "keys": "once"}, {"op": "READ"}], "objects": 100}), load.clone())
            .unwrap(),
        refused
    );
    assert_eq!(setup_error(json!({"mix": [{"op": "INSERT"}], "objects": 100}), load.clone()).unwrap(), refused);
    assert_eq!(
        setup_error(json!({"mix": once, "objects": 50}), load).unwrap(),
        "job: cql: in the ycsb load phase objects must be ycsb insertcount and start_key ycsb insertstart"
    );
}

#[test]
fn run_phase_inserts_are_striped_over_processes() {
    let (job, cfg) =
        cql_job(json!({"process_index": 1, "process_count": 3, "mix": [{"op": "INSERT"}]}), json!({})).unwrap();
    let cql = Cql::setup(&job, cfg).unwrap();
    let s = &cql.shared;
    assert_eq!(s.last_insert(), 99);
    let (a, b) = (s.inserts.next_value(), s.inserts.next_value());
    assert_eq!((s.insert_keynum(a), s.insert_keynum(b)), (101, 104));
    s.inserts.acknowledge(a);
    assert_eq!(s.last_insert(), 101);
}

/// The request path spells no protocol number but in `frame` (issue 39): a hex literal elsewhere is one only as
/// a named constant.
#[test]
fn only_frame_spells_the_protocols_numbers() {
    let sources = [
        ("wire.rs", include_str!("request/wire.rs")),
        ("conn.rs", include_str!("request/conn.rs")),
        ("pipe.rs", include_str!("request/pipe.rs")),
        ("mux.rs", include_str!("request/mux.rs")),
        ("client.rs", include_str!("request/client.rs")),
        ("ring.rs", include_str!("request/ring.rs")),
    ];
    for (name, text) in sources {
        let bare: Vec<&str> = text
            .lines()
            .map(|line| line.split("//").next().unwrap_or_default())
            .filter(|code| code.contains("0x") && !code.trim_start().starts_with("const "))
            .collect();
        assert!(bare.is_empty(), "request/{name}: protocol numbers not named in request/frame.rs: {bare:?}");
    }
}

#[test]
fn error_kinds_are_snake_case_variant_names() {
    assert_eq!(wire::error_kind(0x1200), "read_timeout");
    assert_eq!(wire::error_kind(0x1000), "unavailable");
    assert_eq!(wire::error_kind(0x7777), "other");
    assert_eq!(conn::Failure::Timeout("t".into()).kind(), "timeout");
    assert_eq!(conn::Failure::Connection("c".into()).kind(), "connection");
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

#[test]
fn an_execute_frame_is_its_template_and_the_values() {
    let ex = wire::Execute::new(b"ID", "SELECT", 0x0001, 2);
    let mut buf = vec![9; 3]; // a reused buffer's old contents go
    ex.start(&mut buf);
    wire::put_value(&mut buf, b"user1");
    wire::put_value_with(&mut buf, |b| b.extend_from_slice(&7i32.to_be_bytes()));
    wire::finish(&mut buf);
    let body: &[u8] =
        &[0, 2, b'I', b'D', 0, 1, 0x03, 0, 2, 0, 0, 0, 5, b'u', b's', b'e', b'r', b'1', 0, 0, 0, 4, 0, 0, 0, 7];
    assert_eq!(&buf[..9], &[0x04, 0, 0, 0, opcode::EXECUTE, 0, 0, 0, body.len() as u8]);
    assert_eq!(&buf[9..], body);
}

/// A RESULT rows body: `columns` varchar columns, with full metadata or none; rows of values (None: null).
fn rows_body(metadata: bool, rows: &[&[Option<&str>]]) -> Vec<u8> {
    let columns = rows.first().map_or(3, |r| r.len()) as i32;
    let mut b = 2i32.to_be_bytes().to_vec();
    b.extend_from_slice(&(if metadata { 0x0001i32 } else { 0x0004 }).to_be_bytes());
    b.extend_from_slice(&columns.to_be_bytes());
    if metadata {
        wire::put_string(&mut b, "ks");
        wire::put_string(&mut b, "usertable");
        for i in 0..columns {
            wire::put_string(&mut b, &format!("c{i}"));
            wire::put_short(&mut b, if i == 2 { 0x0021 } else { 0x000D }); // a map<varchar, varchar> too
            if i == 2 {
                wire::put_short(&mut b, 0x000D);
                wire::put_short(&mut b, 0x000D);
            }
        }
    }
    b.extend_from_slice(&(rows.len() as i32).to_be_bytes());
    for row in rows {
        for v in *row {
            match v {
                Some(v) => wire::put_value(&mut b, v.as_bytes()),
                None => b.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
    }
    b
}

#[test]
fn rows_count_the_fields_bytes_but_the_keys() {
    let rows: &[&[Option<&str>]] = &[&[Some("user1"), Some("abc"), None], &[Some("user2"), Some("de"), Some("f")]];
    for metadata in [true, false] {
        assert_eq!(wire::rows(&rows_body(metadata, rows)), Ok((2, 6)));
    }
    assert_eq!(wire::rows(&rows_body(false, &[])), Ok((0, 0)));
    assert_eq!(wire::rows(&1i32.to_be_bytes()), Ok((0, 0))); // void: a write
    let cut = rows_body(false, rows);
    assert!(wire::rows(&cut[..cut.len() - 1]).is_err());
}

#[test]
fn a_responses_warnings_and_tracing_id_are_skipped() {
    let mut body = vec![7u8; 16]; // tracing id
    wire::put_short(&mut body, 1);
    wire::put_string(&mut body, "a warning");
    let skip = body.len();
    body.extend_from_slice(&rows_body(false, &[&[Some("k"), Some("v")]]));
    assert_eq!(wire::strip(0x02 | 0x08, &body), Ok(skip));
    assert_eq!(wire::rows(&body[skip..]), Ok((1, 1)));
    assert_eq!(wire::strip(0, &body), Ok(0));
    let mut err = 0x1200i32.to_be_bytes().to_vec();
    wire::put_string(&mut err, "Operation timed out");
    assert_eq!(wire::error(&err), Ok((0x1200, "Operation timed out".to_string())));
    assert!(wire::header(&[0x85, 0, 0, 0, 8, 0, 0, 0, 0]).is_err()); // v5 is not spoken
    assert_eq!(wire::header(&[0x84, 8, 0, 0, 8, 0, 0, 1, 2]), Ok((8, 0, 8, 258)));
}

#[test]
fn a_key_goes_to_the_node_owning_its_token() {
    let addr = |p| std::net::SocketAddr::from(([127, 0, 0, 1], p));
    let one = Ring::new(vec![addr(1)], vec![]);
    assert_eq!(one.node(b"user1"), 0);
    // Murmur3 of "user1" is the driver's; the ring's owner is the first token at or after it, wrapping
    use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner};
    let token = Murmur3Partitioner.hash_one(b"user1").value();
    let ring = Ring::new(vec![addr(1), addr(2)], vec![(token, 1), (token - 1, 0), (token.saturating_add(5), 0)]);
    assert_eq!(ring.node(b"user1"), 1);
    let wrap = Ring::new(vec![addr(1), addr(2)], vec![(token - 10, 1), (token - 5, 0)]);
    assert_eq!(wrap.node(b"user1"), 1);
}

#[test]
fn a_silent_node_is_passed_over_until_it_answers() {
    use super::request::health::Health;
    use std::time::{Duration, Instant};
    let addr = |p| std::net::SocketAddr::from(([127, 0, 0, 1], p));
    use scylla::routing::partitioner::{Murmur3Partitioner, Partitioner};
    let token = Murmur3Partitioner.hash_one(b"user1").value();
    let after = |d| token.saturating_add(d);
    let ring =
        Ring::new(vec![addr(1), addr(2), addr(3)], vec![(token, 1), (after(5), 0), (after(9), 1), (after(20), 2)]);
    assert_eq!(ring.clockwise(b"user1").collect::<Vec<_>>(), vec![1, 0, 2]);
    let (retry, start) = (Duration::from_millis(50), Instant::now());
    let mut health = Health::new(3, retry);
    health.heard(1, start);
    health.timed_out(1, start - Duration::from_millis(1), Instant::now()); // it answered another request since
    assert_eq!(health.route(&ring, b"user1"), 1);
    health.timed_out(1, start + Duration::from_millis(1), Instant::now()); // nothing came since it was sent
    assert_eq!(health.route(&ring, b"user1"), 0);
    health.unreachable(0, Instant::now());
    assert_eq!(health.route(&ring, b"user1"), 2);
    std::thread::sleep(retry + Duration::from_millis(10));
    assert_eq!(health.route(&ring, b"user1"), 1); // one request tries the owner again
    assert_eq!(health.route(&ring, b"user1"), 0); // and one node 0
    assert_eq!(health.route(&ring, b"user1"), 2);
    health.heard(1, Instant::now());
    assert_eq!(health.route(&ring, b"user1"), 1);
    let mut all = Health::new(3, retry);
    (0..3).for_each(|n| all.unreachable(n, Instant::now()));
    assert_eq!(all.route(&ring, b"user1"), 1); // none answers: the owner
}
