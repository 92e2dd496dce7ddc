// Participant: the member side of gridcastd — the plans this daemon takes part in.
//
// Prepare checks a Plan received from a source (everything in it is untrusted input), opens
// the payload store (space reserved, verified chunks resumed) and registers a PlanExecution;
// Start, Stop, Snapshot and List act on those. Pull and hybrid plans also join the payload's
// BitTorrent swarm through the daemon's TorrentSession. The data plane finds executions through
// FindPlan(). Thread-safe: gRPC handler threads call in; executions run on the io thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "include/gridcast/result.h"
#include "daemon/executor/plan_execution.h"
#include "daemon/local/rank_memory_registry.h"
#include "daemon/store/allgather_bundle.h"
#include "daemon/store/retention.h"
#include "daemon/pull/torrent_session.h"
#include "proto/control.pb.h"

namespace gridcast {

struct ParticipantOptions {
  std::string name;
  std::string data_dir;
  std::string memory_dir;  // in-memory payloads (a tmpfs directory); cleared by the daemon
  ExecutionOptions execution;
  TorrentSession* torrents = nullptr;  // for pull and hybrid plans; outlives the Participant
  unsigned workers = 0;                // threads hashing and writing chunks; 0 = one per core
  // Directories a payload or an allgather part may be read from, besides the data and memory
  // directories (gridcastd --send-root).
  std::vector<std::string> send_roots;
  // Memory local processes lend for in-memory payloads (PrepareRequest.into_registered_memory);
  // null: every such payload goes to memory_dir.
  std::shared_ptr<RankMemoryRegistry> rank_memory;
};

class Participant {
 public:
  Participant(boost::asio::io_context& io, ParticipantOptions options);

  const std::string& name() const { return options_.name; }
  const std::string& data_dir() const { return options_.data_dir; }
  const std::string& memory_dir() const { return options_.memory_dir; }
  // Where local processes lend memory; null when this daemon takes none.
  RankMemoryRegistry* rank_memory() const { return options_.rank_memory.get(); }

  // Member side of agreement: validate, open the store, register. Idempotent for a plan id
  // already prepared here (a re-prepare after a restart resumes from disk).
  Result<v1::PrepareResponse> Prepare(const v1::PrepareRequest& request);

  // An allgather part this daemon holds (DescribePartRequest): its size, and with a chunk
  // size its padded chunk hashes (allgather_bundle.h HashPaddedChunks).
  Result<v1::DescribePartResponse> DescribePart(const v1::DescribePartRequest& request) const;

  // Source side: register the source's own execution over an already opened payload.
  Status PrepareSource(const v1::Plan& plan, std::unique_ptr<PayloadStore> store);

  // `source_started`: when the broadcast started at the source, on this daemon's clock.
  Status Start(const PlanId& id, std::chrono::steady_clock::time_point source_started);
  // Stops forwarding and forgets the plan (what was verified stays on disk).
  Status Stop(const PlanId& id, const std::string& reason);

  std::shared_ptr<PlanExecution> FindPlan(const PlanId& id) const;
  std::vector<std::shared_ptr<PlanExecution>> Plans() const;
  // The plans with the names of their payloads (for the metrics).
  struct NamedPlan {
    std::shared_ptr<PlanExecution> execution;
    std::string payload;
    bool in_memory = false;
  };
  std::vector<NamedPlan> NamedPlans() const;

  // Every payload in the data and memory directories; with `verify`, each complete one
  // re-hashed against its recorded chunk list (PayloadStore::Scrub).
  v1::ListResponse List(bool verify) const;

  // Deletes a payload (and its recorded chunk list): a file, a directory with all below it, or
  // the partial copy an interrupted broadcast left (and its resume bitmap). FailedPrecondition
  // while a broadcast of it (or of anything below it) runs here; NotFound when there is none.
  Status Remove(const std::string& name, bool in_memory);

