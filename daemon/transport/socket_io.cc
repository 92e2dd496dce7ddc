#include "daemon/transport/socket_io.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "cluster/cluster_file.h"
#include "common/file_io.h"

namespace gridcast {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using asio::ip::tcp;

struct DataSocket::Tls {
  Tls(tcp::socket socket, ssl::context& context) : stream(std::move(socket), context) {}
  ssl::stream<tcp::socket> stream;
  std::vector<uint8_t> staging;  // WriteHeadAndFile's slices of the file
};

DataSocket::DataSocket(tcp::socket socket, std::shared_ptr<TlsContext> tls) {
  if (tls) {
    tls_ = std::make_unique<Tls>(std::move(socket), tls->native());
  } else {
    plain_ = std::make_unique<tcp::socket>(std::move(socket));
  }
}

DataSocket::~DataSocket() = default;

tcp::socket& DataSocket::tcp() { return tls_ ? tls_->stream.next_layer() : *plain_; }

bool DataSocket::encrypted() const { return tls_ != nullptr; }

void DataSocket::Close() {
  boost::system::error_code ignored;
  tcp().close(ignored);
}

namespace {

// The composed operation `op` on the socket's stream, whichever it is.
template <typename Op>
asio::awaitable<void> OnStream(DataSocket& socket, Op op) {
  if (socket.tls() != nullptr) {
    co_await op(socket.tls()->stream);
  } else {
    co_await op(socket.tcp());
  }
}

// Closes the socket if still armed when the deadline passes.
class Deadline {
 public:
  Deadline(SocketPtr socket, std::chrono::milliseconds timeout)
      : timer_(std::make_shared<asio::steady_timer>(socket->tcp().get_executor())) {
    timer_->expires_after(timeout);
    timer_->async_wait([socket](boost::system::error_code ec) {
      if (!ec) socket->Close();
    });
  }
  ~Deadline() { timer_->cancel(); }
  bool Expired() const { return timer_->expiry() <= std::chrono::steady_clock::now(); }

