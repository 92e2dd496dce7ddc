#include "delta/held_chunks.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "delta/rolling_checksum.h"

namespace gridcast {
namespace {

// The chunks of one size, by weak checksum, with a 16-bit tag table in front: most offsets of
// an old copy match no chunk, and the tag rejects them with one load.
class WeakIndex {
 public:
  WeakIndex(std::span<const ChunkSummary> chunks, const std::vector<size_t>& indices) : tags_((1 << 16) / 64, 0) {
    for (size_t i : indices) entries_.push_back({chunks[i].weak, i});
    std::sort(entries_.begin(), entries_.end());
    for (const auto& [weak, i] : entries_) tags_[Tag(weak) / 64] |= uint64_t{1} << (Tag(weak) % 64);
  }

  bool MayHold(uint32_t weak) const { return (tags_[Tag(weak) / 64] >> (Tag(weak) % 64)) & 1; }

  // The chunks whose weak checksum is `weak`.
  std::span<const std::pair<uint32_t, size_t>> Find(uint32_t weak) const {
    auto [first, last] = std::equal_range(entries_.begin(), entries_.end(), std::pair<uint32_t, size_t>{weak, 0},
                                          [](const auto& a, const auto& b) { return a.first < b.first; });
    return {first, last};
  }

 private:
  static size_t Tag(uint32_t weak) { return (weak ^ (weak >> 16)) & 0xffff; }

