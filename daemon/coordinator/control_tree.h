// ControlTree: how the control calls of one broadcast travel between daemons (docs/scale.md,
// "The control tree"), so that the source's calls do not grow with the number of members.
//
// Over the plan's member order (0 = the source) a k-ary tree: member i's control children are
// k*i+1 .. k*i+k, its parent (i-1)/k. Every member derives it from (N, k), so a parent knows
// its grandchildren without being told: that is how it steps around a child that stopped
// answering. With N - 1 <= k the tree is the star the source used before.
//
// Down: Prepare, Start, Cancel and Patch, which reach a member's Participant only through here: a plan
// prepared with a control fanout travels the tree, any other is the member's alone. Each member
// acts on itself and calls its children in parallel. Prepare gives each child a slice of the plan (proto/plan_slice.h): what the child's
// subtree deals with, so a leaf learns its own parents, children and peers only. Prepare's answer counts the members of the subtree that agreed; the first failure
// or disagreement below fails the call with the member named (each parent compares its
// children's echoes with its own view of the plan, as the source compares its own children's).
// Start starts the member itself, then its children's subtrees: a prepared member accepts its
// parents' connections, so data flows while Start travels down (each Start says how long ago
// the source started, which members' completion times count from); a child gone since its
// Prepare (its port refuses) is stepped around, its children started from here, and the
// progress rounds deal with it as with a member that failed later. Cancel steps around a
// child that does not answer by cancelling that child's children itself.
// Up: progress. A Status call with `subtree` is answered with a sum over the members below
// (counts, chunks, the slowest member, and by name only the members that need attention),
// gathered from the children in parallel, so its size does not grow with the members while
// they are healthy; with `detail` also one entry per member (once, for the final summary).
// A child that does not answer is counted "unreachable" and its own children are asked directly (its subtree is re-attached for as
// long as it is silent); a child that lost the plan (it restarted) is prepared again from the
// request this member kept, and started if the plan runs, and resumes from its verified chunks.
// Thread-safe: gRPC handler threads and the source's coordinator call in.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "cluster/control_client.h"
#include "include/gridcast/result.h"
#include "daemon/coordinator/call_threads.h"
#include "common/control_tree_shape.h"
#include "daemon/participant/participant.h"
#include "proto/control.pb.h"

namespace gridcast {

using ControlDeadline = std::chrono::steady_clock::time_point;

// How much a progress round brings up: sums only, or also one entry per member, and with
// those the pull members' observations of who sent them what (tomography's input, collected
// once at the end of a pull or hybrid broadcast, through the tree instead of one call per member).
enum class PollDetail { kSums, kEveryMember, kEveryMemberWithObservations };

// What a progress round found below one member.
struct SubtreeReport {
  v1::SubtreeProgress progress;
  std::vector<v1::MemberProgress> detail;  // one entry per member, when asked for
};

// Compares a member's echo of the plan with the caller's view, field by field; Aborted with
// the member and the field named. `agreement_digest` is PlanAgreementDigest of the plan.
Status CheckAgreement(const std::string& member, const v1::Plan& plan, const std::string& agreement_digest,
                      const v1::PrepareResponse& echo);

class ControlTree {
 public:
  ControlTree(Participant& participant, const ClusterConfig& cluster, ControlClientOptions client_options);
  ~ControlTree();

  // A member's side of a Prepare: with a control fanout, prepares this member, then its
  // subtree, and answers this member's echo with subtree_agreed set; without one, prepares this
  // member alone.
  Result<v1::PrepareResponse> Prepare(const v1::PrepareRequest& request, ControlDeadline deadline);

  // The source's side: `request` is the plan as the members get it, with member_index 0 and a
  // control fanout. The source must be prepared already (Participant::PrepareSource). Prepares
  // every other member through the source's children; `agreement_digest` is
  // PlanAgreementDigest of the plan, and `traffic` (which must outlive the plan here) counts
  // the source's calls. Returns how many members agreed (all of them, or an error).
  Result<uint32_t> PrepareFromSource(const v1::PrepareRequest& request, const std::string& agreement_digest,
                                     ControlTraffic* traffic, ControlDeadline deadline);

