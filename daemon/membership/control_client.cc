#include "daemon/membership/control_client.h"

#include <grpcpp/grpcpp.h>

#include <fstream>
#include <sstream>

#include "daemon/auth/control_auth.h"

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
  stub_ = v1::Control::NewStub(grpc::CreateCustomChannel(address, credentials, arguments));
}

void ControlClient::Authorise(grpc::ClientContext* context, const char* method,
                              std::chrono::milliseconds timeout) const {
  context->AddMetadata(kAuthMetadataKey, MakeControlToken(secret_, method, UnixMillisNow()));
  context->set_deadline(std::chrono::system_clock::now() + timeout);
}

Status ControlClient::Prepare(const v1::PrepareRequest& request, v1::PrepareResponse* response) {
  grpc::ClientContext context;
  Authorise(&context, "/gridcast.v1.Control/Prepare", options_.call_timeout);
  return FromGrpc(stub_->Prepare(&context, request, response));
}

Status ControlClient::Start(const v1::StartRequest& request) {
  grpc::ClientContext context;
  v1::StartResponse response;
  Authorise(&context, "/gridcast.v1.Control/Start", options_.call_timeout);
  return FromGrpc(stub_->Start(&context, request, &response));
}

Status ControlClient::Cancel(const v1::CancelRequest& request) {
  grpc::ClientContext context;
  v1::CancelResponse response;
  Authorise(&context, "/gridcast.v1.Control/Cancel", options_.call_timeout);
  return FromGrpc(stub_->Cancel(&context, request, &response));
}

Status ControlClient::GetStatus(const v1::StatusRequest& request, v1::StatusResponse* response) {
  grpc::ClientContext context;
  Authorise(&context, "/gridcast.v1.Control/Status", options_.call_timeout);
  return FromGrpc(stub_->Status(&context, request, response));
}

Status ControlClient::List(v1::ListResponse* response, const v1::ListRequest& request,
                           std::chrono::milliseconds timeout) {
  grpc::ClientContext context;
  Authorise(&context, "/gridcast.v1.Control/List", timeout.count() > 0 ? timeout : options_.call_timeout);
  return FromGrpc(stub_->List(&context, request, response));
}

Status ControlClient::Remove(const v1::RemoveRequest& request) {
  grpc::ClientContext context;
  Authorise(&context, "/gridcast.v1.Control/Remove", options_.call_timeout);
  v1::RemoveResponse response;
  return FromGrpc(stub_->Remove(&context, request, &response));
}

Status ControlClient::ExportTorrent(const v1::ExportTorrentRequest& request, v1::ExportTorrentResponse* response) {
  grpc::ClientContext context;
  Authorise(&context, "/gridcast.v1.Control/ExportTorrent", options_.call_timeout);
  return FromGrpc(stub_->ExportTorrent(&context, request, response));
}

Status ControlClient::ServeTo(const v1::ServeToRequest& request, std::chrono::milliseconds timeout,
                              v1::ServeToResponse* response) {
  grpc::ClientContext context;
  Authorise(&context, "/gridcast.v1.Control/ServeTo", timeout);
  return FromGrpc(stub_->ServeTo(&context, request, response));
}

Status ControlClient::Broadcast(const v1::BroadcastRequest& request,
                                std::chrono::milliseconds timeout,
                                const std::function<void(const v1::BroadcastProgress&)>& on_progress) {
  grpc::ClientContext context;
  Authorise(&context, "/gridcast.v1.Control/Broadcast", timeout);
  std::unique_ptr<grpc::ClientReader<v1::BroadcastProgress>> reader = stub_->Broadcast(&context, request);
  v1::BroadcastProgress progress;
  while (reader->Read(&progress)) on_progress(progress);
  return FromGrpc(reader->Finish());
}

}  // namespace gridcast
