//! YCSB's core workload, protocol-agnostic: key naming (`insertorder=hashed`: FNV-1a 64 of the
//! key number, `"user"` + the hash), the request distributions (scrambled zipfian with constant
//! 0.99, latest, uniform, hotspot), the scan lengths, the field chooser, the load phase's key
//! sequence and the run phase's acknowledged insert counter — each as YCSB core 0.17.0 defines it
//! (`site.ycsb.workloads.CoreWorkload` and `site.ycsb.generator.*`). The random draws come from
//! storbench's own generator (YCSB's are thread-local and unseeded), so the sequences differ but
//! the distributions are the same: `tests/engines/test_ycsb_generators.py` compares them with
//! YCSB's own generators run in the JVM.
//!
//! The "ycsb" section of a job (inside the protocol's section, e.g. `"cql": {..., "ycsb": {...}}`),
//! with YCSB's property names and defaults:
//!
//! ```json
//! {"phase": "run",                  // "load": INSERT keys insertstart.. in order (the core's key)
//!  "recordcount": 1000,
//!  "operationcount": 1000,                    // the whole run's (all processes): with insertproportion
//!                                             // it sizes the zipfian key space as CoreWorkload does
//!  "insertstart": 0, "insertcount": null,     // null: recordcount - insertstart
//!  "requestdistribution": "zipfian",          // zipfian | latest | uniform | hotspot
//!  "zipfianconstant": 0.99,                   // YCSB fixes 0.99; another value is for tests only
//!  "insertproportion": 0.0,                   // sizes the zipfian key space as YCSB does
//!  "hotspotdatafraction": 0.2, "hotspotopnfraction": 0.8,
//!  "minscanlength": 1, "maxscanlength": 1000, "scanlengthdistribution": "uniform",
//!  "fieldcount": 10, "fieldlength": 100, "readallfields": true, "writeallfields": false,
//!  "insertorder": "hashed", "zeropadding": 1}
//! ```
//!
//! The operation proportions are the job's "mix" (READ, UPDATE, INSERT, SCAN, READ-MODIFY-WRITE
//! with their weights); `workload_mix` gives YCSB's workloads A–F.

mod generators;

use crate::core::payload::Rng;
pub use generators::*;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    Zipfian,
    Latest,
    Uniform,
    Hotspot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScanLengthDistribution {
    Uniform,
    Zipfian,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InsertOrder {
    Hashed,
    Ordered,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Load,
    #[default]
    Run,
}

/// The job's "ycsb" section: YCSB's CoreWorkload properties (module doc).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct YcsbConfig {
    #[serde(default)]
    pub phase: Phase,
    pub recordcount: i64,
    #[serde(default)]
    pub operationcount: i64,
    #[serde(default)]
    pub insertstart: i64,
    #[serde(default)]
    pub insertcount: Option<i64>,
    #[serde(default = "d_zipfian")]
    pub requestdistribution: Distribution,
    #[serde(default = "d_constant")]
    pub zipfianconstant: f64,
    #[serde(default)]
    pub insertproportion: f64,
    #[serde(default = "d_hotset")]
    pub hotspotdatafraction: f64,
    #[serde(default = "d_hotopn")]
    pub hotspotopnfraction: f64,
    #[serde(default = "d_one")]
    pub minscanlength: i64,
    #[serde(default = "d_maxscan")]
    pub maxscanlength: i64,
    #[serde(default = "d_scanuniform")]
    pub scanlengthdistribution: ScanLengthDistribution,
    #[serde(default = "d_fieldcount")]
    pub fieldcount: u32,
    #[serde(default = "d_fieldlength")]
    pub fieldlength: u32,
    #[serde(default = "d_true")]
    pub readallfields: bool,
    #[serde(default)]
    pub writeallfields: bool,
    #[serde(default = "d_hashed")]
    pub insertorder: InsertOrder,
    #[serde(default = "d_one")]
    pub zeropadding: i64,
}

fn d_zipfian() -> Distribution {
    Distribution::Zipfian
}
fn d_constant() -> f64 {
    ZIPFIAN_CONSTANT
}
fn d_hotset() -> f64 {
    0.2
}
fn d_hotopn() -> f64 {
    0.8
}
fn d_one() -> i64 {
    1
}
fn d_maxscan() -> i64 {
    1000
}
fn d_scanuniform() -> ScanLengthDistribution {
    ScanLengthDistribution::Uniform
}
fn d_fieldcount() -> u32 {
    10
}
fn d_fieldlength() -> u32 {
    100
}
fn d_true() -> bool {
    true
}
fn d_hashed() -> InsertOrder {
    InsertOrder::Hashed
}

