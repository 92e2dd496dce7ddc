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

// The plan the source sends for a payload of `size` bytes, its digests streamed with `key`:
// from a source that read the payload first (chunk digests made up: only their count matters
// here), or (`hashed_first` false) from one that hashes it as it sends it.
v1::Plan StreamedPlan(uint64_t size, const SigningKey& key, bool reuse, bool hashed_first = true) {
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
  if (hashed_first) {
    identity.chunk_hashes.resize(identity.NumChunks());
    for (uint64_t c = 0; c < identity.NumChunks(); ++c) identity.chunk_hashes[c][c % 32] = static_cast<uint8_t>(c);
    if (reuse) identity.weak_checksums.assign(identity.NumChunks(), 7);
  } else {
    identity.streams_weak_checksums = reuse;
  }
  BroadcastCoordinator::OutgoingPlan outgoing = BroadcastCoordinator::Outgoing(*plan, "data.bin", identity);
  BroadcastCoordinator::StreamDigests(key.public_key(), outgoing.proto.mutable_payload());
  return outgoing.proto;
}

TEST(StreamedPrepare, APlanWeighsTheSameForAMebibyteAndSixtyFourGibibytes) {
  Result<SigningKey> key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  for (bool hashed_first : {true, false}) {
    const v1::Plan small = StreamedPlan(uint64_t{1} << 20, *key, true, hashed_first);
    const v1::Plan large = StreamedPlan(uint64_t{64} << 30, *key, true, hashed_first);  // 262,144 chunks
    // Only the varints of the size and of the lanes' chunk ranges grow (a byte or two each).
    EXPECT_LE(large.ByteSizeLong(), small.ByteSizeLong() + 16);
    EXPECT_LT(large.ByteSizeLong(), 512u);
    EXPECT_TRUE(large.payload().chunk_hashes().empty());
    EXPECT_TRUE(large.payload().weak_checksums().empty());
    EXPECT_TRUE(large.payload().weak_checksums_streamed());
    EXPECT_EQ(large.payload().chunk_list_sha256().empty(), !hashed_first);
    EXPECT_EQ(large.payload().sha256().empty(), !hashed_first);
  }
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
  ASSERT_TRUE(identity->chunk_list_digest);
  EXPECT_EQ(AsString(*identity->chunk_list_digest), plan.payload().chunk_list_sha256());
  Result<Digest> agreed = PlanAgreementDigest(plan);
  ASSERT_TRUE(agreed.ok());
  EXPECT_EQ(AsString(*agreed), plan.payload().chunk_list_sha256());
}

TEST(StreamedPrepare, WithoutTheListsDigestMembersAgreeOnTheHeader) {
  Result<SigningKey> key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  const v1::Plan plan = StreamedPlan(uint64_t{5} << 20, *key, true, /*hashed_first=*/false);
  Result<PayloadIdentity> identity = IdentityFromProto(plan.payload());
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_TRUE(identity->Streams());
  EXPECT_TRUE(identity->OffersReuse());
  EXPECT_FALSE(identity->chunk_list_digest);
  EXPECT_EQ(identity->sha256, Digest{});
  Result<std::optional<Digest>> list = PlanChunkListDigest(plan);
  ASSERT_TRUE(list.ok());
  EXPECT_FALSE(*list);
  Result<Digest> agreed = PlanAgreementDigest(plan);
  ASSERT_TRUE(agreed.ok());
  EXPECT_EQ(*PlanAgreementDigest(v1::Plan(plan)), *agreed);
  // Any field of the header changes it.
  std::vector<v1::Plan> changed(5, plan);
  changed[0].mutable_payload()->set_name("other.bin");
  changed[1].mutable_payload()->set_size_bytes(plan.payload().size_bytes() + 1);
  changed[2].mutable_payload()->set_digest_key(std::string(32, 'k'));
  changed[3].mutable_payload()->set_weak_checksums_streamed(false);
  changed[4].mutable_payload()->set_base("old.bin");
  for (const v1::Plan& other : changed) {
    Result<Digest> differs = PlanAgreementDigest(other);
    ASSERT_TRUE(differs.ok());
    EXPECT_NE(*differs, *agreed);
  }
}

TEST(StreamedPrepare, AListsDigestWithoutAKeyOrBesideAListIsRefused) {
  Result<SigningKey> key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  const v1::Plan plan = StreamedPlan(uint64_t{5} << 20, *key, false);
  v1::Payload no_key = plan.payload();
  no_key.clear_digest_key();
  v1::Payload with_list = plan.payload();
  with_list.set_chunk_hashes(std::string(32 * 20, 'x'));
  v1::Payload weak_beside = plan.payload();
  weak_beside.clear_chunk_list_sha256();
  weak_beside.set_weak_checksums(std::string(4 * 20, 'w'));
  v1::Payload short_digest = plan.payload();
  short_digest.set_chunk_list_sha256("short");
  v1::Payload weak_alone = plan.payload();
  weak_alone.clear_chunk_list_sha256();
  weak_alone.set_chunk_hashes(std::string(32 * 20, 'x'));
  weak_alone.set_weak_checksums_streamed(true);
  for (const v1::Payload* refused : {&no_key, &with_list, &weak_beside, &short_digest, &weak_alone}) {
    Result<PayloadIdentity> identity = IdentityFromProto(*refused);
    EXPECT_EQ(identity.status().code(), StatusCode::kInvalidArgument) << identity.status().ToString();
  }
}

}  // namespace
}  // namespace gridcast
