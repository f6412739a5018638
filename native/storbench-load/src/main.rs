//! storbench-load: storbench's native load engine.
//!
//!   storbench-load run --job job.json --result result.json [--records ops.zst]
//!   storbench-load merge --result merged.json one.json two.json ...
//!   storbench-load version
//!   storbench-load ycsb-keys draws=N seed=S recordcount=R [requestdistribution=zipfian ...]
//!
//!   storbench-load ycsb-workload LETTER
//!
//! `ycsb-workload` prints YCSB's workload A–F as a job's "mix" and "ycsb" properties:
//! {"mix": [{"op": "READ", "weight": 0.5}, ...], "ycsb": {"requestdistribution": "zipfian", ...}}.
//! `ycsb-keys` draws N key numbers with YCSB's run-phase key chooser (`ycsb::KeyChooser`, any
//! "ycsb" job-section property as NAME=VALUE) and prints {"draws": N, "counts": {"keynum": n}}
//! on stdout: the conformance test against YCSB's own generators reads it.
//!
//! The S3 credentials come from the 0600 JSON file $STORBENCH_SECRETS_FILE names (core::secrets), else
//! $STORBENCH_S3_ACCESS_KEY and $STORBENCH_S3_SECRET_KEY (a job's own keys are read only when those are unset).
//! JSON in, JSON out; the exit status is 0 when the result file says "status": "ok", 2 when it
//! says "fatal" (one line in "fatal": the endpoint cannot be reached, credentials refused, bad
//! job), 3 when not even a result file could be written, 4 when its parent process went away during the
//! load (it exits at once, writing nothing more). Nothing on stdout is meant for machines.
//!
//! `core` is protocol-agnostic; each protocol is a module implementing `core::Protocol`, listed
//! in `PROTOCOLS` below: the job's "protocol" picks it ("s3" when the job does not say).

mod core;
mod cql;
mod s3;
mod ycsb;

use crate::core::result::{fatal, merge, FORMAT};
use crate::core::{job, Error, JobError, Protocol as _};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// One run of a job document with one protocol (`core::run::<P>`).
type Runner = fn(Value, &Path, Option<&Path>) -> Result<Value, Error>;

/// The protocols, by the job's "protocol" value: a new protocol is one line here.
const PROTOCOLS: &[(&str, Runner)] = &[(s3::S3::NAME, core::run::<s3::S3>), (cql::Cql::NAME, core::run::<cql::Cql>)];

/// The protocol of jobs that do not name one (they were all S3 before there was a choice).
const DEFAULT_PROTOCOL: &str = s3::S3::NAME;

fn usage() -> ! {
    eprintln!("usage: storbench-load run --job JOB.json --result RESULT.json [--records OPS.zst]\n       \
               storbench-load merge --result MERGED.json RESULT.json...\n       storbench-load version\n       \
               storbench-load ycsb-workload LETTER\n       storbench-load ycsb-keys draws=N seed=S recordcount=R [NAME=VALUE...]");
    std::process::exit(3)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else { usage() };
    if cmd == "ycsb-workload" {
        let Some(workload) = args.get(1).and_then(|w| ycsb::workload(w)) else {
            eprintln!("storbench-load ycsb-workload: expected one of the letters a b c d e f");
            std::process::exit(2)
        };
        println!("{workload}");
        return;
    }
    if cmd == "ycsb-keys" {
        match ycsb_keys(&args[1..]) {
            Ok(out) => println!("{out}"),
            Err(e) => {
                eprintln!("storbench-load ycsb-keys: {e}");
                std::process::exit(2)
            }
        }
        return;
    }
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
            println!(
                "{}",
                json!({"name": "storbench-load", "version": env!("CARGO_PKG_VERSION"), "format": FORMAT,
                                  "tls": cfg!(feature = "tls"),
                                  "protocols": PROTOCOLS.iter().map(|(name, _)| *name).collect::<Vec<_>>()})
            );
        }
        "run" => {
            let (Some(job_path), Some(result_path)) = (job_path, result_path) else { usage() };
            let result = run(&job_path, records_path.as_deref()).unwrap_or_else(|e| fatal(&e));
            write_result(&result_path, &result);
        }
        "merge" => {
            let Some(result_path) = result_path else { usage() };
            let result = merge(&inputs).unwrap_or_else(|e| fatal(&e));
            write_result(&result_path, &result);
        }
        _ => usage(),
    }
}

