// A Prepare as a control parent could send it (untrusted: any member may be compromised or
// buggy): the member parses its part of the plan and validates it, as Participant::Prepare
// does before it touches the disk; the whole-plan parser too. The same bytes as a plan patch
// (collectives/plan_patch.h), decoded, checked and applied to a plan of 8 members in 2 lanes
// and to a slice of it.
#include <cstddef>
#include <cstdint>

#include "collectives/plan_patch.h"
#include "collectives/validate_plan.h"
#include "common/safe_path.h"
#include "proto/control.pb.h"
#include "proto/plan_codec.h"
#include "proto/plan_slice.h"

using namespace gridcast;

namespace {

// Two lanes over 8 members: a chain 0 -> 1 -> ... -> 7, and the source's star.
Plan EightMembers() {
  Plan plan;
  plan.algorithm = "fuzz";
  plan.chunk_bytes = 1 << 16;
  plan.payload_bytes = 16 << 16;
  for (int m = 0; m < 8; ++m) plan.members.push_back("m" + std::to_string(m));
  Lane chain{0, {{0, 16, 2}}, {}, 1};
  for (int m = 0; m < 7; ++m) chain.fanouts.push_back({m, {m + 1}, {}});
  Lane star{0, {{1, 16, 2}}, {{0, {1, 2, 3, 4, 5, 6, 7}, {}}}, 2};
  plan.lanes = {chain, star};
  return plan;
}

void FuzzPatch(const uint8_t* data, size_t size) {
  v1::PlanPatch wire;
  if (!wire.ParseFromArray(data, static_cast<int>(size))) return;
  static const Plan plan = EightMembers();
  Result<PlanPatch> patch = PatchFromProto(wire, plan.members.size(), plan.lanes.size());
  if (!patch.ok()) return;
  (void)ApplyPatch(plan, *patch);
  v1::Plan whole;
  PlanToProto(plan, &whole);
  v1::Plan slice = SlicePlan(whole, {3, 4});
  ApplyPatchToSlice(&slice, wire, {3, 4});
  (void)PlanPartFromProto(slice, 3);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzPatch(data, size);
  v1::PrepareRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  (void)CheckPayloadName(request.plan().payload().name());
  (void)CheckChunkBytes(request.plan().payload().chunk_bytes());
  const int member = static_cast<int>(request.member_index());
  Result<Plan> part = PlanPartFromProto(request.plan(), member);
  if (part.ok()) (void)ValidatePlanPart(*part, member);
  Result<Plan> whole = PlanFromProto(request.plan());
  if (whole.ok()) (void)ValidatePlan(*whole);
  return 0;
}
