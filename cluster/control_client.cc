#include "cluster/control_client.h"

#include <grpcpp/grpcpp.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "cluster/control_auth.h"

namespace gridcast {

Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return Status::Ok();
  return Status(static_cast<StatusCode>(status.error_code()), status.error_message());
}

ControlClient::ControlClient(const std::string& address, std::string secret,
                             ControlClientOptions options)
    : secret_(std::move(secret)), options_(std::move(options)) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options_.tls_ca.empty()) {
    std::ifstream in(options_.tls_ca);
    std::stringstream pem;
    pem << in.rdbuf();
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = pem.str();
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments arguments;
  // Prepare carries one SHA-256 per chunk: allow plans of large payloads.
  arguments.SetMaxReceiveMessageSize(64 << 20);
  arguments.SetMaxSendMessageSize(64 << 20);
  // gRPC backs off between attempts to reach a peer that refused, up to 120 s by default: a
  // member restarted within seconds would not be seen again (nor prepared again) before its
  // broadcast gave up on it. A control peer is retried at most a second apart instead.
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 250);
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  channel_ = grpc::CreateCustomChannel(address, credentials, arguments);
  stub_ = v1::Control::NewStub(channel_);
}

bool ControlClient::Connected() const { return channel_->GetState(/*try_to_connect=*/false) == GRPC_CHANNEL_READY; }

Status NameUnreachable(const Status& failed, const ControlClient& client, const std::string& name,
                       const std::string& address) {
  if (failed.ok() || client.Connected()) return failed;
  return failed.WithContext("member '" + name + "' is unreachable at " + address);
}

void ControlClient::Authorise(grpc::ClientContext* context, const char* method,
                              std::chrono::milliseconds timeout) const {
  const std::string token = MakeControlToken(secret_, method, UnixMillisNow());
  if (options_.traffic != nullptr) options_.traffic->bytes += token.size() + std::strlen(kAuthMetadataKey);
  context->AddMetadata(kAuthMetadataKey, token);
  context->set_deadline(std::chrono::system_clock::now() + timeout);
}

void ControlClient::Count(size_t request_bytes, size_t response_bytes) const {
  if (options_.traffic == nullptr) return;
  ++options_.traffic->rpcs;
  options_.traffic->bytes += request_bytes + response_bytes;
}

template <typename Request, typename Response, typename Call>
Status ControlClient::Unary(const char* method, std::chrono::milliseconds timeout, const Request& request,
                            Response* response, Call call) {
  grpc::ClientContext context;
  Authorise(&context, method, timeout);
  const grpc::Status status = call(&context);
  Count(request.ByteSizeLong(), response->ByteSizeLong());
  return FromGrpc(status);
}

Status ControlClient::Prepare(const v1::PrepareRequest& request, v1::PrepareResponse* response,
                              std::chrono::milliseconds timeout) {
  return Unary("/gridcast.v1.Control/Prepare", OrDefault(timeout), request, response,
               [&](grpc::ClientContext* c) { return stub_->Prepare(c, request, response); });
}

Status ControlClient::Start(const v1::StartRequest& request, std::chrono::milliseconds timeout) {
  v1::StartResponse response;
  return Unary("/gridcast.v1.Control/Start", OrDefault(timeout), request, &response,
               [&](grpc::ClientContext* c) { return stub_->Start(c, request, &response); });
}

Status ControlClient::Cancel(const v1::CancelRequest& request, std::chrono::milliseconds timeout) {
  v1::CancelResponse response;
  return Unary("/gridcast.v1.Control/Cancel", OrDefault(timeout), request, &response,
               [&](grpc::ClientContext* c) { return stub_->Cancel(c, request, &response); });
}

Status ControlClient::Patch(const v1::PatchRequest& request, v1::PatchResponse* response,
                            std::chrono::milliseconds timeout) {
  return Unary("/gridcast.v1.Control/Patch", OrDefault(timeout), request, response,
               [&](grpc::ClientContext* c) { return stub_->Patch(c, request, response); });
}

