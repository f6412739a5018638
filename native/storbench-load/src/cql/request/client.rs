//! One client of a multiplexed group (a load worker): its YCSB generators (its own random stream, a copy of
//! the run's key chooser), the EXECUTE frame of its request built from the statements' templates (`wire`), and
//! what its request in flight is waiting for (`mux` sends it and reads the answers).

use super::wire;
use super::Templates;
use crate::core::payload::Rng;
use crate::core::Request;
use crate::cql::{KvOp, Shared};
use crate::ycsb::{field_value_into, KeyChooser, Phase};
use std::time::Instant;

/// Which template a request's frame is of (to prepare it again on a node that lost it).
#[derive(Clone, Copy)]
pub(super) enum Stmt {
    Insert,
    Read,
    UpdateOne(usize),
    UpdateAll,
    Scan,
}

/// What the answer completes.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Step {
    /// A write: done with the values' bytes.
    Write,
    /// A read or scan: no row is `NotFound`.
    Read,
    /// A read-modify-write's read: the update follows.
    RmwRead,
}

/// One client: its generators, its frame, its request in flight.
pub(super) struct Client {
    pub(super) rng: Rng,
    /// Built on first use (a worker of the load phase never needs it).
    pub(super) chooser: Option<KeyChooser>,
    pub(super) frame: Vec<u8>,
    pub(super) key: Vec<u8>,
    pub(super) what: &'static str,
    pub(super) stmt: Stmt,
    pub(super) step: Step,
    pub(super) node: usize,
    pub(super) bytes: u64,
    /// A run-phase insert's counter value, acknowledged when it ends.
    pub(super) ack: Option<i64>,
    /// In flight: its deadline and stream id.
    pub(super) sent: Option<(Instant, i16)>,
    /// The statement was prepared again once (an UNPREPARED answer): the PREPARE is in flight.
    pub(super) preparing: bool,
    pub(super) retried: bool,
}

/// Sets the clients' generators apart from others seeded from the job's seed.
const RNG_STREAM: u64 = 0x9C1_0000_0000;

/// A client's copy of the run's key chooser, taken on first use (built once per process).
fn chooser<'a>(mine: &'a mut Option<KeyChooser>, shared: &Shared) -> &'a mut KeyChooser {
    mine.get_or_insert_with(|| {
        shared.chooser.get_or_init(|| KeyChooser::new(&shared.cfg.ycsb, shared.last_insert())).clone()
    })
}

impl Client {
    pub(super) fn new(shared: &Shared, index: u32) -> Self {
        Client {
            rng: Rng::new(shared.seed ^ RNG_STREAM ^ index as u64),
            chooser: None,
            frame: Vec::with_capacity(4096),
            key: Vec::with_capacity(32),
            what: "",
            stmt: Stmt::Read,
            step: Step::Write,
            node: 0,
            bytes: 0,
            ack: None,
            sent: None,
            preparing: false,
            retried: false,
        }
    }

    /// The key of a READ, UPDATE, SCAN or READ-MODIFY-WRITE: YCSB's chooser's, or the core's when
    /// the op's mix entry asks for it.
    fn choose_key(&mut self, shared: &Shared, req: &Request<KvOp>) {
        let keynum = if shared.core_keys.contains(&req.op) {
            req.key as i64
        } else {
            chooser(&mut self.chooser, shared).next_keynum(shared.last_insert(), &mut self.rng)
        };
        self.set_key(shared, keynum);
    }

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

    /// Starts the frame of `stmt`, the answer completing `step`.
    fn begin(&mut self, t: &Templates, stmt: Stmt, step: Step, what: &'static str) {
        template(t, stmt).start(&mut self.frame);
        (self.stmt, self.step, self.what, self.retried, self.preparing) = (stmt, step, what, false, false);
    }

    /// YCSB's update: one random field (writeallfields=false) or all of them; its bytes.
    pub(super) fn update(&mut self, shared: &Shared, t: &Templates, step_what: &'static str) -> u64 {
        if shared.cfg.ycsb.writeallfields {
            self.begin(t, Stmt::UpdateAll, Step::Write, step_what);
            let bytes = self.put_values(shared);
            wire::put_value(&mut self.frame, &self.key);
            bytes
        } else {
            let field = chooser(&mut self.chooser, shared).field(&mut self.rng);
            let len = shared.cfg.ycsb.fieldlength as usize;
            self.begin(t, Stmt::UpdateOne(field), Step::Write, step_what);
            wire::put_value_with(&mut self.frame, |b| field_value_into(len, &mut self.rng, b));
            wire::put_value(&mut self.frame, &self.key);
            len as u64
        }
    }

    /// The request's first frame built (and its bytes, step, insert counter value set).
    pub(super) fn build(&mut self, shared: &Shared, t: &Templates, req: &Request<KvOp>) {
        self.ack = None;
        match req.op {
            KvOp::Insert => {
                let keynum = if shared.cfg.ycsb.phase == Phase::Load {
                    req.key as i64
                } else {
                    let local = shared.inserts.next_value();
                    self.ack = Some(local);
                    shared.insert_keynum(local)
                };
                self.set_key(shared, keynum);
                self.begin(t, Stmt::Insert, Step::Write, "INSERT");
                wire::put_value(&mut self.frame, &self.key);
                self.bytes = self.put_values(shared);
            }
            KvOp::Read | KvOp::ReadModifyWrite => {
                self.choose_key(shared, req);
                let (step, what) =
                    if req.op == KvOp::Read { (Step::Read, "READ") } else { (Step::RmwRead, "READ-MODIFY-WRITE read") };
                self.begin(t, Stmt::Read, step, what);
                wire::put_value(&mut self.frame, &self.key);
            }
            KvOp::Update => {
                self.choose_key(shared, req);
                self.bytes = self.update(shared, t, "UPDATE");
            }
            KvOp::Scan => {
                self.choose_key(shared, req);
                let len = chooser(&mut self.chooser, shared).scan_length(&mut self.rng);
                self.begin(t, Stmt::Scan, Step::Read, "SCAN");
                wire::put_value(&mut self.frame, &self.key);
                wire::put_value(&mut self.frame, &(len as i32).to_be_bytes());
            }
        }
        wire::finish(&mut self.frame);
    }
}

pub(super) fn template(t: &Templates, stmt: Stmt) -> &wire::Execute {
    match stmt {
        Stmt::Insert => &t.insert,
        Stmt::Read => &t.read,
        Stmt::UpdateOne(f) => &t.update_one[f],
        Stmt::UpdateAll => &t.update_all,
        Stmt::Scan => &t.scan,
    }
}