impl YcsbConfig {
    /// The defaults for `recordcount` records (YCSB's, distribution zipfian).
    #[cfg(test)]
    pub fn with_records(recordcount: i64) -> Self {
        serde_json::from_value(serde_json::json!({ "recordcount": recordcount })).expect("defaults")
    }

    /// `insertcount` as YCSB defaults it.
    pub fn insertcount(&self) -> i64 {
        self.insertcount.unwrap_or(self.recordcount - self.insertstart)
    }

    /// CoreWorkload's checks, one line each.
    pub fn validate(&self) -> Result<(), &'static str> {
        if self.recordcount < 1 {
            return Err("ycsb.recordcount must be at least 1");
        }
        if self.insertstart < 0 || self.insertcount() < 1 || self.recordcount < self.insertstart + self.insertcount() {
            return Err("ycsb: recordcount must be at least insertstart + insertcount (and insertcount at least 1)");
        }
        if self.fieldcount < 1 {
            return Err("ycsb.fieldcount must be at least 1");
        }
        if self.minscanlength < 1 || self.maxscanlength < self.minscanlength {
            return Err("ycsb: scan lengths need 1 <= minscanlength <= maxscanlength");
        }
        if !(0.0..=1.0).contains(&self.hotspotdatafraction) || !(0.0..=1.0).contains(&self.hotspotopnfraction) {
            return Err("ycsb: hotspot fractions must be within 0..1");
        }
        if !(self.zipfianconstant > 0.0 && self.zipfianconstant < 1.0) {
            return Err("ycsb.zipfianconstant must be within (0, 1)");
        }
        if self.operationcount < 0 || !(0.0..=1.0).contains(&self.insertproportion) {
            return Err("ycsb: operationcount must be >= 0 and insertproportion within 0..1");
        }
        if self.recordcount > i32::MAX as i64 {
            return Err("ycsb.recordcount above 2^31-1: YCSB's key choice truncates key numbers to int");
        }
        Ok(())
    }

    /// `CoreWorkload.buildKeyName`.
    #[cfg(test)]
    pub fn key_name(&self, keynum: i64) -> String {
        let mut out = Vec::with_capacity(24);
        self.key_into(keynum, &mut out);
        String::from_utf8(out).expect("ascii")
    }

    /// `key_name` appended to `out` (no allocation once `out` has room): the request path's.
    pub fn key_into(&self, keynum: i64, out: &mut Vec<u8>) {
        let keynum = if self.insertorder == InsertOrder::Hashed { fnvhash64(keynum) } else { keynum };
        // Java's Long.toString: a '-' then the digits (i64::MIN has no positive twin: unsigned_abs)
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut v = keynum.unsigned_abs();
        loop {
            at -= 1;
            digits[at] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let len = digits.len() - at + usize::from(keynum < 0);
        out.extend_from_slice(b"user");
        out.resize(out.len() + (self.zeropadding - len as i64).max(0) as usize, b'0');
        if keynum < 0 {
            out.push(b'-');
        }
        out.extend_from_slice(&digits[at..]);
    }
}

/// YCSB's workloads A–F: (op name, proportion) and the request distribution.
pub fn workload_mix(letter: &str) -> Option<(&'static [(&'static str, f64)], Distribution)> {
    Some(match letter.to_ascii_lowercase().as_str() {
        "a" => (&[("READ", 0.5), ("UPDATE", 0.5)], Distribution::Zipfian),
        "b" => (&[("READ", 0.95), ("UPDATE", 0.05)], Distribution::Zipfian),
        "c" => (&[("READ", 1.0)], Distribution::Zipfian),
        "d" => (&[("READ", 0.95), ("INSERT", 0.05)], Distribution::Latest),
        "e" => (&[("SCAN", 0.95), ("INSERT", 0.05)], Distribution::Zipfian),
        "f" => (&[("READ", 0.5), ("READ-MODIFY-WRITE", 0.5)], Distribution::Zipfian),
        _ => return None,
    })
}

/// YCSB's workload file `workloads/workload<letter>` as a job's "mix" and "ycsb" properties
/// (those that differ from CoreWorkload's defaults; insertproportion sizes the zipfian).
pub fn workload(letter: &str) -> Option<serde_json::Value> {
    let (mix, dist) = workload_mix(letter)?;
    let inserts: f64 = mix.iter().filter(|(op, _)| *op == "INSERT").map(|(_, p)| p).sum();
    let mut ycsb = serde_json::json!({"requestdistribution": dist, "insertproportion": inserts});
    if mix.iter().any(|(op, _)| *op == "SCAN") {
        ycsb["maxscanlength"] = 100.into(); // workloade
        ycsb["scanlengthdistribution"] = "uniform".into();
    }
    let mix: Vec<_> = mix.iter().map(|(op, weight)| serde_json::json!({"op": op, "weight": weight})).collect();
    Some(serde_json::json!({"mix": mix, "ycsb": ycsb}))
}

