// PayloadStore under injected faults (FaultInjectionFileIo): failing and short writes and
// reads, a refused reservation, a crash between a chunk's write and its bitmap update, and a
// power loss taking back unsynced writes. The rule under test is the store's own: whatever
// fails, a chunk counts only if its bytes on disk hash right, an error names its cause, and
// what was verified before the fault is kept.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cerrno>

#include "fault_injection_file_io.h"
#include "payload_store_fixture.h"

namespace gridcast {
namespace {

class StoreFaultTest : public PayloadStoreFixture {
 protected:
  std::unique_ptr<PayloadStore> OpenFaulty() { return Open(io_); }
  void WriteAll(PayloadStore& store) {
    for (uint64_t c = 0; c < identity_.NumChunks(); ++c) ASSERT_TRUE(store.WriteChunk(c, Chunk(c)).ok()) << c;
  }
  FaultInjectionFileIo io_;
};

TEST_F(StoreFaultTest, ShortAndInterruptedTransfersStillStoreEveryByte) {
  io_.SetShortTransfers(true);
  auto store = OpenFaulty();
  WriteAll(*store);
  for (uint64_t c = 0; c < identity_.NumChunks(); ++c) EXPECT_TRUE(std::ranges::equal(Read(*store, c), Chunk(c)));
  ASSERT_TRUE(store->Finalize(/*sync=*/true).ok());
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
  // A source read through short reads hashes to the same identity.
  Result<std::unique_ptr<PayloadStore>> source = PayloadStore::OpenSource((dir_ / "p.bin").string(), kChunk, ChunkDigest::kSha256, io_);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->identity().Fingerprint(), identity_.Fingerprint());
}

TEST_F(StoreFaultTest, AFailedWriteCountsNothingAndNamesItsCause) {
  auto store = OpenFaulty();
  ASSERT_TRUE(store->WriteChunk(0, Chunk(0)).ok());
  io_.FailWrites(".part", EIO);
  Status failed = store->WriteChunk(1, Chunk(1));
  EXPECT_EQ(failed.code(), StatusCode::kInternal);
  EXPECT_NE(failed.message().find("Input/output error"), std::string::npos) << failed.message();
  io_.ClearFaults();
  io_.FailWrites(".part", ENOSPC);
  failed = store->WriteChunk(2, Chunk(2));
  EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(failed.message().find("disk full"), std::string::npos) << failed.message();
  EXPECT_FALSE(store->Has(1));
  EXPECT_FALSE(store->Has(2));
  EXPECT_EQ(store->VerifiedCount(), 1u);
  // Once the disk works again the same chunks are written and counted.
  io_.ClearFaults();
  ASSERT_TRUE(store->WriteChunk(1, Chunk(1)).ok());
  ASSERT_TRUE(store->WriteChunk(2, Chunk(2)).ok());
  EXPECT_EQ(store->VerifiedCount(), 3u);
}

TEST_F(StoreFaultTest, AFailedBlockWriteLeavesTheChunkUnverified) {
  auto store = OpenFaulty();
  io_.FailWrites(".part", EIO, /*after=*/2);  // the third 16 KiB block fails
  bool any_failed = false;
  for (uint64_t offset = 0; offset < kChunk; offset += 16384) {
    any_failed = !store->WriteBlock(3, offset, Chunk(3).subspan(offset, 16384)).ok() || any_failed;
  }
  EXPECT_TRUE(any_failed);
  EXPECT_EQ(store->VerifyStoredChunk(3).code(), StatusCode::kDataLoss);
  EXPECT_FALSE(store->Has(3));
}

// The chunk's bytes reached the file, its bit never reached the bitmap: after the restart it
// is simply not held, and is received again.
TEST_F(StoreFaultTest, ACrashBetweenTheWriteAndTheBitmapCostsOnlyAReReceive) {
  {
    auto store = OpenFaulty();
    ASSERT_TRUE(store->WriteChunk(0, Chunk(0)).ok());
    ASSERT_TRUE(store->WriteChunk(1, Chunk(1)).ok());
    io_.FailWrites(".state", EIO);
    EXPECT_FALSE(store->WriteChunk(4, Chunk(4)).ok());
  }
  io_.ClearFaults();
  auto store = OpenFaulty();
  EXPECT_TRUE(store->Has(0));
  EXPECT_TRUE(store->Has(1));
  EXPECT_FALSE(store->Has(4));
  EXPECT_EQ(store->VerifiedCount(), 2u);
  WriteAll(*store);
  Result<Digest> digest = store->Finalize(/*sync=*/false);
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_EQ(*digest, identity_.ListDigest());
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
}

// The process died after the last write and before the renames into place: first before the
// chunk list's, then before the payload's. Each time the restarted store resumes every chunk
// from its bitmap and finishes without receiving one again.
TEST_F(StoreFaultTest, ACrashBetweenTheWritesAndTheRenamesResumesFromTheBitmap) {
  for (const char* renamed : {".chunks.tmp", "p.bin.part"}) {
    {
      auto store = OpenFaulty();
      WriteAll(*store);
      io_.FailRenames(renamed, EIO);
      EXPECT_FALSE(store->Finalize(/*sync=*/true).ok()) << renamed;
    }
    io_.ClearFaults();
    EXPECT_FALSE(fs::exists(dir_ / "p.bin")) << renamed;
    EXPECT_EQ(PayloadStore::RecordedIdentity(dir_.string(), "p.bin").ok(), std::string(renamed) != ".chunks.tmp");
    auto store = OpenFaulty();
    EXPECT_TRUE(store->Complete()) << renamed;
    Result<Digest> digest = store->Finalize(/*sync=*/true);
    ASSERT_TRUE(digest.ok()) << digest.status().ToString();
    EXPECT_EQ(*digest, identity_.ListDigest());
    EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
    Result<ScrubReport> scrub = PayloadStore::Scrub(dir_.string(), "p.bin");
    ASSERT_TRUE(scrub.ok()) << scrub.status().ToString();
    EXPECT_TRUE(scrub->bad_chunks.empty());
    fs::remove(dir_ / "p.bin");
    fs::remove(PayloadStatePath(dir_.string(), "p.bin", ".chunks"));
  }
}

// The same crash with a power loss: the payload's bytes were synced, the bitmap never was.
// Nothing counts, nothing bad is kept: the chunks are received again.
TEST_F(StoreFaultTest, APowerLossBeforeTheRenameCostsAReReceiveNeverABadChunk) {
  {
    auto store = OpenFaulty();
    WriteAll(*store);
    io_.FailRenames("p.bin.part", EIO);
    EXPECT_FALSE(store->Finalize(/*sync=*/true).ok());
  }
  io_.ClearFaults();
  ASSERT_TRUE(io_.LoseUnsyncedWrites(".state"));
  auto store = OpenFaulty();
  EXPECT_EQ(store->VerifiedCount(), 0u);
  WriteAll(*store);
  ASSERT_TRUE(store->Finalize(/*sync=*/true).ok());
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
}

// A state file that cannot be opened fails the open with its path; nothing is left half made.
TEST_F(StoreFaultTest, AnUnopenableBitmapFailsTheOpenNamingIt) {
  io_.FailOpens(".state", EACCES);
  Result<std::unique_ptr<PayloadStore>> store =
      PayloadStore::OpenForReceive(dir_.string(), "p.bin", identity_, io_);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find(".state"), std::string::npos) << store.status().ToString();
  io_.ClearFaults();
  auto again = OpenFaulty();
  EXPECT_EQ(again->VerifiedCount(), 0u);
}

