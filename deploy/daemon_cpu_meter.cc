#include "deploy/daemon_cpu_meter.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "deploy/process_cpu.h"

namespace gridcast {
namespace {

constexpr const char* kDaemonName = "gridcastd";
constexpr auto kReadEvery = std::chrono::milliseconds(20);
constexpr int kDiscoverEveryReads = 12;  // 240 ms

// Each thread's CPU seconds; none when the process ended.
std::map<int, double> ThreadsOf(int pid) {
  Result<std::map<int, double>> threads = ThreadCpuSeconds(pid);
  return threads.ok() ? *threads : std::map<int, double>{};
}

}  // namespace

std::unique_ptr<DaemonCpuMeter> DaemonCpuMeter::Start(const NetgridState& state, const std::vector<std::string>& nodes) {
  std::unique_ptr<DaemonCpuMeter> meter(new DaemonCpuMeter(state, nodes));
  {
    std::lock_guard<std::mutex> lock(meter->mutex_);
    meter->Discover(/*from_zero=*/false);
  }
  meter->thread_ = std::thread([m = meter.get()] { m->Run(); });
  return meter;
}

DaemonCpuMeter::~DaemonCpuMeter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DaemonCpuMeter::Discover(bool from_zero) {
  std::set<std::string> known;
  for (const auto& [pid, daemon] : daemons_) known.insert(daemon.node);
  for (const std::string& name : nodes_) {
    if (known.count(name) != 0) continue;
    for (int pid : NetgridNodePids(*state_.FindNode(name), kDaemonName)) {
      Result<double> cpu_s = ProcessCpuSeconds(pid);
      if (!cpu_s.ok()) continue;  // ended meanwhile
      Daemon& daemon = daemons_[pid];
      daemon.node = name;
      daemon.started_within = from_zero;
      if (!from_zero) daemon.threads_first = ThreadsOf(pid);
      daemon.readings.Add(std::chrono::system_clock::now(), *cpu_s);
    }
  }
}

void DaemonCpuMeter::ReadAll() {
  for (auto& [pid, daemon] : daemons_) {
    Result<double> cpu_s = ProcessCpuSeconds(pid);
    if (cpu_s.ok()) daemon.readings.Add(std::chrono::system_clock::now(), *cpu_s);  // else it ended
  }
}

void DaemonCpuMeter::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (int reads = 1; !wake_.wait_for(lock, kReadEvery, [this] { return stopping_; }); ++reads) {
    if (reads % kDiscoverEveryReads == 0) Discover(/*from_zero=*/true);
    ReadAll();
  }
}

Result<std::map<std::string, double>> DaemonCpuMeter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  ReadAll();
  for (auto& [pid, daemon] : daemons_) {
    daemon.threads_last = ThreadsOf(pid);  // empty: it ended
  }
  std::map<std::string, double> cpu_s;
  for (const auto& [pid, daemon] : daemons_) cpu_s[daemon.node] += daemon.readings.last() - daemon.StartS();
  std::string missing;
  for (const std::string& name : nodes_) {
    if (cpu_s.count(name) == 0) missing += (missing.empty() ? "" : ", ") + name;
  }
  if (!missing.empty()) return Status::NotFound("no gridcastd was seen on " + missing);
  return cpu_s;
}

std::map<std::string, double> DaemonCpuMeter::From(std::chrono::system_clock::time_point from) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, double> cpu_s;
  for (const auto& [pid, daemon] : daemons_) {
    const double at_from = from < daemon.readings.first_at() ? daemon.StartS() : daemon.readings.At(from);
    cpu_s[daemon.node] += daemon.readings.last() - at_from;
  }
  return cpu_s;
}

std::map<std::string, double> DaemonCpuMeter::BusiestThreads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, double> busiest_s;
  for (const auto& [pid, daemon] : daemons_) {
    double& node_s = busiest_s[daemon.node];
    for (const auto& [thread, last_s] : daemon.threads_last) {
      const auto first = daemon.threads_first.find(thread);
      node_s = std::max(node_s, last_s - (first == daemon.threads_first.end() ? 0.0 : first->second));
    }
  }
  return busiest_s;
}

}  // namespace gridcast
