// WarmMemory: removed files kept with their pages under the limit, handed to the next payload
// by best fit once nobody reads them, let go when idle; and a receiver's ".part" made from a
// spare.
#include "daemon/store/warm_memory.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "daemon/store/payload_store.h"
#include "common/chunk_digest.h"
#include "common/crypto.h"
#include "tests/unit/daemon/test_dir.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kMiB = 1 << 20;

class WarmMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // On a tmpfs where there is one, as a daemon's memory directory is.
    root_ = FreshTestDir("gridcast-warm", fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path());
    fs::create_directories(root_ / "payloads");
    dir_fd_ = open((root_ / "payloads").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir_fd_, 0);
  }
  void TearDown() override {
    close(dir_fd_);
    warm_.reset();
    fs::remove_all(root_);
  }

  void OpenWarm(uint64_t limit_bytes, std::chrono::seconds idle = std::chrono::seconds(600)) {
    Result<std::unique_ptr<WarmMemory>> opened = WarmMemory::Open((root_ / "warm").string(), limit_bytes, idle);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    warm_ = std::move(*opened);
  }
  // A file of `bytes` written with `fill` (every page held).
  void Write(const std::string& name, uint64_t bytes, char fill = 'x') {
    std::ofstream out(root_ / "payloads" / name, std::ios::binary);
    const std::vector<char> data(bytes, fill);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  bool Exists(const std::string& name) const { return fs::exists(root_ / "payloads" / name); }
  uint64_t HeldBytes(const std::string& name) const {
    struct stat st {};
    EXPECT_EQ(stat((root_ / "payloads" / name).c_str(), &st), 0) << name;
    return static_cast<uint64_t>(st.st_blocks) * 512;
  }

  fs::path root_;
  int dir_fd_ = -1;
  std::unique_ptr<WarmMemory> warm_;
};

TEST_F(WarmMemoryTest, AKeptFileIsTakenBackWithItsPagesUnderAnotherName) {
  OpenWarm(16 * kMiB);
  Write("old", 2 * kMiB);
  const uint64_t held = HeldBytes("old");
  ASSERT_TRUE(warm_->Keep(dir_fd_, "old"));
  EXPECT_FALSE(Exists("old"));
  EXPECT_EQ(warm_->held_bytes(), held);
  EXPECT_EQ(warm_->spares(), 1u);

  ASSERT_TRUE(warm_->Take(dir_fd_, "new.part", 2 * kMiB));
  EXPECT_EQ(HeldBytes("new.part"), held);  // the pages came along: nothing to take afresh
  EXPECT_EQ(warm_->held_bytes(), 0u);
  EXPECT_FALSE(warm_->Take(dir_fd_, "other.part", 2 * kMiB));  // none left
  EXPECT_FALSE(Exists("other.part"));
}

