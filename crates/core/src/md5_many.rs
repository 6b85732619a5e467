//! MD5 of several inputs at once, side by side in the lanes of a vector:
//! sixteen with AVX-512F, eight with AVX2.
//!
//! Every sent message's body is hashed with MD5 (SQS answers with it, rule
//! W4), and that hash was the largest single cost of a send on the server.
//! One MD5 cannot use vector instructions (each step needs the one before),
//! but the ten bodies of a SendMessageBatch are independent, so the same
//! step of all of them takes one vector instruction where it took ten.
//! Inputs of different lengths share the vector: a lane whose input has no
//! more blocks keeps its state while the others go on.
//!
//! Where the CPU has neither, or there is one input, each input is hashed
//! by the `md-5` crate, which every result is tested against
//! (docs/decisions/0009-batch-bodies-hashed-side-by-side.md).

use md5::{Digest, Md5};

/// The raw MD5 of each input, in order.
pub fn digests<T: AsRef<[u8]>>(inputs: &[T]) -> Vec<[u8; 16]> {
    digests_with(Lanes::detected(), inputs)
}

/// The digests with `lanes`, which the CPU must have.
fn digests_with<T: AsRef<[u8]>>(lanes: Lanes, inputs: &[T]) -> Vec<[u8; 16]> {
    let mut out = vec![[0u8; 16]; inputs.len()];
    match lanes {
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx512 if inputs.len() > 1 => {
            for (group, out) in inputs
                .chunks(avx512::LANES)
                .zip(out.chunks_mut(avx512::LANES))
            {
                // SAFETY: the CPU has AVX-512F.
                unsafe { avx512::digest_group(group, out) };
            }
        }
        #[cfg(target_arch = "x86_64")]
        Lanes::Avx2 if inputs.len() > 1 => {
            for (group, out) in inputs.chunks(avx2::LANES).zip(out.chunks_mut(avx2::LANES)) {
                // SAFETY: the CPU has AVX2.
                unsafe { avx2::digest_group(group, out) };
            }
        }
        _ => one_by_one(inputs, &mut out),
    }
    out
}

fn one_by_one<T: AsRef<[u8]>>(inputs: &[T], out: &mut [[u8; 16]]) {
    for (input, out) in inputs.iter().zip(out) {
        *out = Md5::digest(input.as_ref()).into();
    }
}

/// The widest lanes the CPU has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lanes {
    /// None: one input after another.
    None,
    /// Eight 32-bit lanes.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// Sixteen 32-bit lanes.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Lanes {
    /// Every kind of lanes the CPU has, the widest first.
    #[cfg(test)]
    fn available() -> Vec<Self> {
        let mut all = vec![Lanes::None];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                all.insert(0, Lanes::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                all.insert(0, Lanes::Avx512);
            }
        }
        all
    }

    fn detected() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return Lanes::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Lanes::Avx2;
            }
        }
        Lanes::None
    }
}

/// The additive constants of the 64 steps: the integer part of
/// |sin(i + 1)| · 2³² (RFC 1321, section 3.4).
#[rustfmt::skip]
const K: [u32; 64] = [
    0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee, 0xf57c_0faf, 0x4787_c62a, 0xa830_4613, 0xfd46_9501,
    0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be, 0x6b90_1122, 0xfd98_7193, 0xa679_438e, 0x49b4_0821,
    0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa, 0xd62f_105d, 0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8,
    0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed, 0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a,
    0xfffa_3942, 0x8771_f681, 0x6d9d_6122, 0xfde5_380c, 0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70,
    0x289b_7ec6, 0xeaa1_27fa, 0xd4ef_3085, 0x0488_1d05, 0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665,
    0xf429_2244, 0x432a_ff97, 0xab94_23a7, 0xfc93_a039, 0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
    0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1, 0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb, 0xeb86_d391,
];

