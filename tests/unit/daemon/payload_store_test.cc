// PayloadStore's two writers: whole verified chunks (push) and unverified blocks checked
// later (BitTorrent). The rule under test: a chunk counts only when its stored bytes hash
// right, and a counted chunk is never overwritten.
#include "daemon/store/payload_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include <thread>

#include "daemon/store/digest_log.h"
#include "payload_store_fixture.h"

namespace gridcast {
namespace {

// Every rule holds whichever chunk digest the plan chose.
class PayloadStoreTest : public PayloadStoreFixture, public ::testing::WithParamInterface<ChunkDigest> {
 protected:
  ChunkDigest DigestUnderTest() const override { return GetParam(); }
};

std::string DigestParamName(const ::testing::TestParamInfo<ChunkDigest>& param) {
  return std::string(DigestName(param.param));
}

INSTANTIATE_TEST_SUITE_P(Digests, PayloadStoreTest, ::testing::Values(ChunkDigest::kSha256, ChunkDigest::kXxh3),
                         DigestParamName);

TEST_P(PayloadStoreTest, BlocksCountOnlyAfterTheStoredChunkHashesRight) {
  auto store = Open();
  WriteBlocks(*store, 2, Chunk(2));
  EXPECT_FALSE(store->Has(2));
  ASSERT_TRUE(store->VerifyStoredChunk(2).ok());
  EXPECT_TRUE(store->Has(2));
  EXPECT_EQ(store->VerifiedCount(), 1u);
  EXPECT_TRUE(std::ranges::equal(Read(*store, 2), Chunk(2)));
  // The short last chunk too.
  WriteBlocks(*store, 5, Chunk(5));
  ASSERT_TRUE(store->VerifyStoredChunk(5).ok());
}

TEST_P(PayloadStoreTest, ACorruptBlockIsNeverCountedAndCanBeOverwritten) {
  auto store = Open();
  std::vector<uint8_t> bad(Chunk(1).begin(), Chunk(1).end());
  bad[40000] ^= 1;
  WriteBlocks(*store, 1, bad);
  EXPECT_EQ(store->VerifyStoredChunk(1).code(), StatusCode::kDataLoss);
  EXPECT_FALSE(store->Has(1));
  std::vector<uint8_t> out(kChunk);
  EXPECT_EQ(store->ReadChunk(1, out).code(), StatusCode::kFailedPrecondition);  // unverified bytes are not served
  WriteBlocks(*store, 1, Chunk(1));
  EXPECT_TRUE(store->VerifyStoredChunk(1).ok());
}

TEST_P(PayloadStoreTest, AVerifiedChunkIsNeverOverwritten) {
  auto store = Open();
  ASSERT_TRUE(store->WriteChunk(3, Chunk(3)).ok());  // the push path
  std::vector<uint8_t> garbage(kChunk, 0xAB);
  WriteBlocks(*store, 3, garbage);  // a late BitTorrent block of the same chunk
  EXPECT_TRUE(store->VerifyStoredChunk(3).ok());
  EXPECT_TRUE(std::ranges::equal(Read(*store, 3), Chunk(3)));
  EXPECT_EQ(store->VerifiedCount(), 1u);
}

TEST_P(PayloadStoreTest, BadBlockArgumentsAreRefused) {
  auto store = Open();
  const std::vector<uint8_t> block(16384, 1);
  EXPECT_EQ(store->WriteBlock(99, 0, block).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->WriteBlock(0, kChunk - 100, block).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store->WriteBlock(5, 16384, block).code(), StatusCode::kInvalidArgument);  // past the short chunk
  EXPECT_EQ(store->VerifyStoredChunk(6).code(), StatusCode::kInvalidArgument);
  std::vector<uint8_t> out(10);
  ASSERT_TRUE(store->WriteChunk(0, Chunk(0)).ok());
  EXPECT_EQ(store->ReadBlock(0, kChunk - 5, out).code(), StatusCode::kInvalidArgument);
}

TEST_P(PayloadStoreTest, ARestartKeepsOnlyWhatWasVerified) {
  {
    auto store = Open();
    WriteBlocks(*store, 0, Chunk(0));
    ASSERT_TRUE(store->VerifyStoredChunk(0).ok());
    WriteBlocks(*store, 4, Chunk(4));  // written, never checked: a crash before the check
  }
  auto store = Open();
  EXPECT_TRUE(store->Has(0));
  EXPECT_FALSE(store->Has(4));
  EXPECT_EQ(store->VerifiedCount(), 1u);
}

TEST_P(PayloadStoreTest, BothWritersAtOnceAssembleThePayload) {
  auto store = Open();
  const uint64_t n = identity_.NumChunks();
  std::thread push([&] {
    for (uint64_t c = 0; c < n; ++c) EXPECT_TRUE(store->WriteChunk(c, Chunk(c)).ok());
  });
  std::thread pull([&] {
    for (uint64_t c = n; c-- > 0;) {
      WriteBlocks(*store, c, Chunk(c));
      EXPECT_TRUE(store->VerifyStoredChunk(c).ok());
    }
  });
  push.join();
  pull.join();
  ASSERT_TRUE(store->Complete());
  Result<Digest> digest = store->Finalize(false);
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_EQ(*digest, identity_.ListDigest());
}

// The final digest is the chunk list digest of what was stored, whatever order the chunks
// came in and across a restart (resumed chunks are hashed again when the store reopens).
TEST_P(PayloadStoreTest, TheFinalDigestFollowsAnyArrivalOrderAndARestart) {
  const uint64_t n = identity_.NumChunks();
  for (const std::vector<uint64_t>& order : {std::vector<uint64_t>{5, 4, 3, 2, 1, 0}, {1, 0, 3, 2, 5, 4}, {0, 2, 4, 1, 3, 5}}) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_EQ(order.size(), n);
    {
      auto store = Open();
      for (size_t i = 0; i < 3; ++i) ASSERT_TRUE(store->WriteChunk(order[i], Chunk(order[i])).ok());
    }
    auto store = Open();
    for (size_t i = 3; i < n; ++i) ASSERT_TRUE(store->WriteChunk(order[i], Chunk(order[i])).ok());
    Result<Digest> digest = store->Finalize(false);
    ASSERT_TRUE(digest.ok()) << digest.status().ToString();
    EXPECT_EQ(*digest, identity_.ListDigest());
    EXPECT_TRUE(fs::exists(dir_ / "p.bin"));
    EXPECT_FALSE(fs::exists(dir_ / "p.bin.part"));
  }
}

// A resumed chunk whose bytes changed on disk while the daemon was down is not trusted: it is
// received again, and the final digest still matches.
TEST_P(PayloadStoreTest, AChunkChangedOnDiskBeforeAResumeIsReceivedAgain) {
  {
    auto store = Open();
    for (uint64_t c = 0; c < 3; ++c) ASSERT_TRUE(store->WriteChunk(c, Chunk(c)).ok());
  }
  FlipByte(dir_ / "p.bin.part", kChunk + 10);
  auto store = Open();
  EXPECT_TRUE(store->Has(0));
  EXPECT_FALSE(store->Has(1));
  for (uint64_t c = 1; c < identity_.NumChunks(); ++c) ASSERT_TRUE(store->WriteChunk(c, Chunk(c)).ok());
  Result<Digest> digest = store->Finalize(false);
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_EQ(*digest, identity_.ListDigest());
}

// The scrub re-hashes a finished payload against the chunk list recorded when it was received
// and names each chunk whose bytes changed since, or that a shorter file cut off.
TEST_P(PayloadStoreTest, TheScrubNamesEveryBadChunkOfAFinishedPayload) {
  {
    auto store = Open();
    for (uint64_t c = 0; c < identity_.NumChunks(); ++c) ASSERT_TRUE(store->WriteChunk(c, Chunk(c)).ok());
    ASSERT_TRUE(store->Finalize(false).ok());
  }
  Result<ScrubReport> clean = PayloadStore::Scrub(dir_.string(), "p.bin");
  ASSERT_TRUE(clean.ok()) << clean.status().ToString();
  EXPECT_EQ(clean->chunks, identity_.NumChunks());
  EXPECT_TRUE(clean->bad_chunks.empty());
  Result<PayloadIdentity> recorded = PayloadStore::RecordedIdentity(dir_.string(), "p.bin");
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->sha256, identity_.sha256);
  EXPECT_EQ(recorded->digest, identity_.digest);
  EXPECT_EQ(recorded->chunk_hashes, identity_.chunk_hashes);