// Whoever still reads a removed payload reads it to the end unchanged, as after an unlink.
TEST_F(WarmMemoryTest, ASpareSomeoneStillReadsIsNotHandedOut) {
  OpenWarm(16 * kMiB);
  Write("open", kMiB, 'r');
  const int reader = openat(dir_fd_, "open", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(warm_->Keep(dir_fd_, "open"));
  EXPECT_FALSE(Exists("open"));
  EXPECT_FALSE(warm_->Take(dir_fd_, "next.part", kMiB));
  EXPECT_FALSE(Exists("next.part"));

  // Mapped, with no descriptor left: still read.
  void* pages = mmap(nullptr, kMiB, PROT_READ, MAP_SHARED, reader, 0);
  ASSERT_NE(pages, MAP_FAILED);
  close(reader);
  EXPECT_FALSE(warm_->Take(dir_fd_, "next.part", kMiB));
  EXPECT_EQ(static_cast<const char*>(pages)[kMiB - 1], 'r');
  munmap(pages, kMiB);
  EXPECT_TRUE(warm_->Take(dir_fd_, "next.part", kMiB));
  EXPECT_EQ(warm_->spares(), 0u);
}

TEST_F(WarmMemoryTest, OnlyARegularFileOfOneLinkHoldingPagesIsKept) {
  OpenWarm(16 * kMiB);
  Write("linked", kMiB);
  ASSERT_EQ(linkat(dir_fd_, "linked", dir_fd_, "second-name", 0), 0);
  EXPECT_FALSE(warm_->Keep(dir_fd_, "linked"));  // its bytes stay readable as "second-name"
  ASSERT_EQ(symlinkat("second-name", dir_fd_, "symlink"), 0);
  EXPECT_FALSE(warm_->Keep(dir_fd_, "symlink"));
  fs::create_directory(root_ / "payloads" / "directory");
  EXPECT_FALSE(warm_->Keep(dir_fd_, "directory"));
  {
    std::ofstream sparse(root_ / "payloads" / "sparse");
  }
  fs::resize_file(root_ / "payloads" / "sparse", 4 * kMiB);  // no page held: nothing to keep
  EXPECT_FALSE(warm_->Keep(dir_fd_, "sparse"));
  EXPECT_FALSE(warm_->Keep(dir_fd_, "missing"));
  EXPECT_EQ(warm_->spares(), 0u);
  EXPECT_TRUE(Exists("linked") && Exists("symlink") && Exists("directory") && Exists("sparse"));
}

TEST_F(WarmMemoryTest, TheLimitHoldsOldestGoFirstAndNothingIsKeptAtZero) {
  OpenWarm(5 * kMiB);
  Write("a", 2 * kMiB);
  Write("b", 2 * kMiB);
  Write("c", 2 * kMiB);
  Write("huge", 6 * kMiB);
  ASSERT_TRUE(warm_->Keep(dir_fd_, "a"));
  ASSERT_TRUE(warm_->Keep(dir_fd_, "b"));
  ASSERT_TRUE(warm_->Keep(dir_fd_, "c"));  // "a" goes to make room
  EXPECT_EQ(warm_->spares(), 2u);
  EXPECT_LE(warm_->held_bytes(), 5 * kMiB);
  EXPECT_FALSE(warm_->Keep(dir_fd_, "huge"));
  EXPECT_TRUE(Exists("huge"));
  EXPECT_EQ(std::distance(fs::directory_iterator(root_ / "warm"), fs::directory_iterator()), 2);

  warm_.reset();
  EXPECT_FALSE(fs::exists(root_ / "warm") && !fs::is_empty(root_ / "warm"));  // all let go
  OpenWarm(0);
  EXPECT_FALSE(warm_->Keep(dir_fd_, "huge"));
}

TEST_F(WarmMemoryTest, TheBestFitIsTakenAndAnOccupiedNameIsLeftAlone) {
  OpenWarm(64 * kMiB);
  Write("one", kMiB, '1');
  Write("four", 4 * kMiB, '4');
  Write("eight", 8 * kMiB, '8');
  for (const char* name : {"one", "four", "eight"}) ASSERT_TRUE(warm_->Keep(dir_fd_, name));

  // The most pages that will all be used: the 4 MiB one for 5 MiB.
  ASSERT_TRUE(warm_->Take(dir_fd_, "five", 5 * kMiB));
  EXPECT_EQ(fs::file_size(root_ / "payloads" / "five"), 4 * kMiB);
  // None that small: the smallest larger one.
  ASSERT_TRUE(warm_->Take(dir_fd_, "half", kMiB / 2));
  EXPECT_EQ(fs::file_size(root_ / "payloads" / "half"), kMiB);
  // The name is taken: the spare stays.
  EXPECT_FALSE(warm_->Take(dir_fd_, "five", 8 * kMiB));
  EXPECT_EQ(warm_->spares(), 1u);
  EXPECT_TRUE(warm_->Take(dir_fd_, "eight-again", 8 * kMiB));
}

TEST_F(WarmMemoryTest, WhatLiesUnusedPastTheIdleTimeGoes) {
  OpenWarm(64 * kMiB, std::chrono::seconds(60));
  Write("a", kMiB);
  ASSERT_TRUE(warm_->Keep(dir_fd_, "a"));
  warm_->ReleaseIdle(WarmMemory::Clock::now() + std::chrono::seconds(30));
  EXPECT_EQ(warm_->spares(), 1u);
  warm_->ReleaseIdle(WarmMemory::Clock::now() + std::chrono::seconds(61));
  EXPECT_EQ(warm_->spares(), 0u);
  EXPECT_EQ(warm_->held_bytes(), 0u);
  EXPECT_TRUE(fs::is_empty(root_ / "warm"));
}

// A receiver's new ".part" is a spare: its pages are held before a chunk arrives, and the
// spare's stale bytes count for nothing (no chunk is held until verified).
TEST_F(WarmMemoryTest, AReceiverMakesItsPartFromASpare) {
  OpenWarm(64 * kMiB);
  Write("removed", 4 * kMiB, 'z');
  ASSERT_TRUE(warm_->Keep(dir_fd_, "removed"));
  const std::vector<uint8_t> payload(3 * kMiB + 100, 'p');
  PayloadIdentity identity;
  identity.size_bytes = payload.size();
  identity.chunk_bytes = 256 * 1024;
  identity.digest = ChunkDigest::kSha256;
  for (uint64_t c = 0; c < identity.NumChunks(); ++c) {
    identity.chunk_hashes.push_back(HashChunk(
        identity.digest, std::span<const uint8_t>(payload).subspan(c * identity.chunk_bytes, identity.ChunkSize(c))));
  }
  identity.sha256 = Sha256(payload);
  ReceiveOptions options;
  options.space = ReceiveSpace::kCheckFree;
  options.warm = warm_.get();
  Result<std::unique_ptr<PayloadStore>> store = PayloadStore::OpenForReceive(
      (root_ / "payloads").string(), "fresh", identity, SystemFileIo(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(warm_->spares(), 0u);
  EXPECT_EQ((*store)->VerifiedCount(), 0u);
  EXPECT_EQ(fs::file_size(root_ / "payloads" / "fresh.part"), payload.size());
  EXPECT_GE(HeldBytes("fresh.part"), payload.size());
}

}  // namespace
}  // namespace gridcast
