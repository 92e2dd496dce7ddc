// Participant: the member side of gridcastd — taking part in the plans sources send.
//
// Prepare checks a Plan received from a source (everything in it is untrusted input), opens
// the payload store (space reserved, verified chunks resumed) and registers a PlanExecution;
// Start and Stop act on those. Pull and hybrid plans also join the payload's BitTorrent swarm
// through the daemon's TorrentSession. What runs is in plans() (the data plane finds executions
// there); what is held, in holdings(). Thread-safe: gRPC handler threads call in; executions
// run on the io thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "include/gridcast/result.h"
#include "daemon/executor/plan_execution.h"
#include "common/member_signature.h"
#include "daemon/participant/holdings.h"
#include "daemon/participant/payload_directories.h"
#include "daemon/participant/plan_run.h"
#include "daemon/participant/running_plans.h"
#include "daemon/pull/torrent_session.h"
#include "daemon/store/allgather_bundle.h"
#include "daemon/store/rank_memory_registry.h"
#include "common/signing.h"
#include "daemon/store/warm_memory.h"
#include "proto/control.pb.h"

namespace gridcast {

struct ParticipantOptions {
  std::string name;
  // The data and memory directories (the memory one a tmpfs directory, cleared by the daemon)
  // and the --send-root directories a payload or an allgather part may be read from.
  PayloadDirectories directories;
  ExecutionOptions execution;
  TorrentSession* torrents = nullptr;  // for pull and hybrid plans; outlives the Participant
  unsigned workers = 0;                // threads hashing and writing chunks; 0 = one per core
  // Memory local processes lend for in-memory payloads (PrepareRequest.into_registered_memory);
  // null: every such payload goes to the memory directory.
  std::shared_ptr<RankMemoryRegistry> rank_memory;
  // Keeps the pages of removed in-memory payloads for the next ones; null: none kept.
  std::shared_ptr<WarmMemory> warm_memory;
  // In a TLS cluster: this member's TLS identity, which signs the keys it makes (an allgather
  // part's), and the cluster's CA with the hosts of the cluster file, which check the keys the
  // plans bring (common/member_signature.h). Null: no TLS, nothing signed or checked.
  std::shared_ptr<const MemberSigner> signer;
  std::shared_ptr<const MemberVerifier> verifier;
  std::function<Result<std::string>(const std::string& member)> data_host_of;
};

class Participant {
 public:
  Participant(boost::asio::io_context& io, ParticipantOptions options);

  const std::string& name() const { return options_.name; }
  const PayloadDirectories& directories() const { return options_.directories; }
  // Where local processes lend memory; null when this daemon takes none.
  RankMemoryRegistry* rank_memory() const { return options_.rank_memory.get(); }
  const RunningPlans& plans() const { return plans_; }
  Holdings& holdings() { return holdings_; }
  const Holdings& holdings() const { return holdings_; }

  // Member side of agreement: validate, open the store, register. Idempotent for a plan id
  // already prepared here (a re-prepare after a restart resumes from disk).
  Result<v1::PrepareResponse> Prepare(const v1::PrepareRequest& request);

  // Source side: registers the source's own run of `plan`, the plan it made (validated here),
  // under `id`, over its opened payload `store`; `sent` is the plan as the members get it (their
  // addresses, the payload's name). The handle is the coordinator's view of the run.
  // `digest_key` signs the batches of chunk digests when `sent` streams them
  // (Payload.digest_key, its public half); `control_fanout` as for Register. InvalidArgument for an invalid plan,
  // FailedPrecondition for a store whose payload is not the one planned.
  Result<PlanRun> PrepareSource(const PlanId& id, Plan plan, const v1::Plan& sent, uint32_t control_fanout,
                                std::unique_ptr<PayloadStore> store, std::optional<SigningKey> digest_key = {});

  // `source_started`: when the broadcast started at the source, on this daemon's clock.
  Status Start(const PlanId& id, std::chrono::steady_clock::time_point source_started);
  // Applies a running plan's patches here (PlanExecution::ApplyPatches, on the io thread).
  // NotFound for a plan this member does not hold.
  Status Patch(const PlanId& id, const std::vector<PlanPatch>& patches, const std::vector<KnownMember>& members);
  // Stops forwarding and forgets the plan (what was verified stays on disk).
  Status Stop(const PlanId& id, const std::string& reason);

 private:
  // plan is proto parsed and validated (parsed once: Prepare is on the control plane's
  // critical path, once per member), or the source's own. `after_finalize`:
  // PlanExecution::SetAfterFinalize. A plan streaming signed batches of digests
  // (Payload.digest_key) gets its DigestStream: the source's signs with `digest_key`.
  // `control_fanout`: the control tree's (PrepareRequest.control_fanout; 0: the default), whose
  // shape a swarm plan's digest tree takes.
  Result<std::shared_ptr<PlanExecution>> Register(const PlanId& id, const v1::Plan& proto, Plan plan, int self,
                                                  uint32_t control_fanout, std::unique_ptr<PayloadStore> store,
                                                  bool in_memory,
                                                  std::function<Status()> after_finalize = {},
                                                  std::optional<SigningKey> digest_key = {});
  // Opens the store a member receives `request`'s payload into, its own allgather part seeded.
  Result<std::unique_ptr<PayloadStore>> OpenMemberStore(const v1::PrepareRequest& request, PayloadIdentity identity,
                                                        const std::vector<BundlePart>& parts) const;
  // What the member does once every chunk is verified: unpack a directory, split an
  // allgather's bundle into its parts; nothing otherwise.
  std::function<Status()> AfterFinalize(const v1::PrepareRequest& request, const PlanId& id,
                                        const std::vector<BundlePart>& parts) const;
  // With a verifier: the plan's digest key (a member's, not the source's own) and each part's
  // key, signed by the source or the part's holder with its TLS identity.
  Status CheckKeySignatures(const PlanId& id, const v1::Plan& proto) const;
  // Writes this member's own allgather part into its copy of the bundle, verified, signing its
  // batches of digests with the key it described the part with (Holdings::PartKey).
  Status SeedOwnPart(PayloadStore& store, const v1::Payload& payload, const v1::Part& sent, const BundlePart& part,
                     const DigestBatches& rule, const PlanId& id) const;
  // The memory local processes lent for the payload of `request`, bound to it, when it asks
  // for that and is a whole in-memory payload pushed (not an allgather's bundle); else null.
  std::shared_ptr<RankMemory> LentMemoryFor(const v1::PrepareRequest& request, bool whole_payload) const;

  boost::asio::io_context& io_;
  const ParticipantOptions options_;
  // Work that would stall the io thread (hashing and writing chunks, finishing a payload,
  // closing removed payloads); joined on destruction.
  boost::asio::thread_pool workers_;
  RunningPlans plans_;
  Holdings holdings_;
};

}  // namespace gridcast