// A power loss kept the bitmap's writes but lost some of the payload's: the bitmap claims
// chunks whose bytes are gone. The resume checks them and keeps only those that survived.
TEST_F(StoreFaultTest, PayloadWritesLostInAPowerLossAreNotCountedOnResume) {
  {
    auto store = OpenFaulty();
    WriteAll(*store);  // six chunk writes, none synced
  }
  ASSERT_TRUE(io_.LoseUnsyncedWrites(".part", /*keep_one_in=*/2));  // chunks 0, 2 and 4 survive
  auto store = OpenFaulty();
  EXPECT_EQ(store->VerifiedCount(), 3u);
  for (uint64_t c = 0; c < identity_.NumChunks(); ++c) EXPECT_EQ(store->Has(c), c % 2 == 0) << c;
  WriteAll(*store);
  ASSERT_TRUE(store->Finalize(/*sync=*/true).ok());
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
}

// The opposite loss: the bytes stayed, the bitmap (and its header) went. Nothing counts: the
// chunks are received again, the cost of a bitmap no one synced.
TEST_F(StoreFaultTest, ALostBitmapCostsAReReceiveNeverABadChunk) {
  {
    auto store = OpenFaulty();
    WriteAll(*store);
  }
  ASSERT_TRUE(io_.LoseUnsyncedWrites(".state"));
  auto store = OpenFaulty();
  EXPECT_EQ(store->VerifiedCount(), 0u);
  WriteAll(*store);
  EXPECT_TRUE(store->Finalize(/*sync=*/false).ok());
}

