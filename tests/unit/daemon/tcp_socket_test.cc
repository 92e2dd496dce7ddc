#include "daemon/transport/tcp/tcp_socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <string>

#include <gtest/gtest.h>

namespace gridcast {
namespace {

using boost::asio::ip::tcp;

TEST(CongestionControlNameTest, AcceptsKernelStyleNamesOnly) {
  EXPECT_TRUE(IsCongestionControlName("cubic"));
  EXPECT_TRUE(IsCongestionControlName("bbr"));
  EXPECT_TRUE(IsCongestionControlName("dctcp"));
  EXPECT_TRUE(IsCongestionControlName("h-tcp_2"));
  EXPECT_TRUE(IsCongestionControlName("abcdefghijklmno"));  // 15, the kernel's longest
  EXPECT_FALSE(IsCongestionControlName(""));
  EXPECT_FALSE(IsCongestionControlName("abcdefghijklmnop"));
  EXPECT_FALSE(IsCongestionControlName("cu bic"));
  EXPECT_FALSE(IsCongestionControlName("../bbr"));
  EXPECT_FALSE(IsCongestionControlName(std::string("cu\0bic", 6)));
}

std::string CongestionControlOf(tcp::socket& socket) {
  char name[16] = {};
  socklen_t length = sizeof(name);
  EXPECT_EQ(getsockopt(socket.native_handle(), IPPROTO_TCP, TCP_CONGESTION, name, &length), 0);
  return std::string(name);
}

TEST(SetCongestionControlTest, ChoosesAnAlgorithmTheKernelHasAndNamesOneItLacks) {
  boost::asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0));
  tcp::socket client(io);
  client.connect(acceptor.local_endpoint());
  tcp::socket server = acceptor.accept();

  // Reno is built into every Linux kernel and always allowed.
  ASSERT_TRUE(SetCongestionControl(client, "reno").ok());
  EXPECT_EQ(CongestionControlOf(client), "reno");

  Status missing = SetCongestionControl(client, "no-such-cc");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("'no-such-cc'"), std::string::npos) << missing.message();
  EXPECT_EQ(CongestionControlOf(client), "reno");  // unchanged
}

}  // namespace
}  // namespace gridcast