  // Starts this member, then the subtrees below it; `source_started` is when the source started
  // (the source's own call: now). A plan prepared without a fanout starts this member alone.
  // NotFound for a plan this member does not hold.
  Status Start(const PlanId& id, std::chrono::steady_clock::time_point source_started, ControlDeadline deadline);

  // Cancels the subtrees below, stops this member's execution (not found is fine) and forgets
  // the plan. A plan prepared without a fanout stops this member alone. NotFound for a plan this
  // member does not hold.
  Status Cancel(const PlanId& id, const std::string& reason, ControlDeadline deadline);
  // Why one of the last plans this member carried was cancelled here (what its Cancel said);
  // nullopt for a plan not cancelled here.
  std::optional<std::string> CancelReason(const PlanId& id) const;

  // A running plan's patches (every one so far, versions 1..n, as CheckPatchRequest checked):
  // applied to the slice this member keeps (so a child prepared again gets the patched plan),
  // then to this member's execution, then passed down to the subtrees below in parallel,
  // stepping around a child that does not answer as Cancel does. Returns how many members of
  // this subtree applied them. A progress round re-sends them to a child that reports an older
  // plan_version. NotFound for a plan this tree does not carry; InvalidArgument for a patch
  // that does not fit the plan (PatchFromProto).
  Result<uint32_t> Patch(const v1::PatchRequest& request, ControlDeadline deadline);

  // The members below this one, summed up (every one of them, whatever answered), and with
  // `detail` listed. A member counts as done once it is done with the payload's chunk-list
  // digest; where the plan did not say it (a source that hashes as it sends), `chunk_list_digest`
  // is the source's, passed down with each round once it knows it (empty: not yet). NotFound
  // for a plan this tree does not carry.
  Result<SubtreeReport> PollBelow(const PlanId& id, PollDetail detail, ControlDeadline deadline,
                                  const std::string& chunk_list_digest = "");
  // PollBelow() with this member's own execution counted and listed first: the source's.
  Result<SubtreeReport> PollWhole(const PlanId& id, PollDetail detail, ControlDeadline deadline,
                                  const std::string& chunk_list_digest = "");

 private:
  struct PlanState;

  std::shared_ptr<PlanState> Find(const PlanId& id) const;
  // Registers the plan and prepares the children of request.member_index(); their echoes are
  // compared with `agreement_digest`, this member's own view of the plan's payload.
  Result<uint32_t> PrepareChildren(const v1::PrepareRequest& request, const std::string& agreement_digest,
                                   ControlTraffic* traffic, ControlDeadline deadline);
  // The chunk-list digest a member must be done with: the plan's, else the source's once it
  // came (`learned`, from a round of PollBelow).
  static std::string ListDigestOf(PlanState& state, const std::string& learned);
  ControlClient& Client(PlanState& state, int member);
  // The members of the child's subtree that agreed (all of them, or an error).
  Result<uint32_t> PrepareSubtree(PlanState& state, int child, ControlDeadline deadline);
  Status StartSubtree(PlanState& state, int child, ControlDeadline deadline);
  void CancelSubtree(PlanState& state, int child, const std::string& reason, ControlDeadline deadline);
  // Every patch so far to the child's subtree; how many of its members applied them.
  uint32_t PatchSubtree(PlanState& state, int child, ControlDeadline deadline);
  // `list_digest`: as ListDigestOf gave it for this round.
  void PollSubtree(PlanState& state, const std::string& list_digest, int child, PollDetail detail,
                   ControlDeadline deadline, SubtreeReport* out);

  Participant& participant_;
  const ClusterConfig& cluster_;
  const ControlClientOptions client_options_;
  mutable std::mutex mutex_;
  std::map<PlanId, std::shared_ptr<PlanState>> plans_;  // guarded by mutex_
  // The reasons of the last kCancelReasonsKept cancels, oldest first.
  static constexpr size_t kCancelReasonsKept = 16;
  std::deque<std::pair<PlanId, std::string>> cancel_reasons_;  // guarded by mutex_
  CallThreads calls_;  // the calls to children, at once
};

}  // namespace gridcast
