//! The core driven by a protocol it has never heard of: a key-value store in memory.

use super::*;
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};

operations! {
    enum KvOp { Write => Sequential, Read => Random, Erase => Consume }
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct KvConfig {
    /// Requests for keys divisible by this fail (0: none).
    #[serde(default)]
    fail_every: u64,
    #[serde(default)]
    unreachable: bool,
    #[serde(default, skip_serializing)]
    password: String,
}

#[derive(Debug)]
struct Refused(u64);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "key {} refused", self.0)
    }
}

impl std::error::Error for Refused {}

impl OpFailure for Refused {
    fn kind(&self) -> Cow<'_, str> {
        Cow::Borrowed("refused")
    }
}

type Seen = Arc<Mutex<Vec<(KvOp, u64)>>>;

struct Kv {
    fail_every: u64,
    unreachable: bool,
    seen: Seen,
}

struct KvWorker {
    fail_every: u64,
    seen: Seen,
}

impl Worker for KvWorker {
    type Op = KvOp;
    type Error = Refused;

    fn execute(&mut self, req: &Request<KvOp>) -> Result<Outcome, Refused> {
        self.seen.lock().unwrap().push((req.op, req.key));
        if self.fail_every > 0 && req.key.is_multiple_of(self.fail_every) {
            return Err(Refused(req.key));
        }
        let bytes = if req.op == KvOp::Erase { 0 } else { req.range.map_or(req.size, |(_, len)| len) };
        Ok(Outcome { bytes, first_byte: Some(Instant::now()) })
    }
}

impl Protocol for Kv {
    const NAME: &'static str = "kv";
    type Config = KvConfig;
    type Worker = KvWorker;

    fn setup(_job: &Job<KvOp>, config: KvConfig) -> Result<Self, Error> {
        let KvConfig { fail_every, unreachable, password } = config;
        if password.is_empty() {
            return Err(JobError::Invalid("kv.password is empty").into());
        }
        Ok(Kv { fail_every, unreachable, seen: Seen::default() })
    }
    fn preflight(&self) -> Result<(), Error> {
        if self.unreachable {
            return Err(Error::protocol(Refused(u64::MAX)));
        }
        Ok(())
    }
    fn worker(&self, _index: u32) -> KvWorker {
        KvWorker { fail_every: self.fail_every, seen: self.seen.clone() }
    }
}

fn doc(extra: Value) -> Value {
    let mut doc = json!({"protocol": "kv", "kv": {"password": "secret"}, "mix": [{"op": "write"}],
                         "object_size": {"dist": "fixed", "bytes": 100}, "objects": 10, "ops": 10,
                         "load": {"model": "closed", "concurrency": 3}});
    for (k, v) in extra.as_object().unwrap() {
        match (k.as_str(), v.as_object()) {
            ("kv", Some(section)) => section.iter().for_each(|(name, value)| doc["kv"][name] = value.clone()),
            _ => doc[k] = v.clone(),
        }
    }
    doc
}

fn setup(extra: Value) -> (Job<KvOp>, Kv) {
    let (job, config) = job::parse::<KvOp, KvConfig>(doc(extra), "kv", Path::new("job.json")).unwrap();
    job.validate().unwrap();
    let kv = Kv::setup(&job, config).unwrap();
    (job, kv)
}

fn keys(kv: &Kv) -> Vec<u64> {
    let mut keys: Vec<u64> = kv.seen.lock().unwrap().iter().map(|(_, k)| *k).collect();
    keys.sort();
    keys
}

#[test]
fn a_whole_run_of_a_protocol_the_core_does_not_name() {
    let result = run::<Kv>(doc(json!({"start_key": 100})), Path::new("job.json"), None).unwrap();
    assert_eq!(result["status"], "ok");
    assert_eq!(result["engine"]["protocol"], "kv");
    assert_eq!(result["ops"]["write"]["ops"], 10);
    assert_eq!(result["ops"]["write"]["bytes"], 1000);
    assert_eq!(result["total"]["errors"], 0);
    assert_eq!(result["workers"], 3);
    // the job echoed with its protocol and section, without the section's secrets
    assert_eq!(result["job"]["protocol"], "kv");
    assert_eq!(result["job"]["kv"], json!({"fail_every": 0, "unreachable": false}));
    assert_eq!(result["job"]["mix"][0]["op"], "write");
}

