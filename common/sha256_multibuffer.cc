// Multi-buffer SHA-256 on AVX-512 (see sha256_multibuffer.h).
//
// Layout: one message per 32-bit lane. For each 64-byte block step, every lane's block is
// loaded as one vector row, byte-swapped to big-endian words and transposed, so that vector t
// holds message word W[t] of all lanes. The 64 rounds then run exactly as in FIPS 180-4, on
// vectors: rotations with vprord, Ch/Maj/three-way XOR with vpternlogd. The message schedule
// is kept in a 16-vector ring and extended on the fly.
//
// Lengths: a lane's message is its full 64-byte blocks read in place, then one or two padding
// blocks built in a small per-lane buffer (the remaining bytes, 0x80, zeros, the bit length).
// Lanes may have different lengths: a lane that has no block left at a step is fed a dummy
// block and its state update is masked off.

#include "common/sha256_multibuffer.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

// GCC 12's _mm512_undefined_epi32() initialises a variable with itself, which -Wuninitialized
// (and, at -O1 as in the sanitizer builds, -Wmaybe-uninitialized) reports at every inlined
// _mm512_ror_epi32/_mm512_srli_epi32 (GCC bug 105593, a false positive fixed in GCC 12.3). The
// project builds with -Werror.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace gridcast {
namespace {

// Everything that uses AVX-512 carries this target attribute (rather than a file-wide
// "#pragma GCC target", which clang does not take), so the file needs no -mavx512* flags and
// the public entry points below stay plain x86-64 code.
#define SHA256MB_TARGET __attribute__((target("avx2,avx512f,avx512bw,avx512vl")))
#define SHA256MB_INLINE inline __attribute__((always_inline)) SHA256MB_TARGET

constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

constexpr uint32_t kInitialState[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

// vpternlogd truth tables, operands (x, y, z) -> bit index 4x + 2y + z.
constexpr int kXor3 = 0x96;    // x ^ y ^ z
constexpr int kChoose = 0xCA;  // x ? y : z
constexpr int kMajority = 0xE8;

// Index vectors for the transpose: stage `d` (1, 2, 4, 8) swaps bit d of the row index with
// bit d of the column index. Row i (bit d clear) takes its own columns j with bit d clear and
// row i+d's column j-d elsewhere; row i+d takes row i's column j+d where bit d is clear and
// its own column j elsewhere. Indices >= lanes select from the second operand.
template <int kLanes>
struct TransposeIndices {
  alignas(64) int32_t low[4][kLanes];
  alignas(64) int32_t high[4][kLanes];
  constexpr TransposeIndices() : low(), high() {
    for (int s = 0; (1 << s) < kLanes; ++s) {
      const int d = 1 << s;
      for (int j = 0; j < kLanes; ++j) {
        low[s][j] = (j & d) == 0 ? j : kLanes + j - d;
        high[s][j] = (j & d) == 0 ? j + d : kLanes + j;
      }
    }
  }
};
constexpr TransposeIndices<16> kTranspose16;
constexpr TransposeIndices<8> kTranspose8;

// Reverses the bytes of each 32-bit word (within each 128-bit lane, as vpshufb works).
alignas(64) constexpr uint8_t kByteSwap32[64] = {
    3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
    3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
    3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
    3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
};

// 16 lanes in a zmm register.
struct Lanes16 {
  static constexpr int kLanes = 16;
  using V = __m512i;
  using Mask = __mmask16;
  static SHA256MB_INLINE V Set1(uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }
  static SHA256MB_INLINE V Add(V a, V b) { return _mm512_add_epi32(a, b); }
  static SHA256MB_INLINE V MaskAdd(V src, Mask m, V a, V b) {
    return _mm512_mask_add_epi32(src, m, a, b);
  }
  template <int kBits>
  static SHA256MB_INLINE V Ror(V a) { return _mm512_ror_epi32(a, kBits); }
  template <int kBits>
  static SHA256MB_INLINE V Shr(V a) { return _mm512_srli_epi32(a, kBits); }
  template <int kTable>
  static SHA256MB_INLINE V Ternary(V a, V b, V c) {
    return _mm512_ternarylogic_epi32(a, b, c, kTable);
  }
  static SHA256MB_INLINE void Store(uint32_t* dst, V v) { _mm512_storeu_si512(dst, v); }

  // w[t] = big-endian word t of the 64-byte block at block[lane], for every lane.
  static SHA256MB_INLINE void LoadBlock(const uint8_t* const block[16], V w[16]) {
    const V swap = _mm512_load_si512(kByteSwap32);
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) w[i] = _mm512_shuffle_epi8(_mm512_loadu_si512(block[i]), swap);
#pragma GCC unroll 4
    for (int s = 0; s < 4; ++s) {
      const int d = 1 << s;
      const V low = _mm512_load_si512(kTranspose16.low[s]);
      const V high = _mm512_load_si512(kTranspose16.high[s]);
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        if (i & d) continue;
        const V a = w[i], b = w[i + d];
        w[i] = _mm512_permutex2var_epi32(a, low, b);
        w[i + d] = _mm512_permutex2var_epi32(a, high, b);
      }
    }
  }
};

