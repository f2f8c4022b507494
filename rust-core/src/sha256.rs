//! SHA-256 (FIPS 180-4) of two independent messages at once.
//!
//! A record costs a few hundred SHA-256 blocks, each a chain of dependent SHA-NI round
//! instructions whose latency, not throughput, bounds the speed. Two independent messages
//! interleaved fill those gaps (about 1.6 times the blocks per second on the reference
//! machine): salts, commitments and leaf hashes of neighbouring fields, and the nodes of one
//! tree level, are hashed in pairs. A message left without a partner, and both messages on a
//! CPU without SHA-NI, go through `sha2`'s own compression.
//!
//! Kept after measuring the alternative (issue 17; docs/records.md, "SHA-256: the hand-written
//! pairs against sha2 and hmac"): with this module and the HMAC of `commitment.rs` replaced by
//! the `sha2` and `hmac` crates, the in-process ingest pipeline was 11% slower and
//! `commit_record` of a 1 KB record 30% slower, past the 5% the issue allowed.

pub type State = [u32; 8];
pub type Block = [u8; 64];
pub type Hash = [u8; 32];

pub const INITIAL: State = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The rest of a message: the state it continues from (having absorbed `absorbed` bytes, a
/// multiple of 64) and its remaining bytes in parts.
#[derive(Clone, Copy)]
pub struct Message<'a> {
    pub state: State,
    pub absorbed: u64,
    pub parts: &'a [&'a [u8]],
}

impl<'a> Message<'a> {
    pub fn new(parts: &'a [&'a [u8]]) -> Self {
        Message {
            state: INITIAL,
            absorbed: 0,
            parts,
        }
    }
}

/// Block buffers reused from message to message.
#[derive(Default)]
pub struct Scratch {
    a: Buffer,
    b: Buffer,
}

/// Room for one padded message: on the stack up to `INLINE` blocks, else on the heap.
struct Buffer {
    inline: [Block; INLINE],
    heap: Vec<Block>,
}

const INLINE: usize = 4;

impl Default for Buffer {
    fn default() -> Self {
        Buffer {
            inline: [[0; 64]; INLINE],
            heap: Vec::new(),
        }
    }
}

pub fn digest(message: &Message<'_>, scratch: &mut Scratch) -> Hash {
    let mut state = message.state;
    sha2::block_api::compress256(&mut state, pad(message, &mut scratch.a));
    to_bytes(&state)
}

pub fn digest_pair(a: &Message<'_>, b: &Message<'_>, scratch: &mut Scratch) -> (Hash, Hash) {
    let (mut state_a, mut state_b) = (a.state, b.state);
    let blocks_a = pad(a, &mut scratch.a);
    let blocks_b = pad(b, &mut scratch.b);
    compress_pair(&mut state_a, blocks_a, &mut state_b, blocks_b);
    (to_bytes(&state_a), to_bytes(&state_b))
}

/// A short message of a size known in advance, padded to `N` blocks on the stack; `absorbed`
/// bytes precede it in the state it will continue.
pub fn padded<const N: usize>(absorbed: u64, parts: &[&[u8]]) -> [Block; N] {
    let mut blocks = [[0; 64]; N];
    let bytes = blocks.as_flattened_mut();
    let mut at = 0;
    for part in parts {
        put(&mut bytes[at..], part);
        at += part.len();
    }
    debug_assert_eq!((at + 9).div_ceil(64), N, "a message of {at} bytes");
    bytes[at] = 0x80;
    bytes[N * 64 - 8..].copy_from_slice(&((absorbed + at as u64) * 8).to_be_bytes());
    blocks
}

/// Hashes two padded messages from the initial state.
pub fn digest_blocks_pair(a: &[Block], b: &[Block]) -> (Hash, Hash) {
    let (mut state_a, mut state_b) = (INITIAL, INITIAL);
    compress_pair(&mut state_a, a, &mut state_b, b);
    (to_bytes(&state_a), to_bytes(&state_b))
}

pub fn digest_blocks(blocks: &[Block]) -> Hash {
    let mut state = INITIAL;
    sha2::block_api::compress256(&mut state, blocks);
    to_bytes(&state)
}

/// Writes the message bytes, the 0x80 byte, zeros and the bit length, in whole blocks.
fn pad<'b>(message: &Message<'_>, buffer: &'b mut Buffer) -> &'b [Block] {
    let len: usize = message.parts.iter().map(|part| part.len()).sum();
    let count = (len + 9).div_ceil(64);
    let blocks = if count <= INLINE {
        let blocks = &mut buffer.inline[..count];
        // Constant-size fills: a few vector stores each, no call.
        for block in blocks.iter_mut() {
            *block = [0; 64];
        }
        blocks
    } else {
        buffer.heap.clear();
        buffer.heap.resize(count, [0; 64]);
        &mut buffer.heap[..]
    };
    let bytes = blocks.as_flattened_mut();
    let mut at = 0;
    for part in message.parts {
        put(&mut bytes[at..], part);
        at += part.len();
    }
    bytes[at] = 0x80;
    let bits = (message.absorbed + len as u64) * 8;
    bytes[count * 64 - 8..].copy_from_slice(&bits.to_be_bytes());
    blocks
}