  // Removes what the policies let go (store/retention.h) from the data and the memory
  // directory, logging each; what cannot go now (in use) stays for a later sweep.
  void SweepRetention(const RetentionPolicy& data, const RetentionPolicy& memory);

  // Which chunks of `name` are verified here: from the plan receiving it, else all of a
  // complete copy. NotFound when there is neither.
  Result<v1::ChunkMapResponse> ChunkMap(const std::string& name, bool in_memory) const;

 private:
  struct HeldName {
    std::string name;
    bool in_memory = false;
    auto operator<=>(const HeldName&) const = default;
  };

  // Holds a payload name for one plan from before its store opens until Register() records
  // it (or the Prepare fails): two plans never write one file.
  class NameClaim {
   public:
    NameClaim(Participant& owner, HeldName name) : owner_(&owner), name_(std::move(name)) {}
    NameClaim(NameClaim&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), name_(std::move(other.name_)) {}
    NameClaim(const NameClaim&) = delete;
    NameClaim& operator=(const NameClaim&) = delete;
    NameClaim& operator=(NameClaim&&) = delete;
    ~NameClaim();

   private:
    Participant* owner_;
    HeldName name_;
  };
  // FailedPrecondition, naming the other broadcast, while a plan other than `id` that is not
  // done holds `name` here or is being prepared with it, unless that plan comes from the same
  // `source`: a source runs one broadcast of a name at a time, so its older plan was given up
  // (a cancel that never arrived here) and is stopped.
  Result<NameClaim> ClaimName(const PlanId& id, const HeldName& name, const std::string& source);

  // plan is proto parsed and validated (parsed once: Prepare is on the
  // control plane's critical path, once per member). `after_finalize`: PlanExecution::SetAfterFinalize.
  Result<std::shared_ptr<PlanExecution>> Register(const v1::Plan& proto, Plan plan, int self,
                                                  std::unique_ptr<PayloadStore> store, bool in_memory,
                                                  std::function<Status()> after_finalize = {});
  const std::string& DirectoryOf(bool in_memory) const {
    return in_memory ? options_.memory_dir : options_.data_dir;
  }
  // Writes this member's own allgather part into its copy of the bundle, verified.
  Status SeedOwnPart(PayloadStore& store, const BundlePart& part) const;
  // The memory local processes lent for the payload of `request`, bound to it, when it asks
  // for that and is a whole in-memory payload pushed (not an allgather's bundle); else null.
  std::shared_ptr<RankMemory> LentMemoryFor(const v1::PrepareRequest& request, bool whole_payload) const;
  void ListDirectory(bool in_memory, bool verify,
                     const std::map<HeldName, std::shared_ptr<PlanExecution>>& running,
                     v1::ListResponse* response) const;

  boost::asio::io_context& io_;
  const ParticipantOptions options_;
  // Work that would stall the io thread (hashing and writing chunks, finishing a payload);
  // joined on destruction.
  boost::asio::thread_pool workers_;
  mutable std::mutex mutex_;
  std::map<PlanId, std::shared_ptr<PlanExecution>> plans_;  // guarded by mutex_
  std::map<PlanId, HeldName> names_;                         // guarded by mutex_
  std::map<HeldName, PlanId> claimed_;                       // being prepared; guarded by mutex_
};

// One execution's state as a Status answer gives it; with `observations`, a pull or hybrid
// member's receipts per peer.
void PlanStatusOf(const PlanExecution& plan, bool observations, v1::PlanStatus* out);

// Digest of the member list as the plan (or slice) gives it, indices with names: with
// ChunkListDigest of the chunk hashes, what Prepare echoes so the caller can compare the
// member's view field by field.
Digest MembersDigest(const v1::Plan& plan);

// The ChunkListDigest that Prepare will echo for `plan`, found without preparing anything.
Result<Digest> PlanChunkListDigest(const v1::Plan& plan);

}  // namespace gridcast
