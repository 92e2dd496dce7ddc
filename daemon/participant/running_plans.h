// RunningPlans: the plans this daemon takes part in, by id, with the payload each one writes.
// It keeps two plans from writing one file (Claim) and answers what the holdings and the
// metrics ask of the running plans. Thread-safe: gRPC handler threads call in.
#pragma once

#include <compare>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "include/gridcast/result.h"
#include "daemon/executor/plan_execution.h"
#include "daemon/participant/plan_run.h"

namespace gridcast {

// A payload as this daemon stores it: its name, in the data or in the memory directory.
struct HeldName {
  std::string name;
  bool in_memory = false;
  auto operator<=>(const HeldName&) const = default;
};

class RunningPlans {
 public:
  // Holds a payload name for one plan from before its store opens until Add() records it (or
  // the preparation fails, destroying the claim).
  class Claim {
   public:
    Claim(RunningPlans& owner, HeldName name) : owner_(&owner), name_(std::move(name)) {}
    Claim(Claim&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), name_(std::move(other.name_)) {}
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    Claim& operator=(Claim&&) = delete;
    ~Claim();

   private:
    RunningPlans* owner_;
    HeldName name_;
  };

  // FailedPrecondition, naming the other broadcast, while a plan other than `id` that is not
  // done holds `name` here or is being prepared with it, unless that plan comes from the same
  // `source`: a source runs one broadcast of a name at a time, so its older plan was given up
  // (a cancel that never arrived here) and is stopped.
  Result<Claim> ClaimName(const PlanId& id, const HeldName& name, const std::string& source);

  // Records `execution` writing `name`; the execution already recorded for its id, if any.
  std::shared_ptr<PlanExecution> Add(std::shared_ptr<PlanExecution> execution, HeldName name);
  // Forgets the plan and returns it; null when it is unknown.
  std::shared_ptr<PlanExecution> Take(const PlanId& id);

  std::shared_ptr<PlanExecution> Find(const PlanId& id) const;
  std::vector<std::shared_ptr<PlanExecution>> All() const;
  // The handle on the plan's run, none when it is unknown.
  std::optional<PlanRun> FindRun(const PlanId& id) const;
  struct Named {
    PlanRun run;
    HeldName payload;
  };
  std::vector<Named> AllNamed() const;
  // The plan writing `name`, or null.
  std::shared_ptr<PlanExecution> Writing(const HeldName& name) const;
  // Whether a plan that is not done writes `name`, or a payload inside a directory `name`.
  bool Writes(const HeldName& name) const;

 private:
  mutable std::mutex mutex_;
  std::map<PlanId, std::shared_ptr<PlanExecution>> plans_;  // guarded by mutex_
  std::map<PlanId, HeldName> names_;                         // guarded by mutex_
  std::map<HeldName, PlanId> claimed_;                       // being prepared; guarded by mutex_
};

}  // namespace gridcast