/// Copies `source` to the start of `target`. Message parts are mostly a few bytes to a few
/// dozen, for which a library call costs more than the copy: two overlapping fixed-size
/// moves cover any length up to 64 bytes.
#[inline(always)]
fn put(target: &mut [u8], source: &[u8]) {
    let len = source.len();
    let target = &mut target[..len];
    match len {
        0 => {}
        1..=3 => {
            target[0] = source[0];
            target[len / 2] = source[len / 2];
            target[len - 1] = source[len - 1];
        }
        4..=7 => {
            target[..4].copy_from_slice(&source[..4]);
            target[len - 4..].copy_from_slice(&source[len - 4..]);
        }
        8..=15 => {
            target[..8].copy_from_slice(&source[..8]);
            target[len - 8..].copy_from_slice(&source[len - 8..]);
        }
        16..=32 => {
            target[..16].copy_from_slice(&source[..16]);
            target[len - 16..].copy_from_slice(&source[len - 16..]);
        }
        33..=64 => {
            target[..32].copy_from_slice(&source[..32]);
            target[len - 32..].copy_from_slice(&source[len - 32..]);
        }
        _ => target.copy_from_slice(source),
    }
}

pub fn to_bytes(state: &State) -> Hash {
    let mut hash = [0; 32];
    for (chunk, word) in hash.chunks_exact_mut(4).zip(state) {
        chunk.copy_from_slice(&word.to_be_bytes());
    }
    hash
}

