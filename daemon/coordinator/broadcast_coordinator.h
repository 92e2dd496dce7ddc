// BroadcastCoordinator: the source side of one broadcast (push, or pull over BitTorrent).
//
// Plans (collectives/), hashes the payload, and makes every member agree before one data byte
// moves: each member's Prepare echoes payload size, chunk-hash digest, plan id and member-list
// digest, and any difference aborts with the member and the field named. Then it starts all
// members, follows their progress, compares every member's final digest (the digest of its
// stored chunks' SHA-256 list) with the source's, and releases the plan everywhere. Prepare,
// Start, progress and Cancel travel the ControlTree: the source calls only its control
// children, whatever the number of members (a member that restarted is prepared again by its
// control parent and resumes from its verified chunks). A pull plan's last progress message
// carries every member's per-peer receipts.
// Blocking; runs on the calling (gRPC handler) thread.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "cluster/control_client.h"
#include "common/member_signature.h"
#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "common/signing.h"
#include "include/gridcast/status.h"
#include "daemon/coordinator/control_tree.h"
#include "daemon/coordinator/joined_broadcasts.h"
#include "daemon/coordinator/origin_fetch.h"
#include "daemon/coordinator/source_payload.h"
#include "daemon/participant/participant.h"
#include "proto/control.pb.h"

namespace gridcast {

struct CoordinatorOptions {
  ControlClientOptions client;
  // How often the source asks for progress. Completion times come from the members' own clocks,
  // not from when the source heard of them, so this only bounds how soon a change is noticed.
  std::chrono::milliseconds poll_interval = std::chrono::milliseconds(200);
  // Children per member in the control tree (docs/scale.md); with fewer members than this
  // plus one, the source calls every member itself.
  uint32_t control_fanout = 8;
  // One progress round through the control tree, members that do not answer included.
  std::chrono::milliseconds poll_timeout = std::chrono::seconds(2);
  // A member unreachable this long is lost and the rest finish without it (an allgather, whose
  // members each hold a part, waits for it to come back and resume).
  std::chrono::milliseconds member_lost_after = std::chrono::seconds(5);
  // No new verified chunk at any member for this long fails the broadcast, naming who is not
  // done, well before its deadline (BroadcastRequest.stall_timeout_s overrides it).
  std::chrono::milliseconds stall_after = std::chrono::seconds(60);
  // The daemons run TLS on the data plane: payload bytes must not move over BitTorrent, which
  // is not encrypted (pull and hybrid are refused, except for tomography's random probes).
  bool data_tls = false;
  // With TLS: this member's identity, which signs the digest key of each broadcast it sources
  // (Payload.key_signature), so that no control relay can put another in the plan.
  std::shared_ptr<const MemberSigner> signer;
};

// The network model a broadcast over `members` plans on: `topology_yaml` (a request's, at
// most 1 MiB; every member must be one of its nodes), else the cluster file's topology, else
// one switch with equal NICs over exactly the members.
Result<NetworkModel> LoadBroadcastModel(const ClusterConfig& cluster, const std::string& topology_yaml,
                                        const std::vector<std::string>& members);
// The node of that model member `name` is; FailedPrecondition when it has none.
Result<int> NodeOfMember(const NetworkModel& net, const std::string& name);

class BroadcastCoordinator {
 public:
  BroadcastCoordinator(Participant& participant, ControlTree& tree, const ClusterConfig& cluster,
                       CoordinatorOptions options);

  // `report` receives progress; the last call has finished = true. A request identical to a
  // broadcast running from here (the same unchanged file, name, members and options) joins
  // it: it is reported that broadcast's progress and outcome.
  Status Run(const v1::BroadcastRequest& request,
             const std::function<void(const v1::BroadcastProgress&)>& report);

  // The plan Run() would make for the request and a payload of its size, made and checked
  // but not run (PlanBroadcast: the library plans a buffer before hashing it).
  Result<v1::PlanBroadcastResponse> PlanOnly(const v1::PlanBroadcastRequest& request) const;

