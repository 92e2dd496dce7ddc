// Memory lent to real daemons on loopback (docs/daemon.md, "Memory lent by local processes"):
// this test process lends buffers to three daemons, as the MPI shim's ranks do, and libgridcast
// broadcasts from the source's lent buffer into the receivers' lent buffers; a hybrid broadcast
// leaves lent buffers alone; a source with nothing lent fails with its reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <vector>

#include "client/mpi/rank_memory_lease.h"
#include "cluster/control_client.h"
#include "cluster/rank_memory_protocol.h"
#include "deploy/local_cluster.h"
#include "include/gridcast/gridcast.hpp"

namespace gridcast {
namespace {

class LentMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    payload_.resize(3'000'001);
    for (size_t i = 0; i < payload_.size(); ++i) payload_[i] = static_cast<uint8_t>(i * 2654435761u >> 11);
  }
  std::unique_ptr<RankMemoryLease> Lend(int member, const std::string& name, std::vector<uint8_t>& buffer) {
    const ClusterMember& m = cluster_.config().members[static_cast<size_t>(member)];
    Result<std::unique_ptr<RankMemoryLease>> lease =
        RankMemoryLease::Lend(RankMemorySocketName(m.name, m.data_address), name, buffer);
    EXPECT_TRUE(lease.ok()) << lease.status().ToString();
    return lease.ok() ? std::move(*lease) : nullptr;
  }
  std::unique_ptr<Client> Open() {
    ClientOptions options;
    options.cluster_file = cluster_.cluster_file();
    options.source = "m0";
    Result<std::unique_ptr<Client>> client = Client::Open(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(*client);
  }
  bool InMemoryDirs(const std::string& name) const {
    for (int i = 0; i < cluster_.size(); ++i) {
      if (fs::exists(cluster_.memory_dir(i) / name)) return true;
    }
    return false;
  }

  LocalCluster cluster_{GRIDCASTD, "lent", 4};
  std::vector<uint8_t> payload_;
};

TEST_F(LentMemoryTest, APushGoesFromTheSourcesLentBufferIntoTheReceiversLentBuffers) {
  std::vector<uint8_t> source = payload_;
  std::vector<std::vector<uint8_t>> received(3, std::vector<uint8_t>(payload_.size(), 0));
  std::unique_ptr<RankMemoryLease> source_lease = Lend(0, "lent.bin", source);
  std::vector<std::unique_ptr<RankMemoryLease>> leases;
  for (int m = 1; m <= 3; ++m) leases.push_back(Lend(m, "lent.bin", received[static_cast<size_t>(m - 1)]));
  ASSERT_TRUE(source_lease && leases[0] && leases[1] && leases[2]);

  std::unique_ptr<Client> client = Open();
  SendOptions options;
  options.algorithm = "binary";
  options.chunk_bytes = 64 << 10;
  options.digest = "xxh3";
  options.in_memory = true;
  options.into_registered_memory = true;
  options.from_registered_memory = true;
  Result<std::unique_ptr<Broadcast>> started = client->StartSendBuffer(source, "lent.bin", options);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  Result<BroadcastResult> result = (*started)->Wait();
  ASSERT_TRUE(result.ok()) << result.status().ToString();

  Result<RankMemoryLease::Outcome> sent = source_lease->Release();
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_TRUE(sent->bound) << "the source copied the buffer instead of sending from it";
  for (size_t i = 0; i < leases.size(); ++i) {
    Result<RankMemoryLease::Outcome> released = leases[i]->Release();
    ASSERT_TRUE(released.ok()) << released.status().ToString();
    EXPECT_TRUE(released->bound && released->filled) << "m" << i + 1;
    EXPECT_TRUE(received[i] == payload_) << "m" << i + 1;
  }
  EXPECT_FALSE(InMemoryDirs("lent.bin")) << "a daemon kept a copy";
}

TEST_F(LentMemoryTest, WithoutALoanTheSourceSaysSoAndUnboundBuffersStayUntouched) {
  std::unique_ptr<Client> client = Open();
  SendOptions options;
  options.algorithm = "chain";
  options.in_memory = true;
  options.into_registered_memory = true;
  options.from_registered_memory = true;
  Result<std::unique_ptr<Broadcast>> started = client->StartSendBuffer(payload_, "nothing-lent.bin", options);
  Status failed = started.ok() ? (*started)->Wait().status() : started.status();
  EXPECT_NE(failed.message().find("no process on this host lent"), std::string::npos) << failed.ToString();

  // A hybrid plan is not received into lent memory: the member keeps its copy, as before.
  std::vector<uint8_t> lent(payload_.size(), 0);
  std::unique_ptr<RankMemoryLease> lease = Lend(1, "hybrid.bin", lent);
  ASSERT_TRUE(lease);
  const fs::path file = cluster_.memory_dir(0) / "hybrid.bin";
  {
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(payload_.data()),
                                                static_cast<std::streamsize>(payload_.size()));
  }
  v1::BroadcastRequest request;
  request.set_payload_path(file.string());
  request.set_mode(v1::PLAN_MODE_HYBRID);
  request.set_in_memory(true);
  request.set_into_registered_memory(true);
  request.add_members("m1");
  ControlClient m0(cluster_.config().members[0].control_address, cluster_.config().secret);
  bool finished = false;
  std::string error;
  ASSERT_TRUE(m0.Broadcast(request, std::chrono::seconds(60), [&](const v1::BroadcastProgress& progress) {
                  finished = progress.finished();
                  error = progress.error();
                }).ok());
  EXPECT_TRUE(finished && error.empty()) << error;
  Result<RankMemoryLease::Outcome> released = lease->Release();
  ASSERT_TRUE(released.ok());
  EXPECT_FALSE(released->bound);
  EXPECT_EQ(lent, std::vector<uint8_t>(payload_.size(), 0));
  EXPECT_TRUE(fs::exists(cluster_.memory_dir(1) / "hybrid.bin"));
}

}  // namespace
}  // namespace gridcast
