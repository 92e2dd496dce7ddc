// BenchNetgrid: a netgrid that belongs to one benchmark run and never outlives it.
//
// Up() builds the network (and optionally a gridcastd per node) in a state directory of its
// own; the destructor, a failure half-way through Up(), or SIGINT/SIGTERM/SIGHUP at any
// moment runs `netgrid down` on it (stopping every process in its namespaces: daemons,
// mpirun and its orteds, iperf3) and deletes the state directory with the payload copies.
// On a signal the process then exits with 128 + the signal number. Only SIGKILL can leave a
// netgrid behind; `gridcast netgrid down --state DIR` removes it.
// One BenchNetgrid per process at a time (signals are per process).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "collectives/network_model.h"
#include "include/gridcast/result.h"
#include "deploy/netgrid.h"

namespace gridcast {

class BenchNetgrid {
 public:
  // Fails (FailedPrecondition) when a netgrid is already up in state_dir or another
  // BenchNetgrid is alive. `daemons` set: start a gridcastd per node with those options.
  static Result<std::unique_ptr<BenchNetgrid>> Up(const NetworkModel& model,
                                                  const std::filesystem::path& state_dir,
                                                  const std::optional<NetgridDaemonOptions>& daemons);

  BenchNetgrid(const BenchNetgrid&) = delete;
  BenchNetgrid& operator=(const BenchNetgrid&) = delete;
  ~BenchNetgrid();

  const NetgridState& state() const { return state_; }
  const std::filesystem::path& state_dir() const { return state_dir_; }
  // STATE/cluster.yaml when the daemons run, else empty.
  const std::string& cluster_file() const { return cluster_file_; }

 private:
  BenchNetgrid(std::filesystem::path state_dir, NetgridState state, std::string cluster_file)
      : state_dir_(std::move(state_dir)), state_(std::move(state)), cluster_file_(std::move(cluster_file)) {}

  std::filesystem::path state_dir_;
  NetgridState state_;
  std::string cluster_file_;
};

}  // namespace gridcast
