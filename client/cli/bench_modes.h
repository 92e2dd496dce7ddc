// What the modes of `gridcast bench` share: the arguments, what a mode measures, and helpers
// for payloads and summaries. Modes live in bench_command.cc and, for the allgathers,
// bench_allgather.cc.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "collectives/network_model.h"
#include "collectives/plan.h"
#include "common/crypto.h"
#include "delta/base_change.h"
#include "include/gridcast/result.h"
#include "deploy/bench_netgrid.h"
#include "deploy/mpi_launch.h"
#include "deploy/process_cpu.h"
#include "deploy/subprocess.h"

namespace gridcast::cli {

// The payload's file name in a bench's state directory (and at every receiver).
inline constexpr const char* kPayloadName = "bench.bin";
// --base-change tree: the payload is a directory of kTreeFiles files (SIZE in all); ten are
// edited, two added and one removed before the second send.
inline constexpr const char* kTreeChange = "tree";
inline constexpr const char* kTreeName = "bench-tree";
inline constexpr int kTreeFiles = 1000;

// The program bench/mpi_allgather.c builds to (only when CMake found MPI).
inline constexpr const char* kMpiAllgatherProgram = "gridcast-mpi-allgather";

// `gridcast bench --mode`: what is timed (the table of modes, with their names, is BenchModes()
// in bench_command.cc).
enum class BenchMode {
  kPush,
  kPull,
  kPullDefault,
  kHybrid,
  kMpi,
  kMpiDefault,
  kMpiShim,
  kIperf,
  kP2pMatrix,
  kAllgather,
  kMpiAllgather,
  kMpiShimAllgather,
  kSbcast,
  kSlurmStage,
};

// The name --mode gives `mode` ("push", "pull-default", ...).
const char* BenchModeName(BenchMode mode);

struct BenchArgs {
  std::string topology;
  std::string size;
  BenchMode mode = BenchMode::kPush;
  std::string algo;
  std::string state;
  std::string chunk;
  std::string segment = "1MiB";
  std::vector<std::string> daemon_args;
  std::string observations;
  int kill = 0;          // hybrid: interior members killed mid-broadcast
  double kill_at = 0.5;  // ... after this fraction of the bound: mid-broadcast
  // push, pull, hybrid: NAME=RATE, that member's NIC shaped to RATE both ways once the netgrid
  // is up, while the topology the planner reads keeps its full rate.
  std::vector<std::string> slow;
  // push, pull, hybrid: a RATE; the payload is staged from an HTTP origin behind a link of
  // RATE to the source (RunOriginBroadcast), against curl alone and the local file's send.
  std::string origin_rate;
  int iperf_seconds = 5;
  bool json = false;
  bool in_memory = false;
  bool tls = false;
  std::string digest;  // the gridcast modes' chunk digest; empty: sha256 (mpi-shim: the shim's default)
  bool no_reuse = false;                  // push, pull, hybrid: send --no-reuse
  // push, pull, hybrid: send a base, change it, time the second send. A BaseChange's name, or
  // kTreeChange; empty: one send.
  std::string base_change;
};

// What every mode measures; the bound is filled in by the caller unless the mode sets it.
struct BenchOutcome {
  std::string algo;
  double completion_s = 0;
  // gridcast broadcasts: from the broadcast's Start to the last verified copy (completion_s
  // runs from the request: planning, hashing and Prepare included).
  std::optional<double> transfer_s;
  bool verified = false;
  std::optional<double> source_copies;          // pull modes: payloads the source uploaded
  std::map<std::string, double> uplink_copies;  // pull modes: payloads into each switch's subtree
  nlohmann::json control;  // gridcast modes: the send summary's "control" counters, when given
  nlohmann::json repairs;  // gridcast modes: the send summary's "repairs" (docs/repair.md), when given
  std::string digest;      // gridcast modes: the chunk digest the summary names
  // gridcast broadcasts: payload bytes that crossed the network (all edges) and that members
  // took from earlier copies (send --json's moved_bytes and reused_bytes).
  std::optional<uint64_t> moved_bytes, reused_bytes;
  // gridcast broadcasts: the send command's whole time, from the request (Prepare, where a
  // member searches an earlier copy, included) to its summary.
  std::optional<double> wall_s;
  // --base-change: the base send's times, and the changed payload's size as sent (not --size).
  std::optional<double> base_completion_s, base_wall_s;
  std::optional<uint64_t> size_bytes;
  std::vector<std::string> details;  // extra lines for the human output
  // p2p-matrix: the pairs measured, in how many rounds, the clusters the rates imply and
  // their adjusted Rand index against the topology's bandwidth groups.
  std::optional<int> pairs, rounds;
  std::vector<std::vector<std::string>> clusters;
  std::optional<double> clusters_ari;
  // Modes that are no broadcast from the topology's source (the allgathers) set their own.
  std::optional<double> bound_s;
  // --kill: the bound of a broadcast to the survivors only, the killed members' upload removed.
  std::optional<double> survivors_bound_s;
  // --kill: the simulator's prediction of the plan patched around the victims (from the
  // request, as completion_s; PatchedPrediction).
  std::optional<double> patched_predicted_s;
  uint64_t chunk_bytes = 0;  // the send's, from its summary
  // gridcast broadcasts: each member's finished_s in the send summary (from the broadcast's
  // Start), for --slow's figures.
  std::map<std::string, double> finished_s;
  // --slow: when the last member neither slowed nor killed was done (from the request, as
  // completion_s), the bound of a broadcast to those members (the others' upload removed),
  // and each slowed member's own time against its NIC's (payload / RATE).
  struct Slowed {
    std::string member;
    double rate_bps = 0;
    double completion_s = 0;
    double nic_s = 0;
  };
  std::optional<double> others_completion_s, others_bound_s;
  std::vector<Slowed> slowed;
  // --origin-rate: the link's rate, curl alone fetching the payload on the source, the same
  // broadcast of the local file (completion_s, from the request), and the send's "origin".
  struct Origin {
    double rate_bps = 0;
    double download_s = 0;
    double local_completion_s = 0;
    nlohmann::json summary;
  };
  std::optional<Origin> origin;
  // allgather: the simulator's prediction for the plan that ran (DaemonPredictionOptions).
  std::optional<double> simulated_s;
  std::optional<uint64_t> part_bytes;  // allgathers: what each node contributed
  // cpu_s_per_gib's inputs: each receiving node's CPU seconds over the collective, taking the
  // receive memory included, and the bytes it received, and whose CPU that is ("gridcastd",
  // "MPI rank", ...). Empty: not measured.
  std::vector<NodeCpu> node_cpu;
  std::string cpu_of;
  // transfer_cpu_s_per_gib's: the same once the receive memory is taken, as an MPI program's
  // timed region starts after touching its buffer: a gridcast member's from the first payload
  // byte sent (every member has prepared by then). Empty: not measured.
  std::vector<NodeCpu> transfer_cpu;
  // busiest_thread_cpu_s_per_gib's: each receiving node's busiest thread over the collective (a
  // gridcastd's, or an MPI rank's main thread over its timed region): on a node with cores of
  // its own that thread, not the sum, bounds the rate. Empty: not measured.
  std::vector<NodeCpu> busiest_thread;
};

struct BenchContext {
  const BenchArgs& args;
  const NetworkModel& model;
  uint64_t size_bytes;
  std::filesystem::path state_dir;
};

// Writes size_bytes of pseudo-random data (incompressible, different every run) and returns
// their SHA-256.
Result<Digest> WriteRandomPayload(const std::filesystem::path& path, uint64_t size_bytes);
Result<Digest> FileSha256(const std::filesystem::path& path);
// Each node's copy (its digest, or why there is none) against the payload's `digest`: a detail
// line for each that differs or is missing (then not verified), and one with the count,
// "N of M `whose` hash to the payload's SHA-256 ...".
void RecordCopies(const std::vector<std::pair<std::string, Result<Digest>>>& copies, const Digest& digest,
                  const std::string& whose, BenchOutcome* outcome);
// The JSON object a `gridcast send|allgather --json` printed (stderr lines may surround it).
Result<nlohmann::json> ParseSendJson(const CommandOutput& out);
// Where a daemon keeps in-memory payloads (its List answer says).
Result<std::filesystem::path> MemoryDirOf(const BenchNetgrid& netgrid, const std::string& member);

// The names of the topology's nodes but `except` (a broadcast's receivers: all but the source).
std::vector<std::string> NodeNames(const NetworkModel& model, const std::string& except = "");

// Fills outcome->node_cpu with `cpu_s` of each of `receivers` (each received received_bytes),
// the CPU of `of`, and outcome->transfer_cpu likewise with `transfer_cpu_s` when given. A failed
// measurement, or one without some receiver, leaves its list empty (no cpu_s_per_gib, no
// transfer_cpu_s_per_gib) and says why in a detail line.
void RecordNodeCpu(const Result<std::map<std::string, double>>& cpu_s,
                   const std::optional<std::map<std::string, double>>& transfer_cpu_s,
                   const std::vector<std::string>& receivers, uint64_t received_bytes, const std::string& of,
                   BenchOutcome* outcome);

// Fills outcome->busiest_thread with `busiest_s` of each of `receivers` (DaemonCpuMeter::
// BusiestThreads, or the ranks' main threads), each of which received received_bytes; a node
// missing leaves it empty and says so in a detail line.
void RecordBusiestThreads(const std::map<std::string, double>& busiest_s, const std::vector<std::string>& receivers,
                          uint64_t received_bytes, BenchOutcome* outcome);

// RecordNodeCpu of an MPI program's ranks: the whole is each rank's timed region and taking
// its receive buffer's memory, the transfer its timed region; and RecordBusiestThreads of their
// main threads over it, when the program measured them.
void RecordMpiRankCpu(const MpiCollectiveResult& result, const std::vector<std::string>& node_order,
                      const std::vector<std::string>& receivers, uint64_t received_bytes, BenchOutcome* outcome);

// When a gridcast command's first payload byte left: `requested` (just before the command
// started) plus its summary's control.first_byte_s. None when the summary has none.
std::optional<std::chrono::system_clock::time_point> FirstByteAt(const nlohmann::json& summary,
                                                                 std::chrono::system_clock::time_point requested);

// The allgather modes' parts: SIZE / nodes each, rounded up; what each node receives (every
// part but its own); and their physical bound.
uint64_t AllgatherPartBytes(const BenchContext& ctx);
uint64_t AllgatherReceivedBytes(const BenchContext& ctx);
double AllgatherBoundOfBench(const BenchContext& ctx);

// --mode allgather: `gridcast allgather` of one random part per node (size / nodes each),
// every copy hashed again here, beside the simulator's time for the plan that ran.
Result<BenchOutcome> RunAllgather(const BenchContext& ctx);
// --mode mpi-allgather: bench/mpi_allgather.c, Open MPI's MPI_Allgather with a forced
// coll_tuned algorithm (default ring), the same parts.
Result<BenchOutcome> RunMpiAllgather(const BenchContext& ctx);

// --mode sbcast: Slurm's sbcast of a random payload to every node of a batch job on a real
// Slurm over the netgrid (--algo fanout:N, --chunk its block size); --mode slurm-stage: the same
// with `gridcast slurm stage` (bench_slurm.cc).
Result<BenchOutcome> RunSbcast(const BenchContext& ctx);
Result<BenchOutcome> RunSlurmStage(const BenchContext& ctx);

}  // namespace gridcast::cli
