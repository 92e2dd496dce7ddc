// JoinedBroadcasts: a request for a broadcast identical to one running from this daemon (the
// same unchanged file, name, members and options) joins it instead of starting a second plan
// that races the first to the same files: it is reported that broadcast's progress and outcome.
// One broadcast of a name runs from here at a time (members take a newer plan of a name from
// its source as replacing the older one: RunningPlans::ClaimName), so a different broadcast of
// a running name is refused.
// Thread-safe: gRPC handler threads call RunOrJoin at once.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "include/gridcast/status.h"
#include "proto/control.pb.h"

namespace gridcast {

// What makes two requests the same broadcast: the same file (`canonical`, unchanged), under the
// same name to the same members in the same way. Empty for probes (each writes fresh bytes) and
// for a file that cannot be read: such requests never join.
std::string SameBroadcastKey(const v1::BroadcastRequest& request, const std::filesystem::path& canonical,
                             const std::string& name, const std::vector<std::string>& members);

class JoinedBroadcasts {
 public:
  using Report = std::function<void(const v1::BroadcastProgress&)>;

  // Follows the broadcast running under `key` when there is one (its reports from now on, then
  // its outcome); else runs `run`, whose reports go to `report` and to whoever joins meanwhile.
  // An empty `key` runs without joining or being joined.
  Status RunOrJoin(const std::string& key, const std::string& name, const Report& report,
                   const std::function<Status(const Report&)>& run);

 private:
  struct Running;

  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Running>> running_;  // by key; guarded by mutex_
  std::map<std::string, std::string> names_;                 // payload name -> key; guarded by mutex_
};

}  // namespace gridcast
