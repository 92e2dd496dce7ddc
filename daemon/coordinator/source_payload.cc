#include "daemon/coordinator/source_payload.h"

#include <spdlog/spdlog.h>

#include <array>
#include <system_error>
#include <thread>

#include "common/crypto.h"
#include "common/hex.h"
#include "common/safe_path.h"
#include "daemon/participant/request_checks.h"
#include "daemon/store/directory_archive.h"
#include "daemon/store/payload_identity.h"
#include "daemon/store/probe_payload.h"
#include "daemon/store/rank_memory_registry.h"
#include "delta/rolling_checksum.h"
#include "proto/plan_codec.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultProbeName = "tomography-probe.bin";

// A directory travels as a tar archive (directory_archive.h), packed afresh for each request
// under the data directory's .gridcast/packs and removed when the broadcast is over.
Result<ResolvedPayload> PackDirectoryPayload(const v1::BroadcastRequest& request, const std::string& data_dir,
                                             const fs::path& directory, const std::string& name) {
  if (request.in_memory()) return Status::InvalidArgument("a directory cannot be received into memory");
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
  const std::string archive_name = name + kDirectoryArchiveSuffix;
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(archive_name));
  const fs::path packs = fs::path(data_dir) / ".gridcast" / "packs";
  std::error_code ec;
  if (IsWithin(fs::weakly_canonical(packs, ec), directory)) {
    return Status::InvalidArgument(directory.string() +
                                   " holds this daemon's data directory: send a directory inside it");
  }
  fs::create_directories(packs, ec);
  if (ec) return Status::Internal("cannot create " + packs.string() + ": " + ec.message());
  std::array<uint8_t, 8> unique{};
  RandomBytes(unique);
  const fs::path archive = packs / (ToHex(unique) + kDirectoryArchiveSuffix);
  GRIDCAST_RETURN_IF_ERROR(PackDirectory(directory, archive));
  std::shared_ptr<const void> pack(nullptr, [archive](const void*) {
    std::error_code ignored;
    fs::remove(archive, ignored);
  });
  const uint64_t size = fs::file_size(archive, ec);
  if (ec) return Status::Internal("cannot read " + archive.string() + ": " + ec.message());
  spdlog::info("packed {} into {} ({} bytes)", directory.string(), archive.string(), size);
  return ResolvedPayload{archive, size, archive_name, directory, std::move(pack)};
}

}  // namespace

Result<ResolvedPayload> ResolvePayload(const v1::BroadcastRequest& request, const PayloadDirectories& directories) {
  if (request.from_registered_memory()) {  // no file: OpenFilledSource finds the memory
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(request.name()));
    return ResolvedPayload{fs::path(), request.fill().size_bytes(), request.name(), {}, nullptr};
  }
  fs::path path(request.payload_path());
  std::string probe_name;
  if (request.probe_bytes() > 0) {
    probe_name = request.name().empty() ? kDefaultProbeName : request.name();
    GRIDCAST_ASSIGN_OR_RETURN(std::string written,
                              WriteProbePayload(directories.data_dir, probe_name, request.probe_bytes()));
    path = written;
  }
  Result<fs::path> resolved = directories.ResolveSend(path.string());
  if (!resolved.ok()) return resolved.status().WithContext("payload");
  const fs::path canonical = *resolved;
  std::error_code ec;
  std::string name = !probe_name.empty()       ? probe_name
                     : request.name().empty() ? canonical.filename().string()
                                              : request.name();
  if (request.has_fill()) {
    // The sender creates the file before asking and is writing it now: its size is declared.
    if (!fs::is_regular_file(canonical, ec)) {
      return Status::NotFound("a filled payload must be a file the sender created: " + path.string());
    }
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
    return ResolvedPayload{canonical, request.fill().size_bytes(), name, {}, nullptr};
  }
  if (fs::is_directory(canonical, ec)) return PackDirectoryPayload(request, directories.data_dir, canonical, name);
  const uint64_t size = fs::file_size(canonical, ec);
  if (ec) return Status::NotFound("cannot read payload " + path.string() + ": " + ec.message());
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
  return ResolvedPayload{canonical, size, name, {}, nullptr};
}

