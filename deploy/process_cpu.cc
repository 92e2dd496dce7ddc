#include "deploy/process_cpu.h"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

namespace gridcast {

Result<double> ProcessCpuSeconds(int pid) {
  // A CPU-time clock id encodes the pid shifted left by 3 bits, and 0 means the caller: outside
  // Linux's pids (1 to PID_MAX_LIMIT, 2^22) it would name some other process, or this one.
  constexpr int kPidMaxLimit = 1 << 22;
  if (pid <= 0 || pid > kPidMaxLimit) return Status::NotFound("no process " + std::to_string(pid));
  clockid_t clock = 0;
  timespec used{};
  // The first fails for a pid that does not exist, the second for one that ended since.
  const int error = clock_getcpuclockid(pid, &clock);
  if (error != 0 || clock_gettime(clock, &used) != 0) {
    return Status::NotFound("no process " + std::to_string(pid) + ": " + std::strerror(error != 0 ? error : errno));
  }
  return static_cast<double>(used.tv_sec) + static_cast<double>(used.tv_nsec) * 1e-9;
}

double CpuSecondsPerGib(const NodeCpu& node) {
  return node.cpu_s / (static_cast<double>(node.received_bytes) / static_cast<double>(uint64_t{1} << 30));
}

Result<CpuPerGib> SummarizeCpuPerGib(const std::vector<NodeCpu>& nodes) {
  if (nodes.empty()) return Status::InvalidArgument("no receiving node to summarize");
  std::vector<double> per_gib;
  for (const NodeCpu& node : nodes) {
    if (node.received_bytes == 0) return Status::InvalidArgument(node.node + " received nothing");
    if (!std::isfinite(node.cpu_s) || node.cpu_s < 0) {
      return Status::InvalidArgument(node.node + ": CPU time " + std::to_string(node.cpu_s));
    }
    per_gib.push_back(CpuSecondsPerGib(node));
  }
  std::sort(per_gib.begin(), per_gib.end());
  const size_t n = per_gib.size();
  CpuPerGib summary;
  summary.median = n % 2 == 1 ? per_gib[n / 2] : (per_gib[n / 2 - 1] + per_gib[n / 2]) / 2;
  summary.max = per_gib.back();
  return summary;
}

}  // namespace gridcast
