//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
//! generators", OOPSLA 2014; the constants of Vigna's reference `splitmix64.c`):
//! the state advances by the golden-ratio increment and each output is the
//! state passed through a 64-bit finaliser. Tiny, fast, and fully specified, so
//! any implementation reproduces our bootstrap bit for bit.
//!
//! Streams are named, not numbered: `seeded(label, seed)` hashes the label (a
//! metric name and purpose, e.g. `"precision/interval"`) together with the seed
//! with FNV-1a 64, so a stream never depends on which other metrics exist or in
//! which order (or on which thread) they are computed.

/// The state increment: 2^64 / φ, rounded to odd.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
/// The finaliser's multipliers (Stafford's "Mix13" variant).
const MIX1: u64 = 0xBF58_476D_1CE4_E5B9;
const MIX2: u64 = 0x94D0_49BB_1331_11EB;
/// FNV-1a 64-bit offset basis and prime.
const FNV_OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01B3;

/// A SplitMix64 generator; `Clone` copies the stream position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose first output is `mix(seed + GAMMA)`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The stream named `label` under `seed`: the state starts at FNV-1a 64 of
    /// the label's UTF-8 bytes, a 0xFF separator (never in UTF-8) and the seed's
    /// 8 little-endian bytes.
    pub fn seeded(label: &str, seed: u64) -> Self {
        let mut hash = FNV_OFFSET;
        let bytes = label.bytes().chain([0xFF]).chain(seed.to_le_bytes());
        for byte in bytes {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(FNV_PRIME);
        }
        SplitMix64::new(hash)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(MIX1);
        z = (z ^ (z >> 27)).wrapping_mul(MIX2);
        z ^ (z >> 31)
    }

    /// A uniform double in [0, 1): the top 53 bits times 2^-53.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in [0, n) for n > 0, exactly uniform: Lemire's
    /// multiply-shift ("Fast random integer generation in an interval", 2019)
    /// with rejection of the few biased low products.
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut product = u128::from(self.next_u64()) * u128::from(n);
        if (product as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (product as u64) < threshold {
                product = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (product >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_outputs() {
        // Vigna's splitmix64.c seeded with 1234567: the first five outputs.
        let mut rng = SplitMix64::new(1_234_567);
        let outputs: Vec<u64> = (0..5).map(|_| rng.next_u64()).collect();
        assert_eq!(
            outputs,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423,
                4_593_380_528_125_082_431,
                16_408_922_859_458_223_821,
            ]
        );
    }

    #[test]
    fn seeded_streams_depend_on_label_and_seed_only() {
        let a = SplitMix64::seeded("precision/interval", 0).next_u64();
        assert_eq!(a, SplitMix64::seeded("precision/interval", 0).next_u64());
        assert_ne!(a, SplitMix64::seeded("precision/interval", 1).next_u64());
        assert_ne!(a, SplitMix64::seeded("recall/interval", 0).next_u64());
        // The separator keeps ("a", seed) and ("a\u{1}", …) apart.
        assert_ne!(
            SplitMix64::seeded("a", 1).next_u64(),
            SplitMix64::seeded("a\u{1}", 0).next_u64()
        );
    }

    #[test]
    fn fnv1a_of_the_empty_label_is_the_documented_hash() {
        // FNV-1a over [0xFF, 0, 0, 0, 0, 0, 0, 0, 0], computed by hand once.
        let mut hash = FNV_OFFSET;
        for byte in [0xFFu8, 0, 0, 0, 0, 0, 0, 0, 0] {
            hash = (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
        }
        assert_eq!(SplitMix64::seeded("", 0), SplitMix64::new(hash));
    }

    #[test]
    fn doubles_are_in_the_unit_interval_and_indices_below_n() {
        let mut rng = SplitMix64::new(7);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            let x = rng.next_f64();
            assert!((0.0..1.0).contains(&x));
            counts[rng.below(3) as usize] += 1;
        }
        for count in counts {
            assert!((9_500..10_500).contains(&count), "{counts:?}");
        }
        assert_eq!(rng.below(1), 0);
    }
}
