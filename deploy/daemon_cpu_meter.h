// DaemonCpuMeter: the CPU time the gridcastd of some netgrid nodes use over a window, for
// `gridcast bench`'s cpu_s_per_gib (docs/performance.md).
//
// A node's daemon is the process named gridcastd in its namespace, whoever started it (netgrid,
// or `gridcast slurm stage` through srun). One alive at Start() counts from there; one that
// starts later counts from its own start; one that ends before Stop() counts until its last
// reading. The meter reads every daemon it knows every 20 ms on a thread of its own (one clock
// read each: cheap) and looks for daemons it has not found yet every 240 ms. It keeps the
// readings (CpuReadings), so that the part of the window after a moment learnt later (a
// broadcast's first byte) can be told too.
// Thread-compatible: Start, Stop and the destructor from one thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "include/gridcast/result.h"
#include "deploy/cpu_readings.h"
#include "deploy/netgrid.h"

namespace gridcast {

class DaemonCpuMeter {
 public:
  // Starts the window over the daemons of `nodes` (names in `state`).
  // REQUIRES: every name is a node of `state`; `state` outlives the meter.
  static std::unique_ptr<DaemonCpuMeter> Start(const NetgridState& state, const std::vector<std::string>& nodes);

  DaemonCpuMeter(const DaemonCpuMeter&) = delete;
  DaemonCpuMeter& operator=(const DaemonCpuMeter&) = delete;
  ~DaemonCpuMeter();  // ends the thread, if Stop() did not

  // Ends the window: the CPU seconds of each node's daemon(s) within it. NotFound, naming them,
  // when no daemon was seen on some of the nodes. Call once.
  Result<std::map<std::string, double>> Stop();
  // After Stop(): each node's CPU seconds from `from` to the window's end (between two readings
  // 20 ms apart, interpolated). Before the window: the whole window.
  std::map<std::string, double> From(std::chrono::system_clock::time_point from) const;
  // After Stop(): each node's busiest thread, the most CPU seconds one thread of its daemon(s)
  // used within the window (read where the window starts and ends, in 10 ms clock ticks; a
  // thread that ended before Stop() is not seen). On a node with cores of its own, this thread
  // is what bounds how fast the daemon moves bytes, where the sum says what it costs.
  std::map<std::string, double> BusiestThreads() const;

 private:
  struct Daemon {
    std::string node;
    bool started_within = false;  // counts from its own start (0 s), not its first reading
    CpuReadings readings;
    // Each thread's CPU seconds when the daemon was first seen (none: it started within the
    // window) and at Stop().
    std::map<int, double> threads_first, threads_last;
    double StartS() const { return started_within ? 0.0 : readings.first(); }
  };

  DaemonCpuMeter(const NetgridState& state, std::vector<std::string> nodes) : state_(state), nodes_(std::move(nodes)) {}
  // Finds the daemons of nodes with none known yet; `from_zero`: they started within the window.
  void Discover(bool from_zero);  // REQUIRES: mutex_ held
  void ReadAll();                 // REQUIRES: mutex_ held
  void Run();

  const NetgridState& state_;
  const std::vector<std::string> nodes_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<int, Daemon> daemons_;  // by pid; guarded by mutex_
  bool stopping_ = false;          // guarded by mutex_
  std::thread thread_;
};

}  // namespace gridcast