  FlipByte(dir_ / "p.bin", 2 * kChunk + 1);
  FlipByte(dir_ / "p.bin", 4 * kChunk);
  Result<ScrubReport> bad = PayloadStore::Scrub(dir_.string(), "p.bin");
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  EXPECT_EQ(bad->bad_chunks, (std::vector<uint64_t>{2, 4}));

  fs::resize_file(dir_ / "p.bin", 5 * kChunk);  // the last, partial chunk is gone
  Result<ScrubReport> cut = PayloadStore::Scrub(dir_.string(), "p.bin");
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ(cut->bad_chunks, (std::vector<uint64_t>{2, 4, 5}));
}

// A copy received with one chunk digest is not resumed by a plan with the other: the bitmap
// vouches for the digest it was kept with.
TEST_P(PayloadStoreTest, AnotherDigestDoesNotResume) {
  {
    auto store = Open();
    for (uint64_t c = 0; c < 3; ++c) ASSERT_TRUE(store->WriteChunk(c, Chunk(c)).ok());
  }
  const ChunkDigest other = DigestUnderTest() == ChunkDigest::kSha256 ? ChunkDigest::kXxh3 : ChunkDigest::kSha256;
  identity_.digest = other;
  for (uint64_t c = 0; c < identity_.NumChunks(); ++c) identity_.chunk_hashes[c] = HashChunk(other, Chunk(c));
  auto store = Open();
  EXPECT_EQ(store->VerifiedCount(), 0u);
  for (uint64_t c = 0; c < identity_.NumChunks(); ++c) ASSERT_TRUE(store->WriteChunk(c, Chunk(c)).ok());
  Result<Digest> digest = store->Finalize(false);
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_EQ(*digest, identity_.ListDigest());
}