// 8 lanes in a ymm register (AVX-512VL forms of the same instructions).
struct Lanes8 {
  static constexpr int kLanes = 8;
  using V = __m256i;
  using Mask = __mmask8;
  static SHA256MB_INLINE V Set1(uint32_t x) { return _mm256_set1_epi32(static_cast<int>(x)); }
  static SHA256MB_INLINE V Add(V a, V b) { return _mm256_add_epi32(a, b); }
  static SHA256MB_INLINE V MaskAdd(V src, Mask m, V a, V b) {
    return _mm256_mask_add_epi32(src, m, a, b);
  }
  template <int kBits>
  static SHA256MB_INLINE V Ror(V a) { return _mm256_ror_epi32(a, kBits); }
  template <int kBits>
  static SHA256MB_INLINE V Shr(V a) { return _mm256_srli_epi32(a, kBits); }
  template <int kTable>
  static SHA256MB_INLINE V Ternary(V a, V b, V c) {
    return _mm256_ternarylogic_epi32(a, b, c, kTable);
  }
  static SHA256MB_INLINE void Store(uint32_t* dst, V v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), v);
  }

  // w[t] = big-endian word t of the 64-byte block at block[lane], for every lane; each block is
  // two 32-byte rows, words 0-7 and 8-15, transposed as two 8x8 matrices.
  static SHA256MB_INLINE void LoadBlock(const uint8_t* const block[8], V w[16]) {
    const V swap = _mm256_load_si256(reinterpret_cast<const __m256i*>(kByteSwap32));
#pragma GCC unroll 2
    for (int half = 0; half < 2; ++half) {
      V* m = w + 8 * half;
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        m[i] = _mm256_shuffle_epi8(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block[i] + 32 * half)), swap);
      }
#pragma GCC unroll 3
      for (int s = 0; s < 3; ++s) {
        const int d = 1 << s;
        const V low = _mm256_load_si256(reinterpret_cast<const __m256i*>(kTranspose8.low[s]));
        const V high = _mm256_load_si256(reinterpret_cast<const __m256i*>(kTranspose8.high[s]));
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) {
          if (i & d) continue;
          const V a = m[i], b = m[i + d];
          m[i] = _mm256_permutex2var_epi32(a, low, b);
          m[i + d] = _mm256_permutex2var_epi32(a, high, b);
        }
      }
    }
  }
};

// The four functions of FIPS 180-4 section 4.1.2, one vpternlogd each.
template <class L>
SHA256MB_INLINE typename L::V BigSigma0(typename L::V x) {
  return L::template Ternary<kXor3>(L::template Ror<2>(x), L::template Ror<13>(x),
                                    L::template Ror<22>(x));
}
template <class L>
SHA256MB_INLINE typename L::V BigSigma1(typename L::V x) {
  return L::template Ternary<kXor3>(L::template Ror<6>(x), L::template Ror<11>(x),
                                    L::template Ror<25>(x));
}
template <class L>
SHA256MB_INLINE typename L::V SmallSigma0(typename L::V x) {
  return L::template Ternary<kXor3>(L::template Ror<7>(x), L::template Ror<18>(x),
                                    L::template Shr<3>(x));
}
template <class L>
SHA256MB_INLINE typename L::V SmallSigma1(typename L::V x) {
  return L::template Ternary<kXor3>(L::template Ror<17>(x), L::template Ror<19>(x),
                                    L::template Shr<10>(x));
}

