// The chunk intake fed by a parent the test plays by hand: a real member's execution receives
// over a real socket, after a real handshake, frames that are malformed, duplicated, late or
// corrupt. CheckParentFrame, the check every frame passes, is tested alone first.
#include "daemon/executor/chunk_intake.h"

#include <gtest/gtest.h>

#include <array>
#include <optional>

#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

namespace asio = boost::asio;

class ChunkIntakeTest : public PlanExecutionFixture {
 protected:
  // Member 1 of a chain (0 -> 1 -> 2 -> 3) of 6 chunks receives; the test is its parent, 0.
  // Without batches of digests unless a test turns them on (ChunkIntakeDigestsTest).
  void SetUp() override {
    SetUpMember(/*stream_digests=*/false);
  }
  void SetUpMember(bool stream_digests) {
    stream_digests_ = stream_digests;
    PlanExecutionFixture::SetUp();
    MakePayloadAndPlan(5 * kChunk + 100, "chain");
    base_options_.io_timeout = std::chrono::seconds(5);
    store_ = OpenStore(1);
    StartMember(1, store_);
  }

  // A connection to member 1 as its parent in lane 0, handshake done; `holds` receives what
  // the member said it holds.
  ConnectionPtr ConnectAsParent(ChildHolds* holds = nullptr) {
    return OnIo([this, holds]() -> asio::awaitable<ConnectionPtr> {
      Result<ConnectionPtr> connected = co_await transports_[0]->Connect(addresses_[1], std::chrono::seconds(5));
      EXPECT_TRUE(connected.ok()) << connected.status().ToString();
      if (!connected.ok()) co_return nullptr;
      Hello hello;
      hello.plan_id = id_;
      hello.parent = 0;
      Result<ChildHolds> held =
          co_await HandshakeAsParent(*connected, kSecret, hello, plan_.NumChunks(), std::chrono::seconds(5));
      EXPECT_TRUE(held.ok()) << held.status().ToString();
      if (held.ok() && holds != nullptr) *holds = *held;
      co_return held.ok() ? *connected : nullptr;
    }());
  }

  FrameHeader DataFrame(uint64_t chunk) const {
    FrameHeader header;
    header.plan_id = id_;
    header.chunk = chunk;
    header.length = static_cast<uint32_t>(identity_.ChunkSize(chunk));
    header.digest = identity_.digest;
    header.hash = identity_.chunk_hashes[chunk];
    return header;
  }
  std::vector<uint8_t> ChunkBytes(uint64_t chunk) const {
    const std::string payload = ReadFile(source_path_);
    const auto begin = payload.begin() + static_cast<std::ptrdiff_t>(chunk * kChunk);
    return {begin, begin + static_cast<std::ptrdiff_t>(identity_.ChunkSize(chunk))};
  }

  Status Send(const ConnectionPtr& connection, const FrameHeader& header, std::span<const uint8_t> body = {}) {
    return OnIo([&]() -> asio::awaitable<Status> {
      const auto bytes = EncodeFrameHeader(header);
      co_return co_await connection->Write(bytes, body, std::chrono::seconds(5));
    }());
  }
  // The next reply: an ACK or NACK, or the error that ended the connection.
  Result<FrameHeader> Reply(const ConnectionPtr& connection) {
    // Optional: what the io thread hands back must be default-constructible.
    return *OnIo([&]() -> asio::awaitable<std::optional<Result<FrameHeader>>> {
      std::array<uint8_t, kFrameHeaderBytes> bytes{};
      const Status read = co_await connection->Read(bytes, std::chrono::seconds(5));
      co_return read.ok() ? DecodeFrameHeader(bytes, 0) : Result<FrameHeader>(read);
    }());
  }
  uint64_t VerifiedByPush() { return CountersOf(1)->Read().chunks_verified[static_cast<int>(Transport::kPush)]; }

