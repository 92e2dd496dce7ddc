// What a member spends at Prepare to take what it can from an earlier copy on disk (issue 36,
// docs/delta.md): PayloadStore::OpenForReceive of each base change of `gridcast bench
// --base-change` over the base under the payload's name (the search, every chunk found
// written into the new copy and marked, the space reserved), and of the unchanged payload
// (an identical copy, adopted by hashing it). CPU seconds of this process (user + system) per
// GiB of the earlier copy, with the page cache warm; one member, one thread.
// Usage: bench_delta_prepare [SIZE_MIB] [CHUNK_KIB] (default 256, 128)
#include <fmt/core.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "common/splitmix64.h"
#include "daemon/store/payload_store.h"
#include "delta/base_change.h"
#include "delta/held_chunks.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

// user and system CPU of this process, seconds.
std::pair<double, double> CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return {seconds(usage.ru_utime), seconds(usage.ru_stime)};
}

void WriteFile(const fs::path& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

PayloadIdentity IdentityOf(std::span<const uint8_t> payload, uint64_t chunk_bytes, ChunkDigest digest) {
  PayloadIdentity identity;
  identity.size_bytes = payload.size();
  identity.chunk_bytes = chunk_bytes;
  identity.digest = digest;
  for (const ChunkSummary& chunk : SummarizeFixedChunks(payload, chunk_bytes, digest)) {
    identity.chunk_hashes.push_back(chunk.digest);
    identity.weak_checksums.push_back(chunk.weak);
  }
  return identity;
}

int Run(uint64_t size, uint64_t chunk_bytes) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gridcast-delta-prepare-{}", getpid());
  fs::create_directories(dir);
  std::vector<uint8_t> base(size);
  SplitMix64 random(36);
  FillPseudoRandom(base, random);
  const double gib = static_cast<double>(size) / (1 << 30);
  fmt::print("{:>10} {:>7} {:>12} {:>14} {:>16}\n", "change", "digest", "chunks held", "user CPU-s/GiB",
             "system CPU-s/GiB");
  for (ChunkDigest digest : {ChunkDigest::kXxh3, ChunkDigest::kSha256}) {
    for (BaseChange change : kAllBaseChanges) {
      const std::vector<uint8_t> payload = ApplyEdits(base, BaseChangeEdits(change, size), 37);
      const PayloadIdentity identity = IdentityOf(payload, chunk_bytes, digest);
      fs::remove_all(dir);
      fs::create_directories(dir);
      WriteFile(dir / "p.bin", base);
      const auto [user0, system0] = CpuSeconds();
      Result<std::unique_ptr<PayloadStore>> store = PayloadStore::OpenForReceive(dir.string(), "p.bin", identity);
      const auto [user1, system1] = CpuSeconds();
      if (!store.ok()) {
        fmt::print(stderr, "{}\n", store.status().ToString());
        return 1;
      }
      fmt::print("{:>10} {:>7} {:>11.2f}% {:>14.3f} {:>16.3f}\n", BaseChangeName(change), DigestName(digest),
                 100.0 * static_cast<double>((*store)->VerifiedCount()) / static_cast<double>(identity.NumChunks()),
                 (user1 - user0) / gib, (system1 - system0) / gib);
    }
  }
  fs::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace gridcast

int main(int argc, char** argv) {
  const uint64_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  const uint64_t kib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 128;
  if (mib == 0 || kib == 0) {
    fmt::print(stderr, "usage: bench_delta_prepare [SIZE_MIB] [CHUNK_KIB]\n");
    return 2;
  }
  return gridcast::Run(mib << 20, kib << 10);
}
