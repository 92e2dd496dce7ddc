// libgridcast's C API against real daemons: a buffer sent split-phase from one member and
// received into a buffer at another; the C++ API's in-memory broadcast and copier.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "cluster/control_client.h"
#include "deploy/local_cluster.h"
#include "include/gridcast/gridcast.h"
#include "include/gridcast/gridcast.hpp"

namespace gridcast {
namespace {

TEST(CApi, SendBufferSplitPhaseAndReceiveIntoBuffer) {
  LocalCluster cluster(GRIDCASTD, "capi", 4);
  gridcast_client* client = nullptr;
  ASSERT_EQ(gridcast_open(cluster.cluster_file().c_str(), "m0", &client), 0) << gridcast_last_error(client);

  // The chunk digest of later sends: a name no digest has is refused, naming the choices.
  EXPECT_LT(gridcast_set_digest(client, "md5"), 0);
  EXPECT_NE(std::string(gridcast_last_error(client)).find("sha256 or xxh3"), std::string::npos)
      << gridcast_last_error(client);
  ASSERT_EQ(gridcast_set_digest(client, "xxh3"), 0) << gridcast_last_error(client);
  EXPECT_LT(gridcast_set_reuse(client, 2), 0);
  ASSERT_EQ(gridcast_set_reuse(client, 1), 0);

  std::vector<uint8_t> sent(3'000'001);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  gridcast_broadcast* broadcast = nullptr;
  ASSERT_EQ(gridcast_send_buffer_start(client, sent.data(), sent.size(), "from-c/buffer.bin", "binomial",
                                       &broadcast), 0)
      << gridcast_last_error(client);
  // Split phase: the caller is free while the broadcast runs.
  double fraction = 0;
  int polls = 0;
  while (gridcast_poll(broadcast, &fraction) == 0) {
    ++polls;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  double completion_s = -1;
  ASSERT_EQ(gridcast_wait(client, broadcast, &completion_s), 0) << gridcast_last_error(client);
  EXPECT_GT(completion_s, 0);
  EXPECT_GE(fraction, 0.0);
  gridcast_broadcast_free(broadcast);

  std::vector<uint8_t> received(sent.size());
  ASSERT_EQ(gridcast_receive_buffer(client, "m3", "from-c/buffer.bin", received.data(), received.size(), 10), 0)
      << gridcast_last_error(client);
  EXPECT_EQ(received, sent);
  // m3 recorded its copy's chunk list with the digest this client chose.
  ControlClient m3(cluster.config().members[3].control_address, cluster.config().secret);
  v1::ListResponse held;
  ASSERT_TRUE(m3.List(&held).ok());
  const auto copy = std::find_if(held.payloads().begin(), held.payloads().end(),
                                 [](const v1::HeldPayload& p) { return p.name() == "from-c/buffer.bin"; });
  ASSERT_NE(copy, held.payloads().end());
  EXPECT_EQ(copy->digest(), v1::CHUNK_DIGEST_XXH3);

  // A buffer of the wrong size is an error with a message, not a crash or a short copy.
  std::vector<uint8_t> small(10);
  EXPECT_LT(gridcast_receive_buffer(client, "m2", "from-c/buffer.bin", small.data(), small.size(), 5), 0);
  EXPECT_NE(std::string(gridcast_last_error(client)).find("bytes; the buffer has 10"), std::string::npos)
      << gridcast_last_error(client);
  EXPECT_LT(gridcast_receive_buffer(client, "nobody", "x", small.data(), small.size(), 1), 0);
  gridcast_close(client);
}

// A buffer sent again under its name, changed in one place: each receiver takes the rest from
// the copy it holds (the source declares the weak checksums with the chunks' digests), unless
// the sender says no_reuse.
TEST(CppApi, ABufferSentAgainMovesOnlyWhatChanged) {
  LocalCluster cluster(GRIDCASTD, "rebuffer", 4);
  Result<std::unique_ptr<Client>> client = Client::Open({cluster.cluster_file(), "m0", ""});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::vector<uint8_t> bytes(4 << 20);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  SendOptions options;
  options.algorithm = "multilane";
  options.chunk_bytes = 64 << 10;
  auto send = [&](const SendOptions& with) {
    Result<std::unique_ptr<Broadcast>> broadcast = (*client)->StartSendBuffer(bytes, "again.bin", with);
    EXPECT_TRUE(broadcast.ok()) << broadcast.status().ToString();
    Result<BroadcastResult> result = broadcast.ok() ? (*broadcast)->Wait() : broadcast.status();
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    for (int i = 1; i < cluster.size(); ++i) {
      std::ifstream in(cluster.data_dir(i) / "again.bin", std::ios::binary);
      EXPECT_TRUE(std::equal(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), bytes.begin(),
                             bytes.end(), [](char a, uint8_t b) { return static_cast<uint8_t>(a) == b; }))
          << "m" << i;
    }
    return result.ok() ? *result : BroadcastResult{};
  };
  const uint64_t copies = bytes.size() * (cluster.size() - 1);
  EXPECT_EQ(send(options).moved_bytes, copies);
  bytes[3 * (64 << 10) + 5] ^= 1;
  const BroadcastResult again = send(options);
  EXPECT_EQ(again.moved_bytes, uint64_t{64 << 10} * (cluster.size() - 1));
  EXPECT_EQ(again.reused_bytes, copies - uint64_t{64 << 10} * (cluster.size() - 1));
  bytes[5] ^= 1;
  options.no_reuse = true;
  const BroadcastResult fresh = send(options);
  EXPECT_EQ(fresh.moved_bytes, copies);
  EXPECT_EQ(fresh.reused_bytes, 0u);
}

// The in-memory destination: receivers keep the payload in their daemon's memory directory
// (a tmpfs), never in their data directories; a reader takes it into its buffer, which removes
// it; a stopped daemon leaves no memory behind.
TEST(CppApi, AnInMemoryBroadcastNeverTouchesTheDataDirectories) {
  std::vector<std::string> memory_dirs;
  LocalCluster cluster(GRIDCASTD, "inmem", 4);
  {
    Result<std::unique_ptr<Client>> client = Client::Open({cluster.cluster_file(), "m0", ""});
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    std::vector<uint8_t> sent(2'500'003);
    for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<uint8_t>(i * 40503u >> 7);
    SendOptions options;
    options.algorithm = "multilane";
    options.chunk_bytes = 256 << 10;
    options.in_memory = true;
    Result<std::unique_ptr<Broadcast>> broadcast = (*client)->StartSendBuffer(sent, "mem/buffer.bin", options);
    ASSERT_TRUE(broadcast.ok()) << broadcast.status().ToString();
    Result<BroadcastResult> result = (*broadcast)->Wait();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_TRUE(result->verified);

    for (int i = 0; i < cluster.size(); ++i) {
      EXPECT_FALSE(fs::exists(cluster.data_dir(i) / "mem" / "buffer.bin")) << i;
      EXPECT_FALSE(fs::exists(cluster.data_dir(i) / "mem" / "buffer.bin.part")) << i;
      ControlClient member(cluster.config().members[i].control_address, cluster.config().secret);
      v1::ListResponse list;
      ASSERT_TRUE(member.List(&list).ok());
      memory_dirs.push_back(list.memory_dir());
      EXPECT_TRUE(fs::exists(fs::path(list.memory_dir()) / "mem" / "buffer.bin")) << list.memory_dir();
    }
    for (const char* member : {"m1", "m3"}) {
      std::vector<uint8_t> received(sent.size());
      ASSERT_TRUE((*client)->ReceiveIntoBuffer(member, "mem/buffer.bin", received, 10).ok()) << member;
      EXPECT_EQ(received, sent) << member;
    }
    EXPECT_FALSE(fs::exists(fs::path(memory_dirs[1]) / "mem" / "buffer.bin"));
    EXPECT_FALSE(fs::exists(fs::path(memory_dirs[3]) / "mem" / "buffer.bin"));
    EXPECT_TRUE(fs::exists(fs::path(memory_dirs[2]) / "mem" / "buffer.bin"));
  }
  for (int i = 0; i < cluster.size(); ++i) cluster.Terminate(i);
  for (const std::string& dir : memory_dirs) EXPECT_FALSE(fs::exists(dir)) << dir;
}


// A buffer's copy overlaps a push plan (the source sends while it is written) and precedes a
// hybrid one (its .torrent hashes all of it): both arrive whole, and the source keeps the
// buffer under the payload's name, not under the name it was written by.
TEST(CppApi, ABufferArrivesWholeWhetherItsCopyOverlapsThePlanOrPrecedesIt) {
  LocalCluster cluster(GRIDCASTD, "buffer-modes", 3);
  Result<std::unique_ptr<Client>> client = Client::Open({cluster.cluster_file(), "m0", ""});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::vector<uint8_t> sent(3'000'017);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<uint8_t>(i * 2246822519u >> 11);
  for (const auto& [algorithm, mode] : {std::pair{"multilane", Mode::kPush}, std::pair{"auto", Mode::kHybrid}}) {
    SendOptions options;
    options.algorithm = algorithm;
    options.in_memory = true;
    const std::string name = std::string("modes-") + algorithm + ".bin";
    Result<std::unique_ptr<Broadcast>> broadcast = (*client)->StartSendBuffer(sent, name, options);
    ASSERT_TRUE(broadcast.ok()) << broadcast.status().ToString();
    Result<BroadcastResult> result = (*broadcast)->Wait();
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->mode, mode) << ModeName(result->mode) << ": a cluster file without a topology: auto pushes with pull repair";
    for (const char* member : {"m0", "m2"}) {
      std::vector<uint8_t> received(sent.size());
      ReceiveOptions keep;
      keep.remove_in_memory = false;
      ASSERT_TRUE((*client)->Receive(member, name, received, keep).ok()) << member << " " << algorithm;
      EXPECT_EQ(received, sent) << member << " " << algorithm;
    }
    ControlClient source(cluster.config().members[0].control_address, cluster.config().secret);
    v1::ListResponse list;
    ASSERT_TRUE(source.List(&list).ok());
    EXPECT_FALSE(fs::exists(fs::path(list.memory_dir()) / (name + ".buffer-tmp"))) << algorithm;
  }
}

// A reader on a member's host copies each chunk once the member verified it, while the
// broadcast runs: with the source stopped mid-broadcast the buffer holds some chunks, each
// exactly the source's, and the rest untouched; once it goes on, all of it.
TEST(CppApi, ACopierTakesEachChunkOnceVerifiedWhileTheBroadcastRuns) {
  LocalCluster cluster(GRIDCASTD, "copier", 3);
  Result<std::unique_ptr<Client>> client = Client::Open({cluster.cluster_file(), "m0", ""});
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  constexpr uint64_t kChunk = 256 << 10;
  std::vector<uint8_t> sent(64 * kChunk * 4 + 12345);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<uint8_t>((i * 2654435761u >> 13) | 1);
  std::vector<uint8_t> received(sent.size(), 0);
  Result<std::unique_ptr<PayloadCopier>> copier = (*client)->CopyAsVerified("m2", "copied.bin", true, received);
  ASSERT_TRUE(copier.ok()) << copier.status().ToString();
  Result<bool> before = (*copier)->CopyVerified();
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  EXPECT_FALSE(*before);  // nothing prepared there yet

  SendOptions options;
  options.algorithm = "chain";
  options.chunk_bytes = kChunk;
  options.in_memory = true;
  options.take_memory_lazily = true;
  Result<std::unique_ptr<Broadcast>> broadcast = (*client)->StartSendBuffer(sent, "copied.bin", options);
  ASSERT_TRUE(broadcast.ok()) << broadcast.status().ToString();
  ControlClient m2(cluster.config().members[2].control_address, cluster.config().secret);
  v1::ChunkMapRequest request;
  request.set_name("copied.bin");
  request.set_in_memory(true);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {  // until the first chunk is verified at m2
    v1::ChunkMapResponse map;
    if (m2.ChunkMap(request, &map).ok() &&
        std::any_of(map.verified().begin(), map.verified().end(), [](char byte) { return byte != 0; })) {
      break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), give_up);
  }
  ASSERT_EQ(kill(cluster.pid(0), SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // what was in flight lands
  Result<bool> partial = (*copier)->CopyVerified();
  ASSERT_TRUE(partial.ok()) << partial.status().ToString();
  EXPECT_FALSE(*partial);
  size_t chunks_copied = 0;
  for (size_t offset = 0; offset < sent.size(); offset += kChunk) {
    const size_t n = std::min<size_t>(kChunk, sent.size() - offset);
    const bool copied = std::equal(sent.begin() + offset, sent.begin() + offset + n, received.begin() + offset);
    const bool untouched = std::all_of(received.begin() + offset, received.begin() + offset + n,
                                       [](uint8_t b) { return b == 0; });
    EXPECT_TRUE(copied || untouched) << "chunk at " << offset;
    chunks_copied += copied ? 1 : 0;
  }
  EXPECT_GT(chunks_copied, 0u);
  // The map comes in pages as asked, from a multiple of 8, and the pages agree with the whole.
  {
    v1::ChunkMapResponse whole, page;
    ASSERT_TRUE(m2.ChunkMap(request, &whole).ok());
    const uint64_t chunks = (sent.size() + kChunk - 1) / kChunk;
    ASSERT_EQ(whole.verified().size(), (chunks + 7) / 8);
    v1::ChunkMapRequest paged = request;
    paged.set_first_chunk(8);
    paged.set_max_chunks(8);
    ASSERT_TRUE(m2.ChunkMap(paged, &page).ok());
    EXPECT_EQ(page.first_chunk(), 8u);
    EXPECT_EQ(page.verified(), whole.verified().substr(1, 1));
    paged.set_first_chunk(3);
    EXPECT_EQ(m2.ChunkMap(paged, &page).code(), StatusCode::kInvalidArgument);
    paged.set_first_chunk((chunks + 8) / 8 * 8);
    EXPECT_EQ(m2.ChunkMap(paged, &page).code(), StatusCode::kOutOfRange);
  }
  ASSERT_EQ(kill(cluster.pid(0), SIGCONT), 0);

  Result<BroadcastResult> result = (*broadcast)->Wait();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  Result<bool> all = (*copier)->CopyVerified();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(*all);
  EXPECT_EQ(received, sent);

  // A buffer of another size is refused, naming both sizes.
  std::vector<uint8_t> shorter(sent.size() - 1);
  Result<std::unique_ptr<PayloadCopier>> wrong = (*client)->CopyAsVerified("m2", "copied.bin", true, shorter);
  ASSERT_TRUE(wrong.ok()) << wrong.status().ToString();
  Result<bool> refused = (*wrong)->CopyVerified();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find(std::to_string(sent.size())), std::string::npos)
      << refused.status().message();

  // ChunkMap checks names as every call naming a payload does.
  for (const char* outside : {"../escape.bin", "/etc/passwd", ".gridcast/state/copied.bin.state"}) {
    request.set_name(outside);
    v1::ChunkMapResponse map;
    EXPECT_EQ(m2.ChunkMap(request, &map).code(), StatusCode::kInvalidArgument) << outside;
  }
}

}  // namespace
}  // namespace gridcast
