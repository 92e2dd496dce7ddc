#include "deploy/process_cpu.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

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

Result<std::map<int, double>> ThreadCpuSeconds(int pid) {
  if (pid <= 0) return Status::NotFound("no process " + std::to_string(pid));
  std::error_code error;
  std::filesystem::directory_iterator entries("/proc/" + std::to_string(pid) + "/task", error);
  if (error) return Status::NotFound("no process " + std::to_string(pid) + ": " + error.message());
  const double tick_s = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  std::map<int, double> by_thread;
  for (const auto& entry : entries) {
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // After the name in parentheses (which may hold anything, parentheses too): state (field
    // 3), ... utime and stime (fields 14 and 15).
    const size_t name_end = stat.rfind(')');
    if (name_end == std::string::npos) continue;  // the thread ended meanwhile
    std::istringstream fields(stat.substr(name_end + 1));
    std::string field;
    for (int number = 3; number <= 13; ++number) fields >> field;
    uint64_t user_ticks = 0, system_ticks = 0;
    if (!(fields >> user_ticks >> system_ticks)) continue;
    by_thread[std::stoi(entry.path().filename().string())] =
        static_cast<double>(user_ticks + system_ticks) * tick_s;
  }
  return by_thread;
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
