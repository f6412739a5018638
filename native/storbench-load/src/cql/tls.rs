//! CQL over TLS (the job's "cql.tls"): every connection, the driver session's and the request path's, speaks TLS
//! and checks the server's certificate chain against the certificates of "ca_file" (PEM, one or more) or, when it
//! is null, the system's trust store; and the server's name: a contact point given as an IP address by that address
//! (an IP SAN), one given as a host name by that name (a DNS SAN), any other node (found on the ring) by its address.
//! Without "tls" the connections are plain TCP as before: the request path pays one enum match per read and write.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, IpAddr as PkiIp, ServerName, UnixTime};
use rustls::{ClientConnection, DigitallySignedStruct, SignatureScheme};
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

/// The job's "cql.tls" section: {"ca_file": "/abs/ca.pem"} or {"ca_file": null} (the system trust store).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSection {
    #[serde(default)]
    pub ca_file: Option<String>,
}

/// A bad "cql.tls" (or a contact point TLS cannot check): one line.
#[derive(Debug)]
pub struct TlsSetupError(pub String);

impl std::fmt::Display for TlsSetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TlsSetupError {}

/// The TLS client of every connection, and what it trusts (for error messages).
pub struct Tls {
    pub config: Arc<rustls::ClientConfig>,
    /// "the CA file /x/ca.pem" or "the system trust store".
    pub trust: String,
}

impl Tls {
    /// The client the section asks for; `contact_points` (HOST:PORT) give the names checked.
    pub fn new(section: &TlsSection, contact_points: &[String]) -> Result<Tls, TlsSetupError> {
        let bad = |m: String| TlsSetupError(format!("job: cql.tls.{m}"));
        let (roots, trust) = match &section.ca_file {
            Some(path) => (ca_file_roots(path).map_err(bad)?, format!("the CA file {path}")),
            None => (system_roots().map_err(bad)?, "the system trust store".to_string()),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| bad(format!("ca_file: {e}")))?;
        let verifier = ContactNames { webpki, names: contact_names(contact_points)? };
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(format!("ca_file: {e}")))?
            // not a weaker check: `ContactNames` is the WebPKI verifier, told which name a contact point has
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        Ok(Tls { config: Arc::new(config), trust })
    }

    /// A TLS connection over `tcp` (blocking, its timeouts set), the handshake done; the name checked is the
    /// node's address (a contact point's host name for its addresses). One line on failure.
    pub fn connect(&self, at: SocketAddr, mut tcp: TcpStream) -> Result<Stream, String> {
        let name = ServerName::IpAddress(PkiIp::from(at.ip()));
        let mut conn = ClientConnection::new(self.config.clone(), name).map_err(|e| format!("{at}: TLS: {e}"))?;
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp).map_err(|e| self.handshake_error(at, e))?;
        }
        Ok(Stream::Tls(Box::new(TlsStream { conn, tcp })))
    }

    /// Why the first contact point that answers refuses a TLS handshake, if it does: the driver's own error
    /// says little ("connection broken"), so a failed session start asks.
    pub fn refusal(&self, contact_points: &[String], connect_timeout: Duration) -> Option<String> {
        let at = contact_points
            .iter()
            .filter_map(|p| p.to_socket_addrs().ok())
            .flatten()
            .find_map(|at| TcpStream::connect_timeout(&at, connect_timeout).ok().map(|tcp| (at, tcp)));
        let (at, tcp) = at?;
        tcp.set_read_timeout(Some(connect_timeout)).ok()?;
        tcp.set_write_timeout(Some(connect_timeout)).ok()?;
        self.connect(at, tcp).err()
    }

    /// "127.0.0.1:9042: TLS handshake: invalid peer certificate: UnknownIssuer (checked against the CA file ...)".
    pub fn handshake_error(&self, at: SocketAddr, e: io::Error) -> String {
        if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) {
            return format!("{at}: TLS handshake: no answer within timeout_s");
        }
        let hint = match e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
            Some(rustls::Error::InvalidCertificate(_)) => format!(" (checked against {})", self.trust),
            Some(rustls::Error::InvalidMessage(_)) => " (does the node speak TLS on this port?)".to_string(),
            _ => String::new(),
        };
        format!("{at}: TLS handshake: {}{hint}", e.to_string().lines().next().unwrap_or_default())
    }
}

