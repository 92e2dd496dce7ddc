#include "daemon/participant/running_plans.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>
#include <thread>

#include "common/hex.h"
#include "daemon/store/directory_archive.h"

namespace gridcast {

RunningPlans::Claim::~Claim() {
  if (owner_ == nullptr) return;
  std::lock_guard<std::mutex> lock(owner_->mutex_);
  owner_->claimed_.erase(name_);
}

Result<RunningPlans::Claim> RunningPlans::ClaimName(const PlanId& id, const HeldName& name, const std::string& source) {
  std::vector<std::shared_ptr<PlanExecution>> replaced;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<PlanId> other;
    for (auto it = names_.begin(); it != names_.end();) {
      const auto& [plan_id, held] = *it;
      const std::shared_ptr<PlanExecution>& execution = plans_.at(plan_id);
      if (held != name || plan_id == id || execution->Snapshot().state == ExecutionState::kDone) {
        ++it;
      } else if (execution->plan().members[0] == source) {
        // The source runs one broadcast of a name at a time: it gave this one up (a cancel
        // that did not reach this member, or a restart of the source).
        spdlog::info("plan {} of '{}' is replaced by plan {} from the same source", ToHex(plan_id), name.name, ToHex(id));
        replaced.push_back(execution);
        plans_.erase(plan_id);
        it = names_.erase(it);
      } else {
        other = plan_id;
        ++it;
      }
    }
    if (auto it = claimed_.find(name); it != claimed_.end() && it->second != id) other = it->second;
    if (other) {
      return Status::FailedPrecondition("'" + name.name + "' is being received here by broadcast " + ToHex(*other) +
                                        "; wait for it to finish, cancel it (gridcast cancel " + ToHex(*other) +
                                        "), or send under another name");
    }
    if (!claimed_.emplace(name, id).second) {
      return Status::FailedPrecondition("'" + name.name + "' is being prepared here for this broadcast already");
    }
  }
  Claim claim(*this, name);
  // A replaced plan's last chunk writes must be over before another store opens its file.
  for (const std::shared_ptr<PlanExecution>& execution : replaced) {
    execution->RequestStop("replaced by a newer broadcast of the same name from its source");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (execution.use_count() > 1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (execution.use_count() > 1) {
      return Status::Unavailable("the earlier broadcast of '" + name.name + "' here is still stopping; try again");
    }
  }
  return claim;
}

std::shared_ptr<PlanExecution> RunningPlans::Add(std::shared_ptr<PlanExecution> execution, HeldName name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const PlanId id = execution->id();
  auto [it, inserted] = plans_.emplace(id, std::move(execution));
  if (inserted) names_[id] = std::move(name);
  return it->second;
}

std::shared_ptr<PlanExecution> RunningPlans::Take(const PlanId& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = plans_.find(id);
  if (it == plans_.end()) return nullptr;
  std::shared_ptr<PlanExecution> execution = std::move(it->second);
  plans_.erase(it);
  names_.erase(id);
  return execution;
}

std::shared_ptr<PlanExecution> RunningPlans::Find(const PlanId& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = plans_.find(id);
  return it == plans_.end() ? nullptr : it->second;
}

std::optional<PlanRun> RunningPlans::FindRun(const PlanId& id) const {
  std::shared_ptr<PlanExecution> execution = Find(id);
  if (execution == nullptr) return std::nullopt;
  return PlanRun(std::move(execution));
}

std::vector<std::shared_ptr<PlanExecution>> RunningPlans::All() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<PlanExecution>> all;
  for (const auto& [id, plan] : plans_) all.push_back(plan);
  return all;
}

std::vector<RunningPlans::Named> RunningPlans::AllNamed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Named> all;
  for (const auto& [id, plan] : plans_) {
    const auto held = names_.find(id);
    all.push_back({PlanRun(plan), held == names_.end() ? HeldName{} : held->second});
  }
  return all;
}

std::shared_ptr<PlanExecution> RunningPlans::Writing(const HeldName& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [id, held] : names_) {
    if (held == name) return plans_.at(id);
  }
  return nullptr;
}

bool RunningPlans::Writes(const HeldName& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [id, held] : names_) {
    const bool same = held.name == name.name || held.name == name.name + kDirectoryArchiveSuffix ||
                      held.name.starts_with(name.name + "/");
    if (same && held.in_memory == name.in_memory && plans_.at(id)->Snapshot().state != ExecutionState::kDone) {
      return true;
    }
  }
  return false;
}

}  // namespace gridcast
