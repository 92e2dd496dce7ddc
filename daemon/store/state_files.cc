#include "daemon/store/state_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

// The identity a chunk list's bytes record.
Result<PayloadIdentity> DecodeChunkList(std::span<const uint8_t> bytes, const Status& damaged) {
  if (bytes.size() < kChunkListV1HeaderBytes) return damaged;
  PayloadIdentity id;
  size_t header_bytes = kChunkListHeaderBytes;
  if (std::memcmp(bytes.data(), kChunkListMagicV1, sizeof kChunkListMagicV1) == 0) {
    header_bytes = kChunkListV1HeaderBytes;
  } else if (std::memcmp(bytes.data(), kChunkListMagic, sizeof kChunkListMagic) == 0 &&
             bytes.size() >= kChunkListHeaderBytes) {
    Result<ChunkDigest> digest = ChunkDigestFromValue(bytes[kChunkListV1HeaderBytes]);
    if (!digest.ok()) return damaged;
    id.digest = *digest;
  } else {
    return damaged;
  }
  id.size_bytes = LoadBigEndian(bytes.data() + 8, 8);
  id.chunk_bytes = LoadBigEndian(bytes.data() + 16, 8);
  std::memcpy(id.sha256.data(), bytes.data() + 24, sizeof(Digest));
  const std::span<const uint8_t> hashes = bytes.subspan(header_bytes);
  if (id.chunk_bytes == 0 || hashes.size() / DigestBytes(id.digest) != id.NumChunks()) return damaged;
  Result<std::vector<Digest>> decoded =
      DecodeChunkHashes(id.digest, {reinterpret_cast<const char*>(hashes.data()), hashes.size()}, id.NumChunks());
  if (!decoded.ok()) return damaged;
  id.chunk_hashes = std::move(*decoded);
  return id;
}

}  // namespace

std::string PayloadStatePath(const std::string& data_dir, const std::string& name, const char* suffix) {
  const std::filesystem::path state_dir = std::filesystem::path(data_dir) / ".gridcast" / "state";
  return (state_dir / (ToHex(Sha256(AsBytes(name))) + suffix)).string();
}

std::optional<std::vector<uint8_t>> ReadResumeBitmap(FileIo& io, int fd, const Digest& fingerprint, uint64_t chunks) {
  std::vector<uint8_t> header(kStateHeaderBytes);
  std::vector<uint8_t> bitmap((chunks + 7) / 8, 0);
  if (!PreadFull(io, fd, header, 0).ok() || std::memcmp(header.data(), kStateMagic, sizeof kStateMagic) != 0 ||
      std::memcmp(header.data() + sizeof kStateMagic, fingerprint.data(), sizeof(Digest)) != 0 ||
      !PreadFull(io, fd, bitmap, kStateHeaderBytes).ok()) {
    return std::nullopt;
  }
  return bitmap;
}

Status WriteResumeState(FileIo& io, int fd, const Digest& fingerprint, std::span<const uint8_t> bitmap) {
  std::vector<uint8_t> header(kStateHeaderBytes);
  std::memcpy(header.data(), kStateMagic, sizeof kStateMagic);
  std::memcpy(header.data() + sizeof kStateMagic, fingerprint.data(), sizeof(Digest));
  GRIDCAST_RETURN_IF_ERROR(PwriteFull(io, fd, header, 0));
  GRIDCAST_RETURN_IF_ERROR(PwriteFull(io, fd, bitmap, kStateHeaderBytes));
  if (io.Truncate(fd, static_cast<off_t>(kStateHeaderBytes + bitmap.size())) != 0) {
    return ErrnoStatus("sizing the resume bitmap", errno);
  }
  return Status::Ok();
}

uint64_t ResumeBitmapByteOffset(uint64_t chunk) { return kStateHeaderBytes + chunk / 8; }

Result<PayloadIdentity> ReadChunkList(FileIo& io, const std::string& path, const std::string& name) {
  const int fd = io.OpenAt(AT_FDCWD, path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
  if (fd < 0) return Status::NotFound("no chunk list is recorded for '" + name + "' (not received by gridcast)");
  struct stat st {};
  Status read = fstat(fd, &st) == 0 ? Status::Ok() : ErrnoStatus("stat " + path, errno);
  std::vector<uint8_t> bytes(read.ok() ? static_cast<size_t>(st.st_size) : 0);
  if (read.ok()) read = PreadFull(io, fd, bytes, 0);
  close(fd);
  if (!read.ok()) return read;
  return DecodeChunkList(bytes, Status::DataLoss("chunk list of '" + name + "' is damaged"));
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
