#include "daemon/service/control_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <optional>
#include <vector>

#include "common/hex.h"
#include "daemon/participant/plan_status.h"
#include "daemon/participant/request_checks.h"

namespace gridcast {
namespace {

grpc::Status ToGrpc(const gridcast::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), status.message());
}

// Runs a handler body and counts its answer; anything it throws becomes INTERNAL instead of
// a crash.
template <typename Body>
grpc::Status Guarded(DaemonCounters& counters, const char* method, Body body) {
  grpc::Status status;
  try {
    status = ToGrpc(body());
  } catch (const std::exception& e) {
    spdlog::error("{}: {}", method, e.what());
    status = grpc::Status(grpc::StatusCode::INTERNAL, std::string("internal error: ") + e.what());
  }
  counters.ControlCall(method, status.error_code());
  return status;
}

// The caller's deadline on the steady clock (relayed calls must end before it does).
ControlDeadline DeadlineOf(const grpc::ServerContext* context) {
  const auto left = context->deadline() - std::chrono::system_clock::now();
  const auto capped = std::clamp<std::chrono::system_clock::duration>(left, std::chrono::milliseconds(1),
                                                                       std::chrono::hours(1));
  return std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(capped);
}

void ToProto(const ServeSnapshot& serve, v1::ServeStatus* out) {
  out->set_serve_id(AsString(serve.id.bytes()));
  out->set_name(serve.name);
  out->set_address(serve.address);
  out->set_state(serve.state);
  out->set_client_pieces(serve.progress.client_pieces);
  out->set_pieces_total(serve.progress.pieces_total);
  out->set_uploaded_bytes(serve.progress.uploaded_bytes);
  out->set_elapsed_s(serve.elapsed_s);
  out->set_transfer_s(serve.transfer_s);
}

}  // namespace

ControlService::ControlService(Participant& participant, ControlTree& tree, BroadcastCoordinator& coordinator,
                               AllgatherCoordinator& allgathers, TorrentExports& exports, std::string secret,
                               DaemonCounters& counters)
    : participant_(participant),
      tree_(tree),
      coordinator_(coordinator),
      allgathers_(allgathers),
      exports_(exports),
      authenticator_(std::move(secret)),
      counters_(counters) {}

gridcast::Status ControlService::Authenticate(grpc::ServerContext* context, const char* method) {
  const auto& metadata = context->client_metadata();
  auto it = metadata.find(kAuthMetadataKey);
  const std::string token = it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
  gridcast::Status status = authenticator_.Check(method, token, UnixMillisNow());
  if (!status.ok()) spdlog::warn("{} from {}: {}", method, context->peer(), status.message());
  return status;
}

grpc::Status ControlService::Broadcast(grpc::ServerContext* context, const v1::BroadcastRequest* request,
                                       grpc::ServerWriter<v1::BroadcastProgress>* writer) {
  return Guarded(counters_, "Broadcast", [&] {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/Broadcast"));
    return coordinator_.Run(*request, [writer](const v1::BroadcastProgress& progress) {
      writer->Write(progress);  // a client that went away does not stop the broadcast
    });
  });
}

grpc::Status ControlService::PlanBroadcast(grpc::ServerContext* context, const v1::PlanBroadcastRequest* request,
                                           v1::PlanBroadcastResponse* response) {
  return Guarded(counters_, "PlanBroadcast", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/PlanBroadcast"));
    GRIDCAST_ASSIGN_OR_RETURN(*response, coordinator_.PlanOnly(*request));
    return gridcast::Status::Ok();
  });
}

grpc::Status ControlService::Allgather(grpc::ServerContext* context, const v1::AllgatherRequest* request,
                                       grpc::ServerWriter<v1::BroadcastProgress>* writer) {
  return Guarded(counters_, "Allgather", [&] {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/Allgather"));
    return allgathers_.Run(*request, [writer](const v1::BroadcastProgress& progress) {
      writer->Write(progress);  // a client that went away does not stop the allgather
    });
  });
}

grpc::Status ControlService::DescribePart(grpc::ServerContext* context, const v1::DescribePartRequest* request,
                                          v1::DescribePartResponse* response) {
  return Guarded(counters_, "DescribePart", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/DescribePart"));
    GRIDCAST_ASSIGN_OR_RETURN(*response, participant_.holdings().DescribePart(*request));
    return gridcast::Status::Ok();
  });
}

grpc::Status ControlService::Prepare(grpc::ServerContext* context, const v1::PrepareRequest* request,
                                     v1::PrepareResponse* response) {
  return Guarded(counters_, "Prepare", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/Prepare"));
    GRIDCAST_ASSIGN_OR_RETURN(*response, tree_.Prepare(*request, DeadlineOf(context)));
    return gridcast::Status::Ok();
  });
}

grpc::Status ControlService::Start(grpc::ServerContext* context, const v1::StartRequest* request,
                                   v1::StartResponse*) {
  return Guarded(counters_, "Start", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/Start"));
    GRIDCAST_ASSIGN_OR_RETURN(PlanId id, CheckStartRequest(*request));
    const auto source_started = std::chrono::steady_clock::now() -
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(request->source_started_ago_s()));
    return tree_.Start(id, source_started, DeadlineOf(context));
  });
}

grpc::Status ControlService::Patch(grpc::ServerContext* context, const v1::PatchRequest* request,
                                   v1::PatchResponse* response) {
  return Guarded(counters_, "Patch", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/Patch"));
    GRIDCAST_RETURN_IF_ERROR(CheckPatchRequest(*request).status());
    GRIDCAST_ASSIGN_OR_RETURN(const uint32_t patched, tree_.Patch(*request, DeadlineOf(context)));
    response->set_subtree_patched(patched);
    return gridcast::Status::Ok();
  });
}

