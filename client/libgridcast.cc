#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "client/cluster_documents.h"
#include "client/plan_documents.h"
#include "client/send_summary.h"
#include "cluster/cluster_file.h"
#include "cluster/control_client.h"
#include "cluster/local_member.h"
#include "collectives/registry.h"
#include "common/hex.h"
#include "common/safe_path.h"
#include "common/file_io.h"
#include "common/payload_digests.h"
#include "common/units.h"
#include "delta/rolling_checksum.h"
#include "include/gridcast/gridcast.hpp"
#include "proto/plan_codec.h"
#include "proto/states.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

// What this process writes into a daemon's directories is the daemon's to read: the daemon
// runs as another user of the same group (deploy/systemd/gridcastd.service: directories 2770,
// their group inherited), so a file is 0640 and a directory 0770, whatever this process's umask.
Status CreateSharedDirectories(const fs::path& dir) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path at = dir; !at.empty() && !fs::exists(at, ec); at = at.parent_path()) missing.push_back(at);
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (mkdir(it->c_str(), 0770) != 0 && errno != EEXIST) return ErrnoStatus("cannot create " + it->string(), errno);
    // mkdir gave it the parent's set-group-ID bit (and group) where the parent has it: keep it.
    const bool inherits = (fs::status(it->parent_path(), ec).permissions() & fs::perms::set_gid) != fs::perms::none;
    if (chmod(it->c_str(), inherits ? (0770 | S_ISGID) : 0770) != 0) {
      return ErrnoStatus("cannot chmod " + it->string(), errno);
    }
  }
  return Status::Ok();
}

