//! The result document (JSON out): one run's, and several processes' results merged into one.

use super::error::Error;
use super::job::{Job, Load};
use super::load::LoadReport;
use super::series::{series_json, Second};
use super::stats::{decode_hist, errors_json, hist_json, OpStats};
use super::Operation;
use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub const FORMAT: &str = "storbench-load/1";

/// The result of a run that could not run: its first line in "fatal".
pub fn fatal(error: &Error) -> Value {
    let msg = error.to_string();
    json!({"format": FORMAT, "status": "fatal", "fatal": msg.lines().next().unwrap_or(&msg)})
}

/// The result's names of the mix entries: the op's (`_range` for ranged reads), made unique.
fn op_names<Op: Operation>(job: &Job<Op>) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for m in &job.mix {
        let mut name = if m.range_bytes > 0 { format!("{}_range", m.op.name()) } else { m.op.name() };
        if names.contains(&name) {
            name = format!("{name}_{}", names.len());
        }
        names.push(name);
    }
    names
}

/// `n` per second; None (null: n/a) over no measured time.
fn rate(n: u64, secs: f64) -> Option<f64> {
    (secs > 0.0).then(|| n as f64 / secs)
}

/// CPU microseconds per operation; None (null: n/a, not free work) with no operation done.
fn cpu_us_per_op(cpu_s: f64, ops: u64) -> Option<f64> {
    (ops > 0).then(|| cpu_s / ops as f64 * 1e6)
}

fn op_json(o: &OpStats, secs: f64) -> Value {
    json!({
        "ops": o.ops, "bytes": o.bytes, "errors": o.errors,
        "ops_per_s": rate(o.ops, secs), "mb_per_s": rate(o.bytes, secs).map(|r| r / 1e6),
        "latency": hist_json(&o.latency), "ttfb": hist_json(&o.ttfb), "service": hist_json(&o.service),
    })
}

/// One run's result; `job` is the job as echoed (`job::echo`).
pub fn run_result<Op: Operation>(job: &Job<Op>, protocol: &str, echoed: Value, report: &LoadReport) -> Value {
    let names = op_names(job);
    let secs = report.measured_s;
    let mut total = OpStats::new();
    let mut ops = Map::new();
    for (name, o) in names.iter().zip(&report.stats.per_op) {
        total.add(o);
        ops.insert(name.clone(), op_json(o, secs));
    }
    let cpu_s = report.cpu_user_s + report.cpu_sys_s;
    let (model, rate_v, outstanding) = match &job.load {
        Load::Closed { concurrency } => ("closed", Value::Null, *concurrency),
        Load::Open { rate, max_outstanding } => ("open", json!(rate / job.process_count as f64), *max_outstanding),
    };
    json!({
        "format": FORMAT,
        "status": "ok",
        "fatal": null,
        "engine": {"name": "storbench-load", "version": env!("CARGO_PKG_VERSION"), "protocol": protocol,
                   "tls": cfg!(feature = "tls")},
        "job": echoed,
        "processes": 1,
        "workers": report.workers,
        "load": {"model": model, "rate": rate_v, "workers": outstanding, "scheduled": report.scheduled,
                 "not_issued": report.not_issued, "late_starts": report.stats.late_starts,
                 "max_start_lag_ms": (total.ops > 0).then(|| report.stats.max_start_lag_us as f64 / 1000.0)},
        "start_unix_ms": report.start_unix_ms,
        "measure_start_unix_ms": report.measure_start_unix_ms,
        "measured_s": secs,
        "warmup_s": job.warmup_s,
        "ops": ops,
        "total": op_json(&total, secs),
        "errors": errors_json(&report.stats.errors),
        "series": series_json(&report.stats.series, report.warmup_seconds),
        "cpu": {"user_s": report.cpu_user_s, "sys_s": report.cpu_sys_s, "cpu_s": cpu_s,
                "cpu_us_per_op": cpu_us_per_op(cpu_s, total.ops),
                "process_cpu_s": report.cpu_total_s, "max_rss_kb": report.max_rss_kb},
        "per_process": [{"process_index": job.process_index, "ops": total.ops, "bytes": total.bytes,
                         "errors": total.errors, "cpu_s": cpu_s, "measured_s": secs,
                         "start_unix_ms": report.start_unix_ms}],
    })
}

