// The control requests' own checks (daemon/participant/request_checks.h): every field a caller could make
// absurd is named in the error; well-formed requests pass.
#include "daemon/participant/request_checks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace gridcast {
namespace {

v1::BroadcastRequest ValidBroadcast() {
  v1::BroadcastRequest request;
  request.set_payload_path("payloads/p.bin");
  return request;
}

// Changes to a valid request, each with the words its refusal names.
using RefusalCases = std::vector<std::pair<std::function<void(v1::BroadcastRequest&)>, std::string>>;

// Each change of `valid` is refused as InvalidArgument with its words, and without `never_shown`.
void ExpectEachRefused(const v1::BroadcastRequest& valid, const RefusalCases& cases, const std::string& never_shown = "") {
  for (const auto& [change, expected] : cases) {
    v1::BroadcastRequest changed = valid;
    change(changed);
    const Status status = CheckBroadcastRequest(changed);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << expected;
    EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
    if (!never_shown.empty()) {
      EXPECT_EQ(status.message().find(never_shown), std::string::npos) << status.message();
    }
  }
}

TEST(RequestChecksTest, BroadcastFieldsAreNamed) {
  EXPECT_TRUE(CheckBroadcastRequest(ValidBroadcast()).ok());
  const RefusalCases cases = {
      {[](auto& r) { r.set_timeout_s(std::nan("")); }, "timeout_s"},
      {[](auto& r) { r.set_timeout_s(-1); }, "timeout_s"},
      {[](auto& r) { r.set_stall_timeout_s(1e300); }, "stall_timeout_s"},
      {[](auto& r) { r.clear_payload_path(); }, "no payload path"},
      {[](auto& r) { r.set_probe_bytes(1); }, "a probe broadcast takes no payload path"},
      {[](auto& r) { r.set_payload_path(std::string(5000, 'a')); }, "4096 bytes"},
      {[](auto& r) { r.set_payload_path(std::string("a\0b", 3)); }, "NUL"},
      {[](auto& r) { r.set_name("../etc/passwd"); }, ".."},
      {[](auto& r) { r.add_members(""); }, "member name"},
      {[](auto& r) { r.set_algorithm(std::string(100, 'x')); }, "algorithm"},
      {[](auto& r) { r.set_chunk_bytes(uint64_t{1} << 40); }, "chunk"},
      {[](auto& r) { r.set_streams(100000); }, "streams"},
      {[](auto& r) { r.set_mode(static_cast<v1::PlanMode>(77)); }, "mode"},
      {[](auto& r) { r.set_topology_yaml(std::string((1 << 20) + 1, ' ')); }, "topology"},
  };
  ExpectEachRefused(ValidBroadcast(), cases);
  v1::BroadcastRequest probe;
  probe.set_probe_bytes(1 << 20);
  EXPECT_TRUE(CheckBroadcastRequest(probe).ok());
}

// A payload its sender still writes: 3 chunks of 1 MiB (the last one short), declared whole.
v1::BroadcastRequest ValidFill() {
  v1::BroadcastRequest request = ValidBroadcast();
  request.set_chunk_bytes(1 << 20);
  request.mutable_fill()->set_size_bytes((2 << 20) + 1);
  request.mutable_fill()->set_chunk_hashes(std::string(3 * 32, 'h'));
  request.mutable_fill()->set_sha256(std::string(32, 's'));
  return request;
}

// A sender that declares only the size (and perhaps the whole SHA-256): the source hashes the
// file as it is sent, so no count of declared digests bounds it.
TEST(RequestChecksTest, AFilledPayloadMayDeclareOnlyItsSize) {
  v1::BroadcastRequest request = ValidFill();
  request.mutable_fill()->clear_chunk_hashes();
  request.mutable_fill()->clear_sha256();
  EXPECT_TRUE(DeclaresOnlyTheSize(request.fill()));
  EXPECT_TRUE(CheckBroadcastRequest(request).ok());
  request.mutable_fill()->set_sha256(std::string(32, 's'));
  EXPECT_TRUE(CheckBroadcastRequest(request).ok());
  request.mutable_fill()->set_size_bytes(uint64_t{1} << 46);
  EXPECT_TRUE(CheckBroadcastRequest(request).ok());
  const RefusalCases cases = {
      {[](auto& r) { r.mutable_fill()->set_sha256("short"); }, "a filled payload: a payload's sha256 has 5 bytes, not 32"},
      {[](auto& r) { r.mutable_fill()->set_weak_checksums(std::string(12, 'w')); }, "weak checksums only with"},
      {[](auto& r) { r.clear_payload_path(), r.set_name("lent.bin"), r.set_from_registered_memory(true); },
       "lent memory declares its chunks"},
  };
  ExpectEachRefused(request, cases);
  // An empty payload has nothing to stream: it is declared as before.
  request.mutable_fill()->set_size_bytes(0);
  EXPECT_FALSE(DeclaresOnlyTheSize(request.fill()));
}

TEST(RequestChecksTest, AFilledPayloadDeclaresEveryDigestInItsChunks) {
  EXPECT_TRUE(CheckBroadcastRequest(ValidFill()).ok());
  const RefusalCases cases = {
      {[](auto& r) { r.set_chunk_bytes(0); }, "needs its chunk size"},
      {[](auto& r) { r.mutable_fill()->set_chunk_hashes(std::string(2 * 32, 'h')); }, "3 chunks needs 3 sha256"},
      {[](auto& r) { r.mutable_fill()->set_chunk_hashes(std::string(3 * 32 + 1, 'h')); }, "digests of 32 bytes"},
      {[](auto& r) { r.set_digest(v1::CHUNK_DIGEST_XXH3); }, "3 xxh3 digests of 16 bytes"},
      {[](auto& r) { r.set_digest(static_cast<v1::ChunkDigest>(7)); }, "unknown chunk digest 7"},
      {[](auto& r) { r.mutable_fill()->set_size_bytes(uint64_t{1} << 62); }, "use larger chunks"},
      {[](auto& r) { r.mutable_fill()->set_sha256("short"); }, "a filled payload: a payload's sha256 has 5 bytes, not 32"},
      {[](auto& r) { r.clear_payload_path(), r.set_probe_bytes(1); }, "not filled by its sender"},
  };
  ExpectEachRefused(ValidFill(), cases);
  v1::BroadcastRequest xxh3 = ValidFill();
  xxh3.set_digest(v1::CHUNK_DIGEST_XXH3);
  xxh3.mutable_fill()->set_chunk_hashes(std::string(3 * 16, 'h'));
  EXPECT_TRUE(CheckBroadcastRequest(xxh3).ok());
  v1::BroadcastRequest huge = ValidFill();
  huge.mutable_fill()->set_size_bytes((kMaxFilledChunks + 1) << 20);
  huge.mutable_fill()->set_chunk_hashes(std::string((kMaxFilledChunks + 1) * 32, 'h'));
  EXPECT_NE(CheckBroadcastRequest(huge).message().find("use larger chunks"), std::string::npos);
  // Planning alone needs no payload, and plans no more chunks than a plan may have.
  v1::PlanBroadcastRequest plan_only;
  plan_only.set_size_bytes(uint64_t{1} << 40);
  EXPECT_TRUE(CheckPlanBroadcastRequest(plan_only).ok());
  plan_only.set_size_bytes(uint64_t{1} << 50);  // 2^28 chunks of 4 MiB
  EXPECT_TRUE(CheckPlanBroadcastRequest(plan_only).ok());
  plan_only.set_size_bytes(uint64_t{1} << 53);
  EXPECT_NE(CheckPlanBroadcastRequest(plan_only).message().find("at most"), std::string::npos);
  plan_only.mutable_broadcast()->set_chunk_bytes(64 << 20);
  plan_only.set_size_bytes(uint64_t{1} << 46);
  EXPECT_TRUE(CheckPlanBroadcastRequest(plan_only).ok());
  plan_only.mutable_broadcast()->set_streams(100000);
  EXPECT_FALSE(CheckPlanBroadcastRequest(plan_only).ok());
}

TEST(RequestChecksTest, APayloadInLentMemoryHasANameAFillAndNoPath) {
  v1::BroadcastRequest lent = ValidFill();
  lent.clear_payload_path();
  lent.set_name("mpi-bcast-1.bin");
  lent.set_from_registered_memory(true);
  EXPECT_TRUE(CheckBroadcastRequest(lent).ok());
  const std::vector<std::function<void(v1::BroadcastRequest&)>> cases = {
      [](auto& r) { r.set_payload_path("/tmp/x"); },
      [](auto& r) { r.clear_fill(); },
      [](auto& r) { r.clear_name(); },
      [](auto& r) { r.set_probe_bytes(1 << 20); },
  };
  for (const auto& change : cases) {
    v1::BroadcastRequest request = lent;
    change(request);
    const Status status = CheckBroadcastRequest(request);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("lent memory"), std::string::npos) << status.message();
  }
}

