//! The job document (JSON in). Besides the protocol-neutral fields below it has a "protocol"
//! (which `main` dispatches on) and that protocol's own section, named after it ("s3": {...}),
//! which the protocol module reads: `parse` takes both out and reads the rest as a `Job`. How a protocol's
//! connections are secured is in its section: s3 by its endpoint's scheme (https://, the cargo feature "tls"),
//! cql by its "tls" ({"ca_file": PATH or null}: TLS with the server's certificate checked; `crate::cql`).

use super::error::JobError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Job<Op> {
    /// Operation mix: `Op` is the protocol's operation enum (s3: put, get, head, list, delete).
    pub mix: Vec<MixEntry<Op>>,
    #[serde(default)]
    pub object_size: SizeDist,
    /// Number of keys in the key space (0..objects).
    #[serde(default = "default_objects")]
    pub objects: u64,
    /// Key space offset: keys are start_key..start_key+objects.
    #[serde(default)]
    pub start_key: u64,
    #[serde(default)]
    pub load: Load,
    /// Measured seconds after warm-up (0 with `ops` set: until the op count is reached).
    #[serde(default)]
    pub duration_s: f64,
    /// Ops to issue in this process, warm-up included (0: time based only).
    #[serde(default)]
    pub ops: u64,
    #[serde(default)]
    pub warmup_s: f64,
    /// Content verification on reads (a mismatch is an error of kind "verify").
    #[serde(default)]
    pub verify: bool,
    /// Seed of the payload generator: the content of key i is a function of (seed, i).
    #[serde(default = "default_seed")]
    pub payload_seed: u64,
    /// This process's place among `process_count` engine processes running the same job.
    #[serde(default)]
    pub process_index: u64,
    #[serde(default = "one")]
    pub process_count: u64,
    /// Wall-clock start (Unix ms) shared by all processes of a fan-out; 0: start now.
    #[serde(default)]
    pub start_at_unix_ms: u64,
    /// Check the endpoint and credentials before the load starts; a failure is fatal.
    #[serde(default = "yes")]
    pub preflight: bool,
    /// Seed of the random key/op choices (mixed by process index).
    #[serde(default = "default_seed")]
    pub seed: u64,
}

fn default_objects() -> u64 {
    1000
}
fn default_seed() -> u64 {
    0x5eed_5eed
}
fn one() -> u64 {
    1
}
fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MixEntry<Op> {
    pub op: Op,
    #[serde(default = "one_f")]
    pub weight: f64,
    /// Default: the op's own (`Operation::keys`).
    #[serde(default)]
    pub keys: Option<KeyOrder>,
    /// Ranged reads: bytes per request (0: whole object).
    #[serde(default)]
    pub range_bytes: u64,
}

fn one_f() -> f64 {
    1.0
}

/// How an op picks its keys: in order (striped over processes), in order each once (the op ends
/// when this process's keys run out), or uniformly at random.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyOrder {
    Sequential,
    Once,
    Random,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeDist {
    Fixed {
        bytes: u64,
    },
    Uniform {
        min: u64,
        max: u64,
    },
    Choice {
        sizes: Vec<u64>,
        #[serde(default)]
        weights: Vec<f64>,
    },
}

impl Default for SizeDist {
    fn default() -> Self {
        SizeDist::Fixed { bytes: 4096 }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum Load {
    /// N workers, each issuing its next request when the previous one completes.
    Closed { concurrency: u32 },
    /// Requests scheduled at `rate` per second; latency from each intended start;
    /// at most `max_outstanding` in flight (one worker each).
    Open { rate: f64, max_outstanding: u32 },
}

impl Default for Load {
    fn default() -> Self {
        Load::Closed { concurrency: 1 }
    }
}

impl Load {
    pub fn workers(&self) -> u32 {
        match self {
            Load::Closed { concurrency } => *concurrency,
            Load::Open { max_outstanding, .. } => *max_outstanding,
        }
    }
}

impl<Op> Job<Op> {
    pub fn validate(&self) -> Result<(), JobError> {
        if self.mix.is_empty() {
            return Err(JobError::EmptyMix);
        }
        if self.mix.iter().any(|m| m.weight.is_nan() || m.weight < 0.0) || self.mix.iter().all(|m| m.weight <= 0.0) {
            return Err(JobError::MixWeights);
        }
        if self.objects == 0 {
            return Err(JobError::NoObjects);
        }
        if self.process_count == 0 || self.process_index >= self.process_count {
            return Err(JobError::ProcessIndex);
        }
        if self.duration_s <= 0.0 && self.ops == 0 {
            return Err(JobError::NoEnd);
        }
        match &self.load {
            Load::Closed { concurrency } if *concurrency == 0 => return Err(JobError::Concurrency),
            Load::Open { rate, max_outstanding } if rate.is_nan() || *rate <= 0.0 || *max_outstanding == 0 => {
                return Err(JobError::OpenLoop)
            }
            _ => {}
        }
        match &self.object_size {
            SizeDist::Fixed { .. } => {}
            SizeDist::Uniform { min, max } if min > max => return Err(JobError::SizeRange),
            SizeDist::Choice { sizes, weights }
                if sizes.is_empty() || (!weights.is_empty() && weights.len() != sizes.len()) =>
            {
                return Err(JobError::SizeChoice)
            }
            _ => {}
        }
        Ok(())
    }
}

/// The job file as a JSON document (its protocol not yet known).
pub fn read(path: &Path) -> Result<Value, JobError> {
    let text = std::fs::read_to_string(path).map_err(|source| JobError::Read { path: path.to_path_buf(), source })?;
    serde_json::from_str(&text).map_err(|source| JobError::Parse { at: format!("job {}", path.display()), source })
}

/// The job and its protocol's section (`section`, which must be there), from the document `read` returned.
pub fn parse<Op: DeserializeOwned, Config: DeserializeOwned>(
    mut doc: Value,
    section: &'static str,
    path: &Path,
) -> Result<(Job<Op>, Config), JobError> {
    let config = doc.as_object_mut().and_then(|map| {
        map.remove("protocol");
        map.remove(section)
    });
    let at = format!("job {}", path.display());
    let job = serde_json::from_value(doc).map_err(|source| JobError::Parse { at: at.clone(), source })?;
    let config = config.filter(|c| !c.is_null()).ok_or(JobError::MissingSection(section))?;
    let config =
        serde_json::from_value(config).map_err(|source| JobError::Parse { at: format!("{at}: {section}"), source })?;
    Ok((job, config))
}

/// The job as the result echoes it: the protocol and its section back in (as the section serializes:
/// a protocol leaves its secrets out).
pub fn echo<Op: Serialize>(job: &Job<Op>, protocol: &str, config: &impl Serialize) -> Value {
    let mut v = serde_json::to_value(job).expect("job json");
    v["protocol"] = Value::from(protocol);
    v[protocol] = serde_json::to_value(config).expect("job json");
    v
}
