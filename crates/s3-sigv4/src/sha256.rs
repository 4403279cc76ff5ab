//! SHA-256 and HMAC-SHA256 of short messages, on `sha2`'s compression function.
//!
//! A signature hashes a canonical request of a few blocks and MACs a string to
//! sign of three. Calling the compression function directly skips the
//! buffering hasher, and an [`HmacKey`] holds its two pad blocks already
//! hashed (a signing key is fixed per scope and day), so a MAC is the message
//! blocks plus one outer block, and copying a key copies 64 bytes.

use sha2::block_api::compress256;

/// SHA-256's initial state (FIPS 180-4, 5.3.3).
const INITIAL_STATE: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

const BLOCK: usize = 64;

/// SHA-256 of `data`.
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    finish(INITIAL_STATE, 0, data)
}

/// Hashes `data` into `state` (which has absorbed `absorbed` bytes, a whole
/// number of blocks), pads, and returns the digest.
#[inline]
fn finish(mut state: [u32; 8], absorbed: u64, data: &[u8]) -> [u8; 32] {
    let (blocks, tail) = data.as_chunks::<BLOCK>();
    compress256(&mut state, blocks);
    // The tail, `0x80`, zeros and the length in bits fill one or two blocks.
    let mut last = [[0u8; BLOCK]; 2];
    let used = if tail.len() < BLOCK - 8 { 1 } else { 2 };
    let flat = last.as_flattened_mut();
    flat[..tail.len()].copy_from_slice(tail);
    flat[tail.len()] = 0x80;
    let bits = (absorbed + data.len() as u64) * 8;
    flat[used * BLOCK - 8..used * BLOCK].copy_from_slice(&bits.to_be_bytes());
    compress256(&mut state, &last[..used]);
    let mut digest = [0u8; 32];
    for (bytes, word) in digest.chunks_exact_mut(4).zip(state) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
    digest
}

/// An HMAC-SHA256 key (RFC 2104) as the states after its inner and outer pad
/// blocks. No `Debug`: it is as secret as the key.
#[derive(Clone, Copy)]
pub(crate) struct HmacKey {
    inner: [u32; 8],
    outer: [u32; 8],
}

impl HmacKey {
    pub(crate) fn new(key: &[u8]) -> Self {
        let mut block = [0u8; BLOCK];
        if key.len() > BLOCK {
            block[..32].copy_from_slice(&sha256(key));
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let padded_state = |pad: u8| {
            let mut state = INITIAL_STATE;
            compress256(&mut state, &[block.map(|byte| byte ^ pad)]);
            state
        };
        let key = Self {
            inner: padded_state(0x36),
            outer: padded_state(0x5c),
        };
        block.fill(0);
        key
    }

    /// HMAC-SHA256 of `message` under this key.
    #[inline]
    pub(crate) fn mac(&self, message: &[u8]) -> [u8; 32] {
        let inner = finish(self.inner, BLOCK as u64, message);
        finish(self.outer, BLOCK as u64, &inner)
    }
}

/// HMAC-SHA256 of `message` under `key`.
pub(crate) fn hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
    HmacKey::new(key).mac(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hmac::{KeyInit, Mac};
    use proptest::prelude::*;
    use sha2::Digest;

    fn reference_hmac(key: &[u8], message: &[u8]) -> [u8; 32] {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
        mac.update(message);
        mac.finalize().into_bytes().into()
    }

    /// RFC 4231 test case 2 and the FIPS 180-2 "abc" example.
    #[test]
    fn known_answers() {
        assert_eq!(
            crate::encoding::hex32(&hmac(b"Jefe", b"what do ya want for nothing?")),
            *b"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            crate::encoding::hex32(&sha256(b"abc")),
            *b"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    proptest! {
        /// Every length around the block and padding boundaries, keys short and long.
        #[test]
        fn matches_sha2_and_hmac_crates(
            message in proptest::collection::vec(any::<u8>(), 0..300),
            key in proptest::collection::vec(any::<u8>(), 0..150),
        ) {
            let expected: [u8; 32] = sha2::Sha256::digest(&message).into();
            prop_assert_eq!(sha256(&message), expected);
            prop_assert_eq!(hmac(&key, &message), reference_hmac(&key, &message));
        }
    }

    #[test]
    fn every_tail_length() {
        for len in 0..=200 {
            let message: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let expected: [u8; 32] = sha2::Sha256::digest(&message).into();
            assert_eq!(sha256(&message), expected, "length {len}");
            assert_eq!(hmac(b"key", &message), reference_hmac(b"key", &message));
        }
    }
}
