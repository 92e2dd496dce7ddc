#include "daemon/transport/connection.h"

#include <algorithm>

namespace gridcast {

boost::asio::awaitable<Status> Connection::ReceiveChunk(std::span<uint8_t> into, std::chrono::milliseconds timeout,
                                                        std::function<void()> progress) {
  // Parts of a megabyte: large enough that a part costs one system call or a few, small
  // enough that a parent sharing its upload still shows progress often.
  constexpr size_t kPartBytes = 1 << 20;
  for (size_t at = 0; at < into.size(); at += kPartBytes) {
    GRIDCAST_CO_RETURN_IF_ERROR(co_await Read(into.subspan(at, std::min(kPartBytes, into.size() - at)), timeout));
    if (progress) progress();
  }
  co_return Status::Ok();
}

boost::asio::awaitable<bool> DataTransport::Refuses(std::string /*address*/, std::chrono::milliseconds /*timeout*/) {
  co_return false;
}

}  // namespace gridcast
