#include "daemon/coordinator/plan_repairer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "collectives/simulator/simulator.h"
#include "common/hex.h"
#include "proto/plan_codec.h"

namespace gridcast {

PlanRepairer::PlanRepairer(ControlTree& tree, const PlanId& id, Plan plan, std::vector<v1::Member> entries,
                           NetworkModel net, std::vector<int> member_nodes, Clock::time_point started,
                           std::chrono::milliseconds patch_budget)
    : tree_(tree),
      id_(id),
      plan_(std::move(plan)),
      entries_(std::move(entries)),
      net_(std::move(net)),
      member_nodes_(std::move(member_nodes)),
      started_(started),
      patch_budget_(patch_budget) {}

int PlanRepairer::MemberIndex(const std::string& name) const {
  const auto it = std::find(plan_.members.begin(), plan_.members.end(), name);
  return it == plan_.members.end() ? -1 : static_cast<int>(it - plan_.members.begin());
}

void PlanRepairer::OnRound(const std::vector<v1::MemberProgress>& attention, const std::set<std::string>& lost,
                           const std::string& slowest, Clock::time_point now) {
  if (given_up_) return;
  const auto failed = [&](int member) {
    return std::any_of(failures_.begin(), failures_.end(), [&](const Failure& f) { return f.member == member; });
  };
  std::map<int, Failure> found;  // new failures, by member: gone or silent before slow
  const auto find = [&](const Failure& failure) {
    auto [it, added] = found.try_emplace(failure.member, failure);
    if (!added && it->second.reason == RepairReason::kSlow && failure.reason != RepairReason::kSlow) it->second = failure;
  };
  std::set<std::pair<int, int>> troubled;  // (member, lane): the member reports that lane in trouble
  for (const v1::MemberProgress& reporter : attention) {
    for (const v1::LaneTrouble& trouble : reporter.lane_trouble()) {
      troubled.emplace(MemberIndex(reporter.member()), static_cast<int>(trouble.lane()));
    }
  }
  // Slow reports, by (parent, lane): who reported it, and the rates of the last report.
  std::map<std::pair<int, int>, std::pair<std::set<int>, Failure>> slow;
  for (const v1::MemberProgress& reporter : attention) {
    // A member's report on its parent counts only while the member itself is alive and running.
    const int child = MemberIndex(reporter.member());
    if (reporter.state() != v1::MEMBER_STATE_RUNNING || failed(child)) continue;
    for (const v1::LaneTrouble& trouble : reporter.lane_trouble()) {
      const int parent = MemberIndex(trouble.parent());
      Result<RepairReason> reason = RepairReasonFromProto(trouble.reason());
      if (parent <= 0 || !reason.ok() || failed(parent)) continue;  // the source's own failure fails the broadcast
      // The member behind every other is the likeliest straggler: its own link, not its parent,
      // explains a lane it sees silent or slow (TCP backs off for seconds on a link shaped to a
      // tenth). Only a parent's connection gone counts from it.
      if (reporter.member() == slowest && *reason != RepairReason::kGone) continue;
      if (*reason != RepairReason::kSlow) {
        find(Failure{parent, *reason});
        continue;
      }
      const int lane = static_cast<int>(trouble.lane());
      if (lane < 0 || lane >= static_cast<int>(plan_.lanes.size())) continue;
      auto& [reporters, failure] = slow[{parent, lane}];
      reporters.insert(child);
      failure = Failure{parent, RepairReason::kSlow, trouble.measured_bps(), trouble.expected_bps()};
    }
  }
  // A parent is slow in a lane by its own fault only when it is behind every other member and
  // nothing above it is slow: not while it reports that lane in trouble itself, nor while it
  // catches up after its own move. And one child's download shared unevenly between its lanes
  // (TCP favours the shorter round trip) can make one lane look slow to it alone: where the
  // parent has two children or more in the lane, two must agree.
  for (const auto& [where, report] : slow) {
    const auto& [parent, lane] = where;
    if (plan_.members[parent] != slowest || troubled.count(where) || CatchingUp(parent, lane, now)) continue;
    size_t children = 0;
    for (const Fanout& fanout : plan_.lanes[lane].fanouts) {
      if (fanout.parent != parent) continue;
      children += static_cast<size_t>(std::count_if(fanout.children.begin(), fanout.children.end(),
                                                    [&](int c) { return !failed(c); }));
    }
    if (report.first.size() >= std::min<size_t>(2, children)) find(report.second);
  }
  for (const std::string& name : lost) {
    const int member = MemberIndex(name);
    if (member > 0 && !failed(member)) find(Failure{member, RepairReason::kGone});
  }
  if (found.empty()) return;
  std::vector<Failure> failures;
  for (const auto& [member, failure] : found) failures.push_back(failure);
  Repair(failures, now);
}

bool PlanRepairer::CatchingUp(int member, int lane, Clock::time_point now) const {
  // Bounded by the members: a lane's parents form a tree.
  for (size_t hops = 0; member >= 0 && hops < plan_.members.size(); ++hops) {
    const auto moved = moved_at_.find({member, lane});
    if (moved != moved_at_.end() && now - moved->second < kCatchingUp) return true;
    member = plan_.lanes[lane].ParentOf(member);
  }
  return false;
}

void PlanRepairer::Repair(const std::vector<Failure>& failures, Clock::time_point now) {
  if (predicted_s_ <= 0) {
    const SimOptions options = DaemonPredictionOptions(plan_.members.size());
    Result<SimResult> predicted = SimulatePlan(plan_, net_, options);
    Result<double> bound = PlanLowerBoundSeconds(plan_, net_, options);
    predicted_s_ = predicted.ok() ? predicted->completion_s : bound.ok() ? *bound : 0;
  }
  RepairInputs inputs;
  inputs.net = &net_;
  inputs.member_nodes = member_nodes_;
  inputs.failures = failures_;
  inputs.failures.insert(inputs.failures.end(), failures.begin(), failures.end());
  inputs.predicted_s = predicted_s_;
  inputs.version = plan_.patch_version + 1;
  const std::vector<Failure> earlier = failures_;
  Result<PlanPatch> patch = PatchPlan(plan_, inputs);
  Result<Plan> patched = patch.ok() ? ApplyPatch(plan_, *patch, earlier) : Result<Plan>(patch.status());
  std::string names;
  for (const Failure& f : failures) {
    names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", plan_.members[f.member], RepairReasonName(f.reason));
  }
  if (!patched.ok()) {
    spdlog::warn("broadcast {}: not repaired around {}: {}", ToHex(id_), names, patched.status().ToString());
    given_up_ = true;
    return;
  }
  failures_ = inputs.failures;
  plan_ = std::move(*patched);

  v1::PlanPatch wire;
  PatchToProto(*patch, &wire);
  std::set<int> named;
  for (const EdgeMove& move : patch->moves) named.insert({move.child, move.old_parent, move.new_parent});
  for (int member : named) {
    // A member whose slice did not list its new parent or child learns its addresses here.
    wire.add_member_index(static_cast<uint32_t>(member));
    *wire.add_members() = entries_.at(member);
  }
  patches_.push_back(wire);
  for (const EdgeMove& move : patch->moves) moved_at_[{move.child, move.lane}] = now;
  const double at_s = std::chrono::duration<double>(now - started_).count();
  for (const Failure& f : failures) {
    v1::Repair* repair = &repairs_.emplace_back();
    repair->set_member(plan_.members[f.member]);
    repair->set_at_s(at_s);
    repair->set_reason(RepairReasonToProto(f.reason));
    repair->set_patch_version(static_cast<uint32_t>(patch->version));
    repair->set_measured_bps(f.measured_bps);
    repair->set_expected_bps(f.expected_bps);
    std::set<int> lanes;
    for (const EdgeMove& move : patch->moves) {
      if (move.old_parent != f.member) continue;
      repair->set_children_moved(repair->children_moved() + 1);
      lanes.insert(move.lane);
    }
    for (int lane : lanes) repair->add_lanes(static_cast<uint32_t>(lane));
  }
  v1::PatchRequest request;
  request.set_plan_id(AsString(id_.bytes()));
  request.mutable_patches()->Assign(patches_.begin(), patches_.end());
  const Result<uint32_t> patched_members = tree_.Patch(request, Clock::now() + patch_budget_);
  spdlog::warn("broadcast {}: repaired around {} at {:.1f} s: patch {} moves {} edges; {} of {} members applied it",
               ToHex(id_), names, at_s, patch->version, patch->moves.size(),
               patched_members.ok() ? *patched_members : 0, plan_.members.size());
}

}  // namespace gridcast