  // Batch `index` of the payload's digests, signed with `key` (the source's unless said) for
  // `plan` (this one unless said).
  DigestBatch SignedBatch(uint64_t index, const SigningKey* key = nullptr, const PlanId* plan = nullptr) const {
    const DigestBatches rule(identity_.chunk_bytes, identity_.NumChunks());
    const DigestBatches::Range range = rule.RangeOf(index);
    DigestBatch batch;
    batch.index = index;
    batch.first_chunk = range.first;
    batch.kind = identity_.digest;
    batch.digests.assign(identity_.chunk_hashes.begin() + static_cast<std::ptrdiff_t>(range.first),
                         identity_.chunk_hashes.begin() + static_cast<std::ptrdiff_t>(range.first + range.count));
    if (index + 1 == rule.count()) batch.closing = DigestClosing{identity_.ListDigest(), identity_.sha256};
    SignDigestBatch(key != nullptr ? *key : *digest_key_, plan != nullptr ? *plan : id_, batch);
    return batch;
  }
  Status SendBatch(const ConnectionPtr& connection, const DigestBatch& batch) {
    const std::string body = EncodeDigestBatch(batch);
    FrameHeader header;
    header.type = FrameType::kDigests;
    header.plan_id = id_;
    header.length = static_cast<uint32_t>(body.size());
    header.chunk = batch.first_chunk;
    return Send(connection, header, {reinterpret_cast<const uint8_t*>(body.data()), body.size()});
  }

  std::shared_ptr<PayloadStore> store_;
};

TEST_F(ChunkIntakeTest, EveryFrameIsCheckedAgainstThePlanBeforeItsBytesAreRead) {
  const LaneSchedule schedule(plan_, 1);
  const ParentStream from{0, 0, 1};
  const auto check = [&](const FrameHeader& header) {
    return CheckParentFrame(header, from, id_, plan_, schedule, *store_, nullptr).code();
  };
  EXPECT_EQ(check(DataFrame(3)), StatusCode::kOk);
  FrameHeader keepalive;
  keepalive.type = FrameType::kKeepalive;
  keepalive.plan_id = id_;
  EXPECT_EQ(check(keepalive), StatusCode::kOk);
  keepalive.chunk = kKeepaliveParentRepairs + 1;
  EXPECT_EQ(check(keepalive), StatusCode::kInvalidArgument);

  std::vector<FrameHeader> wrong(8, DataFrame(3));
  wrong[0].plan_id = PlanId::Random();        // another plan
  wrong[1].lane = 1;                          // another lane
  wrong[2].type = FrameType::kAck;            // a child's frame
  wrong[3].type = FrameType::kAssign;         // fixed lanes assign nothing
  wrong[4] = DataFrame(3), wrong[4].chunk = plan_.NumChunks();  // past the payload
  wrong[5].length -= 1;                       // not the chunk's length
  wrong[6].hash[0] ^= 1;                      // not the plan's digest of it
  wrong[7].digest = identity_.digest == ChunkDigest::kSha256 ? ChunkDigest::kXxh3 : ChunkDigest::kSha256;
  for (size_t i = 0; i < wrong.size(); ++i) EXPECT_EQ(check(wrong[i]), StatusCode::kInvalidArgument) << i;
  // The last chunk is shorter than the others.
  EXPECT_EQ(check(DataFrame(5)), StatusCode::kOk);
  FrameHeader full_length = DataFrame(5);
  full_length.length = kChunk;
  EXPECT_EQ(check(full_length), StatusCode::kInvalidArgument);
  // Two streams on an edge: each carries every other chunk.
  EXPECT_EQ(CheckParentFrame(DataFrame(3), {0, 1, 2}, id_, plan_, schedule, *store_, nullptr).code(), StatusCode::kOk);
  EXPECT_EQ(CheckParentFrame(DataFrame(3), {0, 0, 2}, id_, plan_, schedule, *store_, nullptr).code(),
            StatusCode::kInvalidArgument);
}

TEST_F(ChunkIntakeTest, AChunkIsAcknowledgedOnceVerifiedAndADuplicateCountsOnce) {
  const ConnectionPtr parent = ConnectAsParent();
  ASSERT_NE(parent, nullptr);
  for (int attempt = 0; attempt < 2; ++attempt) {
    ASSERT_TRUE(Send(parent, DataFrame(2), ChunkBytes(2)).ok());
    Result<FrameHeader> reply = Reply(parent);
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ(reply->type, FrameType::kAck);
    EXPECT_EQ(reply->chunk, 2u);
    EXPECT_EQ(reply->plan_id, id_);
  }
  EXPECT_TRUE(store_->Has(2));
  EXPECT_EQ(store_->VerifiedCount(), 1u);
  EXPECT_EQ(VerifiedByPush(), 1u);
}

