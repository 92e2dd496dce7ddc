// The result of one `gridcast send`: what the user sees at the end and what --json prints.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "cluster/local_member.h"
#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "common/chunk_digest.h"
#include "include/gridcast/result.h"
#include "include/gridcast/gridcast.hpp"
#include "proto/control.pb.h"
#include "tomography/observations.h"

namespace gridcast {

// The daemon a send starts at, and the network model the bound is computed on (the cluster's
// topology when it names one).
struct SourceChoice {
  const ClusterMember* member = nullptr;
  std::optional<NetworkModel> model;
};

// `requested` names a member, or is empty: then the one member on `here` (the host the client
// runs on: its payload paths are that member's), else the topology's source, else the first
// member.
Result<SourceChoice> ChooseSource(const ClusterConfig& cluster, const std::string& requested,
                                  const ThisHost& here = CurrentHost());

struct MemberResult {
  std::string name;
  v1::MemberState state = v1::MEMBER_STATE_UNSPECIFIED;
  std::string error;  // why, when it failed or was stopped
  bool digest_ok = false;
  double finished_s = 0;
};

// A member the broadcast was repaired around (BroadcastProgress.repairs).
struct RepairResult {
  std::string member;
  double at_s = 0;     // from the broadcast's start
  std::string reason;  // "gone", "silent" or "slow"
  uint32_t children_moved = 0;
  std::vector<uint32_t> lanes;
  double measured_bps = 0;  // slow: what its child saw, and what it was measured against
  double expected_bps = 0;
};

struct SendSummary {
  std::string plan_id;            // hex
  std::string algorithm;
  std::string rationale;
  std::string source;
  uint64_t size_bytes = 0;
  uint64_t chunk_bytes = 0;
  uint32_t lanes = 0;
  PlanMode mode = PlanMode::kPush;
  std::optional<double> source_copies;  // pull/hybrid: payloads the source uploaded
  uint64_t moved_bytes = 0;   // payload bytes that crossed the network, all edges summed
  uint64_t reused_bytes = 0;  // taken by members from earlier copies they held, summed
  // From the request reaching the source until the last member held a verified copy: what the
  // user waits for (planning, hashing, Prepare included).
  double completion_s = 0;
  // From the broadcast's Start (members' finished_s count from it) to the last verified copy.
  double transfer_s = 0;
  std::optional<double> bound_s;  // physical lower bound, when the topology is known
  std::string sha256;             // the source's, hex
  ChunkDigest digest = ChunkDigest::kSha256;
  std::vector<MemberResult> members;
  std::vector<RepairResult> repairs;
  bool verified = false;          // every member's final digest (its stored chunks' hashes) equals the source's
  std::string error;
  // Set when the plan used the topology `gridcast tomography` inferred (the cluster file names
  // none): its age when the send began, and a line saying where it came from.
  std::optional<double> inferred_topology_age_s;
  std::string topology_note;
  // What the source's control plane cost (BroadcastProgress.control); absent from daemons
  // older than the counters.
  struct Control {
    uint64_t rpcs_at_source = 0;
    uint64_t bytes_at_source = 0;
    std::optional<double> first_byte_s;  // from the request to the first payload byte sent
    std::optional<double> started_s;     // from the request to the broadcast's Start
  };
  std::optional<Control> control;
  // An allgather's parts (BroadcastProgress.parts); the bound is then AllgatherBoundSeconds.
  std::vector<BroadcastResult::Part> parts;
  // A payload the source fetched from an HTTP(S) origin (BroadcastProgress.origin).
  struct Origin {
    std::string url;  // scheme, host, port and path: no query, no user information
    uint64_t bytes = 0;
    uint32_t attempts = 0;
    uint32_t resumed = 0;
    uint32_t restarted = 0;
    std::optional<double> fetched_s;  // from the request to the last byte in at the source
  };
  std::optional<Origin> origin;
};

SendSummary Summarize(const v1::BroadcastProgress& last, const SourceChoice& source,
                      const Status& status);
nlohmann::json SummaryJson(const SendSummary& summary);
void PrintSummary(const SendSummary& summary);

// The observations of a pull or hybrid broadcast (tomography's input): per receiver, the bytes
// from each sender and when. Members' times count from the broadcast's start.
Observations ObservationsFromProgress(const v1::BroadcastProgress& last, const std::string& source);

}  // namespace gridcast