/// The state before the first block.
const INITIAL: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// Invokes `$step!(mix, a, b, c, d, i, word, shift)` for MD5's 64 steps in
/// order (RFC 1321, 3.4): step `i` mixes with the round's function
/// (`ff`, `gg`, `hh`, `ii`), adds constant `K[i]` and the block's `word`,
/// rotates left by `shift`; the names of the state rotate from step to step
/// as the RFC writes them. Written out so that every index and shift is a
/// constant.
#[rustfmt::skip]
macro_rules! md5_steps {
    ($step:ident, $a:ident, $b:ident, $c:ident, $d:ident) => {
        $step!(ff, $a, $b, $c, $d, 0, 0, 7);
        $step!(ff, $d, $a, $b, $c, 1, 1, 12);
        $step!(ff, $c, $d, $a, $b, 2, 2, 17);
        $step!(ff, $b, $c, $d, $a, 3, 3, 22);
        $step!(ff, $a, $b, $c, $d, 4, 4, 7);
        $step!(ff, $d, $a, $b, $c, 5, 5, 12);
        $step!(ff, $c, $d, $a, $b, 6, 6, 17);
        $step!(ff, $b, $c, $d, $a, 7, 7, 22);
        $step!(ff, $a, $b, $c, $d, 8, 8, 7);
        $step!(ff, $d, $a, $b, $c, 9, 9, 12);
        $step!(ff, $c, $d, $a, $b, 10, 10, 17);
        $step!(ff, $b, $c, $d, $a, 11, 11, 22);
        $step!(ff, $a, $b, $c, $d, 12, 12, 7);
        $step!(ff, $d, $a, $b, $c, 13, 13, 12);
        $step!(ff, $c, $d, $a, $b, 14, 14, 17);
        $step!(ff, $b, $c, $d, $a, 15, 15, 22);
        $step!(gg, $a, $b, $c, $d, 16, 1, 5);
        $step!(gg, $d, $a, $b, $c, 17, 6, 9);
        $step!(gg, $c, $d, $a, $b, 18, 11, 14);
        $step!(gg, $b, $c, $d, $a, 19, 0, 20);
        $step!(gg, $a, $b, $c, $d, 20, 5, 5);
        $step!(gg, $d, $a, $b, $c, 21, 10, 9);
        $step!(gg, $c, $d, $a, $b, 22, 15, 14);
        $step!(gg, $b, $c, $d, $a, 23, 4, 20);
        $step!(gg, $a, $b, $c, $d, 24, 9, 5);
        $step!(gg, $d, $a, $b, $c, 25, 14, 9);
        $step!(gg, $c, $d, $a, $b, 26, 3, 14);
        $step!(gg, $b, $c, $d, $a, 27, 8, 20);
        $step!(gg, $a, $b, $c, $d, 28, 13, 5);
        $step!(gg, $d, $a, $b, $c, 29, 2, 9);
        $step!(gg, $c, $d, $a, $b, 30, 7, 14);
        $step!(gg, $b, $c, $d, $a, 31, 12, 20);
        $step!(hh, $a, $b, $c, $d, 32, 5, 4);
        $step!(hh, $d, $a, $b, $c, 33, 8, 11);
        $step!(hh, $c, $d, $a, $b, 34, 11, 16);
        $step!(hh, $b, $c, $d, $a, 35, 14, 23);
        $step!(hh, $a, $b, $c, $d, 36, 1, 4);
        $step!(hh, $d, $a, $b, $c, 37, 4, 11);
        $step!(hh, $c, $d, $a, $b, 38, 7, 16);
        $step!(hh, $b, $c, $d, $a, 39, 10, 23);
        $step!(hh, $a, $b, $c, $d, 40, 13, 4);
        $step!(hh, $d, $a, $b, $c, 41, 0, 11);
        $step!(hh, $c, $d, $a, $b, 42, 3, 16);
        $step!(hh, $b, $c, $d, $a, 43, 6, 23);
        $step!(hh, $a, $b, $c, $d, 44, 9, 4);
        $step!(hh, $d, $a, $b, $c, 45, 12, 11);
        $step!(hh, $c, $d, $a, $b, 46, 15, 16);
        $step!(hh, $b, $c, $d, $a, 47, 2, 23);
        $step!(ii, $a, $b, $c, $d, 48, 0, 6);
        $step!(ii, $d, $a, $b, $c, 49, 7, 10);
        $step!(ii, $c, $d, $a, $b, 50, 14, 15);
        $step!(ii, $b, $c, $d, $a, 51, 5, 21);
        $step!(ii, $a, $b, $c, $d, 52, 12, 6);
        $step!(ii, $d, $a, $b, $c, 53, 3, 10);
        $step!(ii, $c, $d, $a, $b, 54, 10, 15);
        $step!(ii, $b, $c, $d, $a, 55, 1, 21);
        $step!(ii, $a, $b, $c, $d, 56, 8, 6);
        $step!(ii, $d, $a, $b, $c, 57, 15, 10);
        $step!(ii, $c, $d, $a, $b, 58, 6, 15);
        $step!(ii, $b, $c, $d, $a, 59, 13, 21);
        $step!(ii, $a, $b, $c, $d, 60, 4, 6);
        $step!(ii, $d, $a, $b, $c, 61, 11, 10);
        $step!(ii, $c, $d, $a, $b, 62, 2, 15);
        $step!(ii, $b, $c, $d, $a, 63, 9, 21);
    };
}