  // A plan to run from here: as it was made, and as the members get it.
  struct OutgoingPlan {
    PlanId id;
    Plan plan;
    v1::Plan proto;  // the plan, its id and its payload, as the wire carries them
    // What the source signs its batches of chunk digests with (proto's Payload.digest_key is
    // its public half); none when the plan streams no batches.
    std::optional<SigningKey> digest_key;
  };
  // `plan` with a fresh id and the payload `name` with `identity` (its digest, and its chunk
  // hashes and whole digest where it knows them): what Execute() takes, for broadcasts and
  // allgathers alike.
  static OutgoingPlan Outgoing(Plan plan, const std::string& name, const PayloadIdentity& identity);
  // The payload's digests travel in batches signed with `key`'s private half, not in the plan
  // (docs/streamed-digests.md): `payload` keeps only the digest of their list, where it had one.
  static void StreamDigests(const PublicKey& key, v1::Payload* payload);

  // A plan ready to run from here, and how.
  // What a plan was made on: the network model and each member's node in it (in plan order).
  struct PlanModel {
    NetworkModel net;
    std::vector<int> member_nodes;
  };

  struct ExecuteInputs {
    std::vector<std::string> members;  // plan order, this daemon first
    double timeout_s = 0;              // 0: derived from the payload size
    double stall_timeout_s = 0;        // 0: CoordinatorOptions::stall_after
    bool in_memory = false;
    bool take_memory_lazily = false;
    bool into_registered_memory = false;
    // The whole payload, opened here. Null when this daemon receives like the others (an
    // allgather: it prepares from the plan as a member does, and its progress counts).
    std::unique_ptr<PayloadStore> source_store;
    std::chrono::steady_clock::time_point received;  // when the request arrived (first_byte_s)
    // What the plan was made on, for repairing it around failures (plan_repairer.h); none: a
    // failure is not repaired (an allgather, whose lanes start at the part holders).
    std::optional<PlanModel> repair;
    // The fetch that fills the source's payload from an origin, if it comes from one: its
    // failure fails the broadcast, and the progress reports it.
    OriginFetch* origin = nullptr;
  };
  // Agreement, start and follow of `outgoing` (from Outgoing(), with what the caller adds to its
  // proto), as Run() does after planning; Run() and the allgather use it.
  Status Execute(OutgoingPlan outgoing, ExecuteInputs inputs,
                 const std::function<void(const v1::BroadcastProgress&)>& report);

 private:
  // The last progress's moved_bytes and reused_bytes, from its members (every one listed) and
  // what the source sent (already among them when `source_listed`).
  static void SumTraffic(uint64_t source_sent_bytes, bool source_listed, v1::BroadcastProgress* progress);
  // Gives each member of `proto` its addresses from the cluster file.
  Status AddressMembers(v1::Plan* proto) const;
  // Execute's agreement on `request` (the plan `id`, as made: `plan`): every member prepared it,
  // this daemon as the source over `source_store` (or, when that is null, as a member receiving
  // too), signing batches of digests with `digest_key` if any. The handle on this daemon's run
  // of the plan.
  Result<PlanRun> Agree(const v1::PrepareRequest& request, const PlanId& id, Plan plan,
                        std::unique_ptr<PayloadStore> source_store, std::optional<SigningKey> digest_key,
                        const std::string& agreement_digest, ControlTraffic* traffic);
  Result<std::vector<std::string>> ChooseMembers(const v1::BroadcastRequest& request) const;
  struct MadePlan {
    Plan plan;
    PlanModel model;
  };
  Result<MadePlan> MakeBroadcastPlan(const v1::BroadcastRequest& request, const std::vector<std::string>& members,
                                     uint64_t size) const;
  // Run() once the payload and members are known: plan, agree, start, follow.
  // `origin`: the fetch filling the payload's file, when it comes from an origin.
  Status RunResolved(const v1::BroadcastRequest& request, const ResolvedPayload& payload,
                     const std::vector<std::string>& members, std::chrono::steady_clock::time_point received,
                     const std::function<void(const v1::BroadcastProgress&)>& report, OriginFetch* origin = nullptr);
  // Run() of a payload at an HTTP(S) origin (BroadcastRequest.origin): fetched here while it is
  // sent, and kept here as this daemon's copy once every member holds it.
  Status RunFromOrigin(const v1::BroadcastRequest& request, std::chrono::steady_clock::time_point received,
                       const std::function<void(const v1::BroadcastProgress&)>& report);

  Participant& participant_;
  ControlTree& tree_;
  const ClusterConfig& cluster_;
  const CoordinatorOptions options_;
  JoinedBroadcasts joined_;
};

}  // namespace gridcast