TEST(RequestChecksTest, AnOriginIsAnHttpUrlWithBoundedHeadersWhoseTextIsNeverShown) {
  v1::BroadcastRequest request;
  request.mutable_origin()->set_url("HTTPS://data.example.org/sets/ds.bin?X-Amz-Signature=abc");
  request.mutable_origin()->add_headers("Authorization: Bearer token\twith a tab");
  request.mutable_origin()->set_sha256(std::string(32, 'x'));
  EXPECT_TRUE(CheckBroadcastRequest(request).ok()) << CheckBroadcastRequest(request).ToString();
  const RefusalCases cases = {
      {[](auto& r) { r.set_payload_path("/tmp/x"); }, "no path, fill, probe"},
      {[](auto& r) { r.mutable_fill()->set_size_bytes(1); }, "no path, fill, probe"},
      {[](auto& r) { r.set_probe_bytes(1); }, "no path, fill, probe"},
      {[](auto& r) { r.mutable_origin()->set_url("ftp://host/x"); }, "http:// or https://"},
      {[](auto& r) { r.mutable_origin()->set_url("http://host/a\r\nX-Injected: 1"); }, "control character"},
      {[](auto& r) { r.mutable_origin()->set_url("http://host/" + std::string(9000, 'a')); }, "8192 bytes"},
      {[](auto& r) { r.mutable_origin()->add_headers("secret-without-colon"); }, "origin header 2"},
      {[](auto& r) { r.mutable_origin()->add_headers(": secret"); }, "origin header 2"},
      {[](auto& r) { r.mutable_origin()->add_headers("X: secret\r\nInjected: 1"); }, "origin header 2"},
      {[](auto& r) {
         for (int i = 0; i < 64; ++i) r.mutable_origin()->add_headers("X: y");
       },
       "at most 64"},
      {[](auto& r) { r.mutable_origin()->set_ca_pem(std::string((1 << 20) + 1, 'c')); }, "1 MiB"},
      {[](auto& r) { r.mutable_origin()->set_sha256("short"); }, "sha256 has 5 bytes"},
  };
  ExpectEachRefused(request, cases, "secret");
}