// A file for the daemon to read, created 0640 (see CreateSharedDirectories); -1 with errno.
int CreateSharedFile(const fs::path& path, int flags) {
  const int fd = open(path.c_str(), flags | O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
  if (fd >= 0 && fchmod(fd, 0640) != 0) {
    const int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

// Broadcast::Cancel asks the source at most this long (a source that does not answer ends the
// broadcast by its own timeouts).
constexpr std::chrono::seconds kCancelCallTimeout(5);

// A call that streams BroadcastProgress (Broadcast or Allgather) until it ends.
using ProgressCall = std::function<Status(const std::function<void(const v1::BroadcastProgress&)>&)>;

// How long a client waits for a call whose request allows timeout_s (0: derived by the daemon).
std::chrono::milliseconds CallTimeout(double timeout_s) {
  return std::chrono::milliseconds(static_cast<int64_t>((timeout_s > 0 ? timeout_s + 60 : 7 * 86400) * 1000));
}

class BroadcastImpl : public Broadcast {
 public:
  BroadcastImpl(ProgressCall call, std::shared_ptr<const SourceChoice> source,
                std::shared_ptr<ControlClient> source_client)
      : source_(std::move(source)), source_client_(std::move(source_client)) {
    thread_ = std::thread([this, call = std::move(call)] {
      Status status = call([this](const v1::BroadcastProgress& p) {
        std::unique_lock<std::mutex> lock(mutex_);
        last_ = p;
        reported_ = true;
        RenameIfDue();
        if (cancel_ == CancelState::kAsked) SendCancel(lock);
      });
      std::lock_guard<std::mutex> lock(mutex_);
      status_ = status;
      ended_ = true;
      RenameIfDue();
    });
  }
  // Renames `from` to `to` once the source reported progress (it has the file open by its
  // first name and started) or the call ended: now, or later on the call's thread. A rename
  // that fails removes `from` (not to hold memory under a name nobody asks for) and fails
  // Wait().
  void RenameOnceUnderWay(fs::path from, fs::path to) {
    std::lock_guard<std::mutex> lock(mutex_);
    rename_ = {std::move(from), std::move(to)};
    RenameIfDue();
  }
  ~BroadcastImpl() override {
    if (thread_.joinable()) thread_.join();
  }

  bool Poll(Progress* progress) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (progress != nullptr) *progress = Counters();
    return ended_;
  }

  bool PollDetail(ProgressDetail* detail) override {
    std::lock_guard<std::mutex> lock(mutex_);
    *detail = ProgressDetail{Counters(), last_.slowest_member(), last_.slowest_chunks()};
    return ended_;
  }

  void Cancel() override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (ended_ || cancel_ != CancelState::kNone) return;
    cancel_ = CancelState::kAsked;
    // The plan's id comes with the first progress message: until then the call's thread asks.
    if (!last_.plan_id().empty()) SendCancel(lock);
  }

  std::string SummaryJson() override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!ended_) return "";
    return gridcast::SummaryJson(Summarize(last_, *source_, status_)).dump();
  }

  Result<BroadcastResult> Wait() override {
    if (thread_.joinable()) thread_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    SendSummary summary = Summarize(last_, *source_, status_);
    if (!status_.ok()) return status_;
    if (!renamed_.ok()) return renamed_;
    if (!summary.verified) return Status::DataLoss("broadcast ended without every member verified: " + summary.error);
    BroadcastResult result{summary.plan_id,
                           summary.algorithm,
                           static_cast<Mode>(summary.mode),
                           summary.size_bytes,
                           summary.chunk_bytes,
                           summary.completion_s,
                           summary.bound_s,
                           summary.sha256,
                           std::string(DigestName(summary.digest)),
                           summary.moved_bytes,
                           summary.reused_bytes,
                           {},
                           summary.verified,
                           summary.parts};
    for (const MemberResult& m : summary.members) {
      result.members.push_back({m.name, static_cast<MemberState>(m.state), m.error, m.digest_ok, m.finished_s});
    }
    return result;
  }

 private:
  enum class CancelState { kNone, kAsked, kSent };

  // REQUIRES: mutex_ held.
  Progress Counters() const {
    Progress progress;
    progress.elapsed_s = last_.elapsed_s();
    // Progress messages sum the members up (daemon/coordinator/control_tree.h).
    progress.members = static_cast<int>(last_.members_total());
    progress.members_done = static_cast<int>(last_.members_done());
    progress.chunks_done = last_.chunks_done_total();
    progress.chunks_total = CeilDiv(last_.payload_bytes(), last_.chunk_bytes()) * last_.members_total();
    return progress;
  }

  // Asks the source to cancel the plan everywhere (it passes the cancel down its control
  // tree). A failure to ask is left to the broadcast's own end: the call reports it.
  // REQUIRES: `lock` holds mutex_, the plan's id is known; releases it for the call.
  void SendCancel(std::unique_lock<std::mutex>& lock) {
    cancel_ = CancelState::kSent;
    v1::CancelRequest request;
    request.set_plan_id(last_.plan_id());
    request.set_reason("cancelled by the caller");
    lock.unlock();
    (void)source_client_->Cancel(request, kCancelCallTimeout);
    lock.lock();
  }

  std::shared_ptr<const SourceChoice> source_;
  std::shared_ptr<ControlClient> source_client_;
  std::thread thread_;
  // REQUIRES: mutex_ held.
  void RenameIfDue() {
    if (!rename_ || !(reported_ || ended_)) return;
    std::error_code ec;
    fs::rename(rename_->first, rename_->second, ec);
    if (ec) {
      renamed_ = Status::Internal("cannot rename " + rename_->first.string() + ": " + ec.message());
      fs::remove(rename_->first, ec);
    }
    rename_.reset();
  }

  std::mutex mutex_;
  v1::BroadcastProgress last_;  // guarded by mutex_
  bool reported_ = false;       // guarded by mutex_
  Status status_;               // guarded by mutex_
  bool ended_ = false;          // guarded by mutex_
  std::optional<std::pair<fs::path, fs::path>> rename_;  // guarded by mutex_
  Status renamed_;                                       // guarded by mutex_
  CancelState cancel_ = CancelState::kNone;              // guarded by mutex_
};