// One round. The caller rotates the roles of a..h between calls instead of moving values:
// only d and h get new values (d + T1 is the next e, T1 + T2 is the next a).
//
// The round is latency-bound, so the sums are ordered for short dependency chains rather than
// for the fewest additions: h + K + W and d + h + K + W do not depend on this round's e, so the
// next e is ((d + h + K + W) + Ch) + Sigma1, three steps after e (instead of five for
// d + ((h + K + W) + (Sigma1 + Ch))); likewise the next a adds Sigma0 last. Measured about 15%
// faster than the plain order.
template <class L>
SHA256MB_INLINE void Round(typename L::V a, typename L::V b, typename L::V c, typename L::V& d,
                           typename L::V e, typename L::V f, typename L::V g, typename L::V& h,
                           typename L::V k_plus_w) {
  using V = typename L::V;
  // (GCC does not reorder these much at -O2 on x86: this order measured best.)
  const V sigma1 = BigSigma1<L>(e);
  const V choose = L::template Ternary<kChoose>(e, f, g);
  const V hkw = L::Add(h, k_plus_w);
  const V dhkw = L::Add(d, hkw);
  const V t1 = L::Add(L::Add(hkw, choose), sigma1);
  const V sigma0 = BigSigma0<L>(a);
  const V majority = L::template Ternary<kMajority>(a, b, c);
  d = L::Add(L::Add(dhkw, choose), sigma1);
  h = L::Add(L::Add(t1, majority), sigma0);
}

// W[t] for t >= 16, in place in the ring w[t % 16] (which held W[t - 16]).
template <class L>
SHA256MB_INLINE typename L::V Schedule(typename L::V w[16], int t) {
  using V = typename L::V;
  const V s0 = SmallSigma0<L>(w[(t - 15) & 15]);
  const V s1 = SmallSigma1<L>(w[(t - 2) & 15]);
  w[t & 15] = L::Add(L::Add(w[t & 15], w[(t - 7) & 15]), L::Add(s0, s1));
  return w[t & 15];
}

// K[t] + W[t], extending the schedule for t >= 16.
template <class L>
SHA256MB_INLINE typename L::V KPlusW(typename L::V w[16], int t) {
  const typename L::V wt = t < 16 ? w[t] : Schedule<L>(w, t);
  return L::Add(L::Set1(kRoundConstants[t]), wt);
}

// Compresses one block per lane into `state`; lanes outside `active` keep their state.
template <class L>
SHA256MB_INLINE void Compress(typename L::V state[8], const uint8_t* const block[L::kLanes],
                              typename L::Mask active) {
  using V = typename L::V;
  V w[16];
  L::LoadBlock(block, w);
  V a = state[0], b = state[1], c = state[2], d = state[3];
  V e = state[4], f = state[5], g = state[6], h = state[7];
#pragma GCC unroll 8
  for (int t = 0; t < 64; t += 8) {
    Round<L>(a, b, c, d, e, f, g, h, KPlusW<L>(w, t + 0));
    Round<L>(h, a, b, c, d, e, f, g, KPlusW<L>(w, t + 1));
    Round<L>(g, h, a, b, c, d, e, f, KPlusW<L>(w, t + 2));
    Round<L>(f, g, h, a, b, c, d, e, KPlusW<L>(w, t + 3));
    Round<L>(e, f, g, h, a, b, c, d, KPlusW<L>(w, t + 4));
    Round<L>(d, e, f, g, h, a, b, c, KPlusW<L>(w, t + 5));
    Round<L>(c, d, e, f, g, h, a, b, KPlusW<L>(w, t + 6));
    Round<L>(b, c, d, e, f, g, h, a, KPlusW<L>(w, t + 7));
  }
  const V working[8] = {a, b, c, d, e, f, g, h};
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) state[i] = L::MaskAdd(state[i], active, state[i], working[i]);
}

