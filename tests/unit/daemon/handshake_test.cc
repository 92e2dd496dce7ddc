// The data plane's handshake over a real TCP connection with a member of an older data protocol
// version, as a daemon of this version meets one during an upgrade: each side refuses it and
// says which versions met.
#include "daemon/transport/handshake.h"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <optional>

#include "daemon/transport/frame.h"
#include "daemon/transport/tcp/tcp_transport.h"

namespace gridcast {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
constexpr std::chrono::milliseconds kTimeout{5000};

class HandshakeTest : public ::testing::Test {
 protected:
  // A fresh connection between the two.
  void Connect() {
    tcp::acceptor acceptor(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
    ours_.connect(acceptor.local_endpoint());
    theirs_ = acceptor.accept();
  }

  asio::io_context io_;
  tcp::socket ours_{io_};     // this version's daemon
  tcp::socket theirs_{io_};   // the older member
};

TEST_F(HandshakeTest, AParentRefusesAChildOfAnOlderVersionByVersion) {
  for (uint32_t version : {1u, 2u}) {
    SCOPED_TRACE(version);
    Connect();
    Challenge old;
    old.version = version;
    const auto challenge = EncodeChallenge(old);
    asio::write(theirs_, asio::buffer(challenge));
    std::optional<Result<ChildHolds>> result;
    asio::co_spawn(
        io_,
        [&]() -> asio::awaitable<void> {
          result = co_await HandshakeAsParent(std::make_shared<TcpConnection>(std::move(ours_)), "secret", Hello{},
                                              /*num_chunks=*/4, kTimeout);
        },
        asio::detached);
    io_.run();
    io_.restart();
    ASSERT_TRUE(result.has_value());
    ASSERT_FALSE(result->ok());
    EXPECT_EQ(result->status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(result->status().message().find("data protocol version " + std::to_string(version) +
                                              ", this daemon version " + std::to_string(kProtocolVersion)),
              std::string::npos)
        << result->status().message();
  }
}

TEST_F(HandshakeTest, AChildSaysAParentThatHungUpAtItsChallengeMayBeOfAnotherVersion) {
  Connect();
  std::optional<Status> refused;
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        Result<std::pair<std::shared_ptr<LaneReceiver>, Hello>> accepted = co_await HandshakeAsChild(
            std::make_shared<TcpConnection>(std::move(ours_)), "secret",
            [](const PlanId&) { return std::shared_ptr<LaneReceiver>(); }, kTimeout);
        refused = accepted.status();
      },
      asio::detached);
  // The older parent reads the challenge, cannot decode its version, and hangs up.
  asio::co_spawn(
      io_,
      [&]() -> asio::awaitable<void> {
        std::array<uint8_t, kChallengeBytes> challenge{};
        co_await asio::async_read(theirs_, asio::buffer(challenge), asio::use_awaitable);
        theirs_.close();
      },
      asio::detached);
  io_.run();
  ASSERT_TRUE(refused.has_value());
  EXPECT_FALSE(refused->ok());
  EXPECT_NE(refused->message().find("another data protocol version than " + std::to_string(kProtocolVersion)),
            std::string::npos)
      << refused->message();
}

}  // namespace
}  // namespace gridcast
