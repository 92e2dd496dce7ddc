// LocalCluster: N real gridcastd processes on loopback (integration tests, CPU benchmarks),
// each with its own data directory and a unix control socket, sharing one cluster file and a
// send root DIR/payloads. Killed (SIGKILL) and removed on destruction.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_file.h"
#include "cluster/cluster_pki.h"
#include "common/file_io.h"
#include "deploy/subprocess.h"

namespace gridcast {

namespace fs = std::filesystem;

class LocalCluster {
 public:
  enum class Transport { kPlain, kTls };
  enum class Metrics { kOff, kServe };

  // `extra_args` go to every daemon. With kTls, DIR/pki holds a cluster CA (the cluster file's
  // tls_ca) and a certificate per member for 127.0.0.1, and every daemon serves TLS. With
  // Metrics::kServe every daemon serves Prometheus metrics at metrics_address(i).
  LocalCluster(std::string gridcastd, const std::string& test_name, int members,
               std::vector<std::string> extra_args = {}, Transport transport = Transport::kPlain,
               Metrics metrics = Metrics::kOff)
      : gridcastd_(std::move(gridcastd)), extra_args_(std::move(extra_args)), tls_(transport == Transport::kTls),
        metrics_(metrics == Metrics::kServe) {
    dir_ = fs::temp_directory_path() / ("gridcast-it-" + test_name + "-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "payloads");
    config_.secret = NewClusterSecret();
    // Ports from the pid keep parallel test processes apart. They stay below Linux's ephemeral
    // range (32768 and up): a port in it can be taken by an outgoing connection meanwhile.
    // Data ports are base + i, BitTorrent ports base + 8 + i: at most 8 members. Two processes
    // whose pids meet in the same block (or anything else holding one of its ports) would
    // collide: the next free block is taken instead.
    int base = 20000 + static_cast<int>(getpid() % 750) * 16;
    for (int tried = 0; tried < 750 && !PortsFree(base, 16); ++tried) base = 20000 + (base - 20000 + 16) % (750 * 16);
    for (int i = 0; i < members; ++i) {
      const std::string name = "m" + std::to_string(i);
      config_.members.push_back({name, "unix:" + (dir_ / (name + ".sock")).string(),
                                 "127.0.0.1:" + std::to_string(base + i),
                                 "127.0.0.1:" + std::to_string(base + 8 + i)});
    }
    if (tls_) {
      std::vector<PkiMember> certified;
      for (const ClusterMember& member : config_.members) certified.push_back({member.name, {"localhost", "127.0.0.1"}});
      if (!WriteClusterPki(dir_ / "pki", certified).ok()) std::abort();
      config_.tls_ca_path = (dir_ / "pki" / "ca.pem").string();
    }
    // 0600, as a cluster file holding a secret should be (the CLI warns otherwise).
    if (!WriteFileAtomically((dir_ / "cluster.yaml").string(), FormatClusterFile(config_), 0600).ok()) std::abort();
    for (int i = 0; i < members; ++i) daemons_.emplace_back(Start(i));
    for (int i = 0; i < members; ++i) WaitReady(i);
  }

  ~LocalCluster() {
    daemons_.clear();  // SIGKILL and reap
    for (int i = 0; i < static_cast<int>(config_.members.size()); ++i) ReportCrash(i);
    if (std::getenv("GRIDCAST_KEEP_TEST_DIRS") != nullptr) return;  // logs and data, for a post-mortem
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  const fs::path& dir() const { return dir_; }
  std::string cluster_file() const { return (dir_ / "cluster.yaml").string(); }
  const ClusterConfig& config() const { return config_; }
  fs::path data_dir(int i) const { return dir_ / ("data-" + std::to_string(i)); }
  // Not a tmpfs here: kept inside dir_ so that a killed daemon's leaves nothing in /dev/shm.
  fs::path memory_dir(int i) const { return dir_ / ("memory-" + std::to_string(i)); }
  fs::path log(int i) const { return dir_ / ("m" + std::to_string(i) + ".log"); }
  // "127.0.0.1:port", below the data ports' range and apart per test process like them.
  std::string metrics_address(int i) const {
    return "127.0.0.1:" + std::to_string(12000 + static_cast<int>(getpid() % 750) * 8 + i);
  }
  int size() const { return static_cast<int>(daemons_.size()); }

  void Kill(int i) { daemons_[i].Stop(SIGKILL); }
  // A clean stop (SIGTERM), waited for.
  void Terminate(int i) { daemons_[i].Stop(SIGTERM); }
  void Restart(int i) {
    daemons_[i] = Start(i);
    WaitReady(i);
  }
  int pid(int i) const { return daemons_[i].pid(); }

  // A payload of `bytes` pseudo-random bytes in member 0's data directory.
  std::string MakePayload(const std::string& name, uint64_t bytes) const {
    const fs::path path = dir_ / "payloads" / name;
    std::ofstream out(path, std::ios::binary);
    uint64_t x = 0x9e3779b97f4a7c15ull ^ bytes;
    std::vector<char> buffer(1 << 16);
    for (uint64_t done = 0; done < bytes;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(buffer.size(), bytes - done));
      for (size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buffer[i] = static_cast<char>(x);
      }
      out.write(buffer.data(), static_cast<std::streamsize>(n));
      done += n;
    }
    return path.string();
  }

 private:
  // A daemon that died of a sanitizer report or an uncaught exception shows up only as a
  // closed socket to the client: put the report where a failing test's output shows it.
  // Whether the `count` ports from `base` can be listened on now on 127.0.0.1.
  static bool PortsFree(int base, int count) {
    for (int port = base; port < base + count; ++port) {
      const int probe = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (probe < 0) return true;  // cannot tell: as before
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons(static_cast<uint16_t>(port));
      const int one = 1;
      setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // as the daemons bind
      const bool free = bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
      close(probe);
      if (!free) return false;
    }
    return true;
  }

  void ReportCrash(int i) const {
    std::ifstream in(log(i));
    std::string line;
    int to_print = 0;
    while (std::getline(in, line)) {
      if (to_print == 0 && (line.find("ERROR: AddressSanitizer") != std::string::npos ||
                            line.find("runtime error:") != std::string::npos ||
                            line.find("terminate called") != std::string::npos)) {
        std::fprintf(stderr, "LocalCluster: %s crashed (%s):\n", config_.members[i].name.c_str(),
                     log(i).c_str());
        to_print = 40;
      }
      if (to_print > 0) {
        std::fprintf(stderr, "  %s\n", line.c_str());
        --to_print;
      }
    }
  }

  ChildProcess Start(int i) {
    std::error_code ec;
    fs::remove(dir_ / (config_.members[i].name + ".sock"), ec);  // WaitReady waits for a new one
    std::vector<std::string> argv = {gridcastd_, "--name", config_.members[i].name, "--cluster",
                                     cluster_file(), "--data-dir", data_dir(i).string(),
                                     "--memory-dir", memory_dir(i).string(),
                                     "--send-root", (dir_ / "payloads").string()};
    if (tls_) {
      const fs::path pki = dir_ / "pki";
      argv.insert(argv.end(), {"--tls-cert", (pki / (config_.members[i].name + ".pem")).string(), "--tls-key",
                               (pki / (config_.members[i].name + ".key")).string()});
    }
    if (metrics_) argv.insert(argv.end(), {"--metrics", metrics_address(i)});
    argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
    Result<ChildProcess> child = ChildProcess::Start(argv, log(i).string());
    if (!child.ok()) std::abort();  // no daemon binary: nothing to test or measure
    return std::move(*child);
  }

  void WaitReady(int i) {
    const fs::path socket = dir_ / (config_.members[i].name + ".sock");
    for (int attempt = 0; attempt < 400 && !fs::exists(socket); ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }

  const std::string gridcastd_;
  fs::path dir_;
  ClusterConfig config_;
  std::vector<std::string> extra_args_;
  const bool tls_;
  const bool metrics_;
  std::vector<ChildProcess> daemons_;
};

}  // namespace gridcast