#[derive(Debug, Clone)]
enum Chooser {
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Uniform(UniformLong),
    Hotspot(Hotspot),
}

#[derive(Debug, Clone)]
enum ScanLength {
    Uniform(UniformLong),
    Zipfian(Zipfian),
}

/// One worker's YCSB generators (the insert counter is shared, `inserts`).
#[derive(Debug, Clone)]
pub struct KeyChooser {
    chooser: Chooser,
    scan: ScanLength,
    fields: UniformLong,
}

impl KeyChooser {
    /// CoreWorkload.init's key chooser, scan length and field chooser. `last_insert` is the
    /// insert counter's `last_value` now (recordcount - 1 before any run-phase insert).
    pub fn new(cfg: &YcsbConfig, last_insert: i64) -> Self {
        let (start, count) = (cfg.insertstart, cfg.insertcount());
        let chooser = match cfg.requestdistribution {
            Distribution::Uniform => Chooser::Uniform(UniformLong::new(start, start + count - 1)),
            Distribution::Zipfian => {
                // as CoreWorkload: (int) (operationcount * insertproportion * 2.0)
                let expected = (cfg.operationcount as f64 * cfg.insertproportion * 2.0) as i32 as i64;
                Chooser::Zipfian(ScrambledZipfian::new(start, start + count + expected, cfg.zipfianconstant))
            }
            Distribution::Latest => Chooser::Latest(SkewedLatest::new(last_insert)),
            Distribution::Hotspot => Chooser::Hotspot(Hotspot::new(
                start,
                start + count - 1,
                cfg.hotspotdatafraction,
                cfg.hotspotopnfraction,
            )),
        };
        let scan = match cfg.scanlengthdistribution {
            ScanLengthDistribution::Uniform => {
                ScanLength::Uniform(UniformLong::new(cfg.minscanlength, cfg.maxscanlength))
            }
            ScanLengthDistribution::Zipfian => {
                ScanLength::Zipfian(Zipfian::new(cfg.minscanlength, cfg.maxscanlength, ZIPFIAN_CONSTANT, None))
            }
        };
        KeyChooser { chooser, scan, fields: UniformLong::new(0, cfg.fieldcount as i64 - 1) }
    }

    /// `CoreWorkload.nextKeynum`: a key number of an existing record (redrawn while above the
    /// insert counter's `last_value`).
    pub fn next_keynum(&mut self, last_insert: i64, rng: &mut Rng) -> i64 {
        loop {
            let keynum = match &mut self.chooser {
                Chooser::Zipfian(g) => g.next(rng),
                Chooser::Latest(g) => g.next(last_insert, rng),
                Chooser::Uniform(g) => g.next(rng),
                Chooser::Hotspot(g) => g.next(rng),
            } as i32 as i64; // YCSB: keychooser.nextValue().intValue()
            if keynum <= last_insert {
                return keynum;
            }
        }
    }

    pub fn scan_length(&mut self, rng: &mut Rng) -> i64 {
        match &mut self.scan {
            ScanLength::Uniform(g) => g.next(rng),
            ScanLength::Zipfian(g) => g.next(rng),
        }
    }

    /// The field an UPDATE (writeallfields=false) writes.
    pub fn field(&self, rng: &mut Rng) -> usize {
        self.fields.next(rng) as usize
    }
}

/// A field value as YCSB's `RandomByteIterator` makes them: printable ASCII, 6 per random int.
#[cfg(test)]
pub fn field_value(len: usize, rng: &mut Rng) -> String {
    let mut out = Vec::with_capacity(len);
    field_value_into(len, rng, &mut out);
    String::from_utf8(out).expect("ascii")
}

/// `field_value` appended to `out` (the same draws; no allocation once `out` has room).
pub fn field_value_into(len: usize, rng: &mut Rng, out: &mut Vec<u8>) {
    let end = out.len() + len;
    while out.len() < end {
        let bytes = rng.next_u64() as u32 as i32;
        let chunk = [
            (bytes & 31),
            ((bytes >> 5) & 63),
            ((bytes >> 10) & 95),
            ((bytes >> 15) & 31),
            ((bytes >> 20) & 63),
            ((bytes >> 25) & 95),
        ];
        for c in chunk {
            if out.len() < end {
                out.push((c as u8) + b' ');
            }
        }
    }
}

#[cfg(test)]
mod tests;
