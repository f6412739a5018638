//! The request path: every request of the load, on storbench's own connections and wire, with no driver, no
//! runtime, no lock and no allocation per request. It starts from what the set-up client handed over
//! (`driver::Setup`: the prepared statements' ids and texts, the ring) and the job (`Connected::new`).
//!
//! What runs where: the load's threads (`core::load`) each run a multiplexed group of at most
//! `CLIENTS_PER_THREAD` workers (`mux::CqlMux`, its workers `client::Client`; `worker::CqlWorker` is a group of
//! one). A group opens one
//! connection to each node it sends to (`conn::Conn`: TCP, TLS with the job's "tls", STARTUP, the login's
//! AUTH_RESPONSE; then non-blocking, `pipe::Pipe`), the first time one of its requests goes there. Each worker
//! has one request in flight, on its own stream id: an EXECUTE whose header, statement id, consistency and flags
//! were serialized once (`wire::Execute`), its values appended, sent to the node owning its key's token
//! (`ring::Ring`, token-aware as the driver routes). One `ppoll` waits for every answer of the group and the
//! next deadline; an answer completes its request (`wire::answer`), a node that lost a statement gets a PREPARE
//! and the request once more, a request without an answer within timeout_s fails as "timeout" and its late
//! answer is skipped, a broken connection fails its requests as "connection" and is opened again by the next; a
//! node that went silent (no answer at all while a request's timeout_s passed) or cannot be connected is passed
//! over, its keys sent to the next node of the ring, and tried again after timeout_s (`health`).
//! `frame` names the protocol's numbers; `wire` reads and writes the frames.

pub(super) mod client;
pub(super) mod conn;
pub(super) mod frame;
pub(super) mod health;
pub(super) mod mux;
pub(super) mod pipe;
pub(super) mod ring;
pub(super) mod wire;
pub(super) mod worker;

use super::driver::{Prepared, Setup, Statements};
use conn::Opener;
use ring::Ring;

/// The most workers one thread serves (issue 28: the client's CPU was mostly the kernel waking one
/// thread per answer).
pub const CLIENTS_PER_THREAD: u32 = 64;

/// The statements' EXECUTE frames up to their values.
pub type Templates = Statements<wire::Execute>;

/// What the request path runs on, made once per process from the set-up's hand-over.
pub struct Connected {
    pub templates: Templates,
    pub ring: Ring,
    pub opener: Opener,
}

impl Connected {
    /// Each prepared statement's EXECUTE at `consistency` (its protocol number), the ring, how connections open.
    pub fn new(setup: Setup, consistency: u16, opener: Opener) -> Self {
        let execute = |p: Prepared| wire::Execute::new(&p.id, &p.cql, consistency, p.values);
        Connected { templates: setup.statements.map(execute), ring: Ring::new(setup.nodes, setup.tokens), opener }
    }
}
