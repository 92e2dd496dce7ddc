// The two ways of finding what a member's older copy holds (issue 36, docs/delta.md), on the
// base changes of `gridcast bench --base-change`: rsync's rolling weak checksum over fixed-size
// chunks, and content-defined chunks (FastCDC). For each: the share of the new payload a
// member would still have to receive, and the CPU the source spends describing the new payload
// and a member spends searching its old copy, per GiB.
// Usage: bench_delta_match [SIZE_MIB] (default 256)
#include <fmt/core.h>
#include <time.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/splitmix64.h"
#include "delta/base_change.h"
#include "delta/content_chunks.h"
#include "delta/held_chunks.h"

namespace gridcast {
namespace {

double CpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double Timed(const std::function<void()>& work) {
  const double start = CpuSeconds();
  work();
  return CpuSeconds() - start;
}

struct Way {
  std::string name;
  uint64_t chunk_bytes = 0;            // fixed chunks; 0 for content-defined
  const ContentCutter* cutter = nullptr;
};

void Run(uint64_t size) {
  std::vector<uint8_t> old(size);
  SplitMix64 random(36);
  FillPseudoRandom(old, random);
  const double gib = static_cast<double>(size) / (1 << 30);
  const ContentCutter cdc64(16 << 10, 64 << 10, 256 << 10);
  const ContentCutter cdc256(64 << 10, 256 << 10, 1 << 20);
  const std::vector<Way> ways = {{"rolling, 256 KiB chunks", 256 << 10, nullptr},
                                 {"rolling, 1 MiB chunks", 1 << 20, nullptr},
                                 {"content, 64 KiB average", 0, &cdc64},
                                 {"content, 256 KiB average", 0, &cdc256}};
  fmt::print("{:>9}  {:<25} {:>6}  {:>8}  {:>13}  {:>13}\n", "change", "way", "digest", "to move",
             "source CPU-s/GiB", "member CPU-s/GiB");
  for (BaseChange change : kAllBaseChanges) {
    const std::vector<Edit> edits = BaseChangeEdits(change, size);
    const std::vector<uint8_t> payload = ApplyEdits(old, edits, 37);
    for (const Way& way : ways) {
      for (ChunkDigest kind : {ChunkDigest::kXxh3, ChunkDigest::kSha256}) {
        std::vector<ChunkSummary> chunks;
        const double source_s = Timed([&] {
          if (way.cutter == nullptr) {
            chunks = SummarizeFixedChunks(payload, way.chunk_bytes, kind);
            return;
          }
          Result<std::vector<uint64_t>> pieces = way.cutter->Cut(MemorySource(payload));
          if (!pieces.ok()) std::abort();
          uint64_t offset = 0;
          for (uint64_t piece : *pieces) {
            chunks.push_back({piece, 0, HashChunk(kind, std::span<const uint8_t>(payload).subspan(offset, piece))});
            offset += piece;
          }
        });
        std::vector<uint64_t> held;
        const double member_s = Timed([&] {
          Result<std::vector<uint64_t>> found =
              way.cutter == nullptr ? FindHeldChunks(MemorySource(old), kind, chunks)
                                    : FindHeldContentChunks(MemorySource(old), kind, chunks, *way.cutter);
          if (!found.ok()) std::abort();
          held = std::move(*found);
        });
        uint64_t missing = 0;
        for (size_t i = 0; i < chunks.size(); ++i) missing += held[i] == kNotHeld ? chunks[i].size : 0;
        fmt::print("{:>9}  {:<25} {:>6}  {:>7.3f}%  {:>16.3f}  {:>16.3f}\n", BaseChangeName(change), way.name,
                   DigestName(kind), 100.0 * static_cast<double>(missing) / static_cast<double>(payload.size()),
                   source_s / gib, member_s / gib);
      }
    }
  }
}

}  // namespace
}  // namespace gridcast

int main(int argc, char** argv) {
  const uint64_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  if (mib == 0) {
    fmt::print(stderr, "usage: bench_delta_match [SIZE_MIB]\n");
    return 2;
  }
  gridcast::Run(mib << 20);
  return 0;
}
