// A Prepare as a control parent could send it (untrusted: any member may be compromised or
// buggy): the member parses its part of the plan and validates it, as Participant::Prepare
// does before it touches the disk; the whole-plan parser too.
#include <cstddef>
#include <cstdint>

#include "collectives/validate_plan.h"
#include "common/safe_path.h"
#include "proto/control.pb.h"
#include "proto/plan_codec.h"

using namespace gridcast;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
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
