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

use crate::core::payload::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

const FNV_OFFSET_BASIS_64: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME_64: u64 = 1_099_511_628_211;

/// `Utils.fnvhash64`: FNV-1a over the 8 little-end bytes of `val`, then `Math.abs`.
pub fn fnvhash64(val: i64) -> i64 {
    let mut val = val;
    let mut hash = FNV_OFFSET_BASIS_64;
    for _ in 0..8 {
        let octet = (val & 0xff) as u64;
        val >>= 8;
        hash ^= octet;
        hash = hash.wrapping_mul(FNV_PRIME_64);
    }
    (hash as i64).wrapping_abs()
}

/// Java's `Math.abs(long)` of a random long, as YCSB draws bounded longs (`abs(nextLong()) % n`).
fn java_abs_long(rng: &mut Rng) -> i64 {
    (rng.next_u64() as i64).wrapping_abs()
}

/// `ZipfianGenerator.ZIPFIAN_CONSTANT`.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// `ScrambledZipfianGenerator`'s precomputed zeta of `ITEM_COUNT` items at 0.99.
pub const SCRAMBLED_ZETAN: f64 = 26.46902820178302;
/// `ScrambledZipfianGenerator.ITEM_COUNT` in YCSB 0.17.0.
pub const SCRAMBLED_ITEM_COUNT: i64 = 10_000_000_000;

/// `ZipfianGenerator.zetastatic(st, n, theta, initialsum)`: the sum of 1/i^theta for i in st+1..=n.
/// Exact up to 10^7 terms; beyond, the first terms exactly and the rest by Euler–Maclaurin
/// (relative error far below 1e-12, where YCSB would spend minutes summing).
pub fn zeta(st: i64, n: i64, theta: f64, initial: f64) -> f64 {
    const EXACT: i64 = 10_000_000;
    let mut sum = initial;
    if n - st <= EXACT {
        for i in st..n {
            sum += 1.0 / ((i + 1) as f64).powf(theta);
        }
        return sum;
    }
    let split = st + EXACT; // terms st+1..=split exactly
    for i in st..split {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    // sum_{i=a}^{b} f(i) with a = split+1, b = n, f(x) = x^-theta
    let (a, b) = ((split + 1) as f64, n as f64);
    let f = |x: f64| x.powf(-theta);
    let f1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let f3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    let integral = if (theta - 1.0).abs() < 1e-12 { b.ln() - a.ln() } else { (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta) };
    sum + integral + (f(a) + f(b)) / 2.0 + (f1(b) - f1(a)) / 12.0 - (f3(b) - f3(a)) / 720.0
}

/// `ZipfianGenerator`: item `base` the most popular, then base+1, ... (Gray et al., SIGMOD 1994).
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: i64,
    base: i64,
    theta: f64,
    zeta2theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    countforzeta: i64,
}

impl Zipfian {
    /// `ZipfianGenerator(min, max, constant)` (zeta computed) or with a precomputed `zetan`.
    pub fn new(min: i64, max: i64, theta: f64, zetan: Option<f64>) -> Self {
        let items = max - min + 1;
        let zetan = zetan.unwrap_or_else(|| zeta(0, items, theta, 0.0));
        let zeta2theta = zeta(0, 2, theta, 0.0);
        let eta = (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan);
        Zipfian { items, base: min, theta, zeta2theta, alpha: 1.0 / (1.0 - theta), zetan, eta, countforzeta: items }
    }

    /// `nextLong(itemcount)`: a larger item count extends zeta incrementally (as YCSB; `eta` keeps
    /// YCSB's use of the constructor's `items`); a smaller one keeps the old zeta (YCSB's default).
    pub fn next_with(&mut self, itemcount: i64, rng: &mut Rng) -> i64 {
        if itemcount > self.countforzeta {
            self.zetan = zeta(self.countforzeta, itemcount, self.theta, self.zetan);
            self.countforzeta = itemcount;
            self.eta = (1.0 - (2.0 / self.items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / self.zetan);
        }
        let u = rng.unit();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return self.base + 1;
        }
        self.base + (itemcount as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
    }

    pub fn next(&mut self, rng: &mut Rng) -> i64 {
        self.next_with(self.items, rng)
    }
}

/// `ScrambledZipfianGenerator(min, max, constant)`: a zipfian over YCSB's fixed 10^10 items,
/// spread over min..=max by FNV hashing.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    gen: Zipfian,
    min: i64,
    itemcount: i64,
}

