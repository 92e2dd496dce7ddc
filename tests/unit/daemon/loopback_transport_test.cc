// The loopback transport: the bytes a TCP connection would carry, in order, through bounded
// pipes; a reader that waits too long, a closed peer and a name nobody listens at fail as a
// socket would.
#include "daemon/transport/loopback/loopback_transport.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <numeric>
#include <optional>
#include <vector>

namespace gridcast {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// Starts `task` on `io`; its value lands in `result`.
template <typename T>
void Spawn(asio::io_context& io, asio::awaitable<T> task, std::optional<T>& result) {
  asio::co_spawn(
      io, [&result, task = std::move(task)]() mutable -> asio::awaitable<void> { result.emplace(co_await std::move(task)); },
      asio::detached);
}

// Runs `task` on `io` to its end and returns its value.
template <typename T>
T RunOn(asio::io_context& io, asio::awaitable<T> task) {
  std::optional<T> result;
  Spawn(io, std::move(task), result);
  io.restart();
  io.run();
  return std::move(*result);
}

class LoopbackTransportTest : public ::testing::Test {
 protected:
  LoopbackTransportTest() : network_(LoopbackNetwork::Create(io_, /*pipe_bytes=*/4096)), server_(network_), client_(network_) {}

  // Listens at "b:0" and returns the address it got, keeping what is accepted in accepted_.
  std::string Listen() {
    Result<uint16_t> port = server_.Listen("b:0", [this](ConnectionPtr c) { accepted_ = std::move(c); });
    EXPECT_TRUE(port.ok()) << port.status().ToString();
    return "b:" + std::to_string(port.ok() ? *port : 0);
  }

  asio::io_context io_;
  std::shared_ptr<LoopbackNetwork> network_;
  LoopbackTransport server_, client_;
  ConnectionPtr accepted_;
};

TEST_F(LoopbackTransportTest, CarriesMoreThanAPipeHoldsInOrderAndChunksFromMemoryAndFiles) {
  const std::string address = Listen();
  EXPECT_EQ(address, "b:1");
  Result<ConnectionPtr> connected = RunOn(io_, client_.Connect(address, milliseconds(1000)));
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  ASSERT_NE(accepted_, nullptr);
  std::vector<uint8_t> sent(100'000);
  std::iota(sent.begin(), sent.end(), 0);
  const std::vector<uint8_t> head = {1, 2, 3};
  std::vector<uint8_t> received(head.size() + sent.size());
  // The writer waits for room (the pipe holds 4 KiB) while the reader takes the bytes.
  std::optional<Status> written, read;
  Spawn(io_, (*connected)->SendChunk(head, ChunkRef::InMemory(sent), milliseconds(1000)), written);
  Spawn(io_, accepted_->Read(received, milliseconds(1000)), read);
  io_.restart();
  io_.run();
  ASSERT_TRUE(written && written->ok()) << (written ? written->ToString() : "unfinished");
  ASSERT_TRUE(read && read->ok()) << (read ? read->ToString() : "unfinished");
  EXPECT_TRUE(std::equal(head.begin(), head.end(), received.begin()));
  EXPECT_TRUE(std::equal(sent.begin(), sent.end(), received.begin() + static_cast<ptrdiff_t>(head.size())));
}

TEST_F(LoopbackTransportTest, ASilentPeerTimesOutAClosedOneFailsAndNobodyRefuses) {
  Result<ConnectionPtr> nobody = RunOn(io_, client_.Connect("c:1", milliseconds(100)));
  ASSERT_FALSE(nobody.ok());
  EXPECT_EQ(nobody.status().code(), StatusCode::kUnavailable);

  const std::string address = Listen();
  Result<ConnectionPtr> connected = RunOn(io_, client_.Connect(address, milliseconds(1000)));
  ASSERT_TRUE(connected.ok());
  std::vector<uint8_t> out(10);
  const Status silent = RunOn(io_, accepted_->Read(out, milliseconds(30)));
  EXPECT_EQ(silent.code(), StatusCode::kDeadlineExceeded) << silent.ToString();
  EXPECT_FALSE(accepted_->IsOpen());  // a timed-out connection is closed, as a socket's deadline closes it
  const Status closed = RunOn(io_, (*connected)->Write(out, {}, milliseconds(100)));
  EXPECT_EQ(closed.code(), StatusCode::kUnavailable) << closed.ToString();
  const Status second = RunOn(io_, (*connected)->Read(out, milliseconds(100)));
  EXPECT_EQ(second.code(), StatusCode::kUnavailable) << second.ToString();
  // A name is bound once.
  LoopbackTransport other(network_);
  EXPECT_EQ(other.Listen(address, [](ConnectionPtr) {}).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace gridcast