/// One input as a sequence of 64-byte blocks: its whole blocks, then its
/// last partial block, the padding and the length in one or two more.
struct Padded<'a> {
    whole: &'a [[u8; 64]],
    tail: [[u8; 64]; 2],
    blocks: usize,
}

impl<'a> Padded<'a> {
    fn new(input: &'a [u8]) -> Self {
        let (whole, rest) = input.as_chunks::<64>();
        // A 0x80 byte and the 8-byte length follow the input (RFC 1321, 3.1
        // and 3.2).
        let blocks = (input.len() + 72) / 64;
        let mut tail = [0u8; 128];
        tail[..rest.len()].copy_from_slice(rest);
        tail[rest.len()] = 0x80;
        let end = (blocks - whole.len()) * 64;
        let bits = (input.len() as u64).wrapping_mul(8);
        tail[end - 8..end].copy_from_slice(&bits.to_le_bytes());
        let (tail, _) = tail.as_chunks::<64>();
        Self {
            whole,
            tail: [tail[0], tail[1]],
            blocks,
        }
    }

    /// Block `i`, which must be below `self.blocks`.
    fn block(&self, i: usize) -> &[u8; 64] {
        match self.whole.get(i) {
            Some(block) => block,
            None => &self.tail[i - self.whole.len()],
        }
    }

    /// Block `i`'s sixteen little-endian words into column `lane` of `words`.
    #[inline(always)]
    fn words_into<const N: usize>(&self, i: usize, words: &mut [[u32; N]; 16], lane: usize) {
        let (bytes, _) = self.block(i).as_chunks::<4>();
        for (row, word) in words.iter_mut().zip(bytes) {
            row[lane] = u32::from_le_bytes(*word);
        }
    }
}

/// Up to `N` inputs hashed together, one per lane.
struct Group<'a, const N: usize> {
    padded: Vec<Padded<'a>>,
    /// The blocks of the longest input: how many times the lanes compress.
    blocks: usize,
}

impl<'a, const N: usize> Group<'a, N> {
    fn new<T: AsRef<[u8]>>(inputs: &'a [T]) -> Self {
        debug_assert!(inputs.len() <= N);
        let padded: Vec<Padded<'a>> = inputs.iter().map(|i| Padded::new(i.as_ref())).collect();
        let blocks = padded.iter().map(|p| p.blocks).max().unwrap_or(0);
        Self { padded, blocks }
    }