TEST_F(ChunkIntakeTest, ACorruptChunkIsRefusedAndNeverStoredThenTakenWhenRight) {
  const ConnectionPtr parent = ConnectAsParent();
  ASSERT_NE(parent, nullptr);
  std::vector<uint8_t> corrupt = ChunkBytes(4);
  corrupt[kChunk / 2] ^= 0x40;
  ASSERT_TRUE(Send(parent, DataFrame(4), corrupt).ok());
  Result<FrameHeader> refused = Reply(parent);
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->type, FrameType::kNack);
  EXPECT_FALSE(store_->Has(4));
  EXPECT_EQ(CountersOf(1)->Read().chunks_refused[static_cast<int>(Transport::kPush)], 1u);
  ASSERT_TRUE(Send(parent, DataFrame(4), ChunkBytes(4)).ok());
  Result<FrameHeader> taken = Reply(parent);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(taken->type, FrameType::kAck);
  EXPECT_TRUE(store_->Has(4));
}

TEST_F(ChunkIntakeTest, AParentThatKeepsSendingCorruptChunksIsHungUpOn) {
  const ConnectionPtr parent = ConnectAsParent();
  ASSERT_NE(parent, nullptr);
  std::vector<uint8_t> corrupt = ChunkBytes(1);
  corrupt[0] ^= 1;
  int refusals = 0;
  for (int i = 0; i < 20; ++i) {
    if (!Send(parent, DataFrame(1), corrupt).ok()) break;
    Result<FrameHeader> reply = Reply(parent);
    if (!reply.ok()) break;
    EXPECT_EQ(reply->type, FrameType::kNack);
    ++refusals;
  }
  EXPECT_EQ(refusals, 8);  // then the member closes the connection
  EXPECT_EQ(store_->VerifiedCount(), 0u);
  // A new connection of the parent is heard again.
  const ConnectionPtr again = ConnectAsParent();
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(Send(again, DataFrame(1), ChunkBytes(1)).ok());
  Result<FrameHeader> reply = Reply(again);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->type, FrameType::kAck);
}

TEST_F(ChunkIntakeTest, AMalformedFrameEndsTheConnectionWithoutStoringAnything) {
  std::array<uint8_t, kFrameHeaderBytes> garbage{};
  garbage.fill(0xa5);
  FrameHeader elsewhere = DataFrame(0);
  elsewhere.lane = 3;
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE(variant);
    const ConnectionPtr parent = ConnectAsParent();
    ASSERT_NE(parent, nullptr);
    const Status sent = variant == 0 ? OnIo([&]() -> asio::awaitable<Status> {
      co_return co_await parent->Write(garbage, {}, std::chrono::seconds(5));
    }())
                                     : Send(parent, elsewhere, ChunkBytes(0));
    ASSERT_TRUE(sent.ok());
    EXPECT_FALSE(Reply(parent).ok());  // closed: no reply comes
  }
  EXPECT_EQ(store_->VerifiedCount(), 0u);
}

TEST_F(ChunkIntakeTest, ALateChunkOfACompletePayloadIsAcknowledgedAndChangesNothing) {
  const ConnectionPtr parent = ConnectAsParent();
  ASSERT_NE(parent, nullptr);
  for (uint64_t c = 0; c < plan_.NumChunks(); ++c) {
    ASSERT_TRUE(Send(parent, DataFrame(c), ChunkBytes(c)).ok());
    Result<FrameHeader> reply = Reply(parent);
    ASSERT_TRUE(reply.ok() && reply->type == FrameType::kAck) << c;
  }
  // Done and verified (its children, 2 and 3, are not running: it keeps trying them).
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(1).state == ExecutionState::kDone; }));
  EXPECT_EQ(SnapshotOf(1).digest, identity_.ListDigest());
  // The parent resends one: acknowledged (the member holds it) and not verified again.
  ASSERT_TRUE(Send(parent, DataFrame(3), ChunkBytes(3)).ok());
  Result<FrameHeader> reply = Reply(parent);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->type, FrameType::kAck);
  EXPECT_EQ(VerifiedByPush(), plan_.NumChunks());
  EXPECT_EQ(ReadFile(MemberDir(1) / "payload.bin"), ReadFile(source_path_));
}

TEST_F(ChunkIntakeTest, AParentConnectingAgainHearsTheRunsOfChunksHeld) {
  ASSERT_GE(plan_.NumChunks(), 5u);
  const ConnectionPtr parent = ConnectAsParent();
  ASSERT_NE(parent, nullptr);
  for (uint64_t c : {0, 1, 3}) {
    ASSERT_TRUE(Send(parent, DataFrame(c), ChunkBytes(c)).ok());
    Result<FrameHeader> reply = Reply(parent);
    ASSERT_TRUE(reply.ok() && reply->type == FrameType::kAck) << c;
  }
  ChildHolds holds;
  ASSERT_NE(ConnectAsParent(&holds), nullptr);
  EXPECT_EQ(holds.runs, (std::vector<ChunkRun>{{0, 2}, {3, 4}}));
  EXPECT_TRUE(holds.Holds(1));
  EXPECT_FALSE(holds.Holds(2));
  EXPECT_TRUE(holds.Holds(3));
  EXPECT_FALSE(holds.Holds(4));
}

