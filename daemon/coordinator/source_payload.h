// What a broadcast request asks its source to send, found and opened: a file below the data
// directory, the memory directory or an allowed send root (confined there, safe_path.h), a
// fresh probe, a directory packed into one archive, a file its sender is still writing, or
// memory a local process lent. The broadcast coordinator plans and runs what these return.
// Blocking; any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "collectives/plan.h"
#include "daemon/participant/payload_directories.h"
#include "daemon/store/payload_store.h"
#include "include/gridcast/result.h"
#include "proto/control.pb.h"

namespace gridcast {

class RankMemoryRegistry;

struct ResolvedPayload {
  std::filesystem::path path;  // canonical; for a directory, the archive packed for this request
  uint64_t size = 0;
  std::string name;                  // under which members store it (a directory's: DIR.tar)
  std::filesystem::path directory;   // the directory packed into `path`, if it is one
  std::shared_ptr<const void> pack;  // removes the packed archive when the last copy goes
};

// The request's payload, its size and name. A probe is written into the data directory first;
// a directory is packed below the data directory's .gridcast/packs. For lent memory there is
// no file: OpenFilledSource finds the memory.
Result<ResolvedPayload> ResolvePayload(const v1::BroadcastRequest& request, const PayloadDirectories& directories);

// The source's store for BroadcastRequest.from_registered_memory: the memory `lenders` hold
// for the payload's name and size, bound now. Push plans only.
Result<std::unique_ptr<PayloadStore>> OpenLentSource(const v1::BroadcastRequest& request, PayloadIdentity identity,
                                                     const Plan& plan, RankMemoryRegistry* lenders);

// The source's store of a payload its sender still writes at `path` (BroadcastRequest.fill),
// or lends. A sender that declares only the size (DeclaresOnlyTheSize) has it hashed as it is
// sent. One that declares the chunks' digests has each chunk checked against them; a plan
// with a swarm then waits here for all of it (the swarm's source reads only chunks it holds
// or seals), failing once the sender wrote nothing new for `stall_after`.
Result<std::unique_ptr<PayloadStore>> OpenFilledSource(const v1::BroadcastRequest& request,
                                                       const std::filesystem::path& path, const Plan& plan,
                                                       RankMemoryRegistry* lenders,
                                                       std::chrono::milliseconds stall_after);

// The source's store of a payload an origin fills at `path` (OriginFetch): `size` bytes, hashed
// as they arrive and are sent, the whole checked against the origin's declared SHA-256 if any
// (a mismatch fails the broadcast before its last batch of digests is sealed).
Result<std::unique_ptr<PayloadStore>> OpenOriginSource(const v1::BroadcastRequest& request,
                                                       const std::filesystem::path& path, uint64_t size,
                                                       const Plan& plan);

}  // namespace gridcast
