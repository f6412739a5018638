//! One load worker alone (`Protocol::worker`): a multiplexed group of one, waiting for each answer.

use super::mux::CqlMux;
use crate::core::{Multiplexed as _, Outcome, Request, Worker};
use crate::cql::error::OpError;
use crate::cql::{KvOp, Shared};
use std::sync::Arc;

/// One load worker alone (the load runs them in multiplexed groups, `mux`): a group of one.
pub struct CqlWorker {
    mux: CqlMux,
    done: Vec<(usize, Result<Outcome, OpError>)>,
}

impl CqlWorker {
    pub fn new(shared: Arc<Shared>, index: u32) -> Self {
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
