#include "daemon/daemon.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "cluster/certificate_check.h"
#include "cluster/local_member.h"
#include "cluster/rank_memory_protocol.h"
#include "common/crypto.h"
#include "common/hex.h"
#include "collectives/topology.h"
#include "daemon/service/metrics_exporter.h"
#include "daemon/participant/participant.h"
#include "daemon/service/control_service.h"
#include "daemon/transport/data_plane.h"
#include "daemon/transport/tcp/tcp_transport.h"
#include "daemon/transport/tls/tls_transport.h"

namespace gridcast {
namespace {

Result<std::string> ReadPem(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Memory payloads do not outlive the daemon: what an earlier run left goes. Only a directory
// this daemon marked as its own is ever emptied.
Status ResetMemoryDir(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path marker = fs::path(dir) / ".gridcast" / "memory-dir";
  std::error_code ec;
  if (fs::exists(marker, ec)) {
    fs::remove_all(dir, ec);
  } else if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    return Status::FailedPrecondition("memory directory " + dir + " is not empty and not one of gridcast's");
  }
  fs::create_directories(marker.parent_path(), ec);
  std::ofstream(marker) << "in-memory payloads of a gridcastd; emptied when it starts and stops\n";
  if (ec || !fs::exists(marker, ec)) return Status::FailedPrecondition("memory directory " + dir + " is unusable");
  return Status::Ok();
}

// The memory directory: as configured, or one under /dev/shm named after the data directory.
std::string MemoryDirOf(const DaemonOptions& options, const std::string& data_dir) {
  return options.memory_dir.empty() ? "/dev/shm/gridcast-" + ToHex(Sha256(AsBytes(data_dir))).substr(0, 16)
                                    : options.memory_dir;
}

// A directory this daemon may use: writable if it exists, else creatable (its nearest
// existing ancestor is a writable directory).
Status CheckUsableDirectory(const std::string& what, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path at = fs::absolute(dir, ec);
  while (!at.empty() && !fs::exists(at, ec)) at = at.parent_path();
  if (at.empty() || !fs::is_directory(at, ec)) return Status::FailedPrecondition(what + " " + dir + ": no directory to make it in");
  if (access(at.c_str(), W_OK | X_OK) != 0) {
    return Status::PermissionDenied(what + " " + dir + ": " + at.string() + " is not writable by this user");
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> CheckDaemonOptions(const DaemonOptions& options) {
  namespace fs = std::filesystem;
  for (const auto& [what, address] : {std::pair<std::string, std::string>{"control address", options.control_address},
                                      {"data address", options.data_address},
                                      {"BitTorrent address", options.torrents.listen_address},
                                      {"metrics address", options.metrics_address}}) {
    if (address.rfind("unix:", 0) == 0 && what == "control address") continue;
    if (address.empty() && (what == "BitTorrent address" || what == "metrics address")) continue;
    GRIDCAST_RETURN_IF_ERROR(SplitHostPort(address, what == "metrics address").status().WithContext(what));
  }
  GRIDCAST_RETURN_IF_ERROR(CheckUsableDirectory("data directory", options.data_dir));
  std::error_code ec;
  const std::string data_dir = fs::weakly_canonical(options.data_dir, ec).string();
  const std::string memory_dir = MemoryDirOf(options, data_dir);
  GRIDCAST_RETURN_IF_ERROR(CheckUsableDirectory("memory directory", memory_dir));
  if (fs::exists(memory_dir, ec) && !fs::is_empty(memory_dir, ec) &&
      !fs::exists(fs::path(memory_dir) / ".gridcast" / "memory-dir", ec)) {
    return Status::FailedPrecondition("memory directory " + memory_dir + " is not empty and not one of gridcast's");
  }
  // From here on every problem is a line of its own, all of them said at once.
  std::vector<std::string> problems;
  const ClusterMember* self = options.cluster.Find(options.name);
  if (!options.cluster.topology_path.empty()) {
    GRIDCAST_ASSIGN_OR_RETURN(const std::string yaml, ReadPem(options.cluster.topology_path));
    Result<NetworkModel> model = ParseTopology(yaml);
    GRIDCAST_RETURN_IF_ERROR(model.status().WithContext(options.cluster.topology_path));
    if (!model->FindNode(options.name)) {
      problems.push_back(options.cluster.topology_path + ": names no node '" + options.name +
                         "' (a broadcast to this member would fail)");
    }
  }
  // The hosts this member is reached at, as the cluster file says: its certificate must name
  // them, and this host must have them.
  std::vector<std::string> hosts;
  for (const std::string& address : {self ? self->control_address : "", self ? self->data_address : ""}) {
    Result<std::pair<std::string, uint16_t>> split = SplitHostPort(address);
    if (split.ok() && std::find(hosts.begin(), hosts.end(), split->first) == hosts.end()) hosts.push_back(split->first);
  }
  const ThisHost here = CurrentHost();
  for (const std::string& host : hosts) {
    if (!IsAddressOfThisHost(host, here)) {
      problems.push_back(options.cluster_path + ": member " + options.name + " is reached at " + host +
                         ", which is not an address of this host");
    }
  }
  if (!options.tls_cert.empty()) {
    for (std::string& problem : CheckMemberCertificate(options.tls_cert, options.tls_key, options.tls_ca, hosts)) {
      problems.push_back(std::move(problem));
    }
  } else if (!options.cluster.tls_ca_path.empty()) {
    problems.push_back(options.cluster_path + ": names a CA (tls_ca) but this daemon has no certificate (--tls-cert, "
                       "or NAME.pem and NAME.key beside the CA): clients and members would expect TLS");
  }
  if (!problems.empty()) {
    std::string lines;
    for (const std::string& problem : problems) lines += (lines.empty() ? "" : "\n") + problem;
    return Status::FailedPrecondition(lines);
  }
  return "member " + options.name + " of " + std::to_string(options.cluster.members.size()) +
         " members; data " + options.data_dir + ", memory " + memory_dir + "; control " + options.control_address +
         ", data " + options.data_address +
         (options.torrents.listen_address.empty() ? "" : ", BitTorrent " + options.torrents.listen_address) +
         (options.metrics_address.empty() ? "" : ", metrics http://" + options.metrics_address + "/metrics") +
         (options.tls_cert.empty() ? "" : "; TLS");
}

Status RunDaemon(const DaemonOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options.data_dir, ec);
  if (ec || !fs::is_directory(options.data_dir)) {
    return Status::FailedPrecondition("data directory " + options.data_dir + " is unusable");
  }
  const std::string data_dir = fs::canonical(options.data_dir).string();
  const std::string memory_dir = MemoryDirOf(options, data_dir);
  GRIDCAST_RETURN_IF_ERROR(ResetMemoryDir(memory_dir));

  // Signals are taken by sigwait below, not by whichever thread happens to run.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A peer that went away makes a write fail with EPIPE; sendfile(2), unlike send(2), has no
  // MSG_NOSIGNAL, so without this the whole daemon would die of SIGPIPE when one child does.
  signal(SIGPIPE, SIG_IGN);

  auto counters = std::make_shared<DaemonCounters>();
  ExecutionOptions execution = options.execution;
  execution.counters = counters;
  std::shared_ptr<TlsContext> tls;
  if (!options.tls_cert.empty()) {
    GRIDCAST_ASSIGN_OR_RETURN(tls, TlsContext::Load(options.tls_cert, options.tls_key, options.tls_ca));
  }
  TorrentSessionOptions torrent_options = options.torrents;
  torrent_options.counters = counters;
  Result<std::unique_ptr<TorrentSession>> torrents = TorrentSession::Start(torrent_options);
  if (!torrents.ok()) return torrents.status();

  boost::asio::io_context io(1);
  auto work = boost::asio::make_work_guard(io);
  if (tls) {
    execution.transport = std::make_shared<TlsTransport>(io, tls, options.tcp, options.execution.connect_timeout);
  } else {
    execution.transport = std::make_shared<TcpTransport>(io, options.tcp);
  }
  // Without it (another daemon of this member and data address here) every payload
  // goes to the memory directory, as before the MPI shim could lend memory.
  const auto self = std::find_if(options.cluster.members.begin(), options.cluster.members.end(),
                                 [&](const ClusterMember& m) { return m.name == options.name; });
  Result<std::shared_ptr<RankMemoryRegistry>> rank_memory = RankMemoryRegistry::Listen(
      io, RankMemorySocketName(options.name,
                               self != options.cluster.members.end() ? self->data_address : options.data_address));
  if (!rank_memory.ok()) spdlog::warn("{}", rank_memory.status().ToString());
  Participant participant(io, ParticipantOptions{options.name, PayloadDirectories{data_dir, memory_dir, options.send_roots},
                                                execution, torrents->get(), options.workers,
                                          rank_memory.ok() ? *rank_memory : nullptr});
  DataPlane data_plane(io, execution.transport, options.cluster.secret,
                       [&participant](const PlanId& id) { return participant.plans().Find(id); },
                       options.execution.connect_timeout);
  Result<uint16_t> data_port = data_plane.Listen(options.data_address);
  if (!data_port.ok()) return data_port.status();
  std::thread io_thread([&io] { io.run(); });

  CoordinatorOptions coordinator_options;
  coordinator_options.client.tls_ca = options.tls_ca;
  coordinator_options.data_tls = tls != nullptr;
  if (options.control_fanout > 0) coordinator_options.control_fanout = options.control_fanout;
  if (options.stall_timeout.count() > 0) coordinator_options.stall_after = options.stall_timeout;
  ControlTree tree(participant, options.cluster, coordinator_options.client);
  BroadcastCoordinator coordinator(participant, tree, options.cluster, coordinator_options);
  AllgatherCoordinator allgathers(participant, coordinator, options.cluster, coordinator_options.client);
  TorrentExports exports(data_dir, **torrents);
  ControlService service(participant, tree, coordinator, allgathers, exports, options.cluster.secret, *counters);

  std::unique_ptr<MetricsExporter> metrics;
  if (!options.metrics_address.empty()) {
    Result<std::unique_ptr<MetricsExporter>> exporter = MetricsExporter::Start(options.metrics_address, participant, *counters);
    if (!exporter.ok()) {
      io.stop();
      io_thread.join();
      return exporter.status();
    }
    metrics = std::move(*exporter);
  }

  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!options.tls_cert.empty()) {
    Result<std::string> cert = ReadPem(options.tls_cert);
    Result<std::string> key = ReadPem(options.tls_key);
    if (!cert.ok() || !key.ok()) {
      io.stop();
      io_thread.join();
      return Status::InvalidArgument("TLS needs readable --tls-cert and --tls-key");
    }
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({*key, *cert});
    credentials = grpc::SslServerCredentials(ssl);
  }
  if (options.control_address.rfind("unix:", 0) == 0) {
    fs::remove(options.control_address.substr(options.control_address.find(':') + 1), ec);
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.control_address, credentials);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    io.stop();
    io_thread.join();
    return Status::Unavailable("cannot listen for control calls on " + options.control_address);
  }
  spdlog::info("gridcastd '{}' up: control {}{}, data {} (port {}{}), BitTorrent {}, data dir {}{}", options.name,
               options.control_address, tls ? " (TLS)" : "", options.data_address, *data_port,
               tls ? ", TLS" : "", options.torrents.listen_address, data_dir,
               metrics ? fmt::format(", metrics port {}", metrics->port()) : "");

