// ControlService: the gRPC face of gridcastd. Each handler authenticates the call, decodes,
// calls Participant, ControlTree (Prepare, Start and Cancel: it decides who handles a plan
// id), BroadcastCoordinator or AllgatherCoordinator, maps Status to grpc::Status and counts the
// answer. No logic of its own;
// any exception is caught and answered as INTERNAL so input can never take the daemon down.
#pragma once

#include <memory>

#include "cluster/control_auth.h"
#include "daemon/coordinator/allgather_coordinator.h"
#include "daemon/coordinator/broadcast_coordinator.h"
#include "daemon/coordinator/control_tree.h"
#include "daemon/metrics/daemon_counters.h"
#include "daemon/participant/participant.h"
#include "daemon/pull/torrent_exports.h"
#include "proto/control.grpc.pb.h"

namespace gridcast {

class ControlService final : public v1::Control::Service {
 public:
  ControlService(Participant& participant, ControlTree& tree, BroadcastCoordinator& coordinator,
                 AllgatherCoordinator& allgathers, TorrentExports& exports, std::string secret,
                 DaemonCounters& counters);

  grpc::Status Broadcast(grpc::ServerContext* context, const v1::BroadcastRequest* request,
                         grpc::ServerWriter<v1::BroadcastProgress>* writer) override;
  grpc::Status PlanBroadcast(grpc::ServerContext* context, const v1::PlanBroadcastRequest* request,
                             v1::PlanBroadcastResponse* response) override;
  grpc::Status Prepare(grpc::ServerContext* context, const v1::PrepareRequest* request,
                       v1::PrepareResponse* response) override;
  grpc::Status Start(grpc::ServerContext* context, const v1::StartRequest* request,
                     v1::StartResponse* response) override;
  grpc::Status Cancel(grpc::ServerContext* context, const v1::CancelRequest* request,
                      v1::CancelResponse* response) override;
  grpc::Status Patch(grpc::ServerContext* context, const v1::PatchRequest* request,
                     v1::PatchResponse* response) override;
  grpc::Status Status(grpc::ServerContext* context, const v1::StatusRequest* request,
                      v1::StatusResponse* response) override;
  grpc::Status List(grpc::ServerContext* context, const v1::ListRequest* request,
                    v1::ListResponse* response) override;
  grpc::Status Remove(grpc::ServerContext* context, const v1::RemoveRequest* request,
                      v1::RemoveResponse* response) override;
  grpc::Status ChunkMap(grpc::ServerContext* context, const v1::ChunkMapRequest* request,
                        v1::ChunkMapResponse* response) override;
  grpc::Status ExportTorrent(grpc::ServerContext* context, const v1::ExportTorrentRequest* request,
                             v1::ExportTorrentResponse* response) override;
  grpc::Status ServeTo(grpc::ServerContext* context, const v1::ServeToRequest* request,
                       v1::ServeToResponse* response) override;
  grpc::Status Allgather(grpc::ServerContext* context, const v1::AllgatherRequest* request,
                         grpc::ServerWriter<v1::BroadcastProgress>* writer) override;
  grpc::Status DescribePart(grpc::ServerContext* context, const v1::DescribePartRequest* request,
                            v1::DescribePartResponse* response) override;

 private:
  gridcast::Status Authenticate(grpc::ServerContext* context, const char* method);

  Participant& participant_;
  ControlTree& tree_;
  BroadcastCoordinator& coordinator_;
  AllgatherCoordinator& allgathers_;
  TorrentExports& exports_;
  ControlAuthenticator authenticator_;
  DaemonCounters& counters_;  // each call counted by method and answer
};

}  // namespace gridcast
