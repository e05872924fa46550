//! Hashing for maps keyed by addresses.

/// Hashing for maps keyed by addresses (region ids): one multiply instead
/// of SipHash, which showed up in every launch's profile. Keys are program
/// addresses, not attacker-chosen input.
#[derive(Default, Clone, Copy)]
pub struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
}

/// `BuildHasher` of [`AddrHasher`].
pub type AddrHash = std::hash::BuildHasherDefault<AddrHasher>;
