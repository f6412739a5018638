//! The job document (JSON in). Protocol-neutral fields at the top; each protocol has its own section.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// "s3" today; the core below knows nothing about it.
    pub protocol: String,
    #[serde(default)]
    pub s3: Option<crate::s3::S3Config>,
    /// Operation mix: names are the protocol's (s3: put, get, head, list, delete).
    pub mix: Vec<MixEntry>,
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
pub struct MixEntry {
    pub op: String,
    #[serde(default = "one_f")]
    pub weight: f64,
    /// "sequential" or "random"; default: put and delete sequential, others random.
    #[serde(default)]
    pub keys: Option<String>,
    /// Ranged reads: bytes per request (0: whole object).
    #[serde(default)]
    pub range_bytes: u64,
}

fn one_f() -> f64 {
    1.0
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "dist", rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeDist {
    Fixed { bytes: u64 },
    Uniform { min: u64, max: u64 },
    Choice { sizes: Vec<u64>, #[serde(default)] weights: Vec<f64> },
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

impl Job {
    pub fn validate(&self) -> Result<(), String> {
        if self.mix.is_empty() {
            return Err("job: mix is empty".into());
        }
        if self.mix.iter().any(|m| !(m.weight >= 0.0)) || self.mix.iter().all(|m| m.weight <= 0.0) {
            return Err("job: mix weights must be >= 0 with at least one > 0".into());
        }
        if self.objects == 0 {
            return Err("job: objects must be at least 1".into());
        }
        if self.process_count == 0 || self.process_index >= self.process_count {
            return Err("job: process_index must be below process_count".into());
        }
        if self.duration_s <= 0.0 && self.ops == 0 {
            return Err("job: set duration_s or ops".into());
        }
        match &self.load {
            Load::Closed { concurrency } if *concurrency == 0 => return Err("job: concurrency must be >= 1".into()),
            Load::Open { rate, max_outstanding } if !(*rate > 0.0) || *max_outstanding == 0 => {
                return Err("job: open loop needs rate > 0 and max_outstanding >= 1".into())
            }
            _ => {}
        }
        match &self.object_size {
            SizeDist::Fixed { .. } => {}
            SizeDist::Uniform { min, max } if min > max => return Err("job: object_size min > max".into()),
            SizeDist::Choice { sizes, weights } if sizes.is_empty() || (!weights.is_empty() && weights.len() != sizes.len()) => {
                return Err("job: object_size choice needs sizes (and as many weights)".into())
            }
            _ => {}
        }
        Ok(())
    }
}
