//! CQL over TLS against a node of this test's own (rustls, the test CA in testdata/): the section's checks, the
//! request path's connections (blocking and multiplexed) and the driver session's refusal of a wrong CA.

use super::request::conn::{Conn, Failure, Opener};
use super::request::frame::{opcode, HEADER, VERSION};
use super::request::pipe::Pipe;
use super::tests::{cql_job, setup_error};
use super::tls::{Tls, TlsSection};
use super::*;
use crate::core::job;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

fn testdata(name: &str) -> String {
    format!("{}/src/cql/testdata/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A node speaking just enough CQL v4 over TLS with `cert` (testdata/CERT.pem, signed by testdata/ca.pem): READY
/// to STARTUP, a void RESULT to anything else, on the request's stream id. Its threads end with the test process.
fn tls_node(cert: &str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = listener.local_addr().unwrap();
    let chain = CertificateDer::pem_file_iter(testdata(&format!("{cert}.pem"))).unwrap().map(Result::unwrap).collect();
    let key = PrivateKeyDer::from_pem_file(testdata(&format!("{cert}-key.pem"))).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let config = Arc::new(config);
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || serve(rustls::ServerConnection::new(config).unwrap(), tcp));
        }
    });
    at
}

fn serve(conn: rustls::ServerConnection, tcp: TcpStream) {
    let mut s = rustls::StreamOwned::new(conn, tcp);
    let mut header = [0u8; HEADER];
    while s.read_exact(&mut header).is_ok() {
        let mut body = vec![0; u32::from_be_bytes(header[5..9].try_into().unwrap()) as usize];
        if s.read_exact(&mut body).is_err() {
            return;
        }
        let (op, answer) = if header[4] == opcode::STARTUP {
            (opcode::READY, vec![])
        } else {
            (opcode::RESULT, 1i32.to_be_bytes().to_vec())
        };
        let mut frame = vec![0x84, 0, header[2], header[3], op];
        frame.extend_from_slice(&(answer.len() as u32).to_be_bytes());
        frame.extend_from_slice(&answer);
        if s.write_all(&frame).and_then(|_| s.flush()).is_err() {
            return;
        }
    }
}

fn opener(ca: &str, contact_point: &str) -> Opener {
    let tls = Tls::new(&TlsSection { ca_file: Some(testdata(ca)) }, &[contact_point.to_string()]).unwrap();
    Opener {
        login: None,
        connect_timeout: Duration::from_secs(10),
        timeout: Duration::from_secs(30),
        tls: Some(Arc::new(tls)),
    }
}

/// A request frame of `len` body bytes (the test node answers any opcode but STARTUP with a void RESULT).
fn request(len: usize) -> Vec<u8> {
    let mut frame = vec![VERSION, 0, 0, 0, opcode::EXECUTE];
    frame.extend_from_slice(&(len as u32).to_be_bytes());
    frame.resize(HEADER + len, 7);
    frame
}

fn open_error(at: SocketAddr, how: &Opener) -> String {
    match Conn::open(at, how, &mut Vec::new()) {
        Ok(_) => panic!("{at}: the TLS connection was accepted"),
        Err(Failure::Connection(m)) => m,
        Err(other) => panic!("{at}: {other:?}"),
    }
}

