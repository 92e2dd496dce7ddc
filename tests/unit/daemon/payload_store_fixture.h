// The payload and directory PayloadStore's tests share.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "daemon/store/payload_store.h"
#include "delta/rolling_checksum.h"
#include "test_dir.h"

namespace gridcast {

namespace fs = std::filesystem;

// A payload of five and a bit chunks in memory and a fresh directory to receive it into; its
// chunk digest is DigestUnderTest()'s.
class PayloadStoreFixture : public ::testing::Test {
 protected:
  static constexpr uint64_t kChunk = 64 << 10;

  virtual ChunkDigest DigestUnderTest() const { return ChunkDigest::kSha256; }

  void SetUp() override {
    dir_ = FreshTestDir("gridcast-store");
    fs::create_directories(dir_);
    std::mt19937_64 random(7);
    payload_.resize(5 * kChunk + 123);
    for (uint8_t& b : payload_) b = static_cast<uint8_t>(random());
    identity_.size_bytes = payload_.size();
    identity_.chunk_bytes = kChunk;
    identity_.digest = DigestUnderTest();
    for (uint64_t c = 0; c < identity_.NumChunks(); ++c) identity_.chunk_hashes.push_back(HashChunk(DigestUnderTest(), Chunk(c)));
    identity_.sha256 = Sha256(payload_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::span<const uint8_t> Chunk(uint64_t c) const {
    return std::span<const uint8_t>(payload_).subspan(c * kChunk, identity_.ChunkSize(c));
  }
  std::unique_ptr<PayloadStore> Open(FileIo& io = SystemFileIo()) {
    Result<std::unique_ptr<PayloadStore>> store = PayloadStore::OpenForReceive(dir_.string(), "p.bin", identity_, io);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return std::move(*store);
  }
  // Writes chunk c as 16 KiB blocks, as libtorrent does.
  void WriteBlocks(PayloadStore& store, uint64_t c, std::span<const uint8_t> data) {
    for (uint64_t offset = 0; offset < data.size(); offset += 16384) {
      ASSERT_TRUE(store.WriteBlock(c, offset, data.subspan(offset, std::min<uint64_t>(16384, data.size() - offset))).ok());
    }
  }
  std::vector<uint8_t> Read(const PayloadStore& store, uint64_t c) {
    std::vector<uint8_t> out(identity_.ChunkSize(c));
    EXPECT_TRUE(store.ReadChunk(c, out).ok());
    return out;
  }

  // The identity with every chunk's weak checksum: a plan that offers reuse.
  void OfferReuse() {
    identity_.weak_checksums.clear();
    for (uint64_t c = 0; c < identity_.NumChunks(); ++c) identity_.weak_checksums.push_back(WeakChecksum(Chunk(c)));
  }
  static void WriteFileBytes(const fs::path& file, std::span<const uint8_t> bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  static std::vector<uint8_t> FileBytes(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  // payload_ with 1000 bytes in front and chunk 2 rewritten: every chunk but 2 sits elsewhere.
  std::vector<uint8_t> EarlierVersion() const {
    std::vector<uint8_t> earlier(1000 + payload_.size(), 0x33);
    std::copy(payload_.begin(), payload_.end(), earlier.begin() + 1000);
    for (uint64_t i = 0; i < 100; ++i) earlier[1000 + 2 * kChunk + 7 * i] ^= 0xa5;
    return earlier;
  }

  static void FlipByte(const fs::path& file, uint64_t offset) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    const char byte = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(byte ^ 0x5a));
  }

  fs::path dir_;
  std::vector<uint8_t> payload_;
  PayloadIdentity identity_;
};

}  // namespace gridcast