// The workers' batch: chunks in buffers and in their places, hashed together, each judged on
// its own (a corrupt or short one fails alone, a chunk twice in one batch counts once).
TEST_P(PayloadStoreTest, ABatchOfReceivedChunksIsJudgedChunkByChunk) {
  struct statfs fs {};
  if (statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC) GTEST_SKIP() << "/dev/shm is no tmpfs";
  const fs::path memory = FreshTestDir("gridcast-store", "/dev/shm");
  fs::create_directories(memory);
  Result<std::unique_ptr<PayloadStore>> opened =
      PayloadStore::OpenForReceive(memory.string(), "p.bin", identity_, SystemFileIo(), {.in_place = true});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  PayloadStore& store = **opened;
  ChunkPlacement* placement = store.capabilities().placement;
  ASSERT_NE(placement, nullptr);
  std::vector<std::span<uint8_t>> places;
  for (uint64_t c : {0, 1}) {
    const std::span<uint8_t> place = placement->Claim(c);
    ASSERT_EQ(place.size(), Chunk(c).size());
    std::ranges::copy(Chunk(c), place.begin());
    if (c == 1) place[100] ^= 1;
    places.push_back(place);
  }
  std::vector<uint8_t> corrupt(Chunk(4).begin(), Chunk(4).end());
  corrupt[7] ^= 0x80;
  const std::vector<uint8_t> short_chunk(Chunk(3).begin(), Chunk(3).end() - 1);
  std::vector<PayloadStore::ReceivedChunk> batch(8);
  batch[0].chunk = 0, batch[0].in_place = true, batch[0].data = places[0];
  batch[1].chunk = 1, batch[1].in_place = true, batch[1].data = places[1];
  batch[2].chunk = 2, batch[2].data = Chunk(2);
  batch[3].chunk = 3, batch[3].data = short_chunk;
  batch[4].chunk = 4, batch[4].data = corrupt;
  batch[5].chunk = 5, batch[5].data = Chunk(5);
  batch[6].chunk = 2, batch[6].data = Chunk(2);
  batch[7].chunk = 5, batch[7].data = Chunk(5);
  store.StoreReceived(batch);
  using enum StatusCode;
  const std::vector<StatusCode> codes = {kOk, kDataLoss, kOk, kDataLoss, kDataLoss, kOk, kOk, kOk};
  const std::vector<bool> newly = {true, false, true, false, false, true, false, false};
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(batch[i].status.code(), codes[i]) << i << ": " << batch[i].status.ToString();
    EXPECT_EQ(batch[i].newly_verified, newly[i]) << i;
  }
  EXPECT_EQ(store.VerifiedCount(), 3u);
  for (uint64_t c : {0, 2, 5}) EXPECT_TRUE(std::ranges::equal(Read(store, c), Chunk(c))) << c;
  // The corrupt chunk in place lost its claim: it can be received again.
  EXPECT_EQ(placement->Claim(1).size(), Chunk(1).size());
  // A held chunk, or one claimed already, is received into a buffer instead.
  EXPECT_TRUE(placement->Claim(0).empty());
  EXPECT_TRUE(placement->Claim(1).empty());
  opened->reset();
  fs::remove_all(memory);
}

// A chunk list recorded before the digest was chosen (version 1: SHA-256 only) still serves
// the scrub.
TEST_F(PayloadStoreFixture, AVersionOneChunkListIsReadAsSha256) {
  {
    std::ofstream out(dir_ / "p.bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(payload_.data()), static_cast<std::streamsize>(payload_.size()));
  }
  std::string list = "GCCHUNK1";
  for (uint64_t value : {identity_.size_bytes, identity_.chunk_bytes}) {
    for (int shift = 56; shift >= 0; shift -= 8) list += static_cast<char>(value >> shift);
  }
  list.append(identity_.sha256.begin(), identity_.sha256.end());
  for (const gridcast::Digest& d : identity_.chunk_hashes) list.append(d.begin(), d.end());
  fs::create_directories(dir_ / ".gridcast" / "state");
  std::ofstream(PayloadStatePath(dir_.string(), "p.bin", ".chunks"), std::ios::binary) << list;
  Result<PayloadIdentity> recorded = PayloadStore::RecordedIdentity(dir_.string(), "p.bin");
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->digest, ChunkDigest::kSha256);
  EXPECT_EQ(recorded->chunk_hashes, identity_.chunk_hashes);
  FlipByte(dir_ / "p.bin", 3 * kChunk);
  Result<ScrubReport> scrub = PayloadStore::Scrub(dir_.string(), "p.bin");
  ASSERT_TRUE(scrub.ok()) << scrub.status().ToString();
  EXPECT_EQ(scrub->bad_chunks, (std::vector<uint64_t>{3}));
}

