#include "daemon/participant/holdings.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <filesystem>

#include "common/hex.h"
#include "common/safe_path.h"
#include "daemon/participant/request_checks.h"
#include "daemon/store/allgather_bundle.h"
#include "daemon/store/directory_archive.h"
#include "daemon/store/payload_store.h"
#include "proto/plan_codec.h"

namespace gridcast {

v1::ListResponse Holdings::List(bool verify) const {
  std::map<HeldName, PlanRun> running;
  for (RunningPlans::Named& named : running_.AllNamed()) running.insert_or_assign(named.payload, std::move(named.run));
  v1::ListResponse response;
  response.set_data_dir(directories_.data_dir);
  response.set_memory_dir(directories_.memory_dir);
  ListDirectory(/*in_memory=*/false, verify, running, &response);
  if (!directories_.memory_dir.empty()) ListDirectory(/*in_memory=*/true, verify, running, &response);
  return response;
}

void Holdings::ListDirectory(bool in_memory, bool verify,
                             const std::map<HeldName, PlanRun>& running,
                             v1::ListResponse* response) const {
  namespace fs = std::filesystem;
  const std::string& dir = directories_.Of(in_memory);
  std::error_code ec;
  const fs::path root(dir);
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path relative = fs::relative(it->path(), root, ec);
    if (!relative.empty() && relative.begin()->string() == ".gridcast") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
    std::string name = relative.string();
    const bool partial = name.size() > 5 && name.ends_with(".part");
    if (partial) name.resize(name.size() - 5);
    v1::HeldPayload* held = response->add_payloads();
    held->set_name(name);
    held->set_complete(!partial);
    held->set_size_bytes(it->file_size(ec));
    held->set_in_memory(in_memory);
    auto known = running.find(HeldName{name, in_memory});
    if (known != running.end()) {
      const ExecutionSnapshot snapshot = known->second.Snapshot();
      held->set_chunks_verified(snapshot.chunks_done);
      held->set_chunks_total(snapshot.chunks_total);
    }
    if (partial) continue;
    Result<PayloadIdentity> recorded = PayloadStore::RecordedHeader(dir, name);
    if (recorded.ok()) {
      held->set_sha256(AsString(recorded->sha256));
      held->set_digest(ChunkDigestToProto(recorded->digest));
    }
    if (!verify) continue;
    Result<ScrubReport> scrub = PayloadStore::Scrub(dir, name);
    if (!scrub.ok()) {
      held->set_scrub(v1::SCRUB_RESULT_UNKNOWN);
      held->set_scrub_error(scrub.status().message());
      continue;
    }
    held->set_chunks_total(scrub->chunks);
    held->set_chunks_verified(scrub->chunks - scrub->bad_chunks.size());
    held->set_scrub(scrub->bad_chunks.empty() ? v1::SCRUB_RESULT_OK : v1::SCRUB_RESULT_BAD);
    for (uint64_t c : scrub->bad_chunks) held->add_bad_chunks(c);
    if (!scrub->bad_chunks.empty()) {
      spdlog::warn("scrub: {} has {} bad chunks of {}", name, scrub->bad_chunks.size(), scrub->chunks);
    }
  }
}

Result<v1::ChunkMapResponse> Holdings::ChunkMap(const HeldName& name, uint64_t first_chunk, uint64_t max_chunks) const {
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name.name));
  if (first_chunk % 8 != 0) {
    return Status::InvalidArgument("a chunk map starts at a multiple of 8, not chunk " + std::to_string(first_chunk));
  }
  v1::ChunkMapResponse map;
  map.set_first_chunk(first_chunk);
  if (const std::shared_ptr<PlanExecution> receiving = running_.Writing(name)) {
    const PayloadStore& store = receiving->store();
    if (first_chunk > store.identity().NumChunks()) {
      return Status::OutOfRange("chunk " + std::to_string(first_chunk) + " is past the " +
                                std::to_string(store.identity().NumChunks()) + " chunks of '" + name.name + "'");
    }
    const uint64_t count = max_chunks == 0 ? kMaxChunkMapChunks : std::min(max_chunks, kMaxChunkMapChunks);
    map.set_size_bytes(store.identity().size_bytes);
    map.set_chunk_bytes(store.identity().chunk_bytes);
    map.set_verified(AsString(store.BitmapBytes(first_chunk, count)));
    return map;
  }
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(directories_.Of(name.in_memory), name.name, /*create=*/false));
  struct stat st {};
  if (fstatat(parent.first.get(), parent.second.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
    return Status::NotFound("this daemon neither receives nor holds '" + name.name + "'" +
                            (name.in_memory ? " in memory" : ""));
  }
  map.set_size_bytes(static_cast<uint64_t>(st.st_size));
  map.set_complete(true);
  return map;
}

Result<v1::DescribePartResponse> Holdings::DescribePart(const v1::DescribePartRequest& request) const {
  GRIDCAST_RETURN_IF_ERROR(CheckDescribePartRequest(request));
  GRIDCAST_ASSIGN_OR_RETURN(const std::filesystem::path path,
                            directories_.ResolveSend(request.path(), request.in_memory()));
  GRIDCAST_ASSIGN_OR_RETURN(const int fd, OpenRegularFile(path));
  struct stat st {};
  const int stated = fstat(fd, &st);
  close(fd);
  if (stated != 0) return ErrnoStatus("stat " + path.string(), errno);
  v1::DescribePartResponse response;
  response.set_size_bytes(static_cast<uint64_t>(st.st_size));
  if (request.chunk_bytes() > 0) {
    GRIDCAST_ASSIGN_OR_RETURN(const SigningKey key, PartKey(request, response.size_bytes()));
    response.set_digest_key(AsString(key.public_key()));
    if (signer_ != nullptr) {
      GRIDCAST_ASSIGN_OR_RETURN(std::string signature, signer_->Sign(PartKeyStatement(request.key_nonce(), key.public_key())));
      response.set_key_signature(std::move(signature));
      response.set_certificate(signer_->certificate());
    }
  }
  return response;
}

