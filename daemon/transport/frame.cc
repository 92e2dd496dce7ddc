#include "daemon/transport/frame.h"

#include <cstring>

#include "common/big_endian.h"

namespace gridcast {
namespace {

constexpr uint8_t kFrameMagic[4] = {'G', 'C', 'F', '2'};
constexpr uint8_t kChallengeMagic[4] = {'G', 'C', 'H', '1'};
constexpr uint8_t kHelloMagic[4] = {'G', 'C', 'H', '2'};
constexpr uint8_t kAcceptMagic[4] = {'G', 'C', 'H', '3'};

// Big-endian writer/reader over a byte span.
class Writer {
 public:
  explicit Writer(uint8_t* out) : out_(out) {}
  void Bytes(const void* data, size_t n) {
    std::memcpy(out_, data, n);
    out_ += n;
  }
  void U32(uint32_t v) {
    StoreBigEndian(out_, v, 4);
    out_ += 4;
  }
  void U64(uint64_t v) {
    StoreBigEndian(out_, v, 8);
    out_ += 8;
  }

 private:
  uint8_t* out_;
};

class Reader {
 public:
  explicit Reader(const uint8_t* in) : in_(in) {}
  void Bytes(void* data, size_t n) {
    std::memcpy(data, in_, n);
    in_ += n;
  }
  PlanId Id() {
    std::array<uint8_t, PlanId::kBytes> bytes;
    Bytes(bytes.data(), bytes.size());
    return PlanId(bytes);
  }
  bool Magic(const uint8_t (&magic)[4]) {
    bool ok = std::memcmp(in_, magic, 4) == 0;
    in_ += 4;
    return ok;
  }
  uint32_t U32() {
    const auto v = static_cast<uint32_t>(LoadBigEndian(in_, 4));
    in_ += 4;
    return v;
  }
  uint64_t U64() {
    const uint64_t v = LoadBigEndian(in_, 8);
    in_ += 8;
    return v;
  }