TEST_P(PayloadStoreTest, TheScrubRefusesWhatItCannotCheck) {
  std::ofstream(dir_ / "placed-by-hand.bin") << "not received by gridcast";
  EXPECT_EQ(PayloadStore::Scrub(dir_.string(), "placed-by-hand.bin").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(PayloadStore::Scrub(dir_.string(), "missing.bin").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(PayloadStore::Scrub(dir_.string(), "../etc/passwd").status().code(), StatusCode::kInvalidArgument);
}

// A source whose sender is still writing the file (BroadcastRequest.fill).
class FilledSourceTest : public PayloadStoreFixture {
 protected:
  void SetUp() override {
    PayloadStoreFixture::SetUp();
    path_ = dir_ / "buffer";
    fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    close(fd_);
    PayloadStoreFixture::TearDown();
  }
  std::unique_ptr<PayloadStore> OpenFilling(const PayloadIdentity& identity) {
    Result<std::unique_ptr<PayloadStore>> store = PayloadStore::OpenFilling(path_.string(), identity);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  // The sender writes bytes [from, to) of the payload.
  void Fill(uint64_t from, uint64_t to) {
    ASSERT_TRUE(PwriteFull(SystemFileIo(), fd_, std::span<const uint8_t>(payload_).subspan(from, to - from), from).ok());
  }
  uint64_t Verify(PayloadStore& store) {
    Result<uint64_t> newly = store.capabilities().growing->VerifyFilled();
    EXPECT_TRUE(newly.ok()) << newly.status().ToString();
    return newly.ok() ? *newly : 0;
  }

  fs::path path_;
  int fd_ = -1;
};

// Re-staging (docs/delta.md): an earlier version under the payload's name gives every chunk
// found in it, wherever it moved; it stays whole until the new copy replaces it.
TEST_P(PayloadStoreTest, AnEarlierVersionGivesTheChunksFoundInItAndStaysWholeUntilFinalize) {
  OfferReuse();
  const std::vector<uint8_t> earlier = EarlierVersion();
  WriteFileBytes(dir_ / "p.bin", earlier);
  {
    auto store = Open();
    for (uint64_t c = 0; c < identity_.NumChunks(); ++c) EXPECT_EQ(store->Has(c), c != 2) << c;
    EXPECT_EQ(store->ReusedChunks(), identity_.NumChunks() - 1);
    EXPECT_EQ(store->ReusedBytes(), payload_.size() - kChunk);
    EXPECT_EQ(store->VerifiedCount(), identity_.NumChunks() - 1);
  }
  // A crash here: the earlier copy is untouched, and a reopened store resumes what it took.
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), earlier);
  auto store = Open();
  EXPECT_EQ(store->VerifiedCount(), identity_.NumChunks() - 1);
  EXPECT_EQ(store->ReusedChunks(), 0u);
  ASSERT_TRUE(store->WriteChunk(2, Chunk(2)).ok());
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), earlier);
  Result<Digest> digest = store->Finalize(false);
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_EQ(*digest, identity_.ListDigest());
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
}

// Streamed digests (docs/streamed-digests.md): an identity without its list, the digests
// arriving batch by batch in the store's log. A payload of 40 chunks: batches 0-15 and 16-39.
class StreamedDigestsTest : public PayloadStoreTest {
 protected:
  void SetUp() override {
    PayloadStoreTest::SetUp();
    payload_.resize(40 * kChunk);
    std::mt19937_64 random(11);
    for (uint8_t& b : payload_) b = static_cast<uint8_t>(random());
    identity_.size_bytes = payload_.size();
    identity_.chunk_hashes.clear();
    for (uint64_t c = 0; c < identity_.NumChunks(); ++c) identity_.chunk_hashes.push_back(HashChunk(GetParam(), Chunk(c)));
    identity_.sha256 = Sha256(payload_);
    ASSERT_EQ(rule_.count(), 2u);
  }
  // The identity as a plan that streams its digests declares it.
  PayloadIdentity Streamed() const {
    PayloadIdentity streamed = identity_;
    streamed.chunk_hashes.clear();
    streamed.weak_checksums.clear();
    streamed.sha256 = {};
    streamed.chunk_list_digest = identity_.ListDigest();
    return streamed;
  }
  std::unique_ptr<PayloadStore> OpenStreamed(bool weak_checksums = false) {
    PayloadIdentity streamed = Streamed();
    streamed.streams_weak_checksums = weak_checksums;
    Result<std::unique_ptr<PayloadStore>> store =
        PayloadStore::OpenForReceive(dir_.string(), "p.bin", streamed, SystemFileIo());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return nullptr;
    Result<std::unique_ptr<DigestLog>> log = DigestLog::OpenUnnamed(dir_.string(), GetParam(), rule_, SystemFileIo());
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(*log);
    (*store)->ExpectDigestsFrom(log_);
    return std::move(*store);
  }
  // Batch `index` arrives (its signature checked elsewhere: the log trusts its caller).
  void Arrive(uint64_t index) {
    const DigestBatches::Range range = rule_.RangeOf(index);
    DigestBatch batch;
    batch.index = index;
    batch.first_chunk = range.first;
    batch.kind = GetParam();
    for (uint64_t c = range.first; c < range.first + range.count; ++c) batch.digests.push_back(identity_.chunk_hashes[c]);
    if (index + 1 == rule_.count()) batch.closing = DigestClosing{identity_.ListDigest(), identity_.sha256};
    ASSERT_TRUE(log_->Record(batch).ok());
  }
  std::vector<uint32_t> WeakOf(uint64_t index) const {
    const DigestBatches::Range range = rule_.RangeOf(index);
    std::vector<uint32_t> weak;
    for (uint64_t c = range.first; c < range.first + range.count; ++c) weak.push_back(WeakChecksum(Chunk(c)));
    return weak;
  }

  const DigestBatches rule_{kChunk, 40};
  std::shared_ptr<DigestLog> log_;
};

INSTANTIATE_TEST_SUITE_P(Digests, StreamedDigestsTest, ::testing::Values(ChunkDigest::kSha256, ChunkDigest::kXxh3),
                         DigestParamName);