Result<std::unique_ptr<PayloadStore>> OpenLentSource(const v1::BroadcastRequest& request, PayloadIdentity identity,
                                                     const Plan& plan, RankMemoryRegistry* lenders) {
  if (plan.HasSwarm()) {
    return Status::FailedPrecondition("a payload in lent memory is pushed; this broadcast's plan is not");
  }
  if (identity.sha256 != identity.ListDigest()) {
    return Status::InvalidArgument("a payload in lent memory is known by its chunk list's digest; " +
                                   request.name() + " declares another");
  }
  std::vector<std::shared_ptr<ProcessRegion>> regions =
      lenders == nullptr ? std::vector<std::shared_ptr<ProcessRegion>>{}
                         : lenders->Bind(request.name(), identity.size_bytes);
  if (regions.empty()) {
    return Status::FailedPrecondition("no process on this host lent " + std::to_string(identity.size_bytes) +
                                      " bytes for " + request.name());
  }
  // A chunk read back for one child is kept for the others until every child has it.
  return PayloadStore::OpenLentSource(request.name(), std::move(identity),
                                      std::make_shared<RankMemory>(std::move(regions), RankMemory::kKeptBytes));
}

Result<std::unique_ptr<PayloadStore>> OpenFilledSource(const v1::BroadcastRequest& request, const fs::path& path,
                                                       const Plan& plan, RankMemoryRegistry* lenders,
                                                       std::chrono::milliseconds stall_after) {
  const v1::PayloadFill& fill = request.fill();
  if (plan.chunk_bytes != request.chunk_bytes()) {
    return Status::Internal("the plan cuts the payload into chunks of " + std::to_string(plan.chunk_bytes) +
                            " bytes, not the " + std::to_string(request.chunk_bytes()) + " its sender hashed");
  }
  GRIDCAST_ASSIGN_OR_RETURN(const ChunkDigest digest, ChunkDigestFromProto(request.digest()));
  if (DeclaresOnlyTheSize(fill)) {
    if (request.from_registered_memory()) {
      return Status::InvalidArgument("a payload in lent memory declares its chunks' digests");
    }
    GRIDCAST_ASSIGN_OR_RETURN(const std::optional<Digest> declared_sha256, DeclaredSha256(fill.sha256()));
    // Hashed as it is sent, each batch once the sender wrote it, swarm plans too.
    return PayloadStore::OpenStreamedFilling(path.string(), fill.size_bytes(), plan.chunk_bytes, digest,
                                             request.no_reuse() ? WeakChecksums::kSkip : WeakChecksums::kCompute,
                                             declared_sha256);
  }
  GRIDCAST_ASSIGN_OR_RETURN(PayloadIdentity identity, DecodePayloadIdentity(digest, fill.size_bytes(), plan.chunk_bytes,
                                                                            fill.chunk_hashes(), fill.sha256()));
  GRIDCAST_ASSIGN_OR_RETURN(identity.weak_checksums, DecodeWeakChecksums(fill.weak_checksums(), identity.NumChunks()));
  if (request.from_registered_memory()) return OpenLentSource(request, std::move(identity), plan, lenders);
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<PayloadStore> store,
                            PayloadStore::OpenFilling(path.string(), std::move(identity)));
  if (!plan.HasSwarm()) return store;  // the source's execution follows the fill
  GrowingSource& growing = *store->capabilities().growing;
  auto progressed = std::chrono::steady_clock::now();
  while (!store->Complete()) {
    GRIDCAST_ASSIGN_OR_RETURN(const uint64_t newly, growing.VerifyFilled());
    const auto now = std::chrono::steady_clock::now();
    if (newly > 0) {
      progressed = now;
    } else if (now - progressed > stall_after) {
      return Status::DeadlineExceeded("the sender of " + path.string() + " stopped writing it");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return store;
}

Result<std::unique_ptr<PayloadStore>> OpenOriginSource(const v1::BroadcastRequest& request, const fs::path& path,
                                                       uint64_t size, const Plan& plan) {
  GRIDCAST_ASSIGN_OR_RETURN(const ChunkDigest digest, ChunkDigestFromProto(request.digest()));
  GRIDCAST_ASSIGN_OR_RETURN(const std::optional<Digest> declared_sha256, DeclaredSha256(request.origin().sha256()));
  const WeakChecksums weak = request.no_reuse() ? WeakChecksums::kSkip : WeakChecksums::kCompute;
  if (size == 0) {  // fetched whole already: nothing to stream
    if (declared_sha256 && *declared_sha256 != Sha256({})) {
      return Status::DataLoss("the origin sent no bytes, whose SHA-256 is not the one given");
    }
    return PayloadStore::OpenSource(path.string(), plan.chunk_bytes, digest, SystemFileIo(), weak);
  }
  return PayloadStore::OpenStreamedFilling(path.string(), size, plan.chunk_bytes, digest, weak, declared_sha256);
}

}  // namespace gridcast