class PayloadCopierImpl : public PayloadCopier {
 public:
  PayloadCopierImpl(std::unique_ptr<ControlClient> client, fs::path dir, std::string name, bool in_memory,
                    std::span<uint8_t> out)
      : client_(std::move(client)), dir_(std::move(dir)), name_(std::move(name)), in_memory_(in_memory), out_(out) {}
  ~PayloadCopierImpl() override {
    if (fd_ >= 0) close(fd_);
  }

  Result<bool> CopyVerified() override {
    if (done_) return true;
    v1::ChunkMapRequest request;
    request.set_name(name_);
    request.set_in_memory(in_memory_);
    v1::ChunkMapResponse map;
    const Status asked = client_->ChunkMap(request, &map);
    if (asked.code() == StatusCode::kNotFound) return false;  // not prepared there yet
    GRIDCAST_RETURN_IF_ERROR(asked);
    if (map.size_bytes() != out_.size()) {
      return Status::InvalidArgument("payload '" + name_ + "' has " + std::to_string(map.size_bytes()) +
                                     " bytes; the buffer has " + std::to_string(out_.size()));
    }
    if (map.chunk_bytes() > 0 && chunk_bytes_ == 0) {
      chunk_bytes_ = map.chunk_bytes();
      copied_.assign(CeilDiv(out_.size(), chunk_bytes_), false);
    }
    if (fd_ < 0) GRIDCAST_RETURN_IF_ERROR(OpenFile());
    if (map.complete()) {
      if (chunk_bytes_ == 0) {  // never saw it partial: all of it now
        GRIDCAST_RETURN_IF_ERROR(PreadFull(SystemFileIo(), fd_, out_, 0).WithContext(name_));
      } else {
        for (uint64_t c = 0; c < copied_.size(); ++c) GRIDCAST_RETURN_IF_ERROR(CopyChunk(c));
      }
      done_ = true;
      return true;
    }
    if (chunk_bytes_ == 0) return Status::Internal("the chunk map of '" + name_ + "' has no chunk size");
    // Page by page: one answer carries the map of up to 2^28 chunks.
    for (uint64_t first = 0;;) {
      const std::string& verified = map.verified();
      const uint64_t count = std::min<uint64_t>(verified.size() * 8, copied_.size() - first);
      if (map.first_chunk() != first || verified.empty() || verified.size() != (count + 7) / 8) {
        return Status::Internal("the chunk map of '" + name_ + "' does not fit its size");
      }
      for (uint64_t c = 0; c < count; ++c) {
        if ((static_cast<uint8_t>(verified[c / 8]) >> (c % 8)) & 1u) GRIDCAST_RETURN_IF_ERROR(CopyChunk(first + c));
      }
      first += count;
      if (first >= copied_.size()) break;
      request.set_first_chunk(first);
      GRIDCAST_RETURN_IF_ERROR(client_->ChunkMap(request, &map));
      if (map.complete()) return CopyVerified();
    }
    done_ = copied_count_ == copied_.size();
    return done_;
  }

 private:
  // "<name>.part" while it is received, "<name>" once finished; an open descriptor follows the
  // rename, so whichever is found first serves to the end.
  Status OpenFile() {
    for (const std::string& file : {name_ + ".part", name_}) {
      fd_ = open((dir_ / file).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd_ >= 0) return Status::Ok();
      if (errno != ENOENT) break;
    }
    return Status::Internal("cannot open '" + name_ + "' in " + dir_.string() + ": " + std::strerror(errno));
  }
  Status CopyChunk(uint64_t c) {
    if (copied_[c]) return Status::Ok();
    const uint64_t offset = c * chunk_bytes_;
    GRIDCAST_RETURN_IF_ERROR(
        PreadFull(SystemFileIo(), fd_, out_.subspan(offset, std::min(chunk_bytes_, out_.size() - offset)), offset)
            .WithContext(name_));
    copied_[c] = true;
    ++copied_count_;
    return Status::Ok();
  }

