#include "deploy/iperf_probe.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "deploy/subprocess.h"

namespace gridcast {

Result<double> MeasureGoodputBps(const NetgridNode& from, const NetgridNode& to, const IperfOptions& options) {
  const std::string port = std::to_string(options.port);
  GRIDCAST_ASSIGN_OR_RETURN(
      ChildProcess server,
      ChildProcess::Start(NetgridExecArgv(to, {"iperf3", "-s", "-1", "-p", port}),
                          (options.log_dir / ("iperf3-" + to.name + ".log")).string()));
  // The server needs a moment to listen; the client is refused until then.
  CommandOutput out;
  for (int attempt = 0; attempt < 50; ++attempt) {
    GRIDCAST_ASSIGN_OR_RETURN(
        out, RunCommand(NetgridExecArgv(from, {"iperf3", "-c", to.address, "-p", port, "-t",
                                               std::to_string(options.seconds), "-O", "1", "-J"})));
    // iperf3 3.12 exits 0 even when refused; its report says so.
    if (out.output.find("Connection refused") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (out.exit_code != 0) {
    return Status::Internal("iperf3 " + from.name + " -> " + to.name + " failed: " + out.output);
  }
  try {
    const nlohmann::json report = nlohmann::json::parse(out.output);
    if (report.contains("error")) {
      return Status::Internal("iperf3 " + from.name + " -> " + to.name + ": " + report["error"].get<std::string>());
    }
    return report.at("end").at("sum_received").at("bits_per_second").get<double>();
  } catch (const nlohmann::json::exception& e) {
    return Status::Internal("iperf3 " + from.name + " -> " + to.name + ": unreadable report: " + e.what());
  }
}

}  // namespace gridcast