// What an earlier attempt verified is held again batch by batch, once each chunk's digest is
// here and its bytes still hash to it; a restart before the digests came forgets nothing.
TEST_P(StreamedDigestsTest, AResumeTakesEachBatchsChunksAsItsDigestsArrive) {
  {
    auto first = OpenStreamed();
    Arrive(0);
    Arrive(1);
    for (uint64_t c = 0; c < 40; c += 2) ASSERT_TRUE(first->WriteChunk(c, Chunk(c)).ok()) << c;
    EXPECT_FALSE(first->WriteChunk(1, Chunk(3)).ok());
  }
  {
    std::fstream part(dir_ / "p.bin.part", std::ios::in | std::ios::out | std::ios::binary);
    part.seekp(4 * kChunk + 9);
    part.put('\x5a');  // chunk 4 changes on disk while the member is down
  }
  for (int restart = 0; restart < 2; ++restart) {
    auto store = OpenStreamed();
    EXPECT_EQ(store->VerifiedCount(), 0u);  // nothing is known before the digests
    KnownChunks* known = store->capabilities().known;
    ASSERT_NE(known, nullptr);
    EXPECT_TRUE(known->TakeKnownChunks(0, 16, {}).chunks.empty()) << "no digests yet";
    if (restart == 0) continue;  // down again before any batch came
    Arrive(0);
    const KnownChunks::Taken batch0 = known->TakeKnownChunks(0, 16, {});
    EXPECT_EQ(batch0.chunks, (std::vector<uint64_t>{0, 2, 6, 8, 10, 12, 14}));
    EXPECT_EQ(batch0.resumed_chunks, 7u);
    EXPECT_FALSE(store->Has(16));
    Arrive(1);
    EXPECT_EQ(known->TakeKnownChunks(16, 24, {}).chunks.size(), 12u);
    EXPECT_EQ(store->VerifiedCount(), 19u);
    EXPECT_EQ(store->ResumedChunks(), 19u);
    for (uint64_t c = 0; c < 40; ++c) ASSERT_TRUE(store->WriteChunk(c, Chunk(c)).ok()) << c;
    Result<Digest> digest = store->Finalize(false);
    ASSERT_TRUE(digest.ok()) << digest.status().ToString();
    EXPECT_EQ(*digest, identity_.ListDigest());
    EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
    // The finished copy records the payload's SHA-256 the last batch brought.
    Result<PayloadIdentity> recorded = PayloadStore::RecordedIdentity(dir_.string(), "p.bin");
    ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
    EXPECT_EQ(recorded->sha256, identity_.sha256);
    EXPECT_EQ(recorded->chunk_hashes, identity_.chunk_hashes);
  }
}

// A source that hashes as it sends announces no list: the last batch's closing is what the
// batches must fold into.
TEST_P(StreamedDigestsTest, WithoutAnAnnouncedListTheLastBatchClosesIt) {
  for (bool honest : {false, true}) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    PayloadIdentity streamed = Streamed();
    streamed.chunk_list_digest.reset();
    Result<std::unique_ptr<PayloadStore>> opened =
        PayloadStore::OpenForReceive(dir_.string(), "p.bin", streamed, SystemFileIo());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    std::unique_ptr<PayloadStore> store = std::move(*opened);
    Result<std::unique_ptr<DigestLog>> log = DigestLog::OpenUnnamed(dir_.string(), GetParam(), rule_, SystemFileIo());
    ASSERT_TRUE(log.ok());
    log_ = std::move(*log);
    store->ExpectDigestsFrom(log_);
    Arrive(0);
    DigestBatch last;
    last.index = 1;
    last.first_chunk = 16;
    last.kind = GetParam();
    for (uint64_t c = 16; c < 40; ++c) last.digests.push_back(identity_.chunk_hashes[c]);
    last.closing = DigestClosing{identity_.ListDigest(), identity_.sha256};
    if (!honest) last.closing->chunk_list_digest[0] ^= 1;
    ASSERT_TRUE(log_->Record(last).ok());
    for (uint64_t c = 0; c < 40; ++c) ASSERT_TRUE(store->WriteChunk(c, Chunk(c)).ok()) << c;
    Result<Digest> digest = store->Finalize(false);
    EXPECT_EQ(digest.ok(), honest) << digest.status().ToString();
    if (!honest) {
      EXPECT_EQ(digest.status().code(), StatusCode::kDataLoss);
    }
  }
}

// A chunk whose digest has not arrived cannot be verified: it is refused, never written as good.
TEST_P(StreamedDigestsTest, AChunkBeforeItsDigestIsRefused) {
  auto store = OpenStreamed();
  const Status early = store->WriteChunk(20, Chunk(20));
  EXPECT_EQ(early.code(), StatusCode::kUnavailable) << early.ToString();
  EXPECT_FALSE(store->Has(20));
  EXPECT_FALSE(store->Finalize(false).ok());
  Arrive(1);
  EXPECT_TRUE(store->WriteChunk(20, Chunk(20)).ok());
  EXPECT_EQ(store->WriteChunk(21, Chunk(22)).code(), StatusCode::kDataLoss);
}

