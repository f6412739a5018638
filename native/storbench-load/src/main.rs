//! storbench-load: storbench's native load engine.
//!
//!   storbench-load run --job job.json --result result.json [--records ops.zst]
//!   storbench-load merge --result merged.json one.json two.json ...
//!   storbench-load version
//!
//! JSON in, JSON out; the exit status is 0 when the result file says "status": "ok", 2 when it
//! says "fatal" (one line in "fatal": the endpoint cannot be reached, credentials refused, bad
//! job), 3 when not even a result file could be written. Nothing on stdout is meant for machines.

mod job;
mod load;
mod payload;
mod s3;
mod stats;

use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};
use stats::{decode_hist, errors_json, hist_json, series_json, OpStats, Second};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;

const FORMAT: &str = "storbench-load/1";

fn usage() -> ! {
    eprintln!("usage: storbench-load run --job JOB.json --result RESULT.json [--records OPS.zst]\n       \
               storbench-load merge --result MERGED.json RESULT.json...\n       storbench-load version");
    std::process::exit(3)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else { usage() };
    let mut job_path = None;
    let mut result_path = None;
    let mut records_path = None;
    let mut inputs = Vec::new();
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--job" => {
                job_path = args.get(i + 1).map(PathBuf::from);
                i += 1
            }
            "--result" => {
                result_path = args.get(i + 1).map(PathBuf::from);
                i += 1
            }
            "--records" => {
                records_path = args.get(i + 1).map(PathBuf::from);
                i += 1
            }
            other if other.starts_with("--") => usage(),
            other => inputs.push(PathBuf::from(other)),
        }
        i += 1;
    }
    match cmd.as_str() {
        "version" => {
            println!("{}", json!({"name": "storbench-load", "version": env!("CARGO_PKG_VERSION"), "format": FORMAT,
                                  "tls": cfg!(feature = "tls"), "protocols": ["s3"]}));
        }
        "run" => {
            let (Some(job_path), Some(result_path)) = (job_path, result_path) else { usage() };
            let result = match run(&job_path, records_path.as_ref()) {
                Ok(v) => v,
                Err(msg) => fatal(&msg),
            };
            write_result(&result_path, &result);
        }
        "merge" => {
            let Some(result_path) = result_path else { usage() };
            let result = match merge(&inputs) {
                Ok(v) => v,
                Err(msg) => fatal(&msg),
            };
            write_result(&result_path, &result);
        }
        _ => usage(),
    }
}

fn fatal(msg: &str) -> Value {
    json!({"format": FORMAT, "status": "fatal", "fatal": msg.lines().next().unwrap_or(msg)})
}

fn write_result(path: &PathBuf, result: &Value) {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_vec_pretty(result).expect("json");
    if std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, path)).is_err() {
        eprintln!("storbench-load: cannot write {}", path.display());
        std::process::exit(3);
    }
    std::process::exit(if result["status"] == "ok" { 0 } else { 2 });
}

fn op_names(job: &job::Job) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for m in &job.mix {
        let mut name = if m.range_bytes > 0 { format!("{}_range", m.op) } else { m.op.clone() };
        if names.contains(&name) {
            name = format!("{name}_{}", names.len());
        }
        names.push(name);
    }
    names
}

fn sanitized_job(job: &job::Job) -> Value {
    let mut v = serde_json::to_value(job).expect("job json");
    if let Some(s3) = v.get_mut("s3").and_then(|s| s.as_object_mut()) {
        s3.remove("access_key");
        s3.remove("secret_key");
    }
    v
}

