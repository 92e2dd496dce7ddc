// CPU time of processes, and CPU per byte received: what `gridcast bench` reports as
// cpu_s_per_gib (docs/performance.md, "What each mode measures"). Linux only.
// Thread-compatible: the functions keep no state.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast {

// The user + system CPU seconds process `pid` has used so far, all its threads together (those
// still running and those that ended): its CPU-time clock (clock_getcpuclockid). That is the
// sum /proc/PID/stat reports as utime + stime, to the nanosecond instead of in clock ticks
// (10 ms here, as much as a small broadcast costs a node). Children are not included.
// NotFound when no process `pid` exists.
Result<double> ProcessCpuSeconds(int pid);

// The user + system CPU seconds of each thread of process `pid` alive now, by thread id, from
// /proc/PID/task/TID/stat: in clock ticks (10 ms here; a thread's clock cannot be read from
// another process). NotFound when no process `pid` exists.
Result<std::map<int, double>> ThreadCpuSeconds(int pid);

// One node's CPU seconds over a collective and the payload bytes it received meanwhile.
struct NodeCpu {
  std::string node;
  double cpu_s = 0;
  uint64_t received_bytes = 0;
};

// The node's CPU seconds per GiB (2^30 bytes) it received.
// REQUIRES: node.received_bytes > 0.
double CpuSecondsPerGib(const NodeCpu& node);

// CPU seconds per GiB received, over the nodes: the median (of an even count, the
// mean of the middle two) and the maximum.
struct CpuPerGib {
  double median = 0;
  double max = 0;
};

// InvalidArgument when `nodes` is empty, or a node received nothing or has a negative or
// non-finite CPU time.
Result<CpuPerGib> SummarizeCpuPerGib(const std::vector<NodeCpu>& nodes);

}  // namespace gridcast