// An earlier version is searched batch by batch with the weak checksums the batches carry, near
// where each batch's chunks fall: everything it holds is found, and it stays whole.
TEST_P(StreamedDigestsTest, AnEarlierVersionIsSearchedBatchByBatch) {
  std::vector<uint8_t> earlier(4096 + payload_.size(), 0x33);  // 4 KiB in front: every chunk moved
  std::copy(payload_.begin(), payload_.end(), earlier.begin() + 4096);
  for (uint64_t i = 0; i < 100; ++i) earlier[4096 + 20 * kChunk + 7 * i] ^= 0xa5;  // chunk 20 changed
  WriteFileBytes(dir_ / "p.bin", earlier);
  auto store = OpenStreamed(/*weak_checksums=*/true);
  KnownChunks* known = store->capabilities().known;
  ASSERT_NE(known, nullptr);
  EXPECT_EQ(store->VerifiedCount(), 0u);
  Arrive(0);
  EXPECT_EQ(known->TakeKnownChunks(0, 16, WeakOf(0)).chunks.size(), 16u);
  Arrive(1);
  const KnownChunks::Taken batch1 = known->TakeKnownChunks(16, 24, WeakOf(1));
  EXPECT_EQ(batch1.chunks.size(), 23u);
  EXPECT_EQ(batch1.reused_bytes, 23 * kChunk);
  EXPECT_FALSE(store->Has(20));
  EXPECT_EQ(store->ReusedChunks(), 39u);
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), earlier);
  ASSERT_TRUE(store->WriteChunk(20, Chunk(20)).ok());
  ASSERT_TRUE(store->Finalize(false).ok());
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
}

// An earlier copy of the payload's size is linked as the ".part", not copied: what it holds
// where it is costs no write, and the first write (a changed chunk) gives the ".part" a copy
// of its own, so the earlier copy stays whole until Finalize.
TEST_P(StreamedDigestsTest, AnEarlierCopyOfTheSameSizeIsLinkedUntilTheFirstWrite) {
  for (bool identical : {true, false}) {
    SCOPED_TRACE(identical ? "identical" : "chunk 20 changed");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::vector<uint8_t> earlier = payload_;
    if (!identical) {
      for (uint64_t i = 0; i < 100; ++i) earlier[20 * kChunk + 7 * i] ^= 0xa5;
    }
    WriteFileBytes(dir_ / "p.bin", earlier);
    auto store = OpenStreamed(/*weak_checksums=*/true);
    const auto same_file = [&] { return fs::equivalent(dir_ / "p.bin", dir_ / "p.bin.part"); };
    EXPECT_TRUE(same_file());
    KnownChunks* known = store->capabilities().known;
    Arrive(0);
    EXPECT_EQ(known->TakeKnownChunks(0, 16, WeakOf(0)).reused_bytes, 16 * kChunk);
    Arrive(1);
    EXPECT_EQ(known->TakeKnownChunks(16, 24, WeakOf(1)).chunks.size(), identical ? 24u : 23u);
    EXPECT_TRUE(same_file()) << "nothing written yet";
    if (!identical) {
      EXPECT_FALSE(store->Has(20));
      ASSERT_TRUE(store->WriteChunk(20, Chunk(20)).ok());
      EXPECT_FALSE(same_file());
      EXPECT_EQ(FileBytes(dir_ / "p.bin"), earlier) << "the earlier copy stays whole until Finalize";
    }
    EXPECT_EQ(store->ReusedBytes(), (identical ? 40u : 39u) * kChunk);
    ASSERT_TRUE(store->Finalize(false).ok());
    EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
    EXPECT_FALSE(fs::exists(dir_ / "p.bin.part"));
    // Nothing is left beside the state files but what they are.
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      EXPECT_EQ(entry.path().filename().string().find(".copy"), std::string::npos) << entry.path();
    }
  }
}

// A member that went down while its ".part" was still the link, prepared again without reuse:
// the link goes, and nothing it writes reaches the earlier copy.
TEST_P(StreamedDigestsTest, ALinkLeftByAnEarlierAttemptIsNotWrittenThroughWithoutReuse) {
  std::vector<uint8_t> earlier = payload_;
  for (uint64_t i = 0; i < 100; ++i) earlier[20 * kChunk + 7 * i] ^= 0xa5;
  WriteFileBytes(dir_ / "p.bin", earlier);
  OpenStreamed(/*weak_checksums=*/true).reset();  // down with the link in place
  ASSERT_TRUE(fs::equivalent(dir_ / "p.bin", dir_ / "p.bin.part"));
  auto store = OpenStreamed(/*weak_checksums=*/false);
  EXPECT_FALSE(fs::equivalent(dir_ / "p.bin", dir_ / "p.bin.part"));
  Arrive(0);
  Arrive(1);
  ASSERT_TRUE(store->WriteChunk(20, Chunk(20)).ok());
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), earlier);
}