fn write_result(path: &Path, result: &Value) {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_vec_pretty(result).expect("json");
    if std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, path)).is_err() {
        eprintln!("storbench-load: cannot write {}", path.display());
        std::process::exit(3);
    }
    std::process::exit(if result["status"] == "ok" { 0 } else { 2 });
}

/// The job's protocol: its "protocol" value, `DEFAULT_PROTOCOL` when it has none.
fn protocol_of(doc: &Value) -> Result<&'static (&'static str, Runner), JobError> {
    let name = match doc.get("protocol") {
        None | Some(Value::Null) => DEFAULT_PROTOCOL.to_string(),
        Some(Value::String(name)) => name.clone(),
        Some(other) => other.to_string(),
    };
    PROTOCOLS.iter().find(|(known, _)| *known == name).ok_or_else(|| {
        let allowed = PROTOCOLS.iter().map(|(known, _)| *known).collect::<Vec<_>>().join(", ");
        JobError::UnknownProtocol { name, allowed }
    })
}

fn run(job_path: &Path, records_path: Option<&Path>) -> Result<Value, Error> {
    let doc = job::read(job_path)?;
    let (_, runner) = protocol_of(&doc)?;
    runner(doc, job_path, records_path)
}

/// `ycsb-keys NAME=VALUE...`: the counts of `draws` key numbers from YCSB's key chooser.
fn ycsb_keys(args: &[String]) -> Result<Value, String> {
    let mut section = serde_json::Map::new();
    let (mut draws, mut seed) = (100_000u64, 1u64);
    for arg in args {
        let (name, value) = arg.split_once('=').ok_or_else(|| format!("expected NAME=VALUE, got {arg:?}"))?;
        let parsed = serde_json::from_str(value).unwrap_or_else(|_| Value::from(value));
        match name {
            "draws" => draws = value.parse().map_err(|_| format!("draws: not a count: {value:?}"))?,
            "seed" => seed = value.parse().map_err(|_| format!("seed: not a number: {value:?}"))?,
            _ => {
                section.insert(name.to_string(), parsed);
            }
        }
    }
    let cfg: ycsb::YcsbConfig = serde_json::from_value(Value::Object(section)).map_err(|e| e.to_string())?;
    cfg.validate()?;
    let inserts = ycsb::AckCounter::new(cfg.recordcount);
    let mut chooser = ycsb::KeyChooser::new(&cfg, inserts.last_value());
    let mut rng = core::payload::Rng::new(seed);
    let mut counts = std::collections::BTreeMap::<i64, u64>::new();
    for _ in 0..draws {
        *counts.entry(chooser.next_keynum(inserts.last_value(), &mut rng)).or_insert(0) += 1;
    }
    let counts: serde_json::Map<String, Value> =
        counts.into_iter().map(|(k, n)| (k.to_string(), Value::from(n))).collect();
    Ok(json!({"draws": draws, "counts": counts}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocol_is_s3_unless_the_job_names_another() {
        assert_eq!(protocol_of(&json!({"mix": []})).unwrap().0, "s3");
        assert_eq!(protocol_of(&json!({"protocol": null})).unwrap().0, "s3");
        assert_eq!(protocol_of(&json!({"protocol": "s3"})).unwrap().0, "s3");
        assert_eq!(protocol_of(&json!({"protocol": "cql"})).unwrap().0, "cql");
        let err = protocol_of(&json!({"protocol": "kv"})).unwrap_err();
        assert_eq!(err.to_string(), "job: unknown protocol \"kv\"; allowed: s3, cql");
        let err = protocol_of(&json!({"protocol": 5})).unwrap_err();
        assert_eq!(err.to_string(), "job: unknown protocol \"5\"; allowed: s3, cql");
    }
}