TEST_F(ChunkIntakeTest, AStoppedMemberHangsUpOnItsParent) {
  const ConnectionPtr parent = ConnectAsParent();
  ASSERT_NE(parent, nullptr);
  StopAll();
  // Whatever the parent sends now meets a closed connection: no reply comes.
  (void)Send(parent, DataFrame(0), ChunkBytes(0));
  EXPECT_FALSE(Reply(parent).ok());
  EXPECT_EQ(store_->VerifiedCount(), 0u);
}

// The same member with the plan's signed batches of digests: a chunk only after its batch, and
// only a batch the source signed for this plan.
class ChunkIntakeDigestsTest : public ChunkIntakeTest {
 protected:
  void SetUp() override { SetUpMember(/*stream_digests=*/true); }
};

TEST_F(ChunkIntakeDigestsTest, AChunkBeforeItsBatchEndsTheConnectionThenTheBatchLetsItIn) {
  const ConnectionPtr early = ConnectAsParent();
  ASSERT_NE(early, nullptr);
  ASSERT_TRUE(Send(early, DataFrame(0), ChunkBytes(0)).ok());
  EXPECT_FALSE(Reply(early).ok());  // closed before the chunk's bytes were read: no reply
  EXPECT_EQ(store_->VerifiedCount(), 0u);

  const ConnectionPtr parent = ConnectAsParent();
  ASSERT_NE(parent, nullptr);
  ASSERT_TRUE(SendBatch(parent, SignedBatch(0)).ok());
  ASSERT_TRUE(SendBatch(parent, SignedBatch(0)).ok());  // a repeat is dropped
  for (uint64_t c = 0; c < plan_.NumChunks(); ++c) {
    ASSERT_TRUE(Send(parent, DataFrame(c), ChunkBytes(c)).ok());
    Result<FrameHeader> reply = Reply(parent);
    ASSERT_TRUE(reply.ok() && reply->type == FrameType::kAck) << c << " " << reply.status().ToString();
  }
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(1).state == ExecutionState::kDone; }));
  EXPECT_EQ(ReadFile(MemberDir(1) / "payload.bin"), ReadFile(source_path_));
}

TEST_F(ChunkIntakeDigestsTest, ABatchNotSignedByTheSourceForThisPlanEndsTheConnection) {
  Result<SigningKey> other = SigningKey::Generate();
  ASSERT_TRUE(other.ok());
  const PlanId another_plan = PlanId::Random();
  DigestBatch altered = SignedBatch(0);
  altered.digests[1][0] ^= 1;  // changed after the source signed it
  DigestBatch disagreeing = SignedBatch(0, &*other);
  disagreeing.digests[2][0] ^= 1;  // a member's own list, signed with its own key
  SignDigestBatch(*other, id_, disagreeing);
  DigestBatch misplaced = SignedBatch(0);
  misplaced.first_chunk = 1;
  SignDigestBatch(*digest_key_, id_, misplaced);
  for (const DigestBatch& bad : {altered, disagreeing, SignedBatch(0, &*other), SignedBatch(0, nullptr, &another_plan),
                                 misplaced}) {
    const ConnectionPtr parent = ConnectAsParent();
    ASSERT_NE(parent, nullptr);
    ASSERT_TRUE(SendBatch(parent, bad).ok());
    (void)Send(parent, DataFrame(0), ChunkBytes(0));
    EXPECT_FALSE(Reply(parent).ok());  // closed: the batch was refused, and with it the chunk
  }
  EXPECT_EQ(store_->VerifiedCount(), 0u);
  // A DIGESTS frame that names no batch's first chunk is refused from its header alone.
  const ConnectionPtr parent = ConnectAsParent();
  ASSERT_NE(parent, nullptr);
  const std::string body = EncodeDigestBatch(SignedBatch(0));
  FrameHeader header;
  header.type = FrameType::kDigests;
  header.plan_id = id_;
  header.length = static_cast<uint32_t>(body.size());
  header.chunk = 3;  // the body is batch 0, which starts at chunk 0
  ASSERT_TRUE(Send(parent, header, {reinterpret_cast<const uint8_t*>(body.data()), body.size()}).ok());
  EXPECT_FALSE(Reply(parent).ok());
}

}  // namespace
}  // namespace gridcast