// A base names the earlier copy (by the rules of payload names, without symlinks on the way);
// a member that lacks it takes nothing.
TEST_P(PayloadStoreTest, ABaseUnderAnotherNameIsSearchedInstead) {
  OfferReuse();
  fs::create_directories(dir_ / "old");
  WriteFileBytes(dir_ / "old" / "v1.bin", EarlierVersion());
  {
    Result<std::unique_ptr<PayloadStore>> store =
        PayloadStore::OpenForReceive(dir_.string(), "p.bin", identity_, SystemFileIo(), {.earlier = {"old/v1.bin"}});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ((*store)->ReusedChunks(), identity_.NumChunks() - 1);
  }
  fs::remove(dir_ / "p.bin.part");
  Result<std::unique_ptr<PayloadStore>> missing = PayloadStore::OpenForReceive(
      dir_.string(), "p.bin", identity_, SystemFileIo(), {.earlier = {"nowhere/v0.bin"}});
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_EQ((*missing)->VerifiedCount(), 0u);
  missing->reset();
  fs::remove(dir_ / "p.bin.part");
  fs::create_directory_symlink(dir_ / "old", dir_ / "linked");
  Result<std::unique_ptr<PayloadStore>> linked = PayloadStore::OpenForReceive(
      dir_.string(), "p.bin", identity_, SystemFileIo(), {.earlier = {"linked/v1.bin"}});
  EXPECT_EQ(linked.status().code(), StatusCode::kInvalidArgument) << linked.status().ToString();
  EXPECT_EQ(PayloadStore::OpenForReceive(dir_.string(), "p.bin", identity_, SystemFileIo(),
                                         {.earlier = {"../v1.bin"}})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

// Without weak checksums (--no-reuse) nothing is taken from an earlier copy, not even from an
// identical one: every chunk is received.
TEST_P(PayloadStoreTest, WithoutWeakChecksumsNothingIsTaken) {
  for (const std::vector<uint8_t>& earlier : {EarlierVersion(), payload_}) {
    WriteFileBytes(dir_ / "p.bin", earlier);
    auto store = Open();
    EXPECT_EQ(store->VerifiedCount(), 0u);
    EXPECT_EQ(store->ReusedBytes(), 0u);
    store.reset();
    fs::remove(dir_ / "p.bin.part");
  }
}

// An earlier copy that is not a regular file is no base: a symlink is refused by name, a
// directory gives nothing.
TEST_P(PayloadStoreTest, AnEarlierCopyMustBeARegularFile) {
  OfferReuse();
  WriteFileBytes(dir_ / "elsewhere.bin", payload_);
  fs::create_symlink(dir_ / "elsewhere.bin", dir_ / "p.bin");
  Result<std::unique_ptr<PayloadStore>> linked = PayloadStore::OpenForReceive(dir_.string(), "p.bin", identity_);
  EXPECT_EQ(linked.status().code(), StatusCode::kInvalidArgument);
  fs::remove(dir_ / "p.bin");
  fs::create_directories(dir_ / "p.bin");
  auto store = Open();
  EXPECT_EQ(store->VerifiedCount(), 0u);
}

// This process's anonymous resident memory (RssAnon of /proc/self/status), in bytes.
uint64_t AnonymousResidentBytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("RssAnon:", 0) == 0) return std::stoull(line.substr(8)) * 1024;
  }
  return 0;
}

// Past ChunkBits::kInMemoryBits chunks a receiver's bits are mapped from files of its state
// directory, not anonymous memory: 2^27 chunks (16 MiB a bitmap) are received into, and resumed
// after a restart, with the process's anonymous memory up by less than one bitmap.
TEST_F(PayloadStoreFixture, PastTwoToThe26ChunksTheBitsAreMappedFromTheStateDirectory) {
  constexpr uint64_t kChunks = uint64_t{1} << 27;
  PayloadIdentity huge;
  huge.size_bytes = kChunks;
  huge.chunk_bytes = 1;
  huge.digest = ChunkDigest::kXxh3;
  const auto byte_of = [](uint64_t c) { return static_cast<uint8_t>(c * 7 + 1); };
  const DigestBatches rule(1, kChunks);
  const std::vector<uint64_t> batches = {0, rule.count() / 2, rule.count() - 2};
  const auto open = [&] {
    Result<std::unique_ptr<PayloadStore>> store = PayloadStore::OpenForReceive(dir_.string(), "huge.bin", huge, SystemFileIo());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    Result<std::unique_ptr<DigestLog>> log = DigestLog::OpenUnnamed(dir_.string(), huge.digest, rule, SystemFileIo());
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    std::shared_ptr<DigestLog> shared = std::move(*log);
    for (const uint64_t b : batches) {
      DigestBatch batch;
      batch.index = b;
      batch.first_chunk = rule.RangeOf(b).first;
      batch.kind = huge.digest;
      for (uint64_t c = batch.first_chunk; c < batch.first_chunk + rule.RangeOf(b).count; ++c) {
        const uint8_t byte = byte_of(c);
        batch.digests.push_back(HashChunk(huge.digest, {&byte, 1}));
      }
      EXPECT_TRUE(shared->Record(batch).ok());
    }
    (*store)->ExpectDigestsFrom(shared);
    return std::move(*store);
  };
  const uint64_t before = AnonymousResidentBytes();
  uint64_t received = 0;
  {
    std::unique_ptr<PayloadStore> store = open();
    for (const uint64_t b : batches) {
      for (uint64_t c = rule.RangeOf(b).first; c < rule.RangeOf(b).first + rule.RangeOf(b).count; ++c) {
        const uint8_t byte = byte_of(c);
        ASSERT_TRUE(store->WriteChunk(c, {&byte, 1}).ok()) << c;
        ++received;
      }
    }
    EXPECT_EQ(store->VerifiedCount(), received);
    EXPECT_EQ(store->spill_dir(), (dir_ / ".gridcast" / "state").string());
    EXPECT_EQ(store->HeldRuns(10).size(), 3u);
  }
  std::unique_ptr<PayloadStore> resumed = open();
  KnownChunks* known = resumed->capabilities().known;
  ASSERT_NE(known, nullptr);
  EXPECT_EQ(known->Candidates(), received);
  for (const uint64_t b : batches) (void)known->TakeKnownChunks(rule.RangeOf(b).first, rule.RangeOf(b).count, {});
  EXPECT_EQ(resumed->VerifiedCount(), received);
  const uint64_t grown = AnonymousResidentBytes() - std::min(before, AnonymousResidentBytes());
  EXPECT_LT(grown, kChunks / 8 / 2) << "anonymous memory grew by " << grown << " bytes";
  // The mapped files are unlinked: only the payload's own state files are left.
  for (const auto& entry : fs::directory_iterator(dir_ / ".gridcast" / "state")) {
    EXPECT_EQ(entry.path().extension(), ".state") << entry.path();
  }
}

