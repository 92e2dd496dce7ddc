// A plan whose chunk digests stream (docs/streamed-digests.md): the Prepare that carries it
// weighs the same whatever the payload's size, and a member reads from it what it checks the
// batches against.
#include <gtest/gtest.h>

#include "collectives/registry.h"
#include "collectives/topology.h"
#include "common/signing.h"
#include "daemon/coordinator/broadcast_coordinator.h"
#include "daemon/participant/plan_payload.h"

namespace gridcast {
namespace {

constexpr uint64_t kChunk = 256 << 10;

// The plan the source sends for a payload of `size` bytes (chunk digests made up: only their
// count matters here), its digests streamed with `key`.
v1::Plan StreamedPlan(uint64_t size, const SigningKey& key, bool reuse) {
  Result<NetworkModel> net =
      ParseTopology("switches:\n  - name: s\nnodes:\n  - switch: s\n    count: 8\n    up: 1gbit\n    down: 1gbit\n");
  EXPECT_TRUE(net.ok());
  Result<std::unique_ptr<Planner>> planner = MakePlanner("multilane");
  EXPECT_TRUE(planner.ok());
  PlanOptions options;
  options.chunk_bytes = kChunk;
  Result<Plan> plan = (*planner)->MakePlan(*net, size, options);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  PayloadIdentity identity;
  identity.size_bytes = size;
  identity.chunk_bytes = kChunk;
  identity.chunk_hashes.resize(identity.NumChunks());
  for (uint64_t c = 0; c < identity.NumChunks(); ++c) identity.chunk_hashes[c][c % 32] = static_cast<uint8_t>(c);
  if (reuse) identity.weak_checksums.assign(identity.NumChunks(), 7);
  BroadcastCoordinator::OutgoingPlan outgoing = BroadcastCoordinator::Outgoing(*plan, "data.bin", identity);
  BroadcastCoordinator::StreamDigests(key.public_key(), identity.ListDigest(), outgoing.proto.mutable_payload());
  return outgoing.proto;
}

TEST(StreamedPrepare, APlanWeighsTheSameForAMebibyteAndSixtyFourGibibytes) {
  Result<SigningKey> key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  const v1::Plan small = StreamedPlan(uint64_t{1} << 20, *key, true);
  const v1::Plan large = StreamedPlan(uint64_t{64} << 30, *key, true);  // 262,144 chunks
  // Only the varints of the size and of the lanes' chunk ranges grow (a byte or two each).
  EXPECT_LE(large.ByteSizeLong(), small.ByteSizeLong() + 16);
  EXPECT_LT(large.ByteSizeLong(), 512u);
  EXPECT_TRUE(large.payload().chunk_hashes().empty());
  EXPECT_TRUE(large.payload().weak_checksums().empty());
  EXPECT_TRUE(large.payload().weak_checksums_streamed());
}

TEST(StreamedPrepare, AMemberReadsTheListsDigestAndNoList) {
  Result<SigningKey> key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  const v1::Plan plan = StreamedPlan(uint64_t{5} << 20, *key, false);
  Result<PayloadIdentity> identity = IdentityFromProto(plan.payload());
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_TRUE(identity->Streams());
  EXPECT_FALSE(identity->OffersReuse());
  EXPECT_TRUE(identity->chunk_hashes.empty());
  EXPECT_EQ(AsString(identity->ListDigest()), plan.payload().chunk_list_sha256());
  Result<Digest> agreed = PlanChunkListDigest(plan);
  ASSERT_TRUE(agreed.ok());
  EXPECT_EQ(AsString(*agreed), plan.payload().chunk_list_sha256());
}

TEST(StreamedPrepare, AListsDigestWithoutAKeyOrBesideAListIsRefused) {
  Result<SigningKey> key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  const v1::Plan plan = StreamedPlan(uint64_t{5} << 20, *key, false);
  v1::Payload no_key = plan.payload();
  no_key.clear_digest_key();
  v1::Payload with_list = plan.payload();
  with_list.set_chunk_hashes(std::string(32 * 20, 'x'));
  v1::Payload short_digest = plan.payload();
  short_digest.set_chunk_list_sha256("short");
  v1::Payload weak_alone = plan.payload();
  weak_alone.clear_chunk_list_sha256();
  weak_alone.set_chunk_hashes(std::string(32 * 20, 'x'));
  weak_alone.set_weak_checksums_streamed(true);
  for (const v1::Payload* refused : {&no_key, &with_list, &short_digest, &weak_alone}) {
    Result<PayloadIdentity> identity = IdentityFromProto(*refused);
    EXPECT_EQ(identity.status().code(), StatusCode::kInvalidArgument) << identity.status().ToString();
  }
}

}  // namespace
}  // namespace gridcast
