//! A small random source for timing: retries' backoff (s3-wire-tokio) and refreshes
//! ahead of expiry (the cache here) are spread by it, so that clients do not act in
//! lock-step.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// A small, fast, non-cryptographic random source for jitter (xorshift64*),
/// seeded from the process's hash-map randomness so that clients in different
/// processes do not retry in lock-step.
#[derive(Debug)]
pub struct Jitter {
    state: AtomicU64,
}

impl Jitter {
    /// A source seeded from the process's hash-map randomness and the time.
    pub fn new() -> Self {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
        );
        Self {
            state: AtomicU64::new(hasher.finish() | 1),
        }
    }

    /// A uniform number in `[0, 1)`.
    pub fn unit(&self) -> f64 {
        let mut x = self.state.load(Ordering::Relaxed);
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state.store(x, Ordering::Relaxed);
        let out = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (out >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl Default for Jitter {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_is_uniform_enough() {
        let jitter = Jitter::new();
        let samples: Vec<f64> = (0..10_000).map(|_| jitter.unit()).collect();
        assert!(samples.iter().all(|x| (0.0..1.0).contains(x)));
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        assert!((0.45..0.55).contains(&mean), "mean {mean}");
        let low = samples.iter().filter(|x| **x < 0.1).count();
        assert!((800..1200).contains(&low), "{low} samples below 0.1");
    }
}
