// asio_stream_cpu: CPU per GiB of streaming over loopback TCP with Boost.Asio coroutines, a
// 16-byte header and 256 KiB of data per frame, as the data plane reads and writes. Built twice
// when liburing is installed: bench_asio_stream_cpu (epoll, as gridcastd) and
// bench_asio_stream_cpu_uring (Asio's io_uring backend); docs/performance-history.md, "io_uring and
// MSG_ZEROCOPY". Usage: bench_asio_stream_cpu[_uring] [GIB] (default 4)
#include <sys/resource.h>

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it
#include <array>
#include <boost/asio.hpp>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

double CpuSeconds() {
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

constexpr size_t kChunk = 256 << 10;

}  // namespace

int main(int argc, char** argv) {
  const size_t gib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4;
  if (gib == 0) {
    std::fprintf(stderr, "usage: %s [GIB]\n", argv[0]);
    return 2;
  }
  const size_t total = gib << 30;
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const tcp::endpoint listening = acceptor.local_endpoint();
  std::vector<char> in(kChunk), out(kChunk, 1);
  size_t received = 0;
  const double before = CpuSeconds();
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        tcp::socket s = co_await acceptor.async_accept(asio::use_awaitable);
        std::array<char, 16> head{};
        while (received < total) {
          co_await asio::async_read(s, asio::buffer(head), asio::use_awaitable);
          received += co_await asio::async_read(s, asio::buffer(in), asio::use_awaitable);
        }
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        tcp::socket s(io);
        co_await s.async_connect(listening, asio::use_awaitable);
        const std::array<char, 16> head{};
        for (size_t sent = 0; sent < total; sent += kChunk) {
          const std::array<asio::const_buffer, 2> frame{asio::buffer(head), asio::buffer(out)};
          co_await asio::async_write(s, frame, asio::use_awaitable);
        }
      },
      asio::detached);
  io.run();
  if (received < total) {
    std::fprintf(stderr, "received %zu of %zu bytes\n", received, total);
    return 1;
  }
  std::printf("%s: %.3f CPU-s per GiB (both ends)\n", argv[0], (CpuSeconds() - before) / static_cast<double>(gib));
  return 0;
}