  const std::unique_ptr<ControlClient> client_;
  const fs::path dir_;
  const std::string name_;
  const bool in_memory_;
  const std::span<uint8_t> out_;
  int fd_ = -1;
  uint64_t chunk_bytes_ = 0;
  std::vector<bool> copied_;
  uint64_t copied_count_ = 0;
  bool done_ = false;
};

class ClientImpl : public Client {
 public:
  ClientImpl(ClusterConfig cluster, SourceChoice source, ClientOptions options)
      : cluster_(std::move(cluster)), options_(std::move(options)) {
    source_ = std::make_shared<SourceChoice>(std::move(source));
    source_->member = cluster_.Find(source_->member->name);  // point into our own copy
    source_client_ = std::make_shared<ControlClient>(source_->member->control_address, cluster_.secret,
                                                     ControlClientOptions{options_.tls_ca});
  }

  Result<std::unique_ptr<Broadcast>> StartSendFile(const std::string& path,
                                                   const SendOptions& options) override {
    GRIDCAST_ASSIGN_OR_RETURN(v1::BroadcastRequest request, SendRequest(path, options));
    return std::unique_ptr<Broadcast>(StartBroadcast(std::move(request)));
  }

  Result<std::unique_ptr<Broadcast>> StartAllgather(const std::string& name, const std::vector<AllgatherPart>& parts,
                                                    const AllgatherOptions& options) override {
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
    v1::AllgatherRequest request;
    request.set_name(name);
    request.set_algorithm(options.algorithm);
    request.set_chunk_bytes(options.chunk_bytes);
    request.set_timeout_s(options.timeout_s);
    request.set_in_memory(options.in_memory);
    GRIDCAST_ASSIGN_OR_RETURN(const ChunkDigest digest, cluster_.DigestFor(options.digest));
    request.set_digest(ChunkDigestToProto(digest));
    for (const AllgatherPart& part : parts) {
      v1::AllgatherPart* asked = request.add_parts();
      asked->set_member(part.member);
      asked->set_path(part.path);
      asked->set_in_memory(part.in_memory);
      asked->set_name(part.name);
    }
    return std::unique_ptr<Broadcast>(new BroadcastImpl(
        [client = source_client_, request](const auto& on_progress) {
          return client->Allgather(request, CallTimeout(request.timeout_s()), on_progress);
        },
        source_, source_client_));
  }

