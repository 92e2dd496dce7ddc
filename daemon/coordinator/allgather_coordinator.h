// AllgatherCoordinator: one `gridcast allgather` at the member that was asked (docs/allgather.md).
//
// Every member named holds one part; every member ends with all parts. The coordinator asks
// each holder for its part's size (DescribePart), picks the chunk size, asks again for the
// padded chunk hashes, lays the parts out back to back in request order (each padded to whole
// chunks, allgather_bundle.h), plans one lane per part with an all-to-all planner (auto:
// auto-alltoall, by simulation) and runs the plan as a broadcast from here in which this
// member receives too (BroadcastCoordinator::Execute). Each member writes its own part into
// its bundle at Prepare; nobody holds the whole bundle before the end. Blocking; runs on the
// calling (gRPC handler) thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "cluster/control_client.h"
#include "collectives/planner.h"
#include "daemon/coordinator/broadcast_coordinator.h"
#include "daemon/coordinator/call_threads.h"
#include "daemon/participant/participant.h"
#include "proto/control.pb.h"

namespace gridcast {

class AllgatherCoordinator {
 public:
  AllgatherCoordinator(Participant& participant, BroadcastCoordinator& broadcasts, const ClusterConfig& cluster,
                       ControlClientOptions client);

  // `report` receives progress as for a broadcast; the last call has finished = true.
  Status Run(const v1::AllgatherRequest& request, const std::function<void(const v1::BroadcastProgress&)>& report);

  // The chunk size for parts of these sizes when the request names none: the planner's default
  // for their total (Planner::DefaultChunkBytes: about 2048 chunks, 64 KiB to 4 MiB), halved
  // while the padding of the smallest part could exceed an eighth of it (down to 64 KiB).
  static uint64_t ChooseChunkBytes(const Planner& planner, const std::vector<uint64_t>& part_sizes);

 private:
  // The members of the allgather `request` asks for, this daemon first (it coordinates, as a
  // broadcast's source); InvalidArgument for unknown or repeated members and part names.
  Result<std::vector<std::string>> MembersOf(const v1::AllgatherRequest& request) const;
  // A client of each part's holder, in request order (MembersOf checked them); nullptr for this
  // daemon's own part. Their calls are counted in `traffic`.
  std::vector<std::unique_ptr<ControlClient>> HolderClients(const v1::AllgatherRequest& request,
                                                            ControlTraffic* traffic) const;
  // Every part's DescribePart answer, in request order: the size only, or with chunk_bytes
  // the key its holder will sign the part's digests with, derived from nonces[i]. clients[i]
  // calls part i's holder; nullptr for this daemon's own part.
  Result<std::vector<v1::DescribePartResponse>> Describe(const v1::AllgatherRequest& request, uint64_t chunk_bytes,
                                                         const std::vector<std::string>& nonces,
                                                         const std::vector<std::unique_ptr<ControlClient>>& clients);

  Participant& participant_;
  BroadcastCoordinator& broadcasts_;
  const ClusterConfig& cluster_;
  const ControlClientOptions client_;
  CallThreads calls_;
};

}  // namespace gridcast