fn rate(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

fn op_json(o: &OpStats, secs: f64) -> Value {
    json!({
        "ops": o.ops, "bytes": o.bytes, "errors": o.errors,
        "ops_per_s": rate(o.ops, secs), "mb_per_s": rate(o.bytes, secs) / 1e6,
        "latency": hist_json(&o.latency), "ttfb": hist_json(&o.ttfb), "service": hist_json(&o.service),
    })
}

fn run(job_path: &PathBuf, records_path: Option<&PathBuf>) -> Result<Value, String> {
    let text = std::fs::read_to_string(job_path).map_err(|e| format!("cannot read job {}: {e}", job_path.display()))?;
    let job: job::Job = serde_json::from_str(&text).map_err(|e| format!("job {}: {e}", job_path.display()))?;
    job.validate()?;
    let report = match job.protocol.as_str() {
        "s3" => {
            let proto = s3::S3::new(&job)?;
            load::run(&job, &proto, records_path.is_some())?
        }
        other => return Err(format!("job: unknown protocol {other:?}; allowed: s3")),
    };
    if let (Some(path), Some(records)) = (records_path, &report.stats.records) {
        let file = std::fs::File::create(path).map_err(|e| format!("cannot write records {}: {e}", path.display()))?;
        let mut enc = zstd::Encoder::new(file, 3).map_err(|e| e.to_string())?;
        enc.write_all(b"intended_us,op,key,latency_us,service_us,bytes,status\n").map_err(|e| e.to_string())?;
        enc.write_all(records).map_err(|e| e.to_string())?;
        enc.finish().map_err(|e| e.to_string())?;
    }
    let names = op_names(&job);
    let secs = report.measured_s;
    let mut total = OpStats::new();
    let mut ops = Map::new();
    for (name, o) in names.iter().zip(&report.stats.per_op) {
        total.add(o);
        ops.insert(name.clone(), op_json(o, secs));
    }
    let cpu_s = report.cpu_user_s + report.cpu_sys_s;
    let (model, rate_v, outstanding) = match &job.load {
        job::Load::Closed { concurrency } => ("closed", Value::Null, *concurrency),
        job::Load::Open { rate, max_outstanding } => ("open", json!(rate / job.process_count as f64), *max_outstanding),
    };
    Ok(json!({
        "format": FORMAT,
        "status": "ok",
        "fatal": null,
        "engine": {"name": "storbench-load", "version": env!("CARGO_PKG_VERSION"), "protocol": job.protocol,
                   "tls": cfg!(feature = "tls")},
        "job": sanitized_job(&job),
        "processes": 1,
        "workers": report.workers,
        "load": {"model": model, "rate": rate_v, "workers": outstanding, "scheduled": report.scheduled,
                 "not_issued": report.not_issued, "late_starts": report.stats.late_starts,
                 "max_start_lag_ms": report.stats.max_start_lag_us as f64 / 1000.0},
        "start_unix_ms": report.start_unix_ms,
        "measure_start_unix_ms": report.measure_start_unix_ms,
        "measured_s": secs,
        "warmup_s": job.warmup_s,
        "ops": ops,
        "total": op_json(&total, secs),
        "errors": errors_json(&report.stats.errors),
        "series": series_json(&report.stats.series, report.warmup_seconds),
        "cpu": {"user_s": report.cpu_user_s, "sys_s": report.cpu_sys_s, "cpu_s": cpu_s,
                "cpu_us_per_op": if total.ops > 0 { cpu_s / total.ops as f64 * 1e6 } else { 0.0 },
                "process_cpu_s": report.cpu_total_s, "max_rss_kb": report.max_rss_kb},
        "per_process": [{"process_index": job.process_index, "ops": total.ops, "bytes": total.bytes,
                         "errors": total.errors, "cpu_s": cpu_s, "measured_s": secs,
                         "start_unix_ms": report.start_unix_ms}],
    }))
}

fn read_ops(v: &Value) -> Result<OpStats, String> {
    let hist = |k: &str| -> Result<Histogram<u64>, String> {
        decode_hist(v[k]["hdr"].as_str().ok_or_else(|| format!("result: {k} has no hdr"))?)
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
fn merge(inputs: &[PathBuf]) -> Result<Value, String> {
    if inputs.is_empty() {
        return Err("merge: no result files given".into());
    }
    let mut docs = Vec::new();
    for path in inputs {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if v["status"] != "ok" {
            return Err(format!("{}: {}", path.display(), v["fatal"].as_str().unwrap_or("not ok")));
        }
        docs.push(v);
    }
    let min_start = docs.iter().filter_map(|d| d["start_unix_ms"].as_u64()).min().unwrap_or(0);
    let measure_start = docs.iter().filter_map(|d| d["measure_start_unix_ms"].as_u64()).min().unwrap_or(0);
    let measure_end = docs
        .iter()
        .map(|d| d["measure_start_unix_ms"].as_u64().unwrap_or(0) as f64 + d["measured_s"].as_f64().unwrap_or(0.0) * 1000.0)
        .fold(0.0, f64::max);
    let secs = ((measure_end - measure_start as f64) / 1000.0).max(0.0);
    let mut ops: BTreeMap<String, OpStats> = BTreeMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut errors: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut series: Vec<Second> = Vec::new();
    let (mut user, mut sys, mut proc_cpu, mut workers, mut scheduled, mut not_issued, mut late) = (0.0, 0.0, 0.0, 0u64, 0u64, 0u64, 0u64);
    let mut lag: f64 = 0.0;
    let mut rss = 0i64;
    let mut per_process = Vec::new();
    let mut warmup_seconds = 0usize;
    for d in &docs {
        for (name, v) in d["ops"].as_object().ok_or("result: no ops")? {
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
            let ops_n = s["ops"].as_u64().unwrap_or(0);
            series[t].add(&Second {
                ops: ops_n,
                bytes: s["bytes"].as_u64().unwrap_or(0),
                errors: s["errors"].as_u64().unwrap_or(0),
                lat_sum_us: (s["mean_ms"].as_f64().unwrap_or(0.0) * 1000.0 * ops_n as f64).round() as u64,
                lat_max_us: (s["max_ms"].as_f64().unwrap_or(0.0) * 1000.0) as u64,
            });
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
        lag = lag.max(d["load"]["max_start_lag_ms"].as_f64().unwrap_or(0.0));
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
                "cpu_us_per_op": if total.ops > 0 { cpu_s / total.ops as f64 * 1e6 } else { 0.0 },
                "process_cpu_s": proc_cpu, "max_rss_kb": rss},
        "per_process": per_process,
    }))
}
