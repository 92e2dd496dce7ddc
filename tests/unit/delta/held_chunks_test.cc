// The delta library (issue 36): the rolling checksum against its definition, content-defined
// cuts that move only near an edit, and every base change found in the old copy by both ways,
// each held chunk's bytes checked against the new payload.
#include "delta/held_chunks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "common/splitmix64.h"
#include "delta/base_change.h"
#include "delta/content_chunks.h"
#include "delta/rolling_checksum.h"

namespace gridcast {
namespace {

std::vector<uint8_t> RandomBytes(size_t size, uint64_t seed) {
  std::vector<uint8_t> bytes(size);
  SplitMix64 random(seed);
  FillPseudoRandom(bytes, random);
  return bytes;
}

// rsync's definition, a byte at a time.
uint32_t WeakChecksumByDefinition(std::span<const uint8_t> bytes) {
  uint32_t a = 0, b = 0;
  for (uint8_t byte : bytes) {
    a += byte;
    b += a;
  }
  return (a & 0xffff) | (b << 16);
}

TEST(RollingChecksum, BlocksEqualTheDefinition) {
  const std::vector<uint8_t> bytes = RandomBytes(70000, 3);
  for (size_t size : {0u, 1u, 31u, 32u, 33u, 64u, 95u, 4096u, 65536u, 70000u}) {
    const auto window = std::span<const uint8_t>(bytes).first(size);
    EXPECT_EQ(WeakChecksum(window), WeakChecksumByDefinition(window)) << size;
  }
  const std::vector<uint8_t> ones(70001, 0xff);
  EXPECT_EQ(WeakChecksum(ones), WeakChecksumByDefinition(ones));
}

TEST(RollingChecksum, RollingEqualsRecomputing) {
  const std::vector<uint8_t> bytes = RandomBytes(5000, 1);
  for (size_t window : {1u, 2u, 7u, 64u, 1000u}) {
    RollingChecksum checksum(std::span<const uint8_t>(bytes).first(window));
    for (size_t at = 0; at + window < bytes.size(); ++at) {
      ASSERT_EQ(checksum.value(), WeakChecksum(std::span(bytes).subspan(at, window))) << window << " at " << at;
      checksum.Roll(bytes[at], bytes[at + window]);
    }
  }
  // Long windows of high bytes wrap both sums; still equal.
  const std::vector<uint8_t> ones(100000, 0xff);
  RollingChecksum wrapped(std::span<const uint8_t>(ones).first(70000));
  wrapped.Roll(0xff, 0xff);
  EXPECT_EQ(wrapped.value(), WeakChecksum(std::span(ones).first(70000)));
}

TEST(WeakChecksums, EncodeAndDecodeAndRefuseAnotherCount) {
  const std::vector<uint32_t> weak = {0, 1, 0xdeadbeef, 0xffffffff};
  const std::string encoded = EncodeWeakChecksums(weak);
  EXPECT_EQ(encoded.size(), 16u);
  EXPECT_EQ(encoded.substr(8, 4), std::string("\xef\xbe\xad\xde", 4));
  Result<std::vector<uint32_t>> decoded = DecodeWeakChecksums(encoded, 4);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, weak);
  EXPECT_TRUE(DecodeWeakChecksums("", 4)->empty());
  EXPECT_EQ(DecodeWeakChecksums(encoded, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeWeakChecksums(encoded + "x", 4).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeWeakChecksums(encoded.substr(0, 15), 4).status().code(), StatusCode::kInvalidArgument);
}

TEST(ContentCutter, SizesStayWithinBoundsAndCoverTheSource) {
  const std::vector<uint8_t> bytes = RandomBytes(3 << 20, 2);
  const ContentCutter cutter(2048, 8192, 65536);
  Result<std::vector<uint64_t>> sizes = cutter.Cut(MemorySource(bytes));
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(std::accumulate(sizes->begin(), sizes->end(), uint64_t{0}), bytes.size());
  for (size_t i = 0; i + 1 < sizes->size(); ++i) {
    EXPECT_GE((*sizes)[i], 2048u);
    EXPECT_LE((*sizes)[i], 65536u);
  }
  const double mean = static_cast<double>(bytes.size()) / sizes->size();
  EXPECT_GT(mean, 8192 * 0.7);
  EXPECT_LT(mean, 8192 * 1.6);
  // Incompressible bytes all the same value never cut early: max-size chunks.
  const std::vector<uint8_t> zeros(200000, 0);
  Result<std::vector<uint64_t>> flat = cutter.Cut(MemorySource(zeros));
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->front(), 65536u);
  Result<std::vector<uint64_t>> none = cutter.Cut(MemorySource({}));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(ContentCutter, AnInsertionMovesOnlyTheCutsNearIt) {
  const std::vector<uint8_t> old = RandomBytes(4 << 20, 3);
  const std::vector<Edit> edits = {{1 << 20, 0, 100}};
  const std::vector<uint8_t> changed = ApplyEdits(old, edits, 9);
  const ContentCutter cutter(2048, 8192, 65536);
  auto ends = [&](const std::vector<uint8_t>& bytes, int64_t shift_after, int64_t shift) {
    std::vector<int64_t> out;
    int64_t at = 0;
    Result<std::vector<uint64_t>> sizes = cutter.Cut(MemorySource(bytes));
    EXPECT_TRUE(sizes.ok());
    for (uint64_t size : sizes.ok() ? *sizes : std::vector<uint64_t>{}) {
      at += static_cast<int64_t>(size);
      out.push_back(at > shift_after ? at - shift : at);
    }
    return out;
  };
  const std::vector<int64_t> before = ends(old, INT64_MAX, 0);
  const std::vector<int64_t> after = ends(changed, 1 << 20, 100);
  std::vector<int64_t> common;
  std::set_intersection(before.begin(), before.end(), after.begin(), after.end(), std::back_inserter(common));
  EXPECT_GE(common.size() + 3, before.size());
}

TEST(BaseChange, EditsAsTheIssueNamesThem) {
  constexpr uint64_t kSize = 256 << 20;
  EXPECT_TRUE(BaseChangeEdits(BaseChange::kSame, kSize).empty());
  const std::vector<Edit> scattered = BaseChangeEdits(BaseChange::kScattered, kSize);
  ASSERT_EQ(scattered.size(), 8u);
  uint64_t rewritten = 0;
  for (size_t i = 0; i < scattered.size(); ++i) {
    EXPECT_EQ(scattered[i].removed, scattered[i].inserted);
    if (i > 0) {
      EXPECT_GE(scattered[i].offset, scattered[i - 1].offset + scattered[i - 1].removed);
    }
    rewritten += scattered[i].removed;
  }
  EXPECT_NEAR(static_cast<double>(rewritten) / kSize, 0.01, 0.0001);
  EXPECT_EQ(BaseChangeEdits(BaseChange::kInsert, kSize)[0].inserted, 64u << 10);
  EXPECT_EQ(BaseChangeEdits(BaseChange::kAppend, kSize)[0].offset, kSize);
  EXPECT_EQ(BaseChangeEdits(BaseChange::kPrepend, kSize)[0].offset, 0u);
  for (BaseChange kind : kAllBaseChanges) EXPECT_EQ(ParseBaseChange(BaseChangeName(kind)).value(), kind);
  EXPECT_FALSE(ParseBaseChange("truncate").ok());
}

// Every held chunk's old bytes are the new chunk's; returns the new bytes not held.
uint64_t CheckHeld(const std::vector<uint8_t>& old, const std::vector<uint8_t>& payload,
                   const std::vector<uint64_t>& sizes, const std::vector<uint64_t>& held) {
  uint64_t missing = 0;
  uint64_t offset = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (held[i] == kNotHeld) {
      missing += sizes[i];
    } else {
      EXPECT_TRUE(std::equal(payload.begin() + offset, payload.begin() + offset + sizes[i], old.begin() + held[i]))
          << "chunk " << i;
    }
    offset += sizes[i];
  }
  return missing;
}

std::vector<ChunkSummary> SummarizeContentChunks(const std::vector<uint8_t>& payload, const ContentCutter& cutter,
                                                 ChunkDigest kind, std::vector<uint64_t>& sizes) {
  Result<std::vector<uint64_t>> cut = cutter.Cut(MemorySource(payload));
  EXPECT_TRUE(cut.ok());
  sizes = cut.ok() ? *cut : std::vector<uint64_t>{};
  std::vector<ChunkSummary> chunks;
  uint64_t offset = 0;
  for (uint64_t size : sizes) {
    chunks.push_back({size, 0, HashChunk(kind, std::span(payload).subspan(offset, size))});
    offset += size;
  }
  return chunks;
}

TEST(HeldChunks, EveryBaseChangeMovesLittleBothWays) {
  constexpr uint64_t kSize = 16 << 20;
  const std::vector<uint8_t> old = RandomBytes(kSize, 4);
  const ContentCutter cutter(16 << 10, 64 << 10, 256 << 10);
  for (ChunkDigest kind : {ChunkDigest::kXxh3, ChunkDigest::kSha256}) {
    for (BaseChange change : kAllBaseChanges) {
      const std::vector<Edit> edits = BaseChangeEdits(change, kSize);
      const std::vector<uint8_t> payload = ApplyEdits(old, edits, 5);
      uint64_t changed = 0;
      for (const Edit& edit : edits) changed += edit.inserted;
      SCOPED_TRACE(std::string(BaseChangeName(change)));

      constexpr uint64_t kChunk = 64 << 10;
      const std::vector<ChunkSummary> fixed = SummarizeFixedChunks(payload, kChunk, kind);
      std::vector<uint64_t> fixed_sizes;
      for (const ChunkSummary& c : fixed) fixed_sizes.push_back(c.size);
      // Each chunk found is shown once, with the old bytes at its offset.
      std::vector<int> shown(fixed.size(), 0);
      std::vector<std::vector<uint8_t>> shown_bytes(fixed.size());
      Result<std::vector<uint64_t>> held =
          FindHeldChunks(MemorySource(old), kind, fixed, [&](size_t chunk, std::span<const uint8_t> bytes) {
            ++shown[chunk];
            shown_bytes[chunk].assign(bytes.begin(), bytes.end());
          });
      ASSERT_TRUE(held.ok());
      for (size_t i = 0; i < fixed.size(); ++i) {
        ASSERT_EQ(shown[i], (*held)[i] == kNotHeld ? 0 : 1) << i;
        if (shown[i] == 1) {
          EXPECT_TRUE(std::equal(shown_bytes[i].begin(), shown_bytes[i].end(), old.begin() + (*held)[i]) &&
                      shown_bytes[i].size() == fixed[i].size)
              << i;
        }
      }
      // Each edit spoils at most the two chunks it touches, plus the short last one.
      EXPECT_LE(CheckHeld(old, payload, fixed_sizes, *held), changed + (2 * edits.size() + 1) * kChunk);
      if (change == BaseChange::kPrepend || change == BaseChange::kInsert) {
        // The shorter last chunk (4 KiB, or the 64 KiB insert's shift) is in the old copy.
        EXPECT_NE(held->back(), kNotHeld);
      }

      std::vector<uint64_t> content_sizes;
      const std::vector<ChunkSummary> content = SummarizeContentChunks(payload, cutter, kind, content_sizes);
      held = FindHeldContentChunks(MemorySource(old), kind, content, cutter);
      ASSERT_TRUE(held.ok());
      EXPECT_LE(CheckHeld(old, payload, content_sizes, *held), changed + 3 * edits.size() * (256 << 10));
      if (change == BaseChange::kSame) {
        EXPECT_EQ(CheckHeld(old, payload, content_sizes, *held), 0u);
      }
    }
  }
}

TEST(HeldChunks, ACorruptOrForeignCopyHoldsOnlyWhatMatches) {
  const std::vector<uint8_t> payload = RandomBytes(1 << 20, 6);
  const std::vector<ChunkSummary> chunks = SummarizeFixedChunks(payload, 4096, ChunkDigest::kSha256);
  std::vector<uint64_t> sizes(chunks.size(), 4096);
  std::vector<uint8_t> corrupt = payload;
  corrupt[10 * 4096 + 17] ^= 1;
  corrupt[200 * 4096] ^= 0x80;
  Result<std::vector<uint64_t>> held = FindHeldChunks(MemorySource(corrupt), ChunkDigest::kSha256, chunks);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ((*held)[10], kNotHeld);
  EXPECT_EQ((*held)[200], kNotHeld);
  EXPECT_EQ(CheckHeld(corrupt, payload, sizes, *held), 2 * 4096u);
  // A weak checksum that matches but a digest that does not: never held.
  std::vector<ChunkSummary> forged = chunks;
  forged[3].digest[0] ^= 1;
  held = FindHeldChunks(MemorySource(payload), ChunkDigest::kSha256, forged);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ((*held)[3], kNotHeld);
  // A copy exactly one chunk long holds that chunk, whichever chunk of the payload it is.
  const std::vector<uint8_t> one(payload.begin() + 7 * 4096, payload.begin() + 8 * 4096);
  held = FindHeldChunks(MemorySource(one), ChunkDigest::kSha256, chunks);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ((*held)[7], 0u);
  EXPECT_EQ(std::count(held->begin(), held->end(), kNotHeld), static_cast<long>(chunks.size()) - 1);
  // Unrelated bytes, an empty copy and one shorter than a chunk hold nothing.
  // (one exactly a chunk long: nothing to roll past its end)
  for (const std::vector<uint8_t>& other :
       {RandomBytes(1 << 20, 7), std::vector<uint8_t>{}, RandomBytes(100, 8), RandomBytes(4096, 10)}) {
    held = FindHeldChunks(MemorySource(other), ChunkDigest::kSha256, chunks);
    ASSERT_TRUE(held.ok());
    EXPECT_TRUE(std::all_of(held->begin(), held->end(), [](uint64_t h) { return h == kNotHeld; }));
  }
}

TEST(HeldChunks, RepeatedChunksAndShiftsAcrossTheReadWindow) {
  // The same chunk many times over (every copy of it held, from one old offset), and a copy
  // shifted by one byte larger than the scan's read window, so matches straddle refills.
  std::vector<uint8_t> payload(kScanWindowBytes + (3 << 20), 0);
  const std::vector<uint8_t> tail = RandomBytes(3 << 20, 9);
  std::copy(tail.begin(), tail.end(), payload.end() - tail.size());
  const std::vector<ChunkSummary> chunks = SummarizeFixedChunks(payload, 100000, ChunkDigest::kXxh3);
  std::vector<uint64_t> sizes;
  for (const ChunkSummary& c : chunks) sizes.push_back(c.size);
  std::vector<uint8_t> old(payload.size() + 1, 42);
  std::copy(payload.begin(), payload.end(), old.begin() + 1);
  Result<std::vector<uint64_t>> held = FindHeldChunks(MemorySource(old), ChunkDigest::kXxh3, chunks);
  ASSERT_TRUE(held.ok());
  EXPECT_EQ(CheckHeld(old, payload, sizes, *held), 0u);
}

}  // namespace
}  // namespace gridcast
