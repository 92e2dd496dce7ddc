// The data plane's frame header and handshake messages, as any peer can send them: every
// decoder on every prefix of the input, and what decodes must encode back to the same fields.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "daemon/transport/frame.h"

using namespace gridcast;

template <size_t N>
static std::span<const uint8_t, N> Head(const uint8_t* data) {
  return std::span<const uint8_t, N>(data, N);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= kFrameHeaderBytes) {
    Result<FrameHeader> header = DecodeFrameHeader(Head<kFrameHeaderBytes>(data), 1u << 20);
    if (header.ok()) {
      if (header->type == FrameType::kData && header->length > (1u << 20)) std::abort();
      if (header->type == FrameType::kDigests && header->length > MaxEncodedDigestBatchBytes()) std::abort();
      const auto again = EncodeFrameHeader(*header);
      Result<FrameHeader> twice = DecodeFrameHeader(again, 1u << 20);
      if (!twice.ok() || twice->type != header->type || twice->length != header->length ||
          twice->chunk != header->chunk || twice->lane != header->lane || twice->plan_id != header->plan_id ||
          twice->digest != header->digest || twice->hash != header->hash) {
        std::abort();
      }
    }
  }
  if (size >= kChallengeBytes) (void)DecodeChallenge(Head<kChallengeBytes>(data));
  if (size >= kHelloBytes) {
    Result<Hello> hello = DecodeHello(Head<kHelloBytes>(data));
    if (hello.ok()) {
      const auto again = EncodeHello(*hello);
      Result<Hello> twice = DecodeHello(again);
      if (!twice.ok() || twice->plan_id != hello->plan_id || twice->lane != hello->lane ||
          twice->parent != hello->parent || twice->stream != hello->stream ||
          twice->stream_count != hello->stream_count || twice->nonce != hello->nonce || twice->mac != hello->mac) {
        std::abort();
      }
    }
  }
  // A DIGESTS frame's body, as a parent can send it.
  Result<DigestBatch> batch = DecodeDigestBatch({reinterpret_cast<const char*>(data), size}, ChunkDigest::kSha256);
  if (batch.ok() && (batch->digests.empty() || batch->digests.size() > kMaxChunksPerBatch ||
                     EncodeDigestBatch(*batch) != std::string_view(reinterpret_cast<const char*>(data), size))) {
    std::abort();
  }
  if (size >= kAcceptHeaderBytes) {
    uint32_t extra = 0;
    Result<Accept> accept = DecodeAcceptHeader(Head<kAcceptHeaderBytes>(data), &extra);
    if (accept.ok() && extra > kMaxAcceptExtraBytes) std::abort();  // a reader allocates `extra` bytes
  }
  // An Accept's held runs, as a child can send them: kept only when increasing, apart and
  // within the plan, and then encoded back to the same bytes.
  Result<std::vector<ChunkRun>> runs = DecodeHeldRuns({data, size}, uint64_t{1} << 30);
  if (runs.ok()) {
    for (size_t i = 0; i < runs->size(); ++i) {
      const ChunkRun& run = (*runs)[i];
      if (run.begin >= run.end || run.end > (uint64_t{1} << 30) || (i > 0 && run.begin <= (*runs)[i - 1].end)) std::abort();
    }
    if (EncodeHeldRuns(*runs) != std::vector<uint8_t>(data, data + size)) std::abort();
  }
  return 0;
}
