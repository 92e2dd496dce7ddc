// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fully specified generator, so that a seed
// gives the same node orders and shuffles on every platform (tomography), and a fast filler of
// incompressible bytes (benchmark and tomography probe payloads, several GB/s per core).
// Not for cryptography. A value type; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

namespace gridcast {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound); the modulo bias is negligible for the few thousand items we shuffle.
  size_t Below(size_t bound) { return static_cast<size_t>(Next() % bound); }

  // Fisher-Yates.
  template <typename T>
  void Shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[Below(i)]);
  }

 private:
  uint64_t state_;
};

// Fills `out` with the generator's next outputs, 8 bytes per step (the last step may be cut).
inline void FillPseudoRandom(std::span<uint8_t> out, SplitMix64& generator) {
  size_t i = 0;
  for (; i + 8 <= out.size(); i += 8) {
    const uint64_t word = generator.Next();
    std::memcpy(out.data() + i, &word, 8);
  }
  if (i < out.size()) {
    const uint64_t word = generator.Next();
    std::memcpy(out.data() + i, &word, out.size() - i);
  }
}

}  // namespace gridcast