impl ScrambledZipfian {
    pub fn new(min: i64, max: i64, constant: f64) -> Self {
        let zetan = (constant == ZIPFIAN_CONSTANT).then_some(SCRAMBLED_ZETAN);
        ScrambledZipfian { gen: Zipfian::new(0, SCRAMBLED_ITEM_COUNT, constant, zetan), min, itemcount: max - min + 1 }
    }

    pub fn next(&mut self, rng: &mut Rng) -> i64 {
        let ret = self.gen.next(rng);
        self.min + fnvhash64(ret) % self.itemcount
    }
}

/// `HotspotIntegerGenerator(lower, upper, hotsetfraction, hotopnfraction)`.
#[derive(Debug, Clone)]
pub struct Hotspot {
    lower: i64,
    hot_interval: i64,
    cold_interval: i64,
    hot_opn_fraction: f64,
}

impl Hotspot {
    pub fn new(lower: i64, upper: i64, hotset: f64, hotopn: f64) -> Self {
        let interval = upper - lower + 1;
        let hot_interval = (interval as f64 * hotset) as i64;
        Hotspot { lower, hot_interval, cold_interval: interval - hot_interval, hot_opn_fraction: hotopn }
    }

    pub fn next(&self, rng: &mut Rng) -> i64 {
        if rng.unit() < self.hot_opn_fraction {
            self.lower + java_abs_long(rng) % self.hot_interval.max(1)
        } else {
            self.lower + self.hot_interval + java_abs_long(rng) % self.cold_interval.max(1)
        }
    }
}

/// `UniformLongGenerator(lb, ub)`: `abs(nextLong()) % interval + lb`.
#[derive(Debug, Clone, Copy)]
pub struct UniformLong {
    lb: i64,
    interval: i64,
}

impl UniformLong {
    pub fn new(lb: i64, ub: i64) -> Self {
        UniformLong { lb, interval: ub - lb + 1 }
    }

    pub fn next(&self, rng: &mut Rng) -> i64 {
        java_abs_long(rng) % self.interval + self.lb
    }
}

/// `AcknowledgedCounterGenerator(countstart)`: hands out insert key numbers; `last_value` is the
/// highest number below which every handed-out one has been acknowledged (what reads may choose).
#[derive(Debug)]
pub struct AckCounter {
    next: AtomicI64,
    limit: AtomicI64,
    pending: Mutex<BTreeSet<i64>>,
}

impl AckCounter {
    pub fn new(countstart: i64) -> Self {
        AckCounter { next: AtomicI64::new(countstart), limit: AtomicI64::new(countstart - 1), pending: Mutex::new(BTreeSet::new()) }
    }

    pub fn next_value(&self) -> i64 {
        self.next.fetch_add(1, Ordering::SeqCst)
    }

    pub fn last_value(&self) -> i64 {
        self.limit.load(Ordering::SeqCst)
    }

    pub fn acknowledge(&self, value: i64) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.insert(value);
        let mut limit = self.limit.load(Ordering::SeqCst);
        while pending.remove(&(limit + 1)) {
            limit += 1;
        }
        self.limit.store(limit, Ordering::SeqCst);
    }
}

/// `SkewedLatestGenerator(basis)`: recent inserts most popular, `max - zipfian(max)`.
#[derive(Debug, Clone)]
pub struct SkewedLatest {
    zipfian: Zipfian,
}

impl SkewedLatest {
    pub fn new(basis_last: i64) -> Self {
        SkewedLatest { zipfian: Zipfian::new(0, basis_last - 1, ZIPFIAN_CONSTANT, None) }
    }

    pub fn next(&mut self, basis_last: i64, rng: &mut Rng) -> i64 {
        basis_last - self.zipfian.next_with(basis_last, rng)
    }
}

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
            Distribution::Hotspot => Chooser::Hotspot(Hotspot::new(start, start + count - 1, cfg.hotspotdatafraction, cfg.hotspotopnfraction)),
        };
        let scan = match cfg.scanlengthdistribution {
            ScanLengthDistribution::Uniform => ScanLength::Uniform(UniformLong::new(cfg.minscanlength, cfg.maxscanlength)),
            ScanLengthDistribution::Zipfian => ScanLength::Zipfian(Zipfian::new(cfg.minscanlength, cfg.maxscanlength, ZIPFIAN_CONSTANT, None)),
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
        let chunk = [(bytes & 31), ((bytes >> 5) & 63), ((bytes >> 10) & 95), ((bytes >> 15) & 31), ((bytes >> 20) & 63),
                     ((bytes >> 25) & 95)];
        for c in chunk {
            if out.len() < end {
                out.push((c as u8) + b' ');
            }
        }
    }
}

#[cfg(test)]
mod tests;
