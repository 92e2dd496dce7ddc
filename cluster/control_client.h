// ControlClient: an authenticated gRPC client of one daemon's Control service, used by the
// gridcast command, libgridcast and daemons talking to each other. Every call carries a fresh
// gridcast-auth token (cluster/control_auth.h) and a deadline. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "include/gridcast/status.h"
#include "proto/control.grpc.pb.h"

namespace gridcast {

// Calls and bytes over some set of clients (one broadcast's, at its source): serialized
// request and response messages plus the authentication header, failed calls included.
struct ControlTraffic {
  std::atomic<uint64_t> rpcs{0};
  std::atomic<uint64_t> bytes{0};
};

struct ControlClientOptions {
  std::string tls_ca;   // PEM file; empty = plaintext (use TLS across untrusted networks)
  std::chrono::milliseconds call_timeout = std::chrono::seconds(30);
  // Counts every call this client makes when set; must outlive the client.
  ControlTraffic* traffic = nullptr;
};

class ControlClient {
 public:
  // address: "unix:/path" or "host:port".
  ControlClient(const std::string& address, std::string secret, ControlClientOptions options = {});

  // A zero timeout means the client's call_timeout.
  Status Prepare(const v1::PrepareRequest& request, v1::PrepareResponse* response,
                 std::chrono::milliseconds timeout = {});
  Status Start(const v1::StartRequest& request, std::chrono::milliseconds timeout = {});
  Status Cancel(const v1::CancelRequest& request, std::chrono::milliseconds timeout = {});
  Status Patch(const v1::PatchRequest& request, v1::PatchResponse* response, std::chrono::milliseconds timeout = {});
  Status GetStatus(const v1::StatusRequest& request, v1::StatusResponse* response,
                   std::chrono::milliseconds timeout = {});
  // A zero timeout means the client's call_timeout (a scrub reads every payload: give it more).
  Status List(v1::ListResponse* response, const v1::ListRequest& request = {},
              std::chrono::milliseconds timeout = {});
  Status Remove(const v1::RemoveRequest& request);
  Status ChunkMap(const v1::ChunkMapRequest& request, v1::ChunkMapResponse* response);
  Status PlanBroadcast(const v1::PlanBroadcastRequest& request, v1::PlanBroadcastResponse* response);
  Status ExportTorrent(const v1::ExportTorrentRequest& request, v1::ExportTorrentResponse* response);
  // Blocks while the daemon serves; `timeout` bounds the whole call.
  Status ServeTo(const v1::ServeToRequest& request, std::chrono::milliseconds timeout,
                 v1::ServeToResponse* response);
  // Streams progress to on_progress until the broadcast ends; `timeout` bounds the whole call.
  Status Broadcast(const v1::BroadcastRequest& request, std::chrono::milliseconds timeout,
                   const std::function<void(const v1::BroadcastProgress&)>& on_progress);
  // As Broadcast, for an allgather started at the called member.
  Status Allgather(const v1::AllgatherRequest& request, std::chrono::milliseconds timeout,
                   const std::function<void(const v1::BroadcastProgress&)>& on_progress);
  Status DescribePart(const v1::DescribePartRequest& request, std::chrono::milliseconds timeout,
                      v1::DescribePartResponse* response);

  // Whether the daemon is connected now. After a failed call: false when the daemon never
  // answered (down, unreachable, the wrong address), true when it answered with the error.
  bool Connected() const;

 private:
  void Authorise(grpc::ClientContext* context, const char* method,
                 std::chrono::milliseconds timeout) const;
  void Count(size_t request_bytes, size_t response_bytes) const;
  std::chrono::milliseconds OrDefault(std::chrono::milliseconds timeout) const {
    return timeout.count() > 0 ? timeout : options_.call_timeout;
  }
  // One unary call: authorise, `call(context)`, count.
  template <typename Request>
  using StartStream = std::unique_ptr<grpc::ClientReader<v1::BroadcastProgress>> (v1::Control::Stub::*)(
      grpc::ClientContext*, const Request&);
  // A call answered with a stream of progress, passed to on_progress until it ends.
  template <typename Request>
  Status ProgressStream(const char* method, std::chrono::milliseconds timeout, const Request& request,
                        StartStream<Request> start,
                        const std::function<void(const v1::BroadcastProgress&)>& on_progress);
  template <typename Request, typename Response, typename Call>
  Status Unary(const char* method, std::chrono::milliseconds timeout, const Request& request,
               Response* response, Call call);

  const std::string secret_;
  const ControlClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Control::Stub> stub_;
};

// grpc::Status -> Status (same codes).
Status FromGrpc(const grpc::Status& status);

// `failed` (a call to member `name` at `address`) as people read it: "member 'NAME' is
// unreachable at ADDRESS: ..." when `client` never reached the daemon (down, a firewall, the
// wrong address), else unchanged: the daemon answered with it.
Status NameUnreachable(const Status& failed, const ControlClient& client, const std::string& name,
                       const std::string& address);

}  // namespace gridcast