  Status WriteInMemory(const std::string& member, const std::string& name, uint64_t offset,
                       std::span<const uint8_t> data) override {
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
    GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<ControlClient> client, MemberClient(member));
    v1::ListResponse list;
    GRIDCAST_RETURN_IF_ERROR(client->List(&list).WithContext(member));
    if (list.memory_dir().empty()) return Status::FailedPrecondition(member + " keeps nothing in memory");
    const fs::path path = fs::path(list.memory_dir()) / name;
    GRIDCAST_RETURN_IF_ERROR(CreateSharedDirectories(path.parent_path()));
    const int fd = CreateSharedFile(path, 0);
    if (fd < 0) return Status::Internal("cannot open " + path.string() + ": " + std::strerror(errno));
    Status written = PwriteFull(SystemFileIo(), fd, data, offset);
    close(fd);
    return written.WithContext(path.string());
  }

  Status ReadRanges(const std::string& member, const std::string& name, bool in_memory,
                    std::span<const PayloadRange> ranges) override {
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
    GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<ControlClient> client, MemberClient(member));
    v1::ListResponse list;
    GRIDCAST_RETURN_IF_ERROR(client->List(&list).WithContext(member));
    const v1::HeldPayload* held = nullptr;
    for (const v1::HeldPayload& p : list.payloads()) {
      if (p.name() == name && p.in_memory() == in_memory && p.complete()) held = &p;
    }
    if (held == nullptr) return Status::NotFound(member + " holds no complete payload '" + name + "'");
    const fs::path path = fs::path(in_memory ? list.memory_dir() : list.data_dir()) / name;
    const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return Status::Internal("cannot open " + path.string() + ": " + std::strerror(errno));
    Status read = Status::Ok();
    for (const PayloadRange& range : ranges) {
      if (range.offset > held->size_bytes() || range.out.size() > held->size_bytes() - range.offset) {
        read = Status::OutOfRange("a range past the end of '" + name + "'");
        break;
      }
      read = PreadFull(SystemFileIo(), fd, range.out, range.offset);
      if (!read.ok()) break;
    }
    close(fd);
    return read.WithContext(path.string());
  }

  // The buffer reaches the source daemon through a file in its memory or data directory. The
  // daemon starts sending while this copies the buffer into that file (BroadcastRequest.fill,
  // declaring only the size): it hashes each batch of chunks once the copy passed it, so the
  // copy overlaps the broadcast instead of preceding it, and nothing here reads the buffer
  // twice. A buffer the daemon sends from directly (lent: push plans only) is declared with
  // its chunks' digests instead, hashed here first on every core.
  Result<std::unique_ptr<Broadcast>> StartSendBuffer(std::span<const uint8_t> data, const std::string& name,
                                                     const SendOptions& options) override {
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
    v1::ListResponse list;
    GRIDCAST_RETURN_IF_ERROR(source_client_->List(&list).WithContext("source daemon"));
    const fs::path target = fs::path(options.in_memory ? list.memory_dir() : list.data_dir()) / name;
    const fs::path temp = target.string() + ".buffer-tmp";
    SendOptions named = options;
    named.name = name;
    GRIDCAST_ASSIGN_OR_RETURN(v1::BroadcastRequest request, SendRequest(temp.string(), named));
    v1::PlanBroadcastRequest ask;
    *ask.mutable_broadcast() = request;
    ask.set_size_bytes(data.size());
    v1::PlanBroadcastResponse plan;
    GRIDCAST_RETURN_IF_ERROR(source_client_->PlanBroadcast(ask, &plan).WithContext("planning at the source daemon"));
    const Result<PlanMode> mode = PlanModeFromProto(plan.mode());
    const bool lent = options.from_registered_memory && mode.ok() && !ModeHasSwarm(*mode);
    const bool fill = lent || !data.empty();
    if (fill) {
      request.set_chunk_bytes(plan.chunk_bytes());
      request.mutable_fill()->set_size_bytes(data.size());
    }
    if (lent) {
      const ReadPayloadPiece from_buffer = [data](uint64_t offset, uint64_t length, std::vector<uint8_t>&) {
        return Result<std::span<const uint8_t>>(data.subspan(offset, length));
      };
      const ChunkDigest digest = *ChunkDigestFromProto(request.digest());  // SendRequest's own
      // Lent memory is kept by nobody after the broadcast: it is known by its chunk list, which
      // spares the source the sequential SHA-256 of the whole.
      // Receivers holding an earlier copy look for the chunks by these (docs/delta.md).
      std::vector<uint32_t> weak(options.no_reuse ? 0 : CeilDiv(data.size(), request.chunk_bytes()));
      VisitChunk summarize;
      if (!weak.empty()) summarize = [&weak](uint64_t c, std::span<const uint8_t> bytes) { weak[c] = WeakChecksum(bytes); };
      GRIDCAST_ASSIGN_OR_RETURN(const PayloadDigests digests,
                                DigestPayload(data.size(), request.chunk_bytes(), digest, from_buffer,
                                              WholeDigest::kChunkList, summarize));
      v1::PayloadFill* declared = request.mutable_fill();
      declared->set_chunk_hashes(EncodeChunkHashes(digest, digests.chunk_hashes));
      declared->set_weak_checksums(EncodeWeakChecksums(weak));
      declared->set_sha256(AsString(digests.sha256));
      request.clear_payload_path();
      request.set_from_registered_memory(true);
      return std::unique_ptr<Broadcast>(StartBroadcast(request));
    }

    std::error_code ec;
    GRIDCAST_RETURN_IF_ERROR(CreateSharedDirectories(target.parent_path()));
    if (const fs::space_info space = fs::space(target.parent_path(), ec); !ec && space.available < data.size()) {
      return Status::ResourceExhausted(target.parent_path().string() + " has " + std::to_string(space.available) +
                                       " bytes free, not the " + std::to_string(data.size()) + " of the buffer");
    }
    const int fd = CreateSharedFile(temp, O_TRUNC);
    if (fd < 0) return Status::Internal("cannot open " + temp.string() + ": " + std::strerror(errno));
    std::unique_ptr<BroadcastImpl> broadcast = fill ? StartBroadcast(request) : nullptr;
    const Status written = PwriteFull(SystemFileIo(), fd, data, 0);
    close(fd);
    if (!written.ok()) {
      fs::remove(temp, ec);  // a filling source takes that as its sender giving up
      if (broadcast) (void)broadcast->Wait();
      return written.WithContext("writing the buffer to " + temp.string());
    }
    if (!fill) {
      fs::rename(temp, target, ec);
      if (ec) return Status::Internal("cannot rename " + temp.string() + ": " + ec.message());
      request.set_payload_path(target.string());
      broadcast = StartBroadcast(request);
    } else {
      // The payload takes its name once whole, and once the daemon has it open by the first.
      broadcast->RenameOnceUnderWay(temp, target);
    }
    return std::unique_ptr<Broadcast>(std::move(broadcast));
  }

  Status Receive(const std::string& member, const std::string& name, std::span<uint8_t> out,
                 const ReceiveOptions& options) override {
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
    GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<ControlClient> client, MemberClient(member));
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(options.timeout_s * 1000));
    for (;;) {
      v1::ListResponse list;
      Status listed = client->List(&list);
      if (listed.ok()) {
        for (const v1::HeldPayload& p : list.payloads()) {
          if (p.name() != name || !p.complete()) continue;
          if (p.size_bytes() != out.size()) {
            return Status::InvalidArgument("payload '" + name + "' has " + std::to_string(p.size_bytes()) +
                                           " bytes; the buffer has " + std::to_string(out.size()));
          }
          const fs::path path = fs::path(p.in_memory() ? list.memory_dir() : list.data_dir()) / name;
          const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
          if (fd < 0) return Status::Internal("cannot open " + path.string() + ": " + std::strerror(errno));
          const Status read = PreadFull(SystemFileIo(), fd, out, 0);
          close(fd);
          GRIDCAST_RETURN_IF_ERROR(read.WithContext(path.string()));
          if (p.in_memory() && options.remove_in_memory) {
            GRIDCAST_RETURN_IF_ERROR(Remove(*client, name, true).WithContext("removing the in-memory copy"));
          }
          return Status::Ok();
        }
      }
      if (std::chrono::steady_clock::now() > deadline) {
        return Status::DeadlineExceeded("'" + name + "' did not arrive complete at " + member + " in time");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  Result<std::unique_ptr<PayloadCopier>> CopyAsVerified(const std::string& member, const std::string& name,
                                                        bool in_memory, std::span<uint8_t> out) override {
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
    GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<ControlClient> client, MemberClient(member));
    v1::ListResponse list;
    GRIDCAST_RETURN_IF_ERROR(client->List(&list).WithContext(member));
    fs::path dir = in_memory ? list.memory_dir() : list.data_dir();
    if (dir.empty()) return Status::FailedPrecondition(member + " keeps nothing in memory");
    return std::unique_ptr<PayloadCopier>(new PayloadCopierImpl(std::move(client), std::move(dir), name, in_memory, out));
  }

  Status RemovePayload(const std::string& member, const std::string& name, bool in_memory) override {
    GRIDCAST_RETURN_IF_ERROR(CheckPayloadName(name));
    GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<ControlClient> client, MemberClient(member));
    return Remove(*client, name, in_memory);
  }

  Result<std::unique_ptr<Broadcast>> StartSendUrl(const std::string& url, const SendOptions& options,
                                                  const OriginOptions& origin) override {
    GRIDCAST_ASSIGN_OR_RETURN(v1::BroadcastRequest request, SendRequest("", options));
    request.clear_payload_path();
    v1::OriginSource* source = request.mutable_origin();
    source->set_url(url);
    for (const std::string& header : origin.headers) source->add_headers(header);
    source->set_ca_pem(origin.ca_pem);
    if (!origin.sha256.empty()) {
      Result<std::string> digest = FromHexOfSize(origin.sha256, 32);
      if (!digest.ok()) return digest.status().WithContext("OriginOptions::sha256");
      source->set_sha256(std::move(*digest));
    }
    source->set_size_limit(origin.size_limit);
    return std::unique_ptr<Broadcast>(StartBroadcast(std::move(request)));
  }

  Status CheckMember(const std::string& member) override {
    GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<ControlClient> client, MemberClient(member));
    v1::ListResponse list;
    return client->List(&list);
  }

  Result<std::string> StatusJson(const std::string& member) override {
    GRIDCAST_ASSIGN_OR_RETURN(const nlohmann::json document, StatusDocument(cluster_, member, options_.tls_ca));
    return document.dump();
  }

  Result<std::string> ListJson(const std::string& member, bool verify) override {
    GRIDCAST_ASSIGN_OR_RETURN(const nlohmann::json document, ListDocument(cluster_, member, options_.tls_ca, verify));
    return document.dump();
  }

  Result<std::string> LocalMember() override {
    const char* named = std::getenv("GRIDCAST_MEMBER");
    return gridcast::LocalMember(cluster_, named == nullptr ? "" : named, CurrentHost(), "GRIDCAST_MEMBER");
  }

 private:
  Result<v1::BroadcastRequest> SendRequest(const std::string& path, const SendOptions& options) const {
    v1::BroadcastRequest request;
    GRIDCAST_ASSIGN_OR_RETURN(const ChunkDigest digest, cluster_.DigestFor(options.digest));
    request.set_digest(ChunkDigestToProto(digest));
    std::error_code ec;
    request.set_payload_path(fs::absolute(path, ec).string());
    request.set_algorithm(options.algorithm);
    request.set_chunk_bytes(options.chunk_bytes);
    request.set_timeout_s(options.timeout_s);
    request.set_name(options.name);
    request.set_in_memory(options.in_memory);
    request.set_take_memory_lazily(options.take_memory_lazily);
    request.set_into_registered_memory(options.into_registered_memory);
    request.set_no_reuse(options.no_reuse);
    request.set_mode(options.mode ? PlanModeToProto(static_cast<PlanMode>(*options.mode)) : v1::PLAN_MODE_UNSPECIFIED);
    for (const std::string& member : options.members) request.add_members(member);
    return request;
  }
  std::unique_ptr<BroadcastImpl> StartBroadcast(v1::BroadcastRequest request) const {
    return std::unique_ptr<BroadcastImpl>(new BroadcastImpl(
        [client = source_client_, request = std::move(request)](const auto& on_progress) {
          return client->Broadcast(request, CallTimeout(request.timeout_s()), on_progress);
        },
        source_, source_client_));
  }

  Result<std::unique_ptr<ControlClient>> MemberClient(const std::string& member) const {
    const ClusterMember* entry = cluster_.Find(member);
    if (entry == nullptr) return Status::InvalidArgument("'" + member + "' is not in the cluster");
    return std::make_unique<ControlClient>(entry->control_address, cluster_.secret,
                                           ControlClientOptions{options_.tls_ca});
  }

  static Status Remove(ControlClient& client, const std::string& name, bool in_memory) {
    v1::RemoveRequest remove;
    remove.set_name(name);
    remove.set_in_memory(in_memory);
    Status removed = client.Remove(remove);
    return removed.code() == StatusCode::kNotFound ? Status::Ok() : removed;
  }

  ClusterConfig cluster_;
  ClientOptions options_;
  std::shared_ptr<SourceChoice> source_;
  std::shared_ptr<ControlClient> source_client_;
};

}  // namespace

