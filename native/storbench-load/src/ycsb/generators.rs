//! YCSB core 0.17.0's number generators (`site.ycsb.generator.*`) and its key hash
//! (`Utils.fnvhash64`), each named after the class it reproduces: the zipfian family with its
//! zeta sums, hotspot, uniform, skewed-latest and the acknowledged insert counter. They draw from
//! storbench's own `Rng`; `super::tests` checks them against values YCSB itself printed.

use crate::core::payload::Rng;
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
pub(super) fn java_abs_long(rng: &mut Rng) -> i64 {
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
    let integral = if (theta - 1.0).abs() < 1e-12 {
        b.ln() - a.ln()
    } else {
        (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
    };
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
    pub(super) itemcount: i64,
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
        AckCounter {
            next: AtomicI64::new(countstart),
            limit: AtomicI64::new(countstart - 1),
            pending: Mutex::new(BTreeSet::new()),
        }
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