/// Compresses `a_blocks` into `a` and `b_blocks` into `b`, their common length interleaved.
pub fn compress_pair(a: &mut State, a_blocks: &[Block], b: &mut State, b_blocks: &[Block]) {
    let common = a_blocks.len().min(b_blocks.len());
    #[cfg(target_arch = "x86_64")]
    if common > 0 && x86::available() {
        // SAFETY: the CPU has the features the function is compiled for.
        unsafe { x86::compress_pair(a, &a_blocks[..common], b, &b_blocks[..common]) };
        sha2::block_api::compress256(a, &a_blocks[common..]);
        sha2::block_api::compress256(b, &b_blocks[common..]);
        return;
    }
    sha2::block_api::compress256(a, a_blocks);
    sha2::block_api::compress256(b, b_blocks);
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Block, State};

    pub fn available() -> bool {
        std::is_x86_feature_detected!("sha") && std::is_x86_feature_detected!("sse4.1")
    }

    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];

    /// Working state of one lane in the SHA-NI register layout (ABEF, CDGH).
    #[derive(Clone, Copy)]
    struct Lane {
        abef: __m128i,
        cdgh: __m128i,
    }

    #[inline]
    #[target_feature(enable = "sha,sse4.1")]
    fn load(state: &State) -> Lane {
        let pointer: *const __m128i = state.as_ptr().cast();
        // SAFETY: a State is 32 bytes; unaligned loads.
        let (dcba, hgfe) = unsafe { (_mm_loadu_si128(pointer), _mm_loadu_si128(pointer.add(1))) };
        let cdab = _mm_shuffle_epi32(dcba, 0xb1);
        let efgh = _mm_shuffle_epi32(hgfe, 0x1b);
        Lane {
            abef: _mm_alignr_epi8(cdab, efgh, 8),
            cdgh: _mm_blend_epi16(efgh, cdab, 0xf0),
        }
    }

    #[inline]
    #[target_feature(enable = "sha,sse4.1")]
    fn store(lane: Lane, state: &mut State) {
        let feba = _mm_shuffle_epi32(lane.abef, 0x1b);
        let dchg = _mm_shuffle_epi32(lane.cdgh, 0xb1);
        let pointer: *mut __m128i = state.as_mut_ptr().cast();
        // SAFETY: a State is 32 bytes; unaligned stores.
        unsafe {
            _mm_storeu_si128(pointer, _mm_blend_epi16(feba, dchg, 0xf0));
            _mm_storeu_si128(pointer.add(1), _mm_alignr_epi8(dchg, feba, 8));
        }
    }

    #[inline]
    #[target_feature(enable = "sha,sse4.1")]
    fn schedule(block: &Block) -> [__m128i; 4] {
        let mask = _mm_set_epi64x(0x0c0d_0e0f_0809_0a0b, 0x0405_0607_0001_0203);
        let pointer: *const __m128i = block.as_ptr().cast();
        // SAFETY: a Block is 64 bytes; unaligned loads.
        std::array::from_fn(|i| unsafe { _mm_shuffle_epi8(_mm_loadu_si128(pointer.add(i)), mask) })
    }

    /// Four rounds of both lanes, written side by side so their chains interleave.
    #[inline]
    #[target_feature(enable = "sha,sse4.1")]
    fn rounds4(group: usize, a: &mut Lane, wa: __m128i, b: &mut Lane, wb: __m128i) {
        // SAFETY: group < 16, so four words from 4 * group lie within K.
        let k = unsafe { _mm_loadu_si128(K[4 * group..].as_ptr().cast()) };
        let (ka, kb) = (_mm_add_epi32(wa, k), _mm_add_epi32(wb, k));
        a.cdgh = _mm_sha256rnds2_epu32(a.cdgh, a.abef, ka);
        b.cdgh = _mm_sha256rnds2_epu32(b.cdgh, b.abef, kb);
        a.abef = _mm_sha256rnds2_epu32(a.abef, a.cdgh, _mm_shuffle_epi32(ka, 0x0e));
        b.abef = _mm_sha256rnds2_epu32(b.abef, b.cdgh, _mm_shuffle_epi32(kb, 0x0e));
    }

    #[target_feature(enable = "sha,sse4.1")]
    pub fn compress_pair(a: &mut State, a_blocks: &[Block], b: &mut State, b_blocks: &[Block]) {
        let (mut lane_a, mut lane_b) = (load(a), load(b));
        for (block_a, block_b) in a_blocks.iter().zip(b_blocks) {
            let (saved_a, saved_b) = (lane_a, lane_b);
            let [mut a0, mut a1, mut a2, mut a3] = schedule(block_a);
            let [mut b0, mut b1, mut b2, mut b3] = schedule(block_b);
            rounds4(0, &mut lane_a, a0, &mut lane_b, b0);
            rounds4(1, &mut lane_a, a1, &mut lane_b, b1);
            rounds4(2, &mut lane_a, a2, &mut lane_b, b2);
            rounds4(3, &mut lane_a, a3, &mut lane_b, b3);
            macro_rules! group {
                ($g:expr, $w0:ident, $w1:ident, $w2:ident, $w3:ident, $v0:ident, $v1:ident, $v2:ident, $v3:ident) => {
                    $w0 = next($w0, $w1, $w2, $w3);
                    $v0 = next($v0, $v1, $v2, $v3);
                    rounds4($g, &mut lane_a, $w0, &mut lane_b, $v0);
                };
            }
            for g in [4, 8, 12] {
                group!(g, a0, a1, a2, a3, b0, b1, b2, b3);
                group!(g + 1, a1, a2, a3, a0, b1, b2, b3, b0);
                group!(g + 2, a2, a3, a0, a1, b2, b3, b0, b1);
                group!(g + 3, a3, a0, a1, a2, b3, b0, b1, b2);
            }
            lane_a.abef = _mm_add_epi32(lane_a.abef, saved_a.abef);
            lane_a.cdgh = _mm_add_epi32(lane_a.cdgh, saved_a.cdgh);
            lane_b.abef = _mm_add_epi32(lane_b.abef, saved_b.abef);
            lane_b.cdgh = _mm_add_epi32(lane_b.cdgh, saved_b.cdgh);
        }
        store(lane_a, a);
        store(lane_b, b);
    }

    /// The next four message words from the last sixteen.
    #[inline]
    #[target_feature(enable = "sha,sse4.1")]
    fn next(w0: __m128i, w1: __m128i, w2: __m128i, w3: __m128i) -> __m128i {
        let sum = _mm_add_epi32(_mm_sha256msg1_epu32(w0, w1), _mm_alignr_epi8(w3, w2, 4));
        _mm_sha256msg2_epu32(sum, w3)
    }
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    fn message(seed: usize, len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 31 + seed * 7) as u8).collect()
    }

    #[test]
    fn pairs_match_sha2_for_every_length_combination() {
        let mut scratch = Scratch::default();
        for len_a in (0..200).step_by(7) {
            for len_b in [0, 1, 55, 56, 63, 64, 119, 120, 300] {
                let (a, b) = (message(1, len_a), message(2, len_b));
                let (hash_a, hash_b) = digest_pair(
                    &Message::new(&[&a[..len_a / 2], &a[len_a / 2..]]),
                    &Message::new(&[&b]),
                    &mut scratch,
                );
                assert_eq!(hash_a, <[u8; 32]>::from(Sha256::digest(&a)), "{len_a}");
                assert_eq!(hash_b, <[u8; 32]>::from(Sha256::digest(&b)), "{len_b}");
                let single = digest(&Message::new(&[&a]), &mut scratch);
                assert_eq!(single, hash_a);
            }
        }
    }

    #[test]
    fn put_copies_every_length() {
        for len in 0..80 {
            let source: Vec<u8> = (1..=len as u8).collect();
            let mut target = vec![0u8; 90];
            put(&mut target, &source);
            assert_eq!(&target[..len], &source[..]);
            assert!(target[len..].iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn messages_continue_from_a_state() {
        let prefix = message(3, 128);
        let rest = message(4, 77);
        let mut state = INITIAL;
        sha2::block_api::compress256(
            &mut state,
            &[
                prefix[..64].try_into().unwrap(),
                prefix[64..].try_into().unwrap(),
            ],
        );
        let continued = Message {
            state,
            absorbed: 128,
            parts: &[&rest],
        };
        let mut scratch = Scratch::default();
        let (hash, _) = digest_pair(&continued, &Message::new(&[]), &mut scratch);
        let whole = [prefix, rest].concat();
        assert_eq!(hash, <[u8; 32]>::from(Sha256::digest(&whole)));
    }
}
