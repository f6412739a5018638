//! Measurements: HDR histograms per operation (latency, time to first byte, service time),
//! errors by kind, the per-second series (`series`); merged across workers and processes exactly.

use super::error::Error;
use super::series::Second;
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

pub const SIGFIGS: u8 = 3;

pub fn new_hist() -> Histogram<u64> {
    // microseconds, 1 µs .. 1 hour, growing beyond if needed
    let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, SIGFIGS).expect("histogram bounds");
    h.auto(true);
    h
}

pub fn encode_hist(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2Serializer::new().serialize(h, &mut buf).expect("serialize histogram");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

pub fn decode_hist(text: &str) -> Result<Histogram<u64>, Error> {
    let raw = base64::engine::general_purpose::STANDARD.decode(text).map_err(Error::HistogramBase64)?;
    let mut h: Histogram<u64> = Deserializer::new().deserialize(&mut &raw[..]).map_err(Error::Histogram)?;
    h.auto(true);
    Ok(h)
}

/// p50/p90/p95/p99/p99.9/max/mean in milliseconds plus the exact encoded histogram (µs).
pub fn hist_json(h: &Histogram<u64>) -> Value {
    let ms = |v: u64| v as f64 / 1000.0;
    if h.is_empty() {
        return json!({"count": 0, "unit": "us", "hdr": encode_hist(h)});
    }
    json!({
        "count": h.len(),
        "unit": "us",
        "p50_ms": ms(h.value_at_quantile(0.50)),
        "p90_ms": ms(h.value_at_quantile(0.90)),
        "p95_ms": ms(h.value_at_quantile(0.95)),
        "p99_ms": ms(h.value_at_quantile(0.99)),
        "p99_9_ms": ms(h.value_at_quantile(0.999)),
        "max_ms": ms(h.max()),
        "min_ms": ms(h.min()),
        "mean_ms": h.mean() / 1000.0,
        "hdr": encode_hist(h),
    })
}

pub struct OpStats {
    pub latency: Histogram<u64>,
    pub ttfb: Histogram<u64>,
    pub service: Histogram<u64>,
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
}

impl OpStats {
    pub fn new() -> Self {
        OpStats { latency: new_hist(), ttfb: new_hist(), service: new_hist(), ops: 0, bytes: 0, errors: 0 }
    }
    pub fn add(&mut self, other: &OpStats) {
        self.latency.add(&other.latency).expect("merge");
        self.ttfb.add(&other.ttfb).expect("merge");
        self.service.add(&other.service).expect("merge");
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.errors += other.errors;
    }
}

/// What one worker measured; workers never share these while running.
pub struct WorkerStats {
    pub per_op: Vec<OpStats>,
    pub series: Vec<Second>,
    pub errors: BTreeMap<String, (u64, String)>,
    pub late_starts: u64,
    pub max_start_lag_us: u64,
}

impl WorkerStats {
    pub fn new(ops: usize) -> Self {
        WorkerStats {
            per_op: (0..ops).map(|_| OpStats::new()).collect(),
            series: Vec::new(),
            errors: BTreeMap::new(),
            late_starts: 0,
            max_start_lag_us: 0,
        }
    }

    pub fn second(&mut self, index: usize) -> &mut Second {
        if self.series.len() <= index {
            self.series.resize(index + 1, Second::default());
        }
        &mut self.series[index]
    }

    pub fn error(&mut self, kind: &str, message: &str) {
        let entry = self.errors.entry(kind.to_string()).or_insert((0, message.to_string()));
        entry.0 += 1;
    }

    pub fn merge(&mut self, other: WorkerStats) {
        for (a, b) in self.per_op.iter_mut().zip(&other.per_op) {
            a.add(b);
        }
        for (i, s) in other.series.iter().enumerate() {
            self.second(i).add(s);
        }
        for (kind, (n, msg)) in other.errors {
            let entry = self.errors.entry(kind).or_insert((0, msg));
            entry.0 += n;
        }
        self.late_starts += other.late_starts;
        self.max_start_lag_us = self.max_start_lag_us.max(other.max_start_lag_us);
    }
}

pub fn errors_json(errors: &BTreeMap<String, (u64, String)>) -> Value {
    let mut map = Map::new();
    for (kind, (n, msg)) in errors {
        map.insert(kind.clone(), json!({"count": n, "example": msg}));
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_round_trip_and_merge_exactly() {
        let mut a = new_hist();
        let mut b = new_hist();
        let mut both = new_hist();
        for v in 1..5000u64 {
            a.record(v * 3).unwrap();
            both.record(v * 3).unwrap();
        }
        for v in 1..700u64 {
            b.record(v * 1001).unwrap();
            both.record(v * 1001).unwrap();
        }
        let mut merged = decode_hist(&encode_hist(&a)).unwrap();
        merged.add(decode_hist(&encode_hist(&b)).unwrap()).unwrap();
        assert_eq!(merged.len(), both.len());
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(merged.value_at_quantile(q), both.value_at_quantile(q));
        }
        assert_eq!(merged.max(), both.max());
    }

    #[test]
    fn worker_stats_merge_series_and_errors() {
        let mut a = WorkerStats::new(2);
        let mut b = WorkerStats::new(2);
        a.second(0).ops = 3;
        b.second(2).ops = 4;
        b.second(0).lat_max_us = 9;
        a.error("http_403", "first");
        b.error("http_403", "second");
        b.error("timeout", "t");
        a.merge(b);
        assert_eq!(a.series.len(), 3);
        assert_eq!(a.series[0].ops, 3);
        assert_eq!(a.series[0].lat_max_us, 9);
        assert_eq!(a.series[2].ops, 4);
        assert_eq!(a.errors["http_403"], (2, "first".to_string()));
        assert_eq!(a.errors["timeout"].0, 1);
    }
}