fn read_ops(v: &Value) -> Result<OpStats, Error> {
    let hist = |k: &str| -> Result<Histogram<u64>, Error> {
        decode_hist(v[k]["hdr"].as_str().ok_or_else(|| Error::Malformed(format!("{k} has no hdr")))?)
    };
    Ok(OpStats {
        latency: hist("latency")?,
        ttfb: hist("ttfb")?,
        service: hist("service")?,
        ops: v["ops"].as_u64().unwrap_or(0),
        bytes: v["bytes"].as_u64().unwrap_or(0),
        errors: v["errors"].as_u64().unwrap_or(0),
    })
}

/// Several processes' results as one: histograms added exactly, series aligned on wall-clock seconds.
pub fn merge(inputs: &[PathBuf]) -> Result<Value, Error> {
    let docs = read_results(inputs)?;
    let window = Window::of(&docs);
    let mut sums = Sums::default();
    for d in &docs {
        sums.add(d, window.first_start)?;
    }
    Ok(sums.merged(&docs[0], docs.len(), &window))
}

/// The results at `inputs`, each of a run that ended ok (else the first fatal one's line, naming its file).
fn read_results(inputs: &[PathBuf]) -> Result<Vec<Value>, Error> {
    if inputs.is_empty() {
        return Err(Error::NoInputs);
    }
    inputs
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)
                .map_err(|source| Error::Io { what: format!("cannot read {}", path.display()), source })?;
            let v: Value = serde_json::from_str(&text)
                .map_err(|source| Error::Json { what: path.display().to_string(), source })?;
            if v["status"] != "ok" {
                let fatal = v["fatal"].as_str().unwrap_or("not ok").to_string();
                return Err(Error::NotOk { path: path.clone(), fatal });
            }
            Ok(v)
        })
        .collect()
}

/// The processes' common clock: the first start, and the measured window from the first measured start to
/// the last measured end.
struct Window {
    first_start: u64,
    measure_start: u64,
    secs: f64,
}

impl Window {
    fn of(docs: &[Value]) -> Self {
        let first_start = docs.iter().filter_map(|d| d["start_unix_ms"].as_u64()).min().unwrap_or(0);
        let measure_start = docs.iter().filter_map(|d| d["measure_start_unix_ms"].as_u64()).min().unwrap_or(0);
        let measure_end = docs
            .iter()
            .map(|d| {
                let from = d["measure_start_unix_ms"].as_u64().unwrap_or(0) as f64;
                from + d["measured_s"].as_f64().unwrap_or(0.0) * 1000.0
            })
            .fold(0.0, f64::max);
        Window { first_start, measure_start, secs: ((measure_end - measure_start as f64) / 1000.0).max(0.0) }
    }
}

/// What the processes' results add up to, read one result at a time.
#[derive(Default)]
struct Sums {
    ops: BTreeMap<String, OpStats>,
    /// The ops' names in the order they first came.
    names: Vec<String>,
    /// By kind: (count, the first example).
    errors: BTreeMap<String, (u64, String)>,
    series: Vec<Second>,
    warmup_seconds: usize,
    user_s: f64,
    sys_s: f64,
    process_cpu_s: f64,
    max_rss_kb: i64,
    workers: u64,
    scheduled: u64,
    not_issued: u64,
    late_starts: u64,
    /// null (n/a) unless some process started an operation.
    max_start_lag_ms: Option<f64>,
    per_process: Vec<Value>,
}

impl Sums {
    /// One process's result added; `first_start` is the earliest process's start (its series' second 0).
    fn add(&mut self, d: &Value, first_start: u64) -> Result<(), Error> {
        self.add_ops(d)?;
        self.add_errors(d);
        self.add_series(d, first_start);
        self.add_cpu_and_load(d);
        self.per_process.extend(d["per_process"].as_array().into_iter().flatten().cloned());
        Ok(())
    }

    fn add_ops(&mut self, d: &Value) -> Result<(), Error> {
        for (name, v) in d["ops"].as_object().ok_or_else(|| Error::Malformed("no ops".into()))? {
            let o = read_ops(v)?;
            if !self.names.contains(name) {
                self.names.push(name.clone());
            }
            self.ops.entry(name.clone()).or_insert_with(OpStats::new).add(&o);
        }
        Ok(())
    }

