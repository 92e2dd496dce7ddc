#include "daemon/transport/tls/tls_transport.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cstring>
#include <vector>

#include "cluster/cluster_file.h"
#include "common/file_io.h"

namespace gridcast {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using asio::ip::tcp;

class TlsConnection final : public Connection, public std::enable_shared_from_this<TlsConnection> {
 public:
  TlsConnection(tcp::socket socket, ssl::context& context) : stream_(std::move(socket), context) {}

  // The TLS handshake, as the side that connected or accepted. A peer whose certificate
  // does not chain to the cluster's CA (or that speaks no TLS) fails with Unauthenticated.
  asio::awaitable<Status> Handshake(ssl::stream_base::handshake_type role, std::chrono::milliseconds timeout) {
    const Deadline deadline = DeadlineAfter(timeout);
    boost::system::error_code ec;
    co_await stream_.async_handshake(role, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) co_return Status::Ok();
    if (ec.category() != asio::error::get_ssl_category()) {
      co_return TransportError(ec, "TLS handshake", deadline.Expired());
    }
    std::string why = ec.message();
    const long verified = SSL_get_verify_result(stream_.native_handle());
    if (verified != X509_V_OK) why += std::string(": ") + X509_verify_cert_error_string(verified);
    if (ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_WRONG_VERSION_NUMBER) {
      why += " (does the peer run without TLS? every member needs --tls-cert)";
    }
    co_return Status::Unauthenticated("TLS handshake: " + why);
  }

  asio::awaitable<Status> Read(std::span<uint8_t> out, std::chrono::milliseconds timeout) override {
    if (out.empty()) co_return Status::Ok();
    const Deadline deadline = DeadlineAfter(timeout);
    co_return co_await ReadStream(stream_, out, deadline);
  }

  asio::awaitable<Status> Write(std::span<const uint8_t> head, std::span<const uint8_t> body,
                                std::chrono::milliseconds timeout) override {
    const Deadline deadline = DeadlineAfter(timeout);
    co_return co_await WriteStream(stream_, head, body, deadline);
  }

  asio::awaitable<Status> SendChunk(std::span<const uint8_t> head, ChunkRef chunk,
                                    std::chrono::milliseconds timeout) override {
    if (chunk.in_memory()) co_return co_await Write(head, chunk.memory, timeout);
    // A chunk leaves in slices of this much: one pread and one composed write each (Asio's
    // TLS stream still sends record by record, 16 KiB at a time), with a small staging buffer.
    constexpr size_t kStagingBytes = 256 << 10;
    const Deadline deadline = DeadlineAfter(timeout);
    staging_.resize(std::max(kStagingBytes, head.size()));
    std::memcpy(staging_.data(), head.data(), head.size());
    size_t filled = head.size();
    uint64_t done = 0;
    do {
      const size_t slice = static_cast<size_t>(std::min<uint64_t>(staging_.size() - filled, chunk.length - done));
      GRIDCAST_CO_RETURN_IF_ERROR(
          PreadFull(SystemFileIo(), chunk.fd, std::span(staging_.data() + filled, slice), chunk.offset + done));
      done += slice;
      filled += slice;
      boost::system::error_code ec;
      co_await asio::async_write(stream_, asio::buffer(staging_.data(), filled), AllRemaining(filled),
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return TransportError(ec, "write", deadline.Expired());
      filled = 0;
    } while (done < chunk.length);
    co_return Status::Ok();
  }

  Status CheckPeer(const std::string& data_address) override {
    Result<std::pair<std::string, uint16_t>> host_port = SplitHostPort(data_address);
    if (!host_port.ok()) return host_port.status();
    const std::string& host = host_port->first;  // SplitHostPort drops an IPv6 address's brackets
    X509* certificate = SSL_get0_peer_certificate(stream_.native_handle());
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

  std::string PeerName() const override {
    boost::system::error_code ec;
    const tcp::endpoint peer = stream_.next_layer().remote_endpoint(ec);
    return ec ? "unknown peer" : peer.address().to_string();
  }
  bool IsOpen() const override { return stream_.next_layer().is_open(); }
  std::optional<uint64_t> KernelBytesReceived() override {
    return IsOpen() ? gridcast::KernelBytesReceived(stream_.next_layer().native_handle()) : std::nullopt;
  }
  std::optional<uint64_t> KernelBytesAcked() override {
    return IsOpen() ? gridcast::KernelBytesAcked(stream_.next_layer().native_handle()) : std::nullopt;
  }
  // TLS records add about 22 bytes per 16 KiB: the cap counts them as payload.
  void CapSendRate(double bytes_per_s) override {
    if (IsOpen()) CapPacingRate(stream_.next_layer().native_handle(), bytes_per_s);
  }
  // No TLS close_notify: the peers' frames say where a stream ends.
  void Close() override {
    boost::system::error_code ignored;
    stream_.next_layer().close(ignored);
  }

 private:
  Deadline DeadlineAfter(std::chrono::milliseconds timeout) {
    return Deadline(stream_.get_executor(), timeout, [self = shared_from_this()] { self->Close(); });
  }

  ssl::stream<tcp::socket> stream_;
  std::vector<uint8_t> staging_;  // SendChunk's slices of a file
};

TlsTransport::TlsTransport(asio::io_context& io, std::shared_ptr<TlsContext> context, TcpOptions options,
                           std::chrono::milliseconds handshake_timeout)
    : io_(io),
      context_(std::move(context)),
      options_(std::move(options)),
      handshake_timeout_(handshake_timeout),
      acceptor_(std::make_shared<tcp::acceptor>(io)) {}

TlsTransport::~TlsTransport() {
  boost::system::error_code ignored;
  acceptor_->close(ignored);
}

asio::awaitable<Result<ConnectionPtr>> TlsTransport::Connect(std::string address,
                                                             std::chrono::milliseconds timeout) {
  Result<tcp::socket> socket = co_await ConnectTcp(io_.get_executor(), address, timeout, options_);
  if (!socket.ok()) co_return socket.status();
  auto connection = std::make_shared<TlsConnection>(std::move(*socket), context_->native());
  Status secured = co_await connection->Handshake(ssl::stream_base::client, timeout);
  if (secured.ok()) secured = connection->CheckPeer(address);
  if (!secured.ok()) {
    connection->Close();
    co_return secured;
  }
  co_return ConnectionPtr(connection);
}

namespace {

// Parameters by value: the coroutine's frame holds them, however long the handshake takes.
asio::awaitable<void> SecureAccepted(std::shared_ptr<TlsConnection> connection, std::chrono::milliseconds timeout,
                                     std::function<void(ConnectionPtr)> on_accept) {
  const Status secured = co_await connection->Handshake(ssl::stream_base::server, timeout);
  if (!secured.ok()) {
    spdlog::warn("data plane: refused connection from {}: {}", connection->PeerName(), secured.message());
    connection->Close();
    co_return;
  }
  on_accept(std::move(connection));
}

}  // namespace

asio::awaitable<bool> TlsTransport::Refuses(std::string address, std::chrono::milliseconds timeout) {
  co_return co_await ConnectionRefused(io_.get_executor(), address, timeout);
}

Result<uint16_t> TlsTransport::Listen(const std::string& address, std::function<void(ConnectionPtr)> on_accept) {
  return ListenTcp(acceptor_, address, [this, on_accept = std::move(on_accept)](tcp::socket socket) {
    auto connection = std::make_shared<TlsConnection>(std::move(socket), context_->native());
    asio::co_spawn(io_, SecureAccepted(std::move(connection), handshake_timeout_, on_accept), asio::detached);
  });
}

}  // namespace gridcast
