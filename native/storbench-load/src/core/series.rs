//! The per-second series: ops, bytes, errors and latency (mean, max) of each wall-clock second
//! of a run, counted from its start; merged across workers and processes by adding. A second in
//! which no operation completed has no latency: its mean and max are null (n/a), never 0.

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

    /// Mean and max latency in ms; None when no operation completed in the second.
    pub fn latency_ms(&self) -> (Option<f64>, Option<f64>) {
        if self.ops == 0 {
            return (None, None);
        }
        (Some(self.lat_sum_us as f64 / self.ops as f64 / 1000.0), Some(self.lat_max_us as f64 / 1000.0))
    }

    /// A second as `series_json` wrote it (its mean turned back into a sum; null latencies add nothing).
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
                let (mean_ms, max_ms) = s.latency_ms();
                json!({
                    "t": t, "warmup": t < warmup_seconds, "ops": s.ops, "bytes": s.bytes, "errors": s.errors,
                    "mean_ms": mean_ms, "max_ms": max_ms,
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_without_operations_has_no_latency_not_zero() {
        let busy = Second { ops: 2, bytes: 8, errors: 0, lat_sum_us: 3000, lat_max_us: 2000 };
        let idle = Second { errors: 1, ..Second::default() }; // a failed request: no latency recorded
        let json = series_json(&[busy, idle], 1);
        assert_eq!(json[0]["mean_ms"], 1.5);
        assert_eq!(json[0]["max_ms"], 2.0);
        assert!(json[1]["mean_ms"].is_null() && json[1]["max_ms"].is_null(), "{}", json[1]);
        assert_eq!((json[1]["ops"].as_u64(), json[1]["errors"].as_u64()), (Some(0), Some(1)));
        // read back for a merge: the null second adds nothing, the busy one its sum and max
        let mut merged = Second::from_json(&json[0]);
        merged.add(&Second::from_json(&json[1]));
        assert_eq!((merged.ops, merged.errors, merged.lat_sum_us, merged.lat_max_us), (2, 1, 3000, 2000));
    }
}