    /// Block `b` of every input that has one into its column of `words`;
    /// the lanes that have one, as bits.
    fn gather(&self, b: usize, words: &mut [[u32; N]; 16]) -> u32 {
        let mut live = 0;
        for (lane, p) in self.padded.iter().enumerate() {
            if b < p.blocks {
                live |= 1 << lane;
                p.words_into(b, words, lane);
            }
        }
        live
    }

    /// Each lane's final state as its input's digest.
    fn write_digests(state: &[[u32; N]; 4], out: &mut [[u8; 16]]) {
        for (lane, digest) in out.iter_mut().enumerate() {
            for (w, words) in state.iter().enumerate() {
                digest[w * 4..w * 4 + 4].copy_from_slice(&words[lane].to_le_bytes());
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{Group, INITIAL, K};

    /// Inputs hashed side by side in a 256-bit vector.
    pub(super) const LANES: usize = 8;

    /// The digests of up to eight inputs into `out` (callers check that
    /// the CPU has AVX2).
    #[target_feature(enable = "avx2")]
    pub(super) fn digest_group<T: AsRef<[u8]>>(inputs: &[T], out: &mut [[u8; 16]]) {
        let group = Group::<LANES>::new(inputs);
        let mut state = INITIAL.map(|w| _mm256_set1_epi32(w as i32));
        // The block's sixteen words, each as eight lanes.
        let mut words = [[0u32; LANES]; 16];
        for b in 0..group.blocks {
            let live = group.gather(b, &mut words);
            // SAFETY: each row is eight u32s, the 32 bytes an unaligned load reads.
            let m = words.map(|w| unsafe { _mm256_loadu_si256(w.as_ptr().cast::<__m256i>()) });
            let next = compress(state, &m);
            // A lane past its input's last block keeps its state.
            let keep: [i32; LANES] = std::array::from_fn(|l| -((live >> l & 1) as i32));
            // SAFETY: eight i32s, 32 bytes.
            let keep = unsafe { _mm256_loadu_si256(keep.as_ptr().cast::<__m256i>()) };
            for (s, n) in state.iter_mut().zip(next) {
                *s = _mm256_blendv_epi8(*s, n, keep);
            }
        }
        let mut lanes = [[0u32; LANES]; 4];
        for (l, s) in lanes.iter_mut().zip(state) {
            // SAFETY: eight u32s, the 32 bytes an unaligned store writes.
            unsafe { _mm256_storeu_si256(l.as_mut_ptr().cast::<__m256i>(), s) };
        }
        Group::write_digests(&lanes, out);
    }

    /// The 64 steps over one block of every lane.
    #[target_feature(enable = "avx2")]
    fn compress(state: [__m256i; 4], m: &[__m256i; 16]) -> [__m256i; 4] {
        let [mut a, mut b, mut c, mut d] = state;
        macro_rules! step {
            ($mix:ident, $a:ident, $b:ident, $c:ident, $d:ident, $i:literal, $w:literal, $s:literal) => {
                let sum = _mm256_add_epi32(
                    _mm256_add_epi32($a, $mix($b, $c, $d)),
                    _mm256_add_epi32(_mm256_set1_epi32(K[$i] as i32), m[$w]),
                );
                let rotated = _mm256_or_si256(
                    _mm256_slli_epi32::<$s>(sum),
                    _mm256_srli_epi32::<{ 32 - $s }>(sum),
                );
                $a = _mm256_add_epi32($b, rotated);
            };
        }
        md5_steps!(step, a, b, c, d);
        [
            _mm256_add_epi32(state[0], a),
            _mm256_add_epi32(state[1], b),
            _mm256_add_epi32(state[2], c),
            _mm256_add_epi32(state[3], d),
        ]
    }

    /// F: `(b & c) | (!b & d)`.
    #[target_feature(enable = "avx2")]
    fn ff(b: __m256i, c: __m256i, d: __m256i) -> __m256i {
        _mm256_xor_si256(d, _mm256_and_si256(b, _mm256_xor_si256(c, d)))
    }

    /// G: `(b & d) | (c & !d)`.
    #[target_feature(enable = "avx2")]
    fn gg(b: __m256i, c: __m256i, d: __m256i) -> __m256i {
        _mm256_xor_si256(c, _mm256_and_si256(d, _mm256_xor_si256(b, c)))
    }

    /// H: `b ^ c ^ d`.
    #[target_feature(enable = "avx2")]
    fn hh(b: __m256i, c: __m256i, d: __m256i) -> __m256i {
        _mm256_xor_si256(_mm256_xor_si256(b, c), d)
    }

    /// I: `c ^ (b | !d)`.
    #[target_feature(enable = "avx2")]
    fn ii(b: __m256i, c: __m256i, d: __m256i) -> __m256i {
        _mm256_xor_si256(
            c,
            _mm256_or_si256(b, _mm256_xor_si256(d, _mm256_set1_epi32(-1))),
        )
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{Group, INITIAL, K};

    /// Inputs hashed side by side in a 512-bit vector.
    pub(super) const LANES: usize = 16;

    /// The digests of up to sixteen inputs into `out` (callers check that
    /// the CPU has AVX-512F).
    #[target_feature(enable = "avx512f")]
    pub(super) fn digest_group<T: AsRef<[u8]>>(inputs: &[T], out: &mut [[u8; 16]]) {
        let group = Group::<LANES>::new(inputs);
        let mut state = INITIAL.map(|w| _mm512_set1_epi32(w as i32));
        let mut words = [[0u32; LANES]; 16];
        for b in 0..group.blocks {
            let live = group.gather(b, &mut words) as __mmask16;
            // SAFETY: each row is sixteen u32s, the 64 bytes an unaligned load reads.
            let m = words.map(|w| unsafe { _mm512_loadu_si512(w.as_ptr().cast::<__m512i>()) });
            let next = compress(state, &m);
            // A lane past its input's last block keeps its state.
            for (s, n) in state.iter_mut().zip(next) {
                *s = _mm512_mask_mov_epi32(*s, live, n);
            }
        }
        let mut lanes = [[0u32; LANES]; 4];
        for (l, s) in lanes.iter_mut().zip(state) {
            // SAFETY: sixteen u32s, the 64 bytes an unaligned store writes.
            unsafe { _mm512_storeu_si512(l.as_mut_ptr().cast::<__m512i>(), s) };
        }
        Group::write_digests(&lanes, out);
    }

    /// The 64 steps over one block of every lane; each round's function is
    /// one ternary-logic instruction (its truth table the constant), each
    /// rotation one instruction.
    #[target_feature(enable = "avx512f")]
    fn compress(state: [__m512i; 4], m: &[__m512i; 16]) -> [__m512i; 4] {
        let [mut a, mut b, mut c, mut d] = state;
        macro_rules! step {
            ($mix:ident, $a:ident, $b:ident, $c:ident, $d:ident, $i:literal, $w:literal, $s:literal) => {
                let sum = _mm512_add_epi32(
                    _mm512_add_epi32($a, $mix($b, $c, $d)),
                    _mm512_add_epi32(_mm512_set1_epi32(K[$i] as i32), m[$w]),
                );
                $a = _mm512_add_epi32($b, _mm512_rol_epi32::<$s>(sum));
            };
        }
        md5_steps!(step, a, b, c, d);
        [
            _mm512_add_epi32(state[0], a),
            _mm512_add_epi32(state[1], b),
            _mm512_add_epi32(state[2], c),
            _mm512_add_epi32(state[3], d),
        ]
    }

    /// F: `b ? c : d`.
    #[target_feature(enable = "avx512f")]
    fn ff(b: __m512i, c: __m512i, d: __m512i) -> __m512i {
        _mm512_ternarylogic_epi32::<0xca>(b, c, d)
    }

    /// G: `d ? b : c`.
    #[target_feature(enable = "avx512f")]
    fn gg(b: __m512i, c: __m512i, d: __m512i) -> __m512i {
        _mm512_ternarylogic_epi32::<0xe4>(b, c, d)
    }

    /// H: `b ^ c ^ d`.
    #[target_feature(enable = "avx512f")]
    fn hh(b: __m512i, c: __m512i, d: __m512i) -> __m512i {
        _mm512_ternarylogic_epi32::<0x96>(b, c, d)
    }

    /// I: `c ^ (b | !d)`.
    #[target_feature(enable = "avx512f")]
    fn ii(b: __m512i, c: __m512i, d: __m512i) -> __m512i {
        _mm512_ternarylogic_epi32::<0x39>(b, c, d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(input: &[u8]) -> [u8; 16] {
        Md5::digest(input).into()
    }

    #[test]
    fn the_step_constants_are_the_sines() {
        for (i, k) in K.iter().enumerate() {
            let sine = (((i + 1) as f64).sin().abs() * 4_294_967_296.0) as u32;
            assert_eq!(*k, sine, "K[{i}]");
        }
    }

    #[test]
    fn x86_64_hashes_in_lanes() {
        // Every x86-64 CPU sluice is built for has AVX2: a machine without
        // it would leave the lane code untested, so this fails instead.
        #[cfg(target_arch = "x86_64")]
        assert!(
            Lanes::available().contains(&Lanes::Avx2),
            "{:?}",
            Lanes::available()
        );
        assert_eq!(Lanes::available()[0], Lanes::detected());
    }

    #[test]
    fn every_length_around_the_block_edges_matches_md5() {
        // Lengths on both sides of where the padding needs a second block
        // (55/56) and of whole blocks, mixed in each group, with every kind
        // of lanes the CPU has.
        let data: Vec<u8> = (0..300u32).map(|i| (i * 131 + 7) as u8).collect();
        for lanes in Lanes::available() {
            for width in [2, 7, 10, 16] {
                let lengths: Vec<usize> = (0..=200).collect();
                for group in lengths.chunks(width) {
                    let inputs: Vec<&[u8]> = group.iter().map(|&n| &data[..n]).collect();
                    let got = digests_with(lanes, &inputs);
                    for (input, digest) in inputs.iter().zip(&got) {
                        assert_eq!(*digest, one(input), "{lanes:?}, length {}", input.len());
                    }
                }
            }
        }
    }

    #[test]
    fn groups_of_every_size_match_md5() {
        // One to forty inputs: whole groups and remainders of every size,
        // one input alone included.
        let bodies: Vec<Vec<u8>> = (0..40)
            .map(|i| format!("body {i} ").repeat(1 + i * 13).into_bytes())
            .collect();
        for lanes in Lanes::available() {
            for n in 1..=bodies.len() {
                let inputs: Vec<&[u8]> = bodies[..n].iter().map(Vec::as_slice).collect();
                let got = digests_with(lanes, &inputs);
                assert_eq!(got.len(), n);
                for (input, digest) in inputs.iter().zip(&got) {
                    assert_eq!(
                        *digest,
                        one(input),
                        "{lanes:?}, {n} inputs, length {}",
                        input.len()
                    );
                }
            }
        }
    }

    #[test]
    fn known_answers() {
        // RFC 1321, appendix A.5.
        let inputs: [&[u8]; 3] = [b"", b"abc", b"message digest"];
        let got: Vec<String> = digests(&inputs)
            .iter()
            .map(crate::digest::digest_hex)
            .collect();
        assert_eq!(
            got,
            [
                "d41d8cd98f00b204e9800998ecf8427e",
                "900150983cd24fb0d6963f7d28e17f72",
                "f96b697d7cb7938d525a2f31aaf161d0"
            ]
        );
        assert!(digests::<&[u8]>(&[]).is_empty());
    }
}