// SHA-256 of L::kLanes messages of any lengths.
template <class L>
__attribute__((noinline)) SHA256MB_TARGET void HashLanes(const uint8_t* const data[],
                                                         const size_t length[],
                                                         uint8_t (*out)[32]) {
  constexpr int kLanes = L::kLanes;
  using V = typename L::V;
  using Mask = typename L::Mask;

  // Per lane: full blocks read in place, then 1 or 2 padding blocks from `tail`.
  alignas(64) uint8_t tail[kLanes][128];
  size_t full_blocks[kLanes];
  size_t total_blocks[kLanes];
  size_t max_blocks = 0;
  for (int i = 0; i < kLanes; ++i) {
    const size_t n = length[i];
    const size_t rest = n % 64;
    const size_t tail_blocks = rest + 9 <= 64 ? 1 : 2;
    full_blocks[i] = n / 64;
    total_blocks[i] = full_blocks[i] + tail_blocks;
    max_blocks = std::max(max_blocks, total_blocks[i]);
    uint8_t* t = tail[i];
    std::memset(t, 0, sizeof(tail[i]));
    if (rest != 0) std::memcpy(t, data[i] + (n - rest), rest);
    t[rest] = 0x80;
    const uint64_t bits = static_cast<uint64_t>(n) << 3;
    uint8_t* end = t + 64 * tail_blocks;
    for (int k = 1; k <= 8; ++k) end[-k] = static_cast<uint8_t>(bits >> (8 * (k - 1)));
  }

  V state[8];
  for (int i = 0; i < 8; ++i) state[i] = L::Set1(kInitialState[i]);

  const uint8_t* block[kLanes];
  for (size_t step = 0; step < max_blocks; ++step) {
    Mask active = 0;
    for (int i = 0; i < kLanes; ++i) {
      if (step < full_blocks[i]) {
        block[i] = data[i] + 64 * step;
      } else if (step < total_blocks[i]) {
        block[i] = tail[i] + 64 * (step - full_blocks[i]);
      } else {
        block[i] = tail[i];  // readable dummy; the lane's update is masked off
        continue;
      }
      active = static_cast<Mask>(active | (1u << i));
    }
    Compress<L>(state, block, active);
  }

  alignas(64) uint32_t words[8][kLanes];
  for (int i = 0; i < 8; ++i) L::Store(words[i], state[i]);
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 8; ++i) {
      const uint32_t v = words[i][lane];
      out[lane][4 * i + 0] = static_cast<uint8_t>(v >> 24);
      out[lane][4 * i + 1] = static_cast<uint8_t>(v >> 16);
      out[lane][4 * i + 2] = static_cast<uint8_t>(v >> 8);
      out[lane][4 * i + 3] = static_cast<uint8_t>(v);
    }
  }
}

#undef SHA256MB_INLINE
#undef SHA256MB_TARGET

}  // namespace

void Sha256MultiBuffer(const uint8_t* const data[], const size_t length[], size_t count,
                       uint8_t (*out)[32]) noexcept {
  static constexpr uint8_t kEmpty[1] = {0};
  while (count >= 16) {
    HashLanes<Lanes16>(data, length, out);
    data += 16, length += 16, out += 16, count -= 16;
  }
  if (count == 0) return;
  // A short last group: idle lanes hash the empty message (one block) and are dropped.
  const int lanes = count <= 8 ? 8 : 16;
  const uint8_t* group_data[16];
  size_t group_length[16];
  uint8_t group_out[16][32];
  for (int i = 0; i < lanes; ++i) {
    const bool used = static_cast<size_t>(i) < count;
    group_data[i] = used ? data[i] : kEmpty;
    group_length[i] = used ? length[i] : 0;
  }
  if (lanes == 8) {
    HashLanes<Lanes8>(group_data, group_length, group_out);
  } else {
    HashLanes<Lanes16>(group_data, group_length, group_out);
  }
  std::memcpy(out, group_out, 32 * count);
}

}  // namespace gridcast

#pragma GCC diagnostic pop

namespace gridcast {

bool Sha256MultiBufferSupported() noexcept {
  // libgcc's CPU model also checks that the OS saves the AVX-512 state (XCR0).
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl");
}

}  // namespace gridcast