TEST(RequestChecksTest, IdsNumbersAndReasons) {
  v1::StartRequest start;
  start.set_plan_id("0123456789abcdef");
  EXPECT_TRUE(CheckStartRequest(start).ok());
  start.set_source_started_ago_s(-0.5);
  EXPECT_FALSE(CheckStartRequest(start).ok());
  start.set_source_started_ago_s(std::nan(""));
  EXPECT_FALSE(CheckStartRequest(start).ok());
  start.set_source_started_ago_s(1);
  start.set_plan_id("short");
  EXPECT_NE(CheckStartRequest(start).status().message().find("16 bytes"), std::string::npos);

  // A long reason is cut where a character begins: relayed, a cut one would not parse.
  v1::CancelRequest cancel;
  cancel.set_plan_id("0123456789abcdef");
  EXPECT_EQ(CancelReason(cancel), "cancelled");
  cancel.set_reason(std::string(511, 'a') + "\u00e9 and more");
  EXPECT_EQ(CancelReason(cancel), std::string(511, 'a'));
  v1::CancelRequest relayed;
  relayed.set_reason(CancelReason(cancel));
  EXPECT_TRUE(relayed.ParseFromString(relayed.SerializeAsString()));

  v1::StatusRequest status;
  EXPECT_TRUE(CheckStatusRequest(status).ok());
  status.set_subtree(true);
  EXPECT_FALSE(CheckStatusRequest(status).ok());
  status.set_plan_id(std::string(17, 'x'));
  EXPECT_FALSE(CheckStatusRequest(status).ok());
  status.set_plan_id(std::string(16, 'x'));
  EXPECT_TRUE(CheckStatusRequest(status).ok());
}

}  // namespace
}  // namespace gridcast