 private:
  const uint8_t* in_;
};

Digest HelloMac(const std::string& secret, std::string_view role,
                const std::array<uint8_t, 32>& nonce, const Hello& h) {
  std::vector<uint8_t> message(role.begin(), role.end());
  message.insert(message.end(), nonce.begin(), nonce.end());
  message.insert(message.end(), h.plan_id.bytes().begin(), h.plan_id.bytes().end());
  uint8_t numbers[16];
  Writer w(numbers);
  w.U32(h.lane);
  w.U32(h.parent);
  w.U32(h.stream);
  w.U32(h.stream_count);
  message.insert(message.end(), numbers, numbers + sizeof numbers);
  return HmacSha256(secret, message);
}

}  // namespace

std::array<uint8_t, kFrameHeaderBytes> EncodeFrameHeader(const FrameHeader& h) {
  std::array<uint8_t, kFrameHeaderBytes> out{};
  Writer w(out.data());
  w.Bytes(kFrameMagic, 4);
  const bool data = h.type == FrameType::kData;
  const uint8_t type_digest_pad[4] = {static_cast<uint8_t>(h.type), data ? static_cast<uint8_t>(h.digest) : uint8_t{0},
                                      0, 0};
  w.Bytes(type_digest_pad, 4);
  w.Bytes(h.plan_id.bytes().data(), PlanId::kBytes);
  w.U32(h.lane);
  w.U32(h.length);
  w.U64(h.chunk);
  if (data) w.Bytes(h.hash.data(), DigestBytes(h.digest));  // the rest stays zero
  return out;
}

Result<FrameHeader> DecodeFrameHeader(std::span<const uint8_t, kFrameHeaderBytes> bytes,
                                      uint32_t max_length) {
  Reader r(bytes.data());
  if (!r.Magic(kFrameMagic)) return Status::InvalidArgument("bad frame magic");
  uint8_t type_digest_pad[4];
  r.Bytes(type_digest_pad, 4);
  FrameHeader h;
  if (type_digest_pad[0] < 1 || type_digest_pad[0] > static_cast<uint8_t>(FrameType::kHeld)) {
    return Status::InvalidArgument("unknown frame type " + std::to_string(type_digest_pad[0]));
  }
  if (type_digest_pad[2] != 0 || type_digest_pad[3] != 0) {
    return Status::InvalidArgument("nonzero reserved bytes in frame header");
  }
  h.type = static_cast<FrameType>(type_digest_pad[0]);
  h.plan_id = r.Id();
  h.lane = r.U32();
  h.length = r.U32();
  h.chunk = r.U64();
  r.Bytes(h.hash.data(), h.hash.size());
  if (h.type == FrameType::kDigests) {
    if (type_digest_pad[1] != 0 || h.hash != Digest{}) return Status::InvalidArgument("DIGESTS frame with a hash");
    if (h.length == 0 || h.length > MaxEncodedDigestBatchBytes()) {
      return Status::InvalidArgument("DIGESTS frame of " + std::to_string(h.length) + " bytes (1 to " +
                                     std::to_string(MaxEncodedDigestBatchBytes()) + ")");
    }
    return h;
  }
  if (h.type == FrameType::kHeld) {
    if (type_digest_pad[1] != 0 || h.hash != Digest{}) return Status::InvalidArgument("HELD frame with a hash");
    if (h.length == 0 || h.length > kMaxHeldBytes) {
      return Status::InvalidArgument("HELD frame of " + std::to_string(h.length) + " bytes (1 to " +
                                     std::to_string(kMaxHeldBytes) + ")");
    }
    return h;
  }
  if (h.type != FrameType::kData) {
    if (h.length != 0 || type_digest_pad[1] != 0 || h.hash != Digest{}) {
      return Status::InvalidArgument("ACK/NACK/KEEPALIVE frame with a payload or a hash");
    }
    return h;
  }
  Result<ChunkDigest> digest = ChunkDigestFromValue(type_digest_pad[1]);
  if (!digest.ok()) return digest.status().WithContext("frame header");
  h.digest = *digest;
  for (size_t i = DigestBytes(h.digest); i < h.hash.size(); ++i) {
    if (h.hash[i] != 0) return Status::InvalidArgument("frame hash longer than its digest");
  }
  if (h.length > max_length) {
    return Status::InvalidArgument("frame length " + std::to_string(h.length) +
                                   " exceeds the limit " + std::to_string(max_length));
  }
  return h;
}

std::array<uint8_t, kChallengeBytes> EncodeChallenge(const Challenge& c) {
  std::array<uint8_t, kChallengeBytes> out{};
  Writer w(out.data());
  w.Bytes(kChallengeMagic, 4);
  w.U32(c.version);
  w.Bytes(c.nonce.data(), c.nonce.size());
  return out;
}

Result<Challenge> DecodeChallenge(std::span<const uint8_t, kChallengeBytes> bytes) {
  Reader r(bytes.data());
  if (!r.Magic(kChallengeMagic)) return Status::InvalidArgument("bad challenge magic");
  Challenge c;
  c.version = r.U32();
  if (c.version != kProtocolVersion) {
    return Status::FailedPrecondition("the peer speaks data protocol version " + std::to_string(c.version) +
                                      ", this daemon version " + std::to_string(kProtocolVersion) +
                                      ": run the same gridcast on every member");
  }
  r.Bytes(c.nonce.data(), c.nonce.size());
  return c;
}

std::array<uint8_t, kHelloBytes> EncodeHello(const Hello& h) {
  std::array<uint8_t, kHelloBytes> out{};
  Writer w(out.data());
  w.Bytes(kHelloMagic, 4);
  w.Bytes(h.plan_id.bytes().data(), PlanId::kBytes);
  w.U32(h.lane);
  w.U32(h.parent);
  w.U32(h.stream);
  w.U32(h.stream_count);
  w.Bytes(h.nonce.data(), h.nonce.size());
  w.Bytes(h.mac.data(), h.mac.size());
  return out;
}

Result<Hello> DecodeHello(std::span<const uint8_t, kHelloBytes> bytes) {
  Reader r(bytes.data());
  if (!r.Magic(kHelloMagic)) return Status::InvalidArgument("bad hello magic");
  Hello h;
  h.plan_id = r.Id();
  h.lane = r.U32();
  h.parent = r.U32();
  h.stream = r.U32();
  h.stream_count = r.U32();
  r.Bytes(h.nonce.data(), h.nonce.size());
  r.Bytes(h.mac.data(), h.mac.size());
  if (h.stream_count == 0 || h.stream_count > 64 || h.stream >= h.stream_count) {
    return Status::InvalidArgument("bad stream " + std::to_string(h.stream) + " of " +
                                   std::to_string(h.stream_count));
  }
  return h;
}

std::vector<uint8_t> EncodeAccept(const Accept& a) {
  std::vector<uint8_t> out(kAcceptHeaderBytes + a.extra.size());
  Writer w(out.data());
  w.Bytes(kAcceptMagic, 4);
  w.U32(a.status);
  w.Bytes(a.mac.data(), a.mac.size());
  w.U32(static_cast<uint32_t>(a.extra.size()));
  if (!a.extra.empty()) w.Bytes(a.extra.data(), a.extra.size());
  return out;
}

std::vector<uint8_t> EncodeHeldRuns(std::span<const ChunkRun> runs) {
  std::vector<uint8_t> out(runs.size() * kHeldRunBytes);
  Writer w(out.data());
  for (const ChunkRun& run : runs) {
    w.U64(run.begin);
    w.U64(run.end);
  }
  return out;
}

Result<std::vector<ChunkRun>> DecodeHeldRuns(std::span<const uint8_t> bytes, uint64_t num_chunks) {
  if (bytes.size() % kHeldRunBytes != 0 || bytes.size() / kHeldRunBytes > kMaxAcceptHeldRuns) {
    return Status::InvalidArgument("held runs of " + std::to_string(bytes.size()) + " bytes");
  }
  std::vector<ChunkRun> runs(bytes.size() / kHeldRunBytes);
  Reader r(bytes.data());
  uint64_t after = 0;  // the first chunk the next run may begin at
  for (ChunkRun& run : runs) {
    run.begin = r.U64();
    run.end = r.U64();
    if (run.begin < after || run.begin >= run.end || run.end > num_chunks) {
      return Status::InvalidArgument("held run [" + std::to_string(run.begin) + ", " + std::to_string(run.end) +
                                     ") out of order or outside the plan's " + std::to_string(num_chunks) + " chunks");
    }
    after = run.end + 1;
  }
  return runs;
}

Result<Accept> DecodeAcceptHeader(std::span<const uint8_t, kAcceptHeaderBytes> bytes,
                                  uint32_t* extra_length) {
  Reader r(bytes.data());
  if (!r.Magic(kAcceptMagic)) return Status::InvalidArgument("bad accept magic");
  Accept a;
  a.status = r.U32();
  r.Bytes(a.mac.data(), a.mac.size());
  *extra_length = r.U32();
  if (*extra_length > kMaxAcceptExtraBytes) {
    return Status::InvalidArgument("accept message too long");
  }
  return a;
}

Digest ParentMac(const std::string& secret, const std::array<uint8_t, 32>& child_nonce,
                 const Hello& hello) {
  return HelloMac(secret, "gridcast-data-parent", child_nonce, hello);
}

Digest ChildMac(const std::string& secret, const Hello& hello) {
  return HelloMac(secret, "gridcast-data-child", hello.nonce, hello);
}

}  // namespace gridcast