  std::vector<std::pair<uint32_t, size_t>> entries_;
  std::vector<uint64_t> tags_;  // a bit per tag
};

// Rolls a window of `size` bytes over all of `old` for the chunks in `indices`.
Status ScanForSize(const ByteSource& old, ChunkDigest kind, std::span<const ChunkSummary> chunks,
                   const std::vector<size_t>& indices, uint64_t size, std::vector<uint64_t>& held,
                   const OnHeldChunk& on_found) {
  const uint64_t total = old.size();
  if (size == 0 || size > total) return Status::Ok();
  const WeakIndex index(chunks, indices);
  size_t unmatched = indices.size();
  // buffer holds old[base, base + filled); it is allocated once and refilled in place (a fresh
  // 8 MiB per refill was zeroed and faulted in again: 0.4 CPU-s per GiB of old copy).
  std::vector<uint8_t> buffer;
  uint64_t filled = 0;
  uint64_t base = 0;
  uint64_t pos = 0;
  bool rolling = false;
  RollingChecksum checksum({});
  while (pos + size <= total && unmatched > 0) {
    // The window and the byte after it must be in the buffer.
    const uint64_t need_end = std::min(total, pos + size + 1);
    if (need_end > base + filled) {
      const uint64_t keep_from = pos;
      const uint64_t read_end = std::min(total, std::max(need_end, keep_from + size + kScanWindowBytes));
      const uint64_t kept = base + filled > keep_from ? base + filled - keep_from : 0;
      if (buffer.size() < read_end - keep_from) buffer.resize(read_end - keep_from);
      if (kept > 0) std::memmove(buffer.data(), buffer.data() + (keep_from - base), kept);
      GRIDCAST_RETURN_IF_ERROR(
          old.ReadAt(keep_from + kept, std::span<uint8_t>(buffer).subspan(kept, read_end - keep_from - kept)));
      base = keep_from;
      filled = read_end - keep_from;
    }
    const std::span<const uint8_t> window(buffer.data() + (pos - base), size);
    if (!rolling) {
      checksum = RollingChecksum(window);
      rolling = true;
    }
    // Roll on while no chunk's tag matches, the common case, up to the buffer's end.
    const uint8_t* data = buffer.data() - base;
    const uint64_t last_rollable = base + filled > pos + size ? base + filled - size - 1 : pos;
    while (!index.MayHold(checksum.value()) && pos < last_rollable) {
      checksum.Roll(data[pos], data[pos + size]);
      ++pos;
    }
    if (pos != static_cast<uint64_t>(window.data() - data)) continue;  // the outer loop refills
    bool matched = false;
    const uint32_t weak = checksum.value();
    if (index.MayHold(weak)) {
      bool hashed = false;
      Digest digest{};
      for (const auto& [candidate_weak, i] : index.Find(weak)) {
        if (held[i] != kNotHeld) continue;
        if (!hashed) {
          digest = HashChunk(kind, window);
          hashed = true;
        }
        if (digest == chunks[i].digest) {
          held[i] = pos;
          --unmatched;
          matched = true;
          if (on_found) on_found(i, window);
        }
      }
    }
    if (matched) {
      pos += size;
      rolling = false;
      continue;
    }
    if (pos + size == total) break;
    checksum.Roll(window[0], buffer[pos + size - base]);
    ++pos;
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<uint64_t>> FindHeldChunks(const ByteSource& old, ChunkDigest kind,
                                             std::span<const ChunkSummary> chunks, const OnHeldChunk& on_found) {
  std::map<uint64_t, std::vector<size_t>> by_size;
  for (size_t i = 0; i < chunks.size(); ++i) by_size[chunks[i].size].push_back(i);
  std::vector<uint64_t> held(chunks.size(), kNotHeld);
  if (chunks.empty()) return held;
  // The size most chunks have is rolled over the whole copy; a chunk of another size (a fixed
  // plan's shorter last chunk) is only looked for where its neighbours' matches put it and at
  // the copy's end, instead of rolling a second window over all of it for one chunk.
  const auto common = std::max_element(by_size.begin(), by_size.end(),
                                       [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  GRIDCAST_RETURN_IF_ERROR(ScanForSize(old, kind, chunks, common->second, common->first, held, on_found));
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i < chunks.size(); ++i) {
    const uint64_t size = chunks[i].size;
    if (size == common->first || size > old.size()) continue;
    std::vector<uint64_t> candidates = {old.size() - size};
    if (i > 0 && held[i - 1] != kNotHeld) candidates.push_back(held[i - 1] + chunks[i - 1].size);
    if (i + 1 < chunks.size() && held[i + 1] != kNotHeld && held[i + 1] >= size) {
      candidates.push_back(held[i + 1] - size);
    }
    for (uint64_t at : candidates) {
      if (at > old.size() - size) continue;
      bytes.resize(size);
      GRIDCAST_RETURN_IF_ERROR(old.ReadAt(at, bytes));
      if (HashChunk(kind, bytes) == chunks[i].digest) {
        held[i] = at;
        if (on_found) on_found(i, bytes);
        break;
      }
    }
  }
  return held;
}

Result<std::vector<uint64_t>> FindHeldContentChunks(const ByteSource& old, ChunkDigest kind,
                                                    std::span<const ChunkSummary> chunks,
                                                    const ContentCutter& cutter) {
  std::map<std::pair<uint64_t, Digest>, std::vector<size_t>> by_content;
  for (size_t i = 0; i < chunks.size(); ++i) by_content[{chunks[i].size, chunks[i].digest}].push_back(i);
  std::vector<uint64_t> held(chunks.size(), kNotHeld);
  GRIDCAST_ASSIGN_OR_RETURN(std::vector<uint64_t> pieces, cutter.Cut(old));
  std::vector<uint8_t> piece;
  uint64_t offset = 0;
  for (uint64_t size : pieces) {
    // Only a piece of some chunk's size is worth reading and hashing.
    const auto first = by_content.lower_bound({size, Digest{}});
    if (first != by_content.end() && first->first.first == size) {
      piece.resize(size);
      GRIDCAST_RETURN_IF_ERROR(old.ReadAt(offset, piece));
      const auto it = by_content.find({size, HashChunk(kind, piece)});
      if (it != by_content.end()) {
        for (size_t i : it->second) {
          if (held[i] == kNotHeld) held[i] = offset;
        }
      }
    }
    offset += size;
  }
  return held;
}

std::vector<ChunkSummary> SummarizeFixedChunks(std::span<const uint8_t> payload, uint64_t chunk_bytes,
                                               ChunkDigest kind) {
  std::vector<ChunkSummary> chunks;
  for (uint64_t offset = 0; offset < payload.size(); offset += chunk_bytes) {
    const std::span<const uint8_t> bytes = payload.subspan(offset, std::min<uint64_t>(chunk_bytes, payload.size() - offset));
    chunks.push_back({bytes.size(), WeakChecksum(bytes), HashChunk(kind, bytes)});
  }
  return chunks;
}

}  // namespace gridcast