 private:
  std::shared_ptr<asio::steady_timer> timer_;
};

// Asio's transfer_all moves at most 64 KiB per system call; a chunk is a megabyte or more,
// so let each call take all that remains.
auto AllRemaining(size_t total_bytes) {
  return [total_bytes](const boost::system::error_code& ec, size_t done) -> size_t {
    return ec ? 0 : total_bytes - done;
  };
}

Status FromError(const boost::system::error_code& ec, const char* what, bool expired) {
  if (expired) return Status::DeadlineExceeded(std::string(what) + " timed out");
  if (ec == asio::error::eof || ec == ssl::error::stream_truncated) {
    return Status::Unavailable(std::string(what) + ": connection closed");
  }
  // A TLS 1.3 client learns that the server refused its certificate at its first read; later,
  // a record that fails its check means the stream was tampered with.
  if (ec.category() == asio::error::get_ssl_category()) return Status::Unauthenticated(std::string(what) + ": TLS: " + ec.message());
  return Status::Unavailable(std::string(what) + ": " + ec.message());
}

}  // namespace

asio::awaitable<Status> ConnectWithTimeout(SocketPtr socket, const std::string& address,
                                           std::chrono::milliseconds timeout) {
  Result<std::pair<std::string, uint16_t>> host_port = SplitHostPort(address);
  if (!host_port.ok()) co_return host_port.status();
  boost::system::error_code ec;
  tcp::resolver resolver(socket->tcp().get_executor());
  auto endpoints = co_await resolver.async_resolve(host_port->first, std::to_string(host_port->second),
                                                   asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return Status::Unavailable("cannot resolve " + address + ": " + ec.message());
  Deadline deadline(socket, timeout);
  co_await asio::async_connect(socket->tcp(), endpoints, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return FromError(ec, ("connect to " + address).c_str(), deadline.Expired());
  socket->tcp().set_option(tcp::no_delay(true), ec);
  co_return Status::Ok();
}

asio::awaitable<Status> SecureHandshake(SocketPtr socket, TlsRole role, std::chrono::milliseconds timeout) {
  if (!socket->encrypted()) co_return Status::Ok();
  Deadline deadline(socket, timeout);
  boost::system::error_code ec;
  ssl::stream<tcp::socket>& stream = socket->tls()->stream;
  co_await stream.async_handshake(role == TlsRole::kConnected ? ssl::stream_base::client : ssl::stream_base::server,
                                  asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) co_return Status::Ok();
  if (ec.category() != asio::error::get_ssl_category()) co_return FromError(ec, "TLS handshake", deadline.Expired());
  std::string why = ec.message();
  const long verified = SSL_get_verify_result(stream.native_handle());
  if (verified != X509_V_OK) why += std::string(": ") + X509_verify_cert_error_string(verified);
  if (ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_WRONG_VERSION_NUMBER) {
    why += " (does the peer run without TLS? every member needs --tls-cert)";
  }
  co_return Status::Unauthenticated("TLS handshake: " + why);
}

Status CheckPeerCertificate(DataSocket& socket, const std::string& data_address) {
  if (!socket.encrypted()) return Status::Ok();
  Result<std::pair<std::string, uint16_t>> host_port = SplitHostPort(data_address);
  if (!host_port.ok()) return host_port.status();
  std::string host = host_port->first;
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  X509* certificate = SSL_get0_peer_certificate(socket.tls()->stream.native_handle());
  if (certificate == nullptr) return Status::Unauthenticated("the peer presented no certificate");
  boost::system::error_code not_ip;
  (void)asio::ip::make_address(host, not_ip);
  // Names from the subjectAltName only (never the subject's CN: here, a member's name).
  const unsigned flags = X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS;
  const int matched = not_ip ? X509_check_host(certificate, host.data(), host.size(), flags, nullptr)
                             : X509_check_ip_asc(certificate, host.c_str(), 0);
  if (matched == 1) return Status::Ok();
  return Status::Unauthenticated("the peer's certificate is not for " + host);
}

Status SetCongestionControl(tcp::socket& socket, const std::string& algorithm) {
  if (setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_CONGESTION, algorithm.data(),
                 static_cast<socklen_t>(algorithm.size())) != 0) {
    return Status::Unavailable("TCP congestion control '" + algorithm + "': " + std::strerror(errno));
  }
  return Status::Ok();
}

bool IsCongestionControlName(std::string_view name) {
  // TCP_CA_NAME_MAX is 16 with the terminating NUL.
  if (name.empty() || name.size() > 15) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

asio::awaitable<Status> ReadExactly(SocketPtr socket, std::span<uint8_t> out,
                                    std::chrono::milliseconds timeout) {
  if (out.empty()) co_return Status::Ok();
  Deadline deadline(socket, timeout);
  boost::system::error_code ec;
  co_await OnStream(*socket, [&](auto& stream) {
    return asio::async_read(stream, asio::buffer(out.data(), out.size()), AllRemaining(out.size()),
                            asio::redirect_error(asio::use_awaitable, ec));
  });
  if (ec) co_return FromError(ec, "read", deadline.Expired());
  co_return Status::Ok();
}

asio::awaitable<Status> WriteAll(SocketPtr socket, asio::const_buffer head, asio::const_buffer body,
                                 std::chrono::milliseconds timeout) {
  Deadline deadline(socket, timeout);
  boost::system::error_code ec;
  const std::array<asio::const_buffer, 2> buffers = {head, body};
  co_await OnStream(*socket, [&](auto& stream) {
    return asio::async_write(stream, buffers, AllRemaining(head.size() + body.size()),
                             asio::redirect_error(asio::use_awaitable, ec));
  });
  if (ec) co_return FromError(ec, "write", deadline.Expired());
  co_return Status::Ok();
}

namespace {

// A chunk leaves in slices of this much: one pread and one composed write each (Asio's TLS
// stream still sends record by record, 16 KiB at a time), with a small staging buffer.
constexpr size_t kStagingBytes = 256 << 10;

asio::awaitable<Status> WriteHeadAndFileEncrypted(SocketPtr socket, asio::const_buffer head, int fd,
                                                  uint64_t offset, uint64_t length,
                                                  std::chrono::milliseconds timeout) {
  Deadline deadline(socket, timeout);
  std::vector<uint8_t>& staging = socket->tls()->staging;
  staging.resize(std::max(kStagingBytes, head.size()));
  std::memcpy(staging.data(), head.data(), head.size());
  size_t filled = head.size();
  uint64_t done = 0;
  do {
    const size_t slice = static_cast<size_t>(std::min<uint64_t>(staging.size() - filled, length - done));
    GRIDCAST_CO_RETURN_IF_ERROR(PreadFull(SystemFileIo(), fd, std::span(staging.data() + filled, slice), offset + done));
    done += slice;
    filled += slice;
    boost::system::error_code ec;
    co_await asio::async_write(socket->tls()->stream, asio::buffer(staging.data(), filled), AllRemaining(filled),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return FromError(ec, "write", deadline.Expired());
    filled = 0;
  } while (done < length);
  co_return Status::Ok();
}

}  // namespace

asio::awaitable<Status> WriteHeadAndFile(SocketPtr socket, asio::const_buffer head, int fd, uint64_t offset,
                                         uint64_t length, std::chrono::milliseconds timeout) {
  if (socket->encrypted()) co_return co_await WriteHeadAndFileEncrypted(socket, head, fd, offset, length, timeout);
  Deadline deadline(socket, timeout);
  boost::system::error_code ec;
  tcp::socket& tcp_socket = socket->tcp();
  tcp_socket.native_non_blocking(true, ec);
  if (ec) co_return FromError(ec, "write", false);
  const auto* head_bytes = static_cast<const uint8_t*>(head.data());
  size_t head_done = 0;
  off_t file_offset = static_cast<off_t>(offset);
  uint64_t left = length;
  while (head_done < head.size() || left > 0) {
    // Read each time: a socket closed meanwhile (stop, deadline) reads as -1, never as a
    // descriptor number that something else may have reused.
    const int s = tcp_socket.native_handle();
    ssize_t n;
    if (head_done < head.size()) {
      // MSG_MORE: the header leaves in one segment with the first bytes of the file.
      n = ::send(s, head_bytes + head_done, head.size() - head_done, MSG_NOSIGNAL | (left > 0 ? MSG_MORE : 0));
      if (n > 0) head_done += static_cast<size_t>(n);
    } else {
      n = ::sendfile(s, fd, &file_offset, std::min<uint64_t>(left, size_t{1} << 30));
      if (n > 0) left -= static_cast<uint64_t>(n);
      if (n == 0) co_return Status::DataLoss("sendfile: the file is shorter than expected");
    }
    if (n >= 0 || errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      if (deadline.Expired()) co_return Status::DeadlineExceeded("write timed out");
      co_return Status::Unavailable(std::string("write: ") + std::strerror(errno));
    }
    co_await tcp_socket.async_wait(tcp::socket::wait_write, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return FromError(ec, "write", deadline.Expired());
  }
  co_return Status::Ok();
}

}  // namespace gridcast
