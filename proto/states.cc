#include "proto/states.h"

#include <cstdio>

#include "proto/plan_codec.h"

namespace gridcast {

std::string MemberStateText(v1::MemberState state, const std::string& error) {
  std::string text;
  switch (state) {
    case v1::MEMBER_STATE_PREPARED: text = "prepared"; break;
    case v1::MEMBER_STATE_RUNNING: text = "running"; break;
    case v1::MEMBER_STATE_DONE: text = "done"; break;
    case v1::MEMBER_STATE_FAILED: text = "failed"; break;
    case v1::MEMBER_STATE_STOPPED: text = "stopped"; break;
    case v1::MEMBER_STATE_UNREACHABLE: text = "unreachable"; break;
    case v1::MEMBER_STATE_RESUMING: text = "resuming"; break;
    case v1::MEMBER_STATE_LOST: text = "lost"; break;
    default: text = "unknown"; break;
  }
  return error.empty() ? text : text + ": " + error;
}

std::string ScrubResultText(v1::ScrubResult result, const std::string& error) {
  switch (result) {
    case v1::SCRUB_RESULT_OK: return "ok";
    case v1::SCRUB_RESULT_BAD: return "bad";
    case v1::SCRUB_RESULT_UNKNOWN: return error.empty() ? "unknown" : "unknown: " + error;
    default: return "";
  }
}

std::string LaneTroubleText(const v1::LaneTrouble& trouble) {
  const Result<RepairReason> reason = RepairReasonFromProto(trouble.reason());
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", trouble.since_s());
  std::string text = "lane " + std::to_string(trouble.lane()) + ": parent " + trouble.parent() + " " +
                     (reason.ok() ? RepairReasonName(*reason) : "in trouble") + " for " + seconds + " s";
  if (reason.ok() && *reason == RepairReason::kSlow) {
    char rate[96];
    std::snprintf(rate, sizeof rate, " (%.1f mbit/s; %.1f at its other lanes' pace)", trouble.measured_bps() / 1e6,
                  trouble.expected_bps() / 1e6);
    text += rate;
  }
  return text;
}

std::string ServeStateText(v1::ServeState state) {
  switch (state) {
    case v1::SERVE_STATE_HASHING: return "hashing";
    case v1::SERVE_STATE_DIALLING: return "dialling";
    case v1::SERVE_STATE_SERVING: return "serving";
    case v1::SERVE_STATE_DONE: return "done";
    case v1::SERVE_STATE_TIMED_OUT: return "timed out";
    case v1::SERVE_STATE_CANCELLED: return "cancelled";
    default: return "unknown";
  }
}

}  // namespace gridcast