#[test]
fn sequential_keys_each_once_and_consuming_ops_end_the_run() {
    let (job, kv) = setup(json!({"start_key": 100}));
    let report = load::run(&job, &kv, None);
    assert_eq!(keys(&kv), (100..110).collect::<Vec<_>>());
    assert_eq!(report.stats.per_op[0].ops, 10);

    let (job, kv) = setup(json!({"mix": [{"op": "erase"}], "ops": 0, "duration_s": 30}));
    let report = load::run(&job, &kv, None);
    assert_eq!(keys(&kv), (0..10).collect::<Vec<_>>());
    assert!(report.measured_s < 30.0, "{}", report.measured_s);

    // "keys": "once": any op consumes its keys; each process of three its own stripe, then it ends
    let mut all = Vec::new();
    for index in 0..3 {
        let (job, kv) = setup(json!({"mix": [{"op": "write", "keys": "once"}], "ops": 1000,
                                     "process_index": index, "process_count": 3}));
        let report = load::run(&job, &kv, None);
        assert_eq!(report.stats.per_op[0].ops as usize, keys(&kv).len());
        all.extend(keys(&kv));
    }
    all.sort();
    assert_eq!(all, (0..10).collect::<Vec<_>>());
}

#[test]
fn failures_are_counted_by_kind_and_recorded() {
    let (job, kv) = setup(json!({"kv": {"fail_every": 3}, "load": {"model": "closed", "concurrency": 1}}));
    let dir = std::env::temp_dir().join(format!("storbench-load-test-records-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ops.zst");
    let records = records::Records::create(&path).unwrap();
    let report = load::run(&job, &kv, Some(&records));
    records.finish().unwrap();
    let op = &report.stats.per_op[0];
    assert_eq!((op.ops, op.errors), (6, 4)); // keys 0, 3, 6, 9 refused
    assert_eq!(report.stats.errors["refused"], (4, "key 0 refused".to_string()));
    let text = String::from_utf8(zstd::decode_all(std::fs::File::open(&path).unwrap()).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(text.lines().next(), Some(records::HEADER.trim_end()));
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 10);
    assert!(rows.iter().all(|r| r[1] == "write"));
    assert_eq!(rows.iter().filter(|r| r[6] == "refused").count(), 4);
    assert_eq!(rows.iter().filter(|r| r[6] == "ok" && r[5] == "100").count(), 6);
}

#[test]
fn no_operation_done_is_null_not_zero() {
    // every request refused: no operation completed, so CPU per operation and every second's latency are n/a
    let result = run::<Kv>(doc(json!({"kv": {"fail_every": 1}})), Path::new("job.json"), None).unwrap();
    assert_eq!((result["total"]["ops"].as_u64(), result["total"]["errors"].as_u64()), (Some(0), Some(10)));
    assert!(result["cpu"]["cpu_us_per_op"].is_null(), "{}", result["cpu"]);
    assert!(result["load"]["max_start_lag_ms"].is_null(), "{}", result["load"]);
    assert!(result["cpu"]["cpu_s"].as_f64().is_some());
    let series = result["series"].as_array().unwrap();
    assert!(!series.is_empty());
    assert!(series.iter().all(|s| s["mean_ms"].is_null() && s["max_ms"].is_null()), "{series:?}");
    assert!(result["total"]["latency"].get("mean_ms").is_none()); // an empty histogram has no figures
}

#[test]
fn a_second_with_no_operation_keeps_its_place_with_null_latency() {
    // open loop at 0.5/s for 2.1 s: requests due at 0 s and 2 s, none in second 1
    let job = doc(json!({"mix": [{"op": "read"}], "ops": 0, "duration_s": 2.1,
                         "load": {"model": "open", "rate": 0.5, "max_outstanding": 1}}));
    let result = run::<Kv>(job, Path::new("job.json"), None).unwrap();
    let series = result["series"].as_array().unwrap();
    let ops: Vec<u64> = series.iter().map(|s| s["ops"].as_u64().unwrap()).collect();
    assert_eq!(ops, [1, 0, 1], "{series:?}");
    assert!(series[1]["mean_ms"].is_null() && series[1]["max_ms"].is_null(), "{}", series[1]);
    for s in [&series[0], &series[2]] {
        assert!(s["mean_ms"].as_f64().is_some() && s["max_ms"].as_f64().is_some(), "{s}");
    }
    assert!(result["cpu"]["cpu_us_per_op"].as_f64().unwrap() > 0.0);
}

#[test]
fn the_mix_names_the_result_ops_and_ranges() {
    let mix = json!([{"op": "read", "weight": 1}, {"op": "read", "range_bytes": 10, "keys": "sequential"},
                     {"op": "read", "weight": 0}]);
    let result = run::<Kv>(doc(json!({"mix": mix, "ops": 300})), Path::new("job.json"), None).unwrap();
    let ops = result["ops"].as_object().unwrap();
    assert_eq!(ops.keys().collect::<Vec<_>>(), ["read", "read_2", "read_range"]);
    assert_eq!(result["total"]["ops"], 300);
    let ranged = &result["ops"]["read_range"];
    assert_eq!(ranged["bytes"].as_u64().unwrap(), 10 * ranged["ops"].as_u64().unwrap());
    assert_eq!(result["ops"]["read_2"]["ops"], 0);
}

#[test]
fn open_loop_schedules_at_the_rate() {
    let (job, kv) = setup(json!({"mix": [{"op": "read"}], "ops": 0, "duration_s": 0.5,
                                 "load": {"model": "open", "rate": 200, "max_outstanding": 2}}));
    let report = load::run(&job, &kv, None);
    assert_eq!(report.scheduled, 100);
    let ops = report.stats.per_op[0].ops;
    assert!((70..=100).contains(&ops), "{ops}");
}

#[test]
fn protocol_errors_end_the_run_with_their_message() {
    let err = run::<Kv>(doc(json!({"kv": {"unreachable": true}})), Path::new("job.json"), None).unwrap_err();
    assert_eq!(err.to_string(), format!("key {} refused", u64::MAX));
    let err = run::<Kv>(doc(json!({"kv": {"password": ""}})), Path::new("job.json"), None).unwrap_err();
    assert_eq!(err.to_string(), "job: kv.password is empty");
    assert_eq!(result::fatal(&err)["fatal"], "job: kv.password is empty");
    assert_eq!(result::fatal(&err)["status"], "fatal");
}

#[test]
fn the_job_refuses_what_it_does_not_know() {
    let parse = |extra: Value| {
        let (job, _) = job::parse::<KvOp, KvConfig>(doc(extra), "kv", Path::new("j.json"))?;
        job.validate()
    };
    let message = |extra: Value| parse(extra).unwrap_err().to_string();
    let unknown_op = message(json!({"mix": [{"op": "put"}]}));
    assert_eq!(unknown_op, "job j.json: unknown op \"put\"; allowed: write, read, erase");
    assert!(message(json!({"mix": [{"op": "read", "keys": "sometimes"}]})).contains("unknown variant `sometimes`"));
    assert!(message(json!({"durations": 5})).contains("unknown field `durations`"));
    assert!(message(json!({"s3": {}})).contains("unknown field `s3`"));
    assert!(message(json!({"kv": {"fail_evry": 2}})).starts_with("job j.json: kv: unknown field `fail_evry`"));
    assert_eq!(message(json!({"kv": null})), "job: protocol kv needs a section \"kv\"");
    assert_eq!(message(json!({"mix": []})), "job: mix is empty");
    assert_eq!(message(json!({"ops": 0})), "job: set duration_s or ops");
    assert_eq!(
        message(json!({"load": {"model": "open", "rate": 0, "max_outstanding": 1}})),
        "job: open loop needs rate > 0 and max_outstanding >= 1"
    );
    assert_eq!(message(json!({"object_size": {"dist": "uniform", "min": 5, "max": 4}})), "job: object_size min > max");
    assert!(parse(json!({"protocol": null})).is_ok());
}

#[test]
fn fatal_errors_say_what_failed() {
    let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
    let read = JobError::Read { path: "j.json".into(), source: io() };
    assert_eq!(read.to_string(), "cannot read job j.json: No such file");
    assert!(std::error::Error::source(&read).is_some());
    let unknown = JobError::UnknownProtocol { name: "cql".into(), allowed: "s3".into() };
    assert_eq!(Error::from(unknown).to_string(), "job: unknown protocol \"cql\"; allowed: s3");
    let write = Error::Io { what: "cannot write records r.zst".into(), source: io() };
    assert_eq!(write.to_string(), "cannot write records r.zst: No such file");
    assert_eq!(Error::NoInputs.to_string(), "merge: no result files given");
    assert_eq!(Error::NotOk { path: "a.json".into(), fatal: "boom".into() }.to_string(), "a.json: boom");
    assert_eq!(Error::Malformed("latency has no hdr".into()).to_string(), "result: latency has no hdr");
    assert!(stats::decode_hist("not base64!").unwrap_err().to_string().starts_with("histogram base64: "));
    let two_lines = Error::protocol(std::io::Error::other("first\nsecond"));
    assert_eq!(result::fatal(&two_lines)["fatal"], "first");
}

#[test]
fn merge_adds_results_and_refuses_failed_ones() {
    let dir = std::env::temp_dir().join(format!("storbench-load-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = Vec::new();
    for index in 0..2 {
        let result = run::<Kv>(doc(json!({"process_index": index, "process_count": 2})), Path::new("j.json"), None);
        let path = dir.join(format!("r{index}.json"));
        std::fs::write(&path, result.unwrap().to_string()).unwrap();
        paths.push(path);
    }
    let merged = result::merge(&paths).unwrap();
    assert_eq!(merged["processes"], 2);
    assert_eq!(merged["total"]["ops"], 20);
    assert_eq!(merged["ops"]["write"]["latency"]["count"], 20);
    assert!(merged["load"]["max_start_lag_ms"].as_f64().is_some() && merged["cpu"]["cpu_us_per_op"].as_f64().is_some());
    let failed = dir.join("failed.json");
    std::fs::write(&failed, result::fatal(&Error::NoInputs).to_string()).unwrap();
    paths.push(failed.clone());
    let err = result::merge(&paths).unwrap_err();
    assert_eq!(err.to_string(), format!("{}: merge: no result files given", failed.display()));
    std::fs::remove_dir_all(&dir).unwrap();
}