Result<std::unique_ptr<Client>> Client::Open(const ClientOptions& options) {
  GRIDCAST_ASSIGN_OR_RETURN(ClusterConfig cluster, LoadClusterFile(options.cluster_file));
  GRIDCAST_ASSIGN_OR_RETURN(SourceChoice source, ChooseSource(cluster, options.source));
  ClientOptions resolved = options;
  resolved.tls_ca = cluster.TlsCa(options.tls_ca);
  return std::unique_ptr<Client>(new ClientImpl(std::move(cluster), std::move(source), std::move(resolved)));
}

// The public enums carry the values of their internal twins (collectives/plan.h, the proto).
static_assert(static_cast<int>(Mode::kPush) == static_cast<int>(PlanMode::kPush) &&
              static_cast<int>(Mode::kPull) == static_cast<int>(PlanMode::kPull) &&
              static_cast<int>(Mode::kHybrid) == static_cast<int>(PlanMode::kHybrid));
static_assert(static_cast<int>(MemberState::kUnknown) == v1::MEMBER_STATE_UNSPECIFIED &&
              static_cast<int>(MemberState::kPrepared) == v1::MEMBER_STATE_PREPARED &&
              static_cast<int>(MemberState::kRunning) == v1::MEMBER_STATE_RUNNING &&
              static_cast<int>(MemberState::kDone) == v1::MEMBER_STATE_DONE &&
              static_cast<int>(MemberState::kFailed) == v1::MEMBER_STATE_FAILED &&
              static_cast<int>(MemberState::kStopped) == v1::MEMBER_STATE_STOPPED &&
              static_cast<int>(MemberState::kUnreachable) == v1::MEMBER_STATE_UNREACHABLE &&
              static_cast<int>(MemberState::kResuming) == v1::MEMBER_STATE_RESUMING &&
              static_cast<int>(MemberState::kLost) == v1::MEMBER_STATE_LOST && v1::MemberState_MAX == 8);