/// The CA certificates of a PEM file (an absolute path, at least one certificate).
fn ca_file_roots(path: &str) -> Result<rustls::RootCertStore, String> {
    if !path.starts_with('/') {
        return Err(format!("ca_file must be an absolute path to a PEM file of CA certificates, got {path:?}"));
    }
    let pem = std::fs::read(path).map_err(|e| format!("ca_file {path}: cannot read: {e}"))?;
    let mut roots = rustls::RootCertStore::empty();
    for (i, cert) in CertificateDer::pem_slice_iter(&pem).enumerate() {
        let cert = cert.map_err(|e| format!("ca_file {path}: certificate {}: {e}", i + 1))?;
        roots.add(cert).map_err(|e| format!("ca_file {path}: certificate {}: {e}", i + 1))?;
    }
    if roots.is_empty() {
        return Err(format!("ca_file {path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"));
    }
    Ok(roots)
}

/// The system's CA certificates (/etc/ssl/certs, or $SSL_CERT_FILE / $SSL_CERT_DIR).
fn system_roots() -> Result<rustls::RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = rustls::RootCertStore::empty();
    roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        let why = found.errors.first().map(|e| format!(" ({e})")).unwrap_or_default();
        return Err(format!(
            "ca_file is null and the system trust store has no CA certificate{why}: name the cluster's CA file"
        ));
    }
    Ok(roots)
}

/// Each address of a contact point given as a host name, with that name (an IP contact point is checked by its
/// address, as every other node is). A name that does not resolve is left to the driver's own error.
fn contact_names(contact_points: &[String]) -> Result<Vec<(IpAddr, ServerName<'static>)>, TlsSetupError> {
    let mut names = Vec::new();
    for point in contact_points {
        if point.parse::<SocketAddr>().is_ok() || point.parse::<IpAddr>().is_ok() {
            continue;
        }
        let host = point.rsplit_once(':').map_or(point.as_str(), |(h, _)| h);
        let name = ServerName::try_from(host.to_string()).map_err(|_| {
            TlsSetupError(format!(
                "job: cql.contact_points: {point:?} is neither an IP address nor a host name TLS can check"
            ))
        })?;
        for addr in point.to_socket_addrs().into_iter().flatten() {
            names.push((addr.ip(), name.clone()));
        }
    }
    Ok(names)
}

/// The WebPKI verifier, checking a contact point's host name where the driver (which always connects by address)
/// and the request path name the address.
#[derive(Debug)]
struct ContactNames {
    webpki: Arc<WebPkiServerVerifier>,
    names: Vec<(IpAddr, ServerName<'static>)>,
}

impl ServerCertVerifier for ContactNames {
    fn verify_server_cert(
        &self,
        cert: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let named = match name {
            ServerName::IpAddress(ip) => self.names.iter().find(|(a, _)| *a == IpAddr::from(*ip)).map(|(_, n)| n),
            _ => None,
        };
        self.webpki.verify_server_cert(cert, intermediates, named.unwrap_or(name), ocsp, now)
    }
    fn verify_tls12_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(m, c, d)
    }
    fn verify_tls13_signature(
        &self,
        m: &[u8],
        c: &CertificateDer<'_>,
        d: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(m, c, d)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// A TLS connection: rustls driven by hand over the socket, so that a non-blocking `Pipe` never leaves decrypted
/// answers inside rustls while it waits in poll (a read returns what rustls holds before it reads the socket).
pub struct TlsStream {
    conn: ClientConnection,
    tcp: TcpStream,
}

/// A request path connection: plain TCP, or TLS over it.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
}

impl Stream {
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => &t.tcp,
        }
    }

    /// TLS records written by rustls and not yet taken by the socket (a poll must wait for writable).
    pub fn pending(&self) -> bool {
        matches!(self, Stream::Tls(t) if t.conn.wants_write())
    }

    /// Writes the pending TLS records, as much as the socket takes (WouldBlock when it takes no more).
    pub fn send_pending(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(_) => Ok(()),
            Stream::Tls(t) => t.send_pending(),
        }
    }
}

impl TlsStream {
    fn send_pending(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            if self.conn.write_tls(&mut self.tcp)? == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
        }
        Ok(())
    }
}

impl Read for Stream {
    /// Plaintext: what rustls has decrypted, else what the socket brings (WouldBlock when neither has any; 0 at the end).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let t = match self {
            Stream::Plain(s) => return s.read(buf),
            Stream::Tls(t) => t,
        };
        loop {
            match t.conn.reader().read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                done => return done,
            }
            if t.conn.read_tls(&mut t.tcp)? == 0 {
                return Ok(0);
            }
            t.conn.process_new_packets().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
    }
}

impl Write for Stream {
    /// Takes `buf` into rustls once the records before it went out; sends what the socket takes now.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let t = match self {
            Stream::Plain(s) => return s.write(buf),
            Stream::Tls(t) => t,
        };
        t.send_pending()?;
        let n = t.conn.writer().write(buf)?;
        match t.send_pending() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(n), // the rest goes on the next write or flush
            Err(e) => Err(e),
            Ok(()) => Ok(n),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_pending()
    }
}
