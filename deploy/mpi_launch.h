// Open MPI's MPI_Bcast across a netgrid, for `gridcast bench --mode mpi|mpi-default`.
//
// There is no ssh between namespaces: mpirun runs inside the source's namespace and reaches the
// other nodes through a plm_rsh_agent script that turns "agent HOST orted ..." into
// `ip netns exec NAMESPACE sh -c "orted ..."`. One rank per node, rank 0 on the source (the
// first line of the hostfile, which is the node mpirun runs on); messages go over TCP on the
// netgrid interface only (pml ob1, btl self,tcp: no shared memory or UCX shortcut between
// namespaces of one host). Ranks yield the CPU while they poll (mpi_yield_when_idle): all
// ranks share this host's cores, where on a real cluster each would have its own. The program
// timed is bench/mpi_bcast.c.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "include/gridcast/result.h"
#include "deploy/netgrid.h"

namespace gridcast {

// One mpirun of any MPI program across a netgrid.
struct MpiRun {
  std::vector<std::string> command;      // the program and its arguments
  std::vector<std::string> environment;  // NAME=VALUE, set for every rank (mpirun -x)
  std::vector<std::pair<std::string, std::string>> mca;  // more --mca NAME VALUE
  int ranks_per_node = 1;
  double timeout_s = 600;                // mpirun is killed after this
};

// The two collectives timed: bench/mpi_bcast.c and bench/mpi_allgather.c.
enum class MpiCollective { kBcast, kAllgather };

struct MpiCollectiveOptions {
  MpiCollective collective = MpiCollective::kBcast;
  std::string program;        // the mpi_bcast or mpi_allgather binary
  // The broadcast buffer; for an allgather, all parts together (each rank contributes
  // size_bytes / ranks, rounded up).
  uint64_t size_bytes = 0;
  // An Open MPI coll_tuned algorithm name of the collective (OpenMpiAlgorithms()), forced, a
  // broadcast's with segment_bytes segments; empty: Open MPI's own decision rules.
  std::string tuned_algorithm;
  uint64_t segment_bytes = 1 << 20;
  std::vector<std::string> environment;  // as MpiRun's: e.g. the gridcast shim (docs/mpi.md)
  int ranks_per_node = 1;
  double timeout_s = 600;     // mpirun is killed after this
};

struct MpiCollectiveResult {
  double completion_s = 0;    // first barrier to second barrier, at rank 0
  bool verified = false;      // every rank holds what every contributor sent (FNV-1a 64 compared)
  int ranks = 0;
  // Each rank's user + system CPU seconds from the first barrier to the second (getrusage
  // RUSAGE_SELF: all its threads), by rank; `ranks` of them.
  std::vector<double> cpu_s;
  // ... of its main thread alone (where MPI makes progress); empty from a program that does
  // not print it.
  std::vector<double> thread_cpu_s;
  // ... and before the first barrier, taking its receive buffer's memory (touching its pages).
  std::vector<double> buffer_cpu_s;
  std::chrono::system_clock::time_point timed_from;  // rank 0's first barrier
};

// The names coll_tuned_<collective>_algorithm accepts (Open MPI 4.1), without "ignore".
const std::vector<std::string>& OpenMpiAlgorithms(MpiCollective collective);

// The plm_rsh_agent script: a `case` from each node's address (or name) to its namespace.
// Each node's Open MPI daemon gets TMPDIR=tmp_base/NODE: the namespaces share one /tmp and
// one hostname, and orteds sharing a session directory corrupt each other's shared-memory
// files (hwloc topology, PMIx store) and crash at start-up.
// REQUIRES: tmp_base has no single quote.
std::string RshAgentScript(const NetgridState& state, const std::string& tmp_base);

// The nodes in hostfile order: the source first, then the others in netgrid order. Under
// `--map-by node` rank r runs on node r mod nodes: with one rank per node, rank r on the r-th.
std::vector<std::string> MpiNodeOrder(const NetgridState& state, const std::string& source);

// Seconds by rank (a result's cpu_s or buffer_cpu_s) summed by node (a node may run more than
// one rank), by node name; node_order is MpiNodeOrder of the run.
// REQUIRES: !node_order.empty().
std::map<std::string, double> MpiSecondsByNode(const std::vector<double>& by_rank,
                                               const std::vector<std::string>& node_order);

// "ADDRESS slots=N" per node, in MpiNodeOrder.
std::string MpiHostfile(const NetgridState& state, const std::string& source, int ranks_per_node = 1);

// ip netns exec SOURCE_NS env TMPDIR=tmp_base/SOURCE mpirun ... COMMAND, under `timeout`.
std::vector<std::string> MpirunArgv(const NetgridState& state, const std::string& source,
                                    const std::string& tmp_base, const std::filesystem::path& agent,
                                    const std::filesystem::path& hostfile, const MpiRun& run);

// The run of bench/mpi_bcast.c or bench/mpi_allgather.c that `options` describe.
MpiRun MpiCollectiveRun(const MpiCollectiveOptions& options);

// Finds the program's JSON line in mpirun's output; it must give one CPU time per rank.
Result<MpiCollectiveResult> ParseMpiCollectiveOutput(std::string_view output);

// Writes the agent, hostfile and per-node temporary directories into work_dir and runs
// mpirun (its own TMPDIR is work_dir/tmp/SOURCE), rank 0 on the source. The output is kept in
// work_dir/mpirun.log; a non-zero exit is an error that carries it.
Result<std::string> RunMpiProgram(const NetgridState& state, const std::string& source,
                                  const std::filesystem::path& work_dir, const MpiRun& run);

// RunMpiProgram of MpiCollectiveRun(options), its result line parsed.
Result<MpiCollectiveResult> RunMpiCollective(const NetgridState& state, const std::string& source,
                                   const std::filesystem::path& work_dir, const MpiCollectiveOptions& options);

}  // namespace gridcast
