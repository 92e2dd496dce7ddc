// iperf3 between two netgrid nodes: the TCP goodput one stream gets on a path, for
// `gridcast bench --mode iperf` (the line rate every broadcast is measured against).
#pragma once

#include <filesystem>

#include "include/gridcast/result.h"
#include "deploy/netgrid.h"

namespace gridcast {

struct IperfOptions {
  int port = 5201;
  int seconds = 5;          // measured, after one omitted second of slow start
  std::filesystem::path log_dir;  // iperf3 server output goes to LOG_DIR/iperf3-TO.log
};

// Goodput from -> to in bits per second, as the receiver counted it.
Result<double> MeasureGoodputBps(const NetgridNode& from, const NetgridNode& to, const IperfOptions& options);

}  // namespace gridcast