Result<SigningKey> Holdings::PartKey(const v1::DescribePartRequest& described, uint64_t size_bytes) const {
  if (described.key_nonce().size() != kPartKeyNonceBytes) {
    return Status::InvalidArgument("a part's key nonce is " + std::to_string(kPartKeyNonceBytes) + " bytes, not " +
                                   std::to_string(described.key_nonce().size()));
  }
  std::string message = "gridcast-part-key-1";
  const uint64_t numbers[] = {described.chunk_bytes(), static_cast<uint64_t>(described.digest()), size_bytes,
                              described.in_memory() ? 1u : 0u, described.path().size()};
  message.append(reinterpret_cast<const char*>(numbers), sizeof numbers);
  message.append(described.path());
  message.append(described.key_nonce());
  const std::string_view secret(reinterpret_cast<const char*>(part_key_secret_.data()), part_key_secret_.size());
  return SigningKey::FromSeed(HmacSha256(secret, AsBytes(message)));
}

Status Holdings::Remove(const HeldName& name) {
  GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name.name));
  // A finished copy may go while its source still follows the broadcast (the execution stays
  // registered, and keeps the file open, until the source releases it).
  if (running_.Writes(name)) return Status::FailedPrecondition("a broadcast of '" + name.name + "' is under way here");
  const std::string& dir = directories_.Of(name.in_memory);
  const char* where = name.in_memory ? " (in memory)" : "";
  GRIDCAST_ASSIGN_OR_RETURN(auto parent, OpenParentDir(dir, name.name, /*create=*/false));
  std::error_code ec;
  struct stat st {};
  if (fstatat(parent.first.get(), parent.second.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
    // A directory payload (unpacked from NAME.tar): the tree, and the archive's chunk list.
    // remove_all removes links, never what they point to.
    std::filesystem::remove_all(std::filesystem::path(dir) / name.name, ec);
    if (ec) return Status::Internal("cannot remove " + name.name + "/: " + ec.message());
    std::filesystem::remove(PayloadStatePath(dir, name.name + kDirectoryArchiveSuffix, ".chunks"), ec);
    spdlog::info("removed {}/", name.name);
    return Status::Ok();
  }
  const bool complete = faccessat(parent.first.get(), parent.second.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) == 0;
  if (Keep(name, parent.first.get(), complete ? parent.second : parent.second + ".part")) {
    std::filesystem::remove(PayloadStatePath(dir, name.name, complete ? ".chunks" : ".state"), ec);
    spdlog::info("removed {}{}{}, its pages kept for the next payload", complete ? "" : "the partial copy of ",
                 name.name, where);
    return Status::Ok();
  }
  // A file's pages (all of an in-memory payload's memory) are freed when its last descriptor
  // closes. Held open across the unlink and closed by a worker, that happens after the answer:
  // 16 daemons freeing 256 MiB of tmpfs at once kept their callers (MPI ranks) 0.25 s.
  const int held = openat(parent.first.get(), parent.second.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (unlinkat(parent.first.get(), parent.second.c_str(), 0) != 0) {
    if (held >= 0) close(held);
    // What an interrupted broadcast left (resumable until then) goes too.
    const std::string part = parent.second + ".part";
    if (unlinkat(parent.first.get(), part.c_str(), 0) == 0) {
      std::filesystem::remove(PayloadStatePath(dir, name.name, ".state"), ec);
      spdlog::info("removed the partial copy of {}{}", name.name, where);
      return Status::Ok();
    }
    return Status::NotFound("this daemon holds no payload '" + name.name + "'" + (name.in_memory ? " in memory" : ""));
  }
  if (held >= 0) boost::asio::post(closer_, [held] { close(held); });
  std::filesystem::remove(PayloadStatePath(dir, name.name, ".chunks"), ec);
  spdlog::info("removed {}{}", name.name, where);
  return Status::Ok();
}

bool Holdings::Keep(const HeldName& name, int dir_fd, const std::string& file) {
  return name.in_memory && warm_ != nullptr && warm_->Keep(dir_fd, file);
}

void Holdings::SweepRetention(const RetentionPolicy& data, const RetentionPolicy& memory) {
  for (const bool in_memory : {false, true}) {
    const RetentionPolicy& policy = in_memory ? memory : data;
    if (!policy.any() || directories_.Of(in_memory).empty()) continue;
    const std::vector<std::string> chosen =
        ChooseForRemoval(ScanStore(directories_.Of(in_memory)), std::chrono::system_clock::now(), policy);
    for (const std::string& name : chosen) {
      const Status status = Remove(HeldName{name, in_memory});
      if (status.ok()) {
        spdlog::info("retention: removed {}{}", name, in_memory ? " (in memory)" : "");
      } else if (status.code() != StatusCode::kNotFound) {
        spdlog::info("retention: {} stays for now: {}", name, status.message());
      }
    }
  }
  if (warm_ != nullptr) warm_->ReleaseIdle();
}

}  // namespace gridcast