TEST_F(FilledSourceTest, EachChunkIsHeldOnceItIsWholeInTheFileAndHashesRight) {
  auto store = OpenFilling(identity_);
  ASSERT_NE(store, nullptr);
  ASSERT_NE(store->capabilities().growing, nullptr);
  EXPECT_EQ(Verify(*store), 0u);
  Fill(0, kChunk + kChunk / 2);  // one chunk and a half
  EXPECT_EQ(Verify(*store), 1u);
  EXPECT_TRUE(store->Has(0));
  EXPECT_FALSE(store->Has(1));
  EXPECT_EQ(Verify(*store), 0u);
  Fill(kChunk + kChunk / 2, payload_.size());
  EXPECT_EQ(Verify(*store), identity_.NumChunks() - 1);
  ASSERT_TRUE(store->Complete());
  for (uint64_t c = 0; c < identity_.NumChunks(); ++c) EXPECT_TRUE(std::ranges::equal(Read(*store, c), Chunk(c)));
  Result<Digest> digest = store->Finalize(false);
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_EQ(*digest, identity_.ListDigest());
  EXPECT_TRUE(fs::exists(path_));  // the sender's file, under its own name
}

TEST_F(FilledSourceTest, BytesOtherThanTheDeclaredOnesAreNeverHeld) {
  auto store = OpenFilling(identity_);
  ASSERT_NE(store, nullptr);
  payload_[kChunk + 5] ^= 0x5a;  // the sender's buffer changed after it was hashed
  Fill(0, 2 * kChunk);
  Result<uint64_t> newly = store->capabilities().growing->VerifyFilled();
  EXPECT_EQ(newly.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(newly.status().message().find("chunk 1 of buffer"), std::string::npos) << newly.status().message();
  EXPECT_TRUE(store->Has(0));
  EXPECT_FALSE(store->Has(1));
  EXPECT_EQ(store->capabilities().growing->VerifyFilled().status().code(), StatusCode::kDataLoss);  // and stays refused
}

TEST_F(FilledSourceTest, AWrongWholeDigestKeepsTheLastChunkBack) {
  PayloadIdentity declared = identity_;
  declared.sha256[0] ^= 1;
  auto store = OpenFilling(declared);
  ASSERT_NE(store, nullptr);
  Fill(0, payload_.size());
  Result<uint64_t> newly = store->capabilities().growing->VerifyFilled();
  EXPECT_EQ(newly.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(newly.status().message().find("whole-payload SHA-256"), std::string::npos) << newly.status().message();
  EXPECT_EQ(store->VerifiedCount(), identity_.NumChunks() - 1);
  EXPECT_FALSE(store->Complete());
}

TEST_F(FilledSourceTest, AFileThatGrowsTooFarOrIsRemovedEndsTheFill) {
  auto store = OpenFilling(identity_);
  ASSERT_NE(store, nullptr);
  Fill(0, kChunk);
  EXPECT_EQ(Verify(*store), 1u);
  fs::remove(path_);  // the sender gave up
  EXPECT_EQ(store->capabilities().growing->VerifyFilled().status().code(), StatusCode::kAborted);

  std::ofstream(path_) << std::string(payload_.size() + 1, 'x');
  auto longer = OpenFilling(identity_);
  ASSERT_NE(longer, nullptr);
  Result<uint64_t> newly = longer->capabilities().growing->VerifyFilled();
  EXPECT_EQ(newly.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(newly.status().message().find("past the"), std::string::npos) << newly.status().message();
  EXPECT_EQ(longer->VerifiedCount(), 0u);
}

TEST_F(FilledSourceTest, AnEmptyPayloadIsWholeAtOnceAndADeclarationMustFitIt) {
  PayloadIdentity empty;
  empty.chunk_bytes = kChunk;
  empty.sha256 = Sha256({});
  auto store = OpenFilling(empty);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->Complete());
  empty.sha256[0] ^= 1;
  EXPECT_EQ(PayloadStore::OpenFilling(path_.string(), empty).status().code(), StatusCode::kInvalidArgument);
  PayloadIdentity short_list = identity_;
  short_list.chunk_hashes.pop_back();
  EXPECT_EQ(PayloadStore::OpenFilling(path_.string(), short_list).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(PayloadStore::OpenFilling((dir_ / "missing").string(), identity_).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace gridcast
