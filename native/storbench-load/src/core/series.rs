//! The per-second series: ops, bytes, errors and latency (mean, max) of each wall-clock second
//! of a run, counted from its start; merged across workers and processes by adding.

use serde_json::{json, Value};

#[derive(Clone, Copy, Default)]
pub struct Second {
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub lat_sum_us: u64,
    pub lat_max_us: u64,
}

impl Second {
    pub fn add(&mut self, o: &Second) {
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.errors += o.errors;
        self.lat_sum_us += o.lat_sum_us;
        self.lat_max_us = self.lat_max_us.max(o.lat_max_us);
    }

    /// A second as `series_json` wrote it (its mean turned back into a sum).
    pub fn from_json(s: &Value) -> Second {
        let ops = s["ops"].as_u64().unwrap_or(0);
        Second {
            ops,
            bytes: s["bytes"].as_u64().unwrap_or(0),
            errors: s["errors"].as_u64().unwrap_or(0),
            lat_sum_us: (s["mean_ms"].as_f64().unwrap_or(0.0) * 1000.0 * ops as f64).round() as u64,
            lat_max_us: (s["max_ms"].as_f64().unwrap_or(0.0) * 1000.0) as u64,
        }
    }
}

pub fn series_json(series: &[Second], warmup_seconds: usize) -> Value {
    Value::Array(
        series
            .iter()
            .enumerate()
            .map(|(t, s)| {
                json!({
                    "t": t, "warmup": t < warmup_seconds, "ops": s.ops, "bytes": s.bytes, "errors": s.errors,
                    "mean_ms": if s.ops > 0 { s.lat_sum_us as f64 / s.ops as f64 / 1000.0 } else { 0.0 },
                    "max_ms": s.lat_max_us as f64 / 1000.0,
                })
            })
            .collect(),
    )
}
