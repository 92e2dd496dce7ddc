// libgridcast's C API against real daemons: a buffer sent split-phase from one member and
// received into a buffer at another.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "include/gridcast/gridcast.h"
#include "deploy/local_cluster.h"

namespace gridcast {
namespace {

TEST(CApi, SendBufferSplitPhaseAndReceiveIntoBuffer) {
  LocalCluster cluster(GRIDCASTD, "capi", 4);
  gridcast_client* client = nullptr;
  ASSERT_EQ(gridcast_open(cluster.cluster_file().c_str(), "m0", &client), 0) << gridcast_last_error(client);

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

  // A buffer of the wrong size is an error with a message, not a crash or a short copy.
  std::vector<uint8_t> small(10);
  EXPECT_LT(gridcast_receive_buffer(client, "m2", "from-c/buffer.bin", small.data(), small.size(), 5), 0);
  EXPECT_NE(std::string(gridcast_last_error(client)).find("bytes; the buffer has 10"), std::string::npos)
      << gridcast_last_error(client);
  EXPECT_LT(gridcast_receive_buffer(client, "nobody", "x", small.data(), small.size(), 1), 0);
  gridcast_close(client);
}

}  // namespace
}  // namespace gridcast