    fn add_errors(&mut self, d: &Value) {
        for (kind, e) in d["errors"].as_object().into_iter().flatten() {
            let example = || e["example"].as_str().unwrap_or("").to_string();
            self.errors.entry(kind.clone()).or_insert_with(|| (0, example())).0 += e["count"].as_u64().unwrap_or(0);
        }
    }

    /// The process's seconds moved to the common clock (by whole seconds from the first start) and added.
    fn add_series(&mut self, d: &Value, first_start: u64) {
        let start = d["start_unix_ms"].as_u64().unwrap_or(first_start);
        let shift = ((start - first_start) as f64 / 1000.0).round() as usize;
        for s in d["series"].as_array().into_iter().flatten() {
            let t = s["t"].as_u64().unwrap_or(0) as usize + shift;
            if self.series.len() <= t {
                self.series.resize(t + 1, Second::default());
            }
            self.series[t].add(&Second::from_json(s));
            if s["warmup"].as_bool() == Some(true) {
                self.warmup_seconds = self.warmup_seconds.max(t + 1);
            }
        }
    }

    fn add_cpu_and_load(&mut self, d: &Value) {
        let (cpu, load) = (&d["cpu"], &d["load"]);
        self.user_s += cpu["user_s"].as_f64().unwrap_or(0.0);
        self.sys_s += cpu["sys_s"].as_f64().unwrap_or(0.0);
        self.process_cpu_s += cpu["process_cpu_s"].as_f64().unwrap_or(0.0);
        self.max_rss_kb = self.max_rss_kb.max(cpu["max_rss_kb"].as_i64().unwrap_or(0));
        self.workers += d["workers"].as_u64().unwrap_or(0);
        self.scheduled += load["scheduled"].as_u64().unwrap_or(0);
        self.not_issued += load["not_issued"].as_u64().unwrap_or(0);
        self.late_starts += load["late_starts"].as_u64().unwrap_or(0);
        if let Some(l) = load["max_start_lag_ms"].as_f64() {
            self.max_start_lag_ms = Some(self.max_start_lag_ms.map_or(l, |m| m.max(l)));
        }
    }

    /// The first process's load section with the sums in it (an open loop's rate: every process's).
    fn load(&self, first: &Value, processes: usize) -> Value {
        let mut load = first["load"].clone();
        load["workers"] = json!(self.workers);
        load["scheduled"] = json!(self.scheduled);
        load["not_issued"] = json!(self.not_issued);
        load["late_starts"] = json!(self.late_starts);
        load["max_start_lag_ms"] = json!(self.max_start_lag_ms);
        if let Some(r) = first["load"]["rate"].as_f64() {
            load["rate"] = json!(r * processes as f64);
        }
        load
    }

    /// The merged result: the first process's engine, job (no process index) and warm-up, with the sums.
    fn merged(&self, first: &Value, processes: usize, window: &Window) -> Value {
        let secs = window.secs;
        let mut total = OpStats::new();
        let mut ops = Map::new();
        for name in &self.names {
            let o = &self.ops[name];
            total.add(o);
            ops.insert(name.clone(), op_json(o, secs));
        }
        let cpu_s = self.user_s + self.sys_s;
        let mut job = first["job"].clone();
        job["process_index"] = Value::Null;
        json!({
            "format": FORMAT,
            "status": "ok",
            "fatal": null,
            "engine": first["engine"],
            "job": job,
            "processes": self.per_process.len(),
            "workers": self.workers,
            "load": self.load(first, processes),
            "start_unix_ms": window.first_start,
            "measure_start_unix_ms": window.measure_start,
            "measured_s": secs,
            "warmup_s": first["warmup_s"],
            "ops": ops,
            "total": op_json(&total, secs),
            "errors": errors_json(&self.errors),
            "series": series_json(&self.series, self.warmup_seconds),
            "cpu": {"user_s": self.user_s, "sys_s": self.sys_s, "cpu_s": cpu_s,
                    "cpu_us_per_op": cpu_us_per_op(cpu_s, total.ops),
                    "process_cpu_s": self.process_cpu_s, "max_rss_kb": self.max_rss_kb},
            "per_process": self.per_process,
        })
    }
}
