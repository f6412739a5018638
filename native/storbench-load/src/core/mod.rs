//! The protocol-agnostic core: the job's common part, the load models, the measurements and the
//! result document. A protocol (`crate::s3`, ...) implements `Protocol`: its operations, its job
//! section, and workers that execute one request each. Nothing here names a protocol.

pub mod error;
pub mod job;
pub mod load;
mod mux_load;
pub mod payload;
pub mod records;
pub mod result;
pub mod secrets;
pub mod series;
mod shared;
pub mod stats;
mod step;
#[cfg(test)]
mod tests;

pub use error::{Error, JobError};
pub use job::Job;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::path::Path;
use std::time::Instant;

/// A protocol's operations, as the job's mix names them (an unknown name is refused).
/// Declared with `operations!`.
pub trait Operation: Copy + Eq + std::fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static {
    /// All of them, in the order an error lists them.
    const ALL: &'static [Self];
    /// How the op uses the key space.
    fn keys(self) -> KeyUse;
    /// The name in the job, as serde reads it (also the result's "ops" key, the records' op column).
    fn name(self) -> String {
        match serde_json::to_value(self) {
            Ok(Value::String(name)) => name,
            _ => format!("{self:?}"),
        }
    }
}

/// `Deserialize` of an `operations!` enum: by name; an unknown one is refused with the names allowed.
pub fn deserialize_op<'de, Op: Operation, D: Deserializer<'de>>(deserializer: D) -> Result<Op, D::Error> {
    let name = String::deserialize(deserializer)?;
    Op::ALL.iter().copied().find(|op| op.name() == name).ok_or_else(|| {
        let allowed = Op::ALL.iter().map(|op| op.name()).collect::<Vec<_>>().join(", ");
        serde::de::Error::custom(format!("unknown op {name:?}; allowed: {allowed}"))
    })
}

/// How an op uses the key space by default (a mix entry's "keys" may ask for the other order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyUse {
    /// Uniformly random keys.
    Random,
    /// Keys in order (striped over processes), wrapping around: e.g. put.
    Sequential,
    /// Keys in order, each once; the op stops when they run out: e.g. delete.
    Consume,
}

/// Declares a protocol's operation enum: each variant (named in the job in lower case, or as
/// `as "NAME"` says) with its `KeyUse`, e.g.
/// `operations! { pub enum Op { Put => Sequential, Get => Random, ReadModifyWrite as "READ-MODIFY-WRITE" => Random } }`.
macro_rules! operations {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($op:ident $(as $rename:literal)? => $keys:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, ::serde::Serialize)]
        #[serde(rename_all = "lowercase")]
        $vis enum $name {
            $($(#[serde(rename = $rename)])? $op),+
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::core::deserialize_op(deserializer)
            }
        }

        impl $crate::core::Operation for $name {
            const ALL: &'static [Self] = &[$($name::$op),+];

            fn keys(self) -> $crate::core::KeyUse {
                match self {
                    $($name::$op => $crate::core::KeyUse::$keys),+
                }
            }
        }
    };
}
pub(crate) use operations;

/// One request as the core planned it: which op, which key, how many bytes.
pub struct Request<Op> {
    pub op: Op,
    pub key: u64,
    pub size: u64,
    /// (offset, length) for ranged reads.
    pub range: Option<(u64, u64)>,
}

pub struct Outcome {
    /// Payload bytes moved (request body for writes, response body for reads).
    pub bytes: u64,
    pub first_byte: Option<Instant>,
}

/// A failed request: counted in the result under its kind, its message kept as the example.
pub trait OpFailure: std::error::Error {
    /// A short stable name, e.g. "timeout", "http_404_NoSuchKey", "verify".
    fn kind(&self) -> Cow<'_, str>;
}

/// What executes requests: one per load worker (thread), e.g. with its own connection.
pub trait Worker: Send {
    /// The protocol's operations.
    type Op: Operation;
    type Error: OpFailure;
    fn execute(&mut self, req: &Request<Self::Op>) -> Result<Outcome, Self::Error>;
}

/// Many logical clients on one thread (the load's workers, each with one request in flight): a
/// request started, its answer polled with the others' (one wake-up may bring several).
pub trait Multiplexed: Send {
    type Op: Operation;
    type Error: OpFailure;
    /// Starts client `client`'s request; its answer comes from `poll`.
    fn start(&mut self, client: usize, req: &Request<Self::Op>);
    /// Waits until at least one answer or `until` (None: an answer); the answers into `done`.
    fn poll(&mut self, until: Option<Instant>, done: &mut Vec<(usize, Result<Outcome, Self::Error>)>);
}

/// The workers of multiplexed group `group` of `groups`: every groups-th from `group` (sizes differ by at most one).
pub fn mux_group(group: u32, groups: u32, workers: u32) -> Vec<u32> {
    (group..workers).step_by(groups as usize).collect()
}

/// A protocol's multiplexed group of `clients` workers from `first` on.
pub type MuxOf<P> = Box<dyn Multiplexed<Op = OpOf<P>, Error = <<P as Protocol>::Worker as Worker>::Error>>;

/// A protocol: a name, a job section, and workers executing its operations (`OpOf<Self>`).
pub trait Protocol: Sized {
    /// The job's "protocol" value, and the name of the job's section holding `Config`.
    const NAME: &'static str;
    /// The protocol's section of the job; serialized (secrets left out) into the result's job.
    type Config: Serialize + DeserializeOwned;
    type Worker: Worker;
    /// Checks the section and prepares what the workers share; connects nothing yet.
    fn setup(job: &Job<OpOf<Self>>, config: Self::Config) -> Result<Self, Error>;
    /// Endpoint and credentials checked before the load starts (when the job asks for it).
    fn preflight(&self) -> Result<(), Error>;
    fn worker(&self, index: u32) -> Self::Worker;
    /// The load's `workers` as multiplexed groups (one thread each), when the protocol has them;
    /// empty: one thread per worker.
    fn multiplexed(&self, _workers: u32) -> Vec<MuxOf<Self>> {
        Vec::new()
    }
}

/// The operations of protocol `P` (its workers').
pub type OpOf<P> = <<P as Protocol>::Worker as Worker>::Op;

/// One engine run with protocol `P`: the job document (from `job::read`) in, the result document out.
pub fn run<P: Protocol>(doc: Value, job_path: &Path, records_path: Option<&Path>) -> Result<Value, Error> {
    let (job, config) = job::parse::<OpOf<P>, P::Config>(doc, P::NAME, job_path)?;
    job.validate()?;
    let echoed = job::echo(&job, P::NAME, &config);
    let proto = P::setup(&job, config)?;
    if job.preflight {
        proto.preflight()?;
    }
    let records = records_path.map(records::Records::create).transpose()?;
    let report = load::run(&job, &proto, records.as_ref());
    if let Some(records) = records {
        records.finish()?;
    }
    Ok(result::run_result(&job, P::NAME, echoed, &report))
}