grpc::Status ControlService::Cancel(grpc::ServerContext* context, const v1::CancelRequest* request,
                                    v1::CancelResponse*) {
  return Guarded(counters_, "Cancel", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/Cancel"));
    GRIDCAST_ASSIGN_OR_RETURN(PlanId id, CheckCancelRequest(*request));
    const gridcast::Status cancelled = tree_.Cancel(id, CancelReason(*request), DeadlineOf(context));
    if (cancelled.code() != StatusCode::kNotFound) return cancelled;
    // Serve ids (Status lists them) are 16 random bytes too: Cancel ends serves as well.
    GRIDCAST_ASSIGN_OR_RETURN(const ServeId serve, ServeId::FromBytes(request->plan_id()));
    if (exports_.Stop(serve).ok()) return gridcast::Status::Ok();
    return gridcast::Status::NotFound("unknown plan or serve " + ToHex(id));
  });
}

grpc::Status ControlService::Status(grpc::ServerContext* context, const v1::StatusRequest* request,
                                    v1::StatusResponse* response) {
  return Guarded(counters_, "Status", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/Status"));
    GRIDCAST_RETURN_IF_ERROR(CheckStatusRequest(*request));
    response->set_member(participant_.name());
    std::vector<PlanRun> runs;
    if (request->plan_id().empty()) {
      for (RunningPlans::Named& named : participant_.plans().AllNamed()) runs.push_back(std::move(named.run));
    } else {
      GRIDCAST_ASSIGN_OR_RETURN(PlanId id, PlanId::FromBytes(request->plan_id()));
      std::optional<PlanRun> run = participant_.plans().FindRun(id);
      if (!run) return gridcast::Status::NotFound("unknown plan " + ToHex(id));
      runs.push_back(std::move(*run));
    }
    for (const PlanRun& run : runs) PlanStatusOf(run, request->observations(), response->add_plans());
    if (request->subtree()) {
      GRIDCAST_ASSIGN_OR_RETURN(PlanId id, PlanId::FromBytes(request->plan_id()));
      const PollDetail detail = !request->detail()        ? PollDetail::kSums
                                : request->observations() ? PollDetail::kEveryMemberWithObservations
                                                          : PollDetail::kEveryMember;
      if (!request->chunk_list_sha256().empty() && request->chunk_list_sha256().size() != sizeof(Digest)) {
        return gridcast::Status::InvalidArgument("a chunk_list_sha256 of " +
                                                 std::to_string(request->chunk_list_sha256().size()) +
                                                 " bytes, not 32");
      }
      GRIDCAST_ASSIGN_OR_RETURN(SubtreeReport below,
                                tree_.PollBelow(id, detail, DeadlineOf(context), request->chunk_list_sha256()));
      *response->mutable_subtree_progress() = std::move(below.progress);
      for (v1::MemberProgress& m : below.detail) *response->add_subtree() = std::move(m);
    }
    for (const ServeSnapshot& serve : exports_.Serves()) ToProto(serve, response->add_serves());
    return gridcast::Status::Ok();
  });
}

grpc::Status ControlService::List(grpc::ServerContext* context, const v1::ListRequest* request,
                                  v1::ListResponse* response) {
  return Guarded(counters_, "List", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/List"));
    *response = participant_.holdings().List(request->verify());
    return gridcast::Status::Ok();
  });
}

grpc::Status ControlService::Remove(grpc::ServerContext* context, const v1::RemoveRequest* request,
                                    v1::RemoveResponse*) {
  return Guarded(counters_, "Remove", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/Remove"));
    return participant_.holdings().Remove(HeldName{request->name(), request->in_memory()});
  });
}

grpc::Status ControlService::ChunkMap(grpc::ServerContext* context, const v1::ChunkMapRequest* request,
                                      v1::ChunkMapResponse* response) {
  return Guarded(counters_, "ChunkMap", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/ChunkMap"));
    GRIDCAST_ASSIGN_OR_RETURN(*response, participant_.holdings().ChunkMap(HeldName{request->name(), request->in_memory()},
                                                                                    request->first_chunk(), request->max_chunks()));
    return gridcast::Status::Ok();
  });
}

grpc::Status ControlService::ExportTorrent(grpc::ServerContext* context, const v1::ExportTorrentRequest* request,
                                           v1::ExportTorrentResponse* response) {
  return Guarded(counters_, "ExportTorrent", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/ExportTorrent"));
    GRIDCAST_ASSIGN_OR_RETURN(ExportedTorrent exported, exports_.Export(request->name(), request->piece_bytes()));
    response->set_torrent(std::move(exported.torrent));
    response->set_magnet(std::move(exported.magnet));
    response->set_piece_bytes(exported.piece_bytes);
    response->set_size_bytes(exported.size_bytes);
    return gridcast::Status::Ok();
  });
}

grpc::Status ControlService::ServeTo(grpc::ServerContext* context, const v1::ServeToRequest* request,
                                     v1::ServeToResponse* response) {
  return Guarded(counters_, "ServeTo", [&]() -> gridcast::Status {
    GRIDCAST_RETURN_IF_ERROR(Authenticate(context, "/gridcast.v1.Control/ServeTo"));
    ServeRequest serve{request->name(), request->address(), request->piece_bytes(), request->timeout_s()};
    GRIDCAST_ASSIGN_OR_RETURN(ServeSnapshot done, exports_.Serve(serve, [context] { return context->IsCancelled(); }));
    ToProto(done, response->mutable_serve());
    return gridcast::Status::Ok();
  });
}

}  // namespace gridcast