Status ControlClient::GetStatus(const v1::StatusRequest& request, v1::StatusResponse* response,
                                std::chrono::milliseconds timeout) {
  return Unary("/gridcast.v1.Control/Status", OrDefault(timeout), request, response,
               [&](grpc::ClientContext* c) { return stub_->Status(c, request, response); });
}

Status ControlClient::List(v1::ListResponse* response, const v1::ListRequest& request,
                           std::chrono::milliseconds timeout) {
  return Unary("/gridcast.v1.Control/List", OrDefault(timeout), request,
               response, [&](grpc::ClientContext* c) { return stub_->List(c, request, response); });
}

Status ControlClient::Remove(const v1::RemoveRequest& request) {
  v1::RemoveResponse response;
  return Unary("/gridcast.v1.Control/Remove", options_.call_timeout, request, &response,
               [&](grpc::ClientContext* c) { return stub_->Remove(c, request, &response); });
}

Status ControlClient::ChunkMap(const v1::ChunkMapRequest& request, v1::ChunkMapResponse* response) {
  return Unary("/gridcast.v1.Control/ChunkMap", options_.call_timeout, request, response,
               [&](grpc::ClientContext* c) { return stub_->ChunkMap(c, request, response); });
}

Status ControlClient::PlanBroadcast(const v1::PlanBroadcastRequest& request, v1::PlanBroadcastResponse* response) {
  return Unary("/gridcast.v1.Control/PlanBroadcast", options_.call_timeout, request, response,
               [&](grpc::ClientContext* c) { return stub_->PlanBroadcast(c, request, response); });
}

Status ControlClient::ExportTorrent(const v1::ExportTorrentRequest& request, v1::ExportTorrentResponse* response) {
  return Unary("/gridcast.v1.Control/ExportTorrent", options_.call_timeout, request, response,
               [&](grpc::ClientContext* c) { return stub_->ExportTorrent(c, request, response); });
}

Status ControlClient::ServeTo(const v1::ServeToRequest& request, std::chrono::milliseconds timeout,
                              v1::ServeToResponse* response) {
  return Unary("/gridcast.v1.Control/ServeTo", timeout, request, response,
               [&](grpc::ClientContext* c) { return stub_->ServeTo(c, request, response); });
}

Status ControlClient::DescribePart(const v1::DescribePartRequest& request, std::chrono::milliseconds timeout,
                                   v1::DescribePartResponse* response) {
  return Unary("/gridcast.v1.Control/DescribePart", OrDefault(timeout), request, response,
               [&](grpc::ClientContext* c) { return stub_->DescribePart(c, request, response); });
}

template <typename Request>
Status ControlClient::ProgressStream(const char* method, std::chrono::milliseconds timeout, const Request& request,
                                     StartStream<Request> start,
                                     const std::function<void(const v1::BroadcastProgress&)>& on_progress) {
  grpc::ClientContext context;
  Authorise(&context, method, timeout);
  std::unique_ptr<grpc::ClientReader<v1::BroadcastProgress>> reader = ((*stub_).*start)(&context, request);
  v1::BroadcastProgress progress;
  while (reader->Read(&progress)) on_progress(progress);
  return FromGrpc(reader->Finish());
}

Status ControlClient::Broadcast(const v1::BroadcastRequest& request,
                                std::chrono::milliseconds timeout,
                                const std::function<void(const v1::BroadcastProgress&)>& on_progress) {
  return ProgressStream("/gridcast.v1.Control/Broadcast", timeout, request, &v1::Control::Stub::Broadcast,
                        on_progress);
}

Status ControlClient::Allgather(const v1::AllgatherRequest& request, std::chrono::milliseconds timeout,
                                const std::function<void(const v1::BroadcastProgress&)>& on_progress) {
  return ProgressStream("/gridcast.v1.Control/Allgather", timeout, request, &v1::Control::Stub::Allgather,
                        on_progress);
}

}  // namespace gridcast