// Finalize without sync renames a file whose bytes may still be only in the page cache; a
// power loss then leaves a final file with holes. The scrub names the lost chunks and the next
// broadcast of the payload receives it again; with sync nothing is lost.
TEST_F(StoreFaultTest, AFinishedCopyIsDurableOnlyWhenSynced) {
  {
    auto store = OpenFaulty();
    WriteAll(*store);
    ASSERT_TRUE(store->Finalize(/*sync=*/false).ok());
  }
  ASSERT_TRUE(io_.LoseUnsyncedWrites("p.bin", /*keep_one_in=*/3));  // chunks 0 and 3 survive
  Result<ScrubReport> scrub = PayloadStore::Scrub(dir_.string(), "p.bin");
  ASSERT_TRUE(scrub.ok()) << scrub.status().ToString();
  EXPECT_EQ(scrub->bad_chunks, (std::vector<uint64_t>{1, 2, 4, 5}));
  {
    auto again = OpenFaulty();
    EXPECT_FALSE(again->Complete());
    WriteAll(*again);
    ASSERT_TRUE(again->Finalize(/*sync=*/true).ok());
  }
  ASSERT_TRUE(io_.LoseUnsyncedWrites("p.bin"));
  scrub = PayloadStore::Scrub(dir_.string(), "p.bin");
  ASSERT_TRUE(scrub.ok());
  EXPECT_TRUE(scrub->bad_chunks.empty());
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
}

TEST_F(StoreFaultTest, ReadErrorsOnResumeCountAsUnverifiedAndReadsNameThem) {
  {
    auto store = OpenFaulty();
    WriteAll(*store);
  }
  io_.FailReads(".part", EIO, /*after=*/3);  // the resume reads three chunks, then the disk fails
  auto store = OpenFaulty();
  EXPECT_EQ(store->VerifiedCount(), 3u);
  std::vector<uint8_t> out(kChunk);
  const Status read = store->ReadChunk(0, out);
  EXPECT_EQ(read.code(), StatusCode::kInternal);
  EXPECT_NE(read.message().find("Input/output error"), std::string::npos) << read.message();
}

TEST_F(StoreFaultTest, ARefusedReservationLeavesNoFileAndAnUnsupportedOneIsNoError) {
  io_.FailReserve(ENOSPC);
  Result<std::unique_ptr<PayloadStore>> store = PayloadStore::OpenForReceive(dir_.string(), "p.bin", identity_, io_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(store.status().message().find("disk full"), std::string::npos) << store.status().message();
  EXPECT_FALSE(fs::exists(dir_ / "p.bin.part"));
  // File systems without fallocate: the space is not reserved, so a full disk shows up at a
  // write instead, named as one.
  io_.FailReserve(EOPNOTSUPP);
  auto unreserved = OpenFaulty();
  io_.FailWrites(".part", ENOSPC, /*after=*/1);
  ASSERT_TRUE(unreserved->WriteChunk(0, Chunk(0)).ok());
  EXPECT_EQ(unreserved->WriteChunk(1, Chunk(1)).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(unreserved->VerifiedCount(), 1u);
}


TEST_F(StoreFaultTest, CheckingFreeSpaceTakesNoneNowAndRefusesWhatCannotFit) {
  // ReceiveSpace::kCheckFree never allocates: a reservation would fail here, and the file holds no blocks.
  io_.FailReserve(ENOSPC);
  Result<std::unique_ptr<PayloadStore>> lazy =
      PayloadStore::OpenForReceive(dir_.string(), "p.bin", identity_, io_, {.space = ReceiveSpace::kCheckFree});
  ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
  struct stat st {};
  ASSERT_EQ(stat((dir_ / "p.bin.part").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(identity_.size_bytes));
  EXPECT_EQ(st.st_blocks, 0);
  ASSERT_TRUE((*lazy)->WriteChunk(0, Chunk(0)).ok());

  // A payload larger than any file system here is refused before anything is written.
  PayloadIdentity huge;
  huge.chunk_bytes = uint64_t{1} << 40;
  huge.size_bytes = uint64_t{1} << 52;
  huge.chunk_hashes.assign(huge.NumChunks(), Digest{});
  Result<std::unique_ptr<PayloadStore>> refused =
      PayloadStore::OpenForReceive(dir_.string(), "huge.bin", huge, io_, {.space = ReceiveSpace::kCheckFree});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("disk full"), std::string::npos) << refused.status().message();
  EXPECT_FALSE(fs::exists(dir_ / "huge.bin.part"));
}

// An earlier copy that cannot be read only saves less: the store opens, takes what it read
// before the fault, and receives the rest.
TEST_F(StoreFaultTest, AnEarlierCopyThatFailsToReadOnlySavesLess) {
  OfferReuse();
  const std::vector<uint8_t> earlier = EarlierVersion();
  WriteFileBytes(dir_ / "p.bin", earlier);
  io_.FailReads("p.bin", EIO);
  auto store = OpenFaulty();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->ReusedChunks(), 0u);
  io_.ClearFaults();
  WriteAll(*store);
  ASSERT_TRUE(store->Finalize(/*sync=*/false).ok());
  EXPECT_EQ(FileBytes(dir_ / "p.bin"), payload_);
}

}  // namespace
}  // namespace gridcast
