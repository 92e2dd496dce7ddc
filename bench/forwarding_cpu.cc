// CPU cost of forwarding: 8 gridcastd on loopback (unshaped; --members N for another count),
// one push broadcast, and for every
// receiving daemon the payload bytes it took in (received, verified, written, forwarded to its
// children) per CPU-second it used (user + system, deploy/process_cpu.h). The target is
// >= 1 GB/s per CPU-second per node. With --tls the daemons run TLS on every data connection
// (and the control port): the difference is the cost of encryption per byte. --digest chooses
// the chunk digest (common/chunk_digest.h). With --members 2 one daemon receives from one, as
// fast as loopback carries: where verifying the chunks is what limits a member.
//
//   bench_forwarding_cpu [--size BYTES] [--algo NAME] [--chunk SIZE] [--digest sha256|xxh3] [--tls]
//                        [--members N] [--daemon-arg=ARG ...] [--json]
//
// --daemon-arg passes one argument to every gridcastd (e.g. --daemon-arg=--page-cache-window=8MiB).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/units.h"
#include "deploy/local_cluster.h"
#include "deploy/process_cpu.h"
#include "deploy/subprocess.h"

namespace {

// A daemon's user + system CPU seconds so far (deploy/process_cpu.h); NaN, said on stderr, when
// it is gone.
double CpuSeconds(int pid) {
  gridcast::Result<double> cpu_s = gridcast::ProcessCpuSeconds(pid);
  if (cpu_s.ok()) return *cpu_s;
  std::fprintf(stderr, "daemon %d: %s\n", pid, cpu_s.status().ToString().c_str());
  return std::nan("");
}

}  // namespace

// Stays whole: the measurement in the order it runs, as docs/performance.md describes it.
int main(int argc, char** argv) {
  uint64_t size = uint64_t{1} << 30;
  std::string algo = "multilane";
  std::string chunk = "1MiB";
  bool json = false;
  bool tls = false;
  std::string digest = "sha256";
  std::vector<std::string> daemon_args;
  int members_count = 8;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--tls") {
      tls = true;
    } else if (i + 1 < argc && arg == "--digest") {
      digest = argv[++i];
    } else if (arg.starts_with("--daemon-arg=")) {
      daemon_args.push_back(arg.substr(std::string("--daemon-arg=").size()));
    } else if (i + 1 < argc && arg == "--size") {
      gridcast::Result<uint64_t> parsed = gridcast::ParseSizeBytes(argv[++i]);
      if (!parsed.ok()) {
        std::fprintf(stderr, "--size: %s\n", parsed.status().message().c_str());
        return 2;
      }
      size = *parsed;
    } else if (i + 1 < argc && arg == "--algo") {
      algo = argv[++i];
    } else if (i + 1 < argc && arg == "--chunk") {
      chunk = argv[++i];
    } else if (i + 1 < argc && arg == "--members") {
      members_count = std::atoi(argv[++i]);
      if (members_count < 2 || members_count > 64) {
        std::fprintf(stderr, "--members: 2 to 64\n");
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--size BYTES] [--algo NAME] [--chunk SIZE] [--digest sha256|xxh3] [--tls] "
                   "[--members N] [--daemon-arg=ARG ...] [--json]\n",
                   argv[0]);
      return 2;
    }
  }
  const int kMembers = members_count;
  gridcast::LocalCluster cluster(GRIDCASTD, "cpu", kMembers, daemon_args,
                                 tls ? gridcast::LocalCluster::Transport::kTls : gridcast::LocalCluster::Transport::kPlain);
  const std::string payload = cluster.MakePayload("cpu.bin", size);
  std::vector<double> before(kMembers);
  for (int i = 0; i < kMembers; ++i) before[i] = CpuSeconds(cluster.pid(i));
  std::vector<std::string> send = {GRIDCAST_CLI, "send",  payload,  "--cluster", cluster.cluster_file(), "--algo",
                                   algo,         "--chunk", chunk, "--digest",  digest,                 "--json"};
  gridcast::Result<gridcast::CommandOutput> out = gridcast::RunCommand(send);
  if (!out.ok() || out->exit_code != 0) {
    std::fprintf(stderr, "send failed: %s\n", out.ok() ? out->output.c_str() : out.status().ToString().c_str());
    return 1;
  }
  const nlohmann::json summary = nlohmann::json::parse(out->output);
  std::vector<double> rates;
  nlohmann::json members = nlohmann::json::array();
  for (int i = 0; i < kMembers; ++i) {
    const double cpu = CpuSeconds(cluster.pid(i)) - before[i];
    members.push_back({{"member", cluster.config().members[i].name}, {"cpu_s", cpu}});
    if (i > 0) rates.push_back(static_cast<double>(size) / cpu);
  }
  const double min_rate = *std::min_element(rates.begin(), rates.end());
  double mean_rate = 0;
  for (double r : rates) mean_rate += r / static_cast<double>(rates.size());
  if (json) {
    std::printf("%s\n", nlohmann::json{{"algo", algo}, {"tls", tls}, {"digest", digest}, {"size_bytes", size},
                                       {"members_count", kMembers},
                                       {"completion_s", summary["completion_s"]},
                                       {"verified", summary["verified"]}, {"members", members},
                                       {"bytes_per_cpu_s_min", min_rate}, {"bytes_per_cpu_s_mean", mean_rate}}
                            .dump(2)
                            .c_str());
  } else {
    std::printf("%s, %s over %d daemons on loopback%s, %s: %.2f s, verified %s\n", algo.c_str(),
                gridcast::FormatSize(size).c_str(), kMembers, tls ? " (TLS)" : "", digest.c_str(),
                summary["completion_s"].get<double>(),
                summary["verified"].get<bool>() ? "yes" : "NO");
    for (const auto& m : members) {
      std::printf("  %-4s %6.2f CPU-s\n", m["member"].get<std::string>().c_str(), m["cpu_s"].get<double>());
    }
    std::printf("payload bytes per CPU-second, receiving daemons: min %.2f GB/s, mean %.2f GB/s\n",
                min_rate / 1e9, mean_rate / 1e9);
  }
  return summary["verified"].get<bool>() ? 0 : 1;
}