Result<std::string> PlanJson(const PlanQuery& query) {
  GRIDCAST_ASSIGN_OR_RETURN(const PlanInputs in, LoadPlanInputs(query.topology_file, query.size_bytes,
                                                                query.chunk_bytes, query.source));
  GRIDCAST_ASSIGN_OR_RETURN(const std::unique_ptr<Planner> planner, MakePlanner(query.algorithm));
  GRIDCAST_ASSIGN_OR_RETURN(const Plan plan, MakePlanFromInputs(*planner, in));
  return PlanDocument(plan).dump();
}

Result<std::string> SimulateJson(const PlanQuery& query) {
  if (!(query.goodput >= 0.01 && query.goodput <= 1.0)) return Status::InvalidArgument("goodput: from 0.01 to 1");
  GRIDCAST_ASSIGN_OR_RETURN(const PlanInputs in, LoadPlanInputs(query.topology_file, query.size_bytes,
                                                                query.chunk_bytes, query.source));
  GRIDCAST_ASSIGN_OR_RETURN(const Simulation simulation, SimulatePlanners(in, query.algorithm, query.goodput));
  return SimulationDocument(simulation).dump();
}

Result<uint64_t> ParseSize(const std::string& text) { return ParseSizeBytes(text); }

const char* ModeName(Mode mode) { return PlanModeName(static_cast<PlanMode>(mode)); }

std::string MemberStateText(MemberState state, const std::string& error) {
  return MemberStateText(static_cast<v1::MemberState>(state), error);
}

}  // namespace gridcast
