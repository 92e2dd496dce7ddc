#include "daemon/store/state_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/big_endian.h"
#include "common/chunk_digest.h"
#include "common/hex.h"

namespace gridcast {
namespace {

constexpr char kStateMagic[8] = {'G', 'C', 'S', 'T', 'A', 'T', 'E', '1'};
constexpr size_t kStateHeaderBytes = sizeof(kStateMagic) + sizeof(Digest);

constexpr char kChunkListMagicV1[8] = {'G', 'C', 'C', 'H', 'U', 'N', 'K', '1'};
constexpr char kChunkListMagic[8] = {'G', 'C', 'C', 'H', 'U', 'N', 'K', '2'};
constexpr size_t kChunkListV1HeaderBytes = sizeof(kChunkListMagic) + 8 + 8 + sizeof(Digest);
constexpr size_t kChunkListHeaderBytes = kChunkListV1HeaderBytes + 1;


}  // namespace

std::string PayloadStatePath(const std::string& data_dir, const std::string& name, const char* suffix) {
  const std::filesystem::path state_dir = std::filesystem::path(data_dir) / ".gridcast" / "state";
  return (state_dir / (ToHex(Sha256(AsBytes(name))) + suffix)).string();
}

bool ReadResumeBitmap(FileIo& io, int fd, const Digest& fingerprint, ChunkBits& into) {
  std::vector<uint8_t> header(kStateHeaderBytes);
  if (!PreadFull(io, fd, header, 0).ok() || std::memcmp(header.data(), kStateMagic, sizeof kStateMagic) != 0 ||
      std::memcmp(header.data() + sizeof kStateMagic, fingerprint.data(), sizeof(Digest)) != 0) {
    return false;
  }
  // A window at a time: 128 MiB of bits at 2^30 chunks.
  constexpr uint64_t kWindowBytes = uint64_t{1} << 20;
  const uint64_t bytes = (into.size() + 7) / 8;
  std::vector<uint8_t> window;
  for (uint64_t at = 0; at < bytes; at += kWindowBytes) {
    window.resize(std::min(kWindowBytes, bytes - at));
    if (!PreadFull(io, fd, window, kStateHeaderBytes + at).ok()) return false;
    into.OrBytes(8 * at, window);
  }
  return true;
}

Status ResetResumeState(FileIo& io, int fd, const Digest& fingerprint, uint64_t chunks) {
  std::vector<uint8_t> header(kStateHeaderBytes);
  std::memcpy(header.data(), kStateMagic, sizeof kStateMagic);
  std::memcpy(header.data() + sizeof kStateMagic, fingerprint.data(), sizeof(Digest));
  GRIDCAST_RETURN_IF_ERROR(PwriteFull(io, fd, header, 0));
  // Cut to the header, then grown: the bitmap reads as zeros without a byte of it written.
  if (io.Truncate(fd, static_cast<off_t>(kStateHeaderBytes)) != 0 ||
      io.Truncate(fd, static_cast<off_t>(kStateHeaderBytes + (chunks + 7) / 8)) != 0) {
    return ErrnoStatus("sizing the resume bitmap", errno);
  }
  return Status::Ok();
}

uint64_t ResumeBitmapByteOffset(uint64_t chunk) { return kStateHeaderBytes + chunk / 8; }

namespace {

// Where the digests of the chunk list in `fd` begin (after the header of its version), and
// the header's identity; DataLoss as `damaged` unless the file holds one digest per chunk.
Result<std::pair<PayloadIdentity, size_t>> ReadHeaderOf(FileIo& io, int fd, const std::string& path,
                                                        const Status& damaged) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return ErrnoStatus("stat " + path, errno);
  std::array<uint8_t, kChunkListHeaderBytes> bytes{};
  if (static_cast<uint64_t>(st.st_size) < kChunkListV1HeaderBytes) return damaged;
  GRIDCAST_RETURN_IF_ERROR(PreadFull(io, fd, std::span(bytes).first(std::min<size_t>(bytes.size(), st.st_size)), 0));
  PayloadIdentity id;
  size_t header_bytes = kChunkListHeaderBytes;
  if (std::memcmp(bytes.data(), kChunkListMagicV1, sizeof kChunkListMagicV1) == 0) {
    header_bytes = kChunkListV1HeaderBytes;
  } else if (std::memcmp(bytes.data(), kChunkListMagic, sizeof kChunkListMagic) == 0 &&
             static_cast<uint64_t>(st.st_size) >= kChunkListHeaderBytes) {
    Result<ChunkDigest> digest = ChunkDigestFromValue(bytes[kChunkListV1HeaderBytes]);
    if (!digest.ok()) return damaged;
    id.digest = *digest;
  } else {
    return damaged;
  }
  id.size_bytes = LoadBigEndian(bytes.data() + 8, 8);
  id.chunk_bytes = LoadBigEndian(bytes.data() + 16, 8);
  std::memcpy(id.sha256.data(), bytes.data() + 24, sizeof(Digest));
  const uint64_t digest_bytes = static_cast<uint64_t>(st.st_size) - header_bytes;
  if (id.chunk_bytes == 0 || digest_bytes % DigestBytes(id.digest) != 0 ||
      digest_bytes / DigestBytes(id.digest) != id.NumChunks()) {
    return damaged;
  }
  return std::make_pair(id, header_bytes);
}

Result<int> OpenChunkList(FileIo& io, const std::string& path, const std::string& name) {
  const int fd = io.OpenAt(AT_FDCWD, path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) return Status::NotFound("no chunk list is recorded for '" + name + "' (not received by gridcast)");
  return fd;
}

Status Damaged(const std::string& name) { return Status::DataLoss("chunk list of '" + name + "' is damaged"); }

}  // namespace