  // Retention sweeps: at once, then every minute, or every tenth of a shorter maximum age (at
  // least 10 s).
  std::mutex sweep_mutex;
  std::condition_variable sweep_wake;
  bool stopping = false;
  std::thread sweeper;
  if (options.data_retention.any() || options.memory_retention.any()) {
    std::chrono::seconds every(60);
    for (const RetentionPolicy* policy : {&options.data_retention, &options.memory_retention}) {
      if (policy->max_age) every = std::min(every, std::max(*policy->max_age / 10, std::chrono::seconds(10)));
    }
    sweeper = std::thread([&, every] {
      std::unique_lock<std::mutex> lock(sweep_mutex);
      while (!stopping) {
        lock.unlock();
        participant.holdings().SweepRetention(options.data_retention, options.memory_retention);
        lock.lock();
        sweep_wake.wait_for(lock, every, [&] { return stopping; });
      }
    });
  }

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("gridcastd '{}': signal {}, shutting down", options.name, signal_number);
  {
    std::lock_guard<std::mutex> lock(sweep_mutex);
    stopping = true;
  }
  sweep_wake.notify_all();
  if (sweeper.joinable()) sweeper.join();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  for (const auto& plan : participant.plans().All()) plan->RequestStop("daemon shutting down");
  work.reset();
  io.stop();
  io_thread.join();
  fs::remove_all(memory_dir, ec);  // marked as ours by ResetMemoryDir
  return Status::Ok();
}

}  // namespace gridcast
