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
    if inputs.is_empty() {
        return Err(Error::NoInputs);
    }
    let mut docs = Vec::new();
    for path in inputs {
        let text = std::fs::read_to_string(path)
            .map_err(|source| Error::Io { what: format!("cannot read {}", path.display()), source })?;
        let v: Value =
            serde_json::from_str(&text).map_err(|source| Error::Json { what: path.display().to_string(), source })?;
        if v["status"] != "ok" {
            return Err(Error::NotOk {
                path: path.clone(),
                fatal: v["fatal"].as_str().unwrap_or("not ok").to_string(),
            });
        }
        docs.push(v);
    }
    let min_start = docs.iter().filter_map(|d| d["start_unix_ms"].as_u64()).min().unwrap_or(0);
    let measure_start = docs.iter().filter_map(|d| d["measure_start_unix_ms"].as_u64()).min().unwrap_or(0);
    let measure_end = docs
        .iter()
        .map(|d| {
            d["measure_start_unix_ms"].as_u64().unwrap_or(0) as f64 + d["measured_s"].as_f64().unwrap_or(0.0) * 1000.0
        })
        .fold(0.0, f64::max);
    let secs = ((measure_end - measure_start as f64) / 1000.0).max(0.0);
    let mut ops: BTreeMap<String, OpStats> = BTreeMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut errors: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut series: Vec<Second> = Vec::new();
    let (mut user, mut sys, mut proc_cpu, mut workers, mut scheduled, mut not_issued, mut late) =
        (0.0, 0.0, 0.0, 0u64, 0u64, 0u64, 0u64);
    let mut lag: Option<f64> = None; // null (n/a) unless some process started an operation
    let mut rss = 0i64;
    let mut per_process = Vec::new();
    let mut warmup_seconds = 0usize;
    for d in &docs {
        for (name, v) in d["ops"].as_object().ok_or_else(|| Error::Malformed("no ops".into()))? {
            let o = read_ops(v)?;
            if !names.contains(name) {
                names.push(name.clone());
            }
            ops.entry(name.clone()).or_insert_with(OpStats::new).add(&o);
        }
        if let Some(errs) = d["errors"].as_object() {
            for (kind, e) in errs {
                let entry = errors.entry(kind.clone()).or_insert((0, e["example"].as_str().unwrap_or("").to_string()));
                entry.0 += e["count"].as_u64().unwrap_or(0);
            }
        }
        let shift = ((d["start_unix_ms"].as_u64().unwrap_or(min_start) - min_start) as f64 / 1000.0).round() as usize;
        for s in d["series"].as_array().into_iter().flatten() {
            let t = s["t"].as_u64().unwrap_or(0) as usize + shift;
            if series.len() <= t {
                series.resize(t + 1, Second::default());
            }
            series[t].add(&Second::from_json(s));
            if s["warmup"].as_bool() == Some(true) {
                warmup_seconds = warmup_seconds.max(t + 1);
            }
        }
        user += d["cpu"]["user_s"].as_f64().unwrap_or(0.0);
        sys += d["cpu"]["sys_s"].as_f64().unwrap_or(0.0);
        proc_cpu += d["cpu"]["process_cpu_s"].as_f64().unwrap_or(0.0);
        rss = rss.max(d["cpu"]["max_rss_kb"].as_i64().unwrap_or(0));
        workers += d["workers"].as_u64().unwrap_or(0);
        scheduled += d["load"]["scheduled"].as_u64().unwrap_or(0);
        not_issued += d["load"]["not_issued"].as_u64().unwrap_or(0);
        late += d["load"]["late_starts"].as_u64().unwrap_or(0);
        if let Some(l) = d["load"]["max_start_lag_ms"].as_f64() {
            lag = Some(lag.map_or(l, |m| m.max(l)));
        }
        for p in d["per_process"].as_array().into_iter().flatten() {
            per_process.push(p.clone());
        }
    }
    let mut total = OpStats::new();
    let mut ops_json = Map::new();
    for name in &names {
        let o = &ops[name];
        total.add(o);
        ops_json.insert(name.clone(), op_json(o, secs));
    }
    let cpu_s = user + sys;
    let first = &docs[0];
    let mut load = first["load"].clone();
    load["workers"] = json!(workers);
    load["scheduled"] = json!(scheduled);
    load["not_issued"] = json!(not_issued);
    load["late_starts"] = json!(late);
    load["max_start_lag_ms"] = json!(lag);
    if let Some(r) = first["load"]["rate"].as_f64() {
        load["rate"] = json!(r * docs.len() as f64);
    }
    let mut job = first["job"].clone();
    job["process_index"] = Value::Null;
    Ok(json!({
        "format": FORMAT,
        "status": "ok",
        "fatal": null,
        "engine": first["engine"],
        "job": job,
        "processes": per_process.len(),
        "workers": workers,
        "load": load,
        "start_unix_ms": min_start,
        "measure_start_unix_ms": measure_start,
        "measured_s": secs,
        "warmup_s": first["warmup_s"],
        "ops": ops_json,
        "total": op_json(&total, secs),
        "errors": errors_json(&errors),
        "series": series_json(&series, warmup_seconds),
        "cpu": {"user_s": user, "sys_s": sys, "cpu_s": cpu_s,
                "cpu_us_per_op": cpu_us_per_op(cpu_s, total.ops),
                "process_cpu_s": proc_cpu, "max_rss_kb": rss},
        "per_process": per_process,
    }))
}