Result<PayloadIdentity> ReadChunkListHeader(FileIo& io, const std::string& path, const std::string& name) {
  GRIDCAST_ASSIGN_OR_RETURN(const int fd, OpenChunkList(io, path, name));
  Result<std::pair<PayloadIdentity, size_t>> header = ReadHeaderOf(io, fd, path, Damaged(name));
  close(fd);
  if (!header.ok()) return header.status();
  return header->first;
}

Result<std::vector<Digest>> ReadChunkListDigests(FileIo& io, const std::string& path, const std::string& name,
                                                 uint64_t first, uint64_t count) {
  GRIDCAST_ASSIGN_OR_RETURN(const int fd, OpenChunkList(io, path, name));
  const auto read = [&]() -> Result<std::vector<Digest>> {
    GRIDCAST_ASSIGN_OR_RETURN(const auto header, ReadHeaderOf(io, fd, path, Damaged(name)));
    const PayloadIdentity& id = header.first;
    first = std::min(first, id.NumChunks());
    count = std::min(count, id.NumChunks() - first);
    const size_t width = DigestBytes(id.digest);
    std::string bytes(count * width, '\0');
    GRIDCAST_RETURN_IF_ERROR(
        PreadFull(io, fd, {reinterpret_cast<uint8_t*>(bytes.data()), bytes.size()}, header.second + first * width));
    Result<std::vector<Digest>> digests = DecodeChunkHashes(id.digest, bytes, count);
    if (!digests.ok()) return Damaged(name);
    return digests;
  };
  Result<std::vector<Digest>> digests = read();
  close(fd);
  return digests;
}

Result<PayloadIdentity> ReadChunkList(FileIo& io, const std::string& path, const std::string& name) {
  GRIDCAST_ASSIGN_OR_RETURN(PayloadIdentity id, ReadChunkListHeader(io, path, name));
  GRIDCAST_ASSIGN_OR_RETURN(id.chunk_hashes, ReadChunkListDigests(io, path, name, 0, id.NumChunks()));
  return id;
}

Status WriteChunkList(FileIo& io, const std::string& path, const PayloadIdentity& identity, bool sync) {
  return WriteChunkList(io, path, identity, 1, [&](uint64_t) -> Result<std::vector<Digest>> { return identity.chunk_hashes; },
                        sync);
}

Status WriteChunkList(FileIo& io, const std::string& path, const PayloadIdentity& header, uint64_t pieces,
                      const std::function<Result<std::vector<Digest>>(uint64_t piece)>& digests_of, bool sync) {
  std::vector<uint8_t> bytes(kChunkListHeaderBytes);
  std::memcpy(bytes.data(), kChunkListMagic, sizeof kChunkListMagic);
  StoreBigEndian(bytes.data() + 8, header.size_bytes, 8);
  StoreBigEndian(bytes.data() + 16, header.chunk_bytes, 8);
  std::memcpy(bytes.data() + 24, header.sha256.data(), sizeof(Digest));
  bytes[kChunkListV1HeaderBytes] = static_cast<uint8_t>(header.digest);

  const std::string temporary = path + ".tmp";
  const int fd = io.OpenAt(AT_FDCWD, temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot write " + temporary, errno);
  Status written = PwriteFull(io, fd, bytes, 0);
  uint64_t offset = bytes.size(), digests = 0;
  for (uint64_t piece = 0; piece < pieces && written.ok(); ++piece) {
    Result<std::vector<Digest>> part = digests_of(piece);
    if (!part.ok()) {
      written = part.status();
      break;
    }
    const std::string encoded = EncodeChunkHashes(header.digest, *part);
    written = PwriteFull(io, fd, AsBytes(encoded), offset);
    offset += encoded.size();
    digests += part->size();
  }
  if (written.ok() && digests != header.NumChunks()) {
    written = Status::Internal("a chunk list of " + std::to_string(digests) + " digests for " +
                               std::to_string(header.NumChunks()) + " chunks");
  }
  if (written.ok() && sync && io.Sync(fd) != 0) written = ErrnoStatus("sync " + temporary, errno);
  close(fd);
  if (written.ok() && io.RenameAt(AT_FDCWD, temporary.c_str(), AT_FDCWD, path.c_str()) != 0) {
    written = ErrnoStatus("cannot rename " + temporary, errno);
  }
  return written;
}

}  // namespace gridcast
