// The names people read for the control protocol's states: the summary, `gridcast status`,
// send --json's "state" ("done", "failed: <why>", "unreachable", ...). Programs compare the
// enums; only these functions turn them into text.
#pragma once

#include <string>

#include "proto/control.pb.h"

namespace gridcast {

// "prepared", "running", "done", "failed", "stopped", "unreachable", "resuming", "lost"; with
// `error` (FAILED, STOPPED) "failed: <error>".
std::string MemberStateText(v1::MemberState state, const std::string& error = "");
// "ok", "bad", "unknown: <error>"; empty when not checked.
std::string ScrubResultText(v1::ScrubResult result, const std::string& error = "");
// "lane 1: parent core-5 gone for 1.2 s" (or "silent").
std::string LaneTroubleText(const v1::LaneTrouble& trouble);
// "hashing", "dialling", "serving", "done", "timed out", "cancelled".
std::string ServeStateText(v1::ServeState state);

}  // namespace gridcast
