//! Object content and sizes as pure functions of (seed, key): nothing is stored to verify a read.
//!
//! One random buffer (32 MiB, xoshiro256** output: incompressible) is generated per process;
//! the content of key `k` is that buffer read cyclically from a key-dependent byte offset, so
//! writing an object costs no generation at all and a read is checked with memcmp. Objects
//! larger than the buffer repeat with its period (only long-window compressors could see it).

use super::job::SizeDist;

pub const BUFFER_LEN: usize = 32 << 20;

pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256** — small, fast, good enough for payloads and op choices.
#[derive(Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut s = [0u64; 4];
        for slot in &mut s {
            x = splitmix64(x);
            *slot = x;
        }
        Rng { s }
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }
    /// Uniform in [0, n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

pub struct Payload {
    seed: u64,
    buf: Vec<u8>,
}

impl Payload {
    pub fn new(seed: u64) -> Self {
        Self::with_len(seed, BUFFER_LEN)
    }

    pub fn with_len(seed: u64, len: usize) -> Self {
        let mut rng = Rng::new(seed ^ 0xC0FF_EE00_D15E_A5E5);
        let mut buf = vec![0u8; len];
        // Whole words with a constant-length copy (a plain store): a copy of `chunk.len()` bytes was a
        // memmove call per 8 bytes, 4 M calls and about half of an engine process's start-up CPU.
        let mut words = buf.chunks_exact_mut(8);
        for chunk in &mut words {
            chunk.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let rest = words.into_remainder();
        if !rest.is_empty() {
            let word = rng.next_u64().to_le_bytes();
            rest.copy_from_slice(&word[..rest.len()]);
        }
        Payload { seed, buf }
    }

    fn base(&self, key: u64) -> usize {
        (splitmix64(self.seed ^ key.wrapping_mul(0x2545_F491_4F6C_DD1D)) % self.buf.len() as u64) as usize
    }

    /// Calls `f` with the consecutive slices of bytes [offset, offset+len) of key's content.
    pub fn for_each_slice<E>(
        &self,
        key: u64,
        offset: u64,
        len: u64,
        mut f: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let n = self.buf.len() as u64;
        let mut pos = (self.base(key) as u64 + offset) % n;
        let mut left = len;
        while left > 0 {
            let take = left.min(n - pos);
            f(&self.buf[pos as usize..(pos + take) as usize])?;
            left -= take;
            pos = (pos + take) % n;
        }
        Ok(())
    }

    /// The bytes of key's content (for small objects and tests).
    #[allow(dead_code)]
    pub fn bytes(&self, key: u64, offset: u64, len: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(len as usize);
        let _: Result<(), ()> = self.for_each_slice(key, offset, len, |s| {
            out.extend_from_slice(s);
            Ok(())
        });
        out
    }

    /// True when `data` equals key's content at `offset`.
    pub fn matches(&self, key: u64, offset: u64, data: &[u8]) -> bool {
        let mut at = 0usize;
        self.for_each_slice(key, offset, data.len() as u64, |s| {
            if &data[at..at + s.len()] != s {
                return Err(());
            }
            at += s.len();
            Ok(())
        })
        .is_ok()
    }
}

/// The size of key's object: fixed, or drawn from the distribution by a hash of the key.
pub fn size_for(dist: &SizeDist, seed: u64, key: u64) -> u64 {
    let h = splitmix64(seed.rotate_left(17) ^ key ^ 0x51AE_5EED);
    match dist {
        SizeDist::Fixed { bytes } => *bytes,
        SizeDist::Uniform { min, max } => min + h % (max - min + 1),
        SizeDist::Choice { sizes, weights } => {
            if weights.is_empty() {
                return sizes[(h % sizes.len() as u64) as usize];
            }
            let total: f64 = weights.iter().sum();
            let mut x = (h >> 11) as f64 / (1u64 << 53) as f64 * total;
            for (size, w) in sizes.iter().zip(weights) {
                if x < *w {
                    return *size;
                }
                x -= w;
            }
            *sizes.last().unwrap()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_a_function_of_seed_and_key() {
        let a = Payload::with_len(1, 4096);
        let b = Payload::with_len(1, 4096);
        let c = Payload::with_len(2, 4096);
        assert_eq!(a.bytes(7, 0, 10000), b.bytes(7, 0, 10000));
        assert_ne!(a.bytes(7, 0, 100), c.bytes(7, 0, 100));
        assert_ne!(a.bytes(7, 0, 100), a.bytes(8, 0, 100));
        let whole = a.bytes(7, 0, 10000);
        assert_eq!(&whole[5000..6000], &a.bytes(7, 5000, 1000)[..]);
        assert!(a.matches(7, 123, &whole[123..9000]));
        let mut bad = whole.clone();
        bad[4444] ^= 1;
        assert!(!a.matches(7, 0, &bad));
    }

    /// The content definition is a contract (objects written by one engine version are verified by
    /// another): the full-size buffer's bytes stay what they were, whatever memory holds them.
    #[test]
    fn content_of_the_full_buffer_is_pinned() {
        let p = Payload::new(42);
        let digest = |key: u64, offset: u64, len: u64| crate::s3::sigv4::sha256_hex(&p.bytes(key, offset, len));
        let seen = [digest(0, 0, 1 << 16), digest(99, (BUFFER_LEN as u64) - 100, 1 << 16), digest(7, 0, 40 << 20)];
        assert_eq!(seen, PINNED);
    }

    const PINNED: [&str; 3] = [
        "4a86a7a6eb2846301856d34febcd5f123ecaa568889284183112d92113f6eaa6",
        "4ccb8b4775594153cf3db3300c4afeb4aedea0cbfdfc57af83d30870d2f2d486",
        "63f5ed71d05cc0d73e12ded65522ddf9ff12a33510febdac79e052d97d0f7f4a",
    ];

    #[test]
    fn a_buffer_of_any_length_is_filled_to_its_last_byte() {
        for len in [1usize, 7, 8, 9, 4096 + 3] {
            let p = Payload::with_len(5, len);
            assert_eq!(p.buf.len(), len);
            let longer = Payload::with_len(5, len + 16); // the same stream of words, cut later
            assert_eq!(&p.buf[..], &longer.buf[..len]);
        }
        assert!(Payload::with_len(5, 4096 + 3).buf[4096..].iter().any(|&b| b != 0));
    }

    #[test]
    fn payload_is_not_compressible() {
        let p = Payload::with_len(3, 1 << 20);
        let data = p.bytes(1, 0, 1 << 20);
        let packed = zstd::bulk::compress(&data, 3).unwrap();
        assert!(packed.len() as f64 > 0.99 * data.len() as f64, "compressed to {}", packed.len());
    }

    #[test]
    fn sizes_follow_the_distribution() {
        let fixed = SizeDist::Fixed { bytes: 99 };
        assert_eq!(size_for(&fixed, 1, 5), 99);
        let uni = SizeDist::Uniform { min: 10, max: 20 };
        let sizes: Vec<u64> = (0..1000).map(|k| size_for(&uni, 1, k)).collect();
        assert!(sizes.iter().all(|s| (10..=20).contains(s)));
        assert!(sizes.contains(&10) && sizes.contains(&20));
        assert_eq!(size_for(&uni, 1, 42), size_for(&uni, 1, 42));
        let choice = SizeDist::Choice { sizes: vec![1, 2], weights: vec![9.0, 1.0] };
        let ones = (0..10000).filter(|k| size_for(&choice, 1, *k) == 1).count();
        assert!((8500..9500).contains(&ones), "{ones}");
    }

    #[test]
    fn rng_below_is_in_range() {
        let mut r = Rng::new(1);
        for n in [1u64, 2, 3, 1000] {
            for _ in 0..1000 {
                assert!(r.below(n) < n);
            }
        }
    }
}