#[test]
fn a_tls_section_is_checked_in_one_line() {
    let (_, cfg) = cql_job(json!({}), json!({"tls": null})).unwrap();
    assert!(cfg.tls.is_none());
    let (_, cfg) = cql_job(json!({}), json!({"tls": {}})).unwrap();
    assert_eq!(cfg.tls.unwrap().ca_file, None); // {} and {"ca_file": null}: the system trust store
    assert_eq!(setup_error(json!({}), json!({"tls": {"ca_file": testdata("ca.pem")}})), None);
    assert_eq!(
        setup_error(json!({}), json!({"tls": {"ca_file": "ca.pem"}})).unwrap(),
        "job: cql.tls.ca_file must be an absolute path to a PEM file of CA certificates, got \"ca.pem\""
    );
    let missing = testdata("missing.pem");
    assert_eq!(
        setup_error(json!({}), json!({"tls": {"ca_file": missing}})).unwrap(),
        format!("job: cql.tls.ca_file {missing}: cannot read: No such file or directory (os error 2)")
    );
    let key = testdata("node-key.pem");
    assert_eq!(
        setup_error(json!({}), json!({"tls": {"ca_file": key}})).unwrap(),
        format!("job: cql.tls.ca_file {key} holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
    );
    let err = setup_error(json!({}), json!({"tls": {"ca_file": 5}})).unwrap();
    assert!(err.starts_with("job j.json: cql: invalid type: integer `5`, expected a string"), "{err}");
    let err = setup_error(json!({}), json!({"tls": {"cafile": "/x.pem"}})).unwrap();
    assert!(err.starts_with("job j.json: cql: unknown field `cafile`, expected `ca_file`"), "{err}");
    let err = setup_error(json!({}), json!({"tls": true})).unwrap();
    assert!(err.starts_with("job j.json: cql: invalid type: boolean `true`, expected struct TlsSection"), "{err}");
    assert_eq!(
        setup_error(json!({}), json!({"tls": {"ca_file": testdata("ca.pem")}, "contact_points": ["bad name!:9042"]}))
            .unwrap(),
        "job: cql.contact_points: \"bad name!:9042\" is neither an IP address nor a host name TLS can check"
    );
    // the echo names the CA file (no secret)
    let (job, cfg) = cql_job(json!({}), json!({"tls": {"ca_file": "/etc/storbench/ca.pem"}})).unwrap();
    assert_eq!(job::echo(&job, Cql::NAME, &cfg)["cql"]["tls"], json!({"ca_file": "/etc/storbench/ca.pem"}));
}

#[test]
fn requests_go_over_tls_blocking_and_multiplexed() {
    let at = tls_node("node");
    let how = opener("ca.pem", &at.to_string());
    let mut conn = Conn::open(at, &how, &mut Vec::new()).unwrap(); // STARTUP answered READY over TLS
    let (op, body) = conn.call(&mut request(5)).unwrap();
    assert_eq!((op, body), (opcode::RESULT, &1i32.to_be_bytes()[..]));
    // a pipe: three requests, one of 4 MiB (more than the socket takes at once: records wait in rustls until the
    // socket is writable, and the poll must ask for that)
    let mut pipe = Pipe::open(at, &how, &mut Vec::new()).unwrap();
    for (client, len) in [(0, 3), (1, 4 << 20), (2, 9)] {
        pipe.queue(client, &mut request(len)).unwrap();
    }
    let mut answered = Vec::new();
    for _ in 0..2400 {
        // the bound only ends a hung test (2 minutes); the exchange takes milliseconds
        if answered.len() == 3 {
            break;
        }
        pipe.flush().unwrap();
        let events = libc::POLLIN | if pipe.wants_write() { libc::POLLOUT } else { 0 };
        let mut fd = libc::pollfd { fd: pipe.fd(), events, revents: 0 };
        unsafe { libc::poll(&mut fd, 1, 50) };
        pipe.receive(|client, op, body| answered.push((client, op, body.to_vec()))).unwrap();
    }
    answered.sort();
    let void = 1i32.to_be_bytes().to_vec();
    assert_eq!(
        answered,
        vec![(0, opcode::RESULT, void.clone()), (1, opcode::RESULT, void.clone()), (2, opcode::RESULT, void)]
    );
}

#[test]
fn a_node_signed_by_another_ca_is_refused_in_one_line() {
    let at = tls_node("node");
    let other = testdata("other-ca.pem");
    assert_eq!(
        open_error(at, &opener("other-ca.pem", &at.to_string())),
        format!("{at}: TLS handshake: invalid peer certificate: UnknownIssuer (checked against the CA file {other})")
    );
    // the driver session (the preflight) too: one line naming the contact point
    let (job, cfg) = cql_job(
        json!({}),
        json!({"contact_points": [at.to_string()], "connect_timeout_s": 10,
                                               "tls": {"ca_file": other}}),
    )
    .unwrap();
    let err = Cql::setup(&job, cfg).unwrap().preflight().unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "CQL contact points {at}: cannot connect: {at}: TLS handshake: invalid peer certificate: \
                             UnknownIssuer (checked against the CA file {other})"
        )
    );
}

#[test]
fn the_name_checked_is_the_contact_points_address_or_host_name() {
    // a certificate for the host name localhost only: good for the contact point localhost:PORT, not for 127.0.0.1:PORT
    let at = tls_node("node-dns");
    let port = at.port();
    Conn::open(at, &opener("ca.pem", &format!("localhost:{port}")), &mut Vec::new()).unwrap();
    let err = open_error(at, &opener("ca.pem", &at.to_string()));
    assert!(
        err.starts_with(&format!(
            "{at}: TLS handshake: invalid peer certificate: certificate not valid for name \
                                       \"127.0.0.1\"; certificate is only valid for DnsName(\"localhost\")"
        )),
        "{err}"
    );
    assert!(err.ends_with(&format!("(checked against the CA file {})", testdata("ca.pem"))), "{err}");
    // a certificate for the address 127.0.0.1 only: not for the host name localhost
    let at = tls_node("node");
    let err = open_error(at, &opener("ca.pem", &format!("localhost:{}", at.port())));
    assert!(err.contains("certificate not valid for name \"localhost\""), "{err}");
}

#[test]
fn a_plaintext_node_is_named_in_one_line() {
    // a node without TLS on the port: what it answers to the ClientHello is not TLS
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for mut tcp in listener.incoming().flatten() {
            let _ = tcp.read(&mut [0u8; 512]);
            let _ = tcp.write_all(&[0x84, 0, 0, 0, opcode::ERROR, 0, 0, 0, 0]);
        }
    });
    let err = open_error(at, &opener("ca.pem", &at.to_string()));
    assert!(
        err.starts_with(&format!("{at}: TLS handshake: ")) && err.ends_with("(does the node speak TLS on this port?)"),
        "{err}"
    );
    assert!(!err.contains('\n'));
}
