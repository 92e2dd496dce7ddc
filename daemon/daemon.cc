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
#include <optional>
#include <sstream>
#include <thread>

#include "cluster/certificate_check.h"
#include "cluster/local_member.h"
#include "cluster/rank_memory_protocol.h"
#include "common/file_io.h"
#include "common/crypto.h"
#include "common/hex.h"
#include "collectives/topology.h"
#include "daemon/coordinator/allgather_coordinator.h"
#include "daemon/coordinator/broadcast_coordinator.h"
#include "daemon/coordinator/control_tree.h"
#include "daemon/participant/participant.h"
#include "daemon/pull/torrent_exports.h"
#include "daemon/service/control_service.h"
#include "daemon/service/metrics_exporter.h"
#include "daemon/transport/data_plane.h"
#include "daemon/transport/tcp/tcp_transport.h"
#include "daemon/transport/tls/tls_transport.h"

namespace gridcast {
namespace {

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
    GRIDCAST_ASSIGN_OR_RETURN(const std::string yaml, ReadTextFile(options.cluster.topology_path));
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

namespace {

// Runs `io` on a thread of its own until Stop() or destruction.
class IoThread {
 public:
  explicit IoThread(boost::asio::io_context& io)
      : io_(io), work_(boost::asio::make_work_guard(io)), thread_([&io] { io.run(); }) {}
  ~IoThread() { Stop(); }
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;
  void Stop() {
    if (!thread_.joinable()) return;
    work_.reset();
    io_.stop();
    thread_.join();
  }

 private:
  boost::asio::io_context& io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

// Retention sweeps on a thread of their own: at once, then every minute, or every tenth of a
// shorter maximum age or warm memory idle time (at least 10 s), until destroyed. None when
// neither policy limits anything and no memory is kept warm.
class RetentionSweeper {
 public:
  RetentionSweeper(Holdings& holdings, const RetentionPolicy& data, const RetentionPolicy& memory,
                   std::optional<std::chrono::seconds> warm_memory_idle) {
    if (!data.any() && !memory.any() && !warm_memory_idle) return;
    std::chrono::seconds every(60);
    if (warm_memory_idle) every = std::min(every, std::max(*warm_memory_idle / 10, std::chrono::seconds(10)));
    for (const RetentionPolicy* policy : {&data, &memory}) {
      if (policy->max_age) every = std::min(every, std::max(*policy->max_age / 10, std::chrono::seconds(10)));
    }
    thread_ = std::thread([this, &holdings, data, memory, every] {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!stopping_) {
        lock.unlock();
        holdings.SweepRetention(data, memory);
        lock.lock();
        wake_.wait_for(lock, every, [this] { return stopping_; });
      }
    });
  }
  ~RetentionSweeper() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  RetentionSweeper(const RetentionSweeper&) = delete;
  RetentionSweeper& operator=(const RetentionSweeper&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;
};

// Signals are taken by sigwait (WaitForShutdownSignal), not by whichever thread happens to run;
// call before starting any thread.
sigset_t BlockShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A peer that went away makes a write fail with EPIPE; sendfile(2), unlike send(2), has no
  // MSG_NOSIGNAL, so without this the whole daemon would die of SIGPIPE when one child does.
  signal(SIGPIPE, SIG_IGN);
  return signals;
}

// The data and memory directories, made ready (the memory one emptied of an earlier run's).
Result<PayloadDirectories> OpenDirectories(const DaemonOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options.data_dir, ec);
  if (ec || !fs::is_directory(options.data_dir)) {
    return Status::FailedPrecondition("data directory " + options.data_dir + " is unusable");
  }
  PayloadDirectories directories;
  directories.data_dir = fs::canonical(options.data_dir).string();
  directories.memory_dir = MemoryDirOf(options, directories.data_dir);
  directories.send_roots = options.send_roots;
  GRIDCAST_RETURN_IF_ERROR(ResetMemoryDir(directories.memory_dir));
  return directories;
}

// The memory local processes lend this member (rank_memory_registry.h); null, with a warning,
// when another daemon of this member and data address on this host listens already: then
// every in-memory payload goes to the memory directory.
std::shared_ptr<RankMemoryRegistry> ListenForLentMemory(boost::asio::io_context& io, const DaemonOptions& options) {
  const ClusterMember* self = options.cluster.Find(options.name);
  Result<std::shared_ptr<RankMemoryRegistry>> rank_memory = RankMemoryRegistry::Listen(
      io, RankMemorySocketName(options.name, self != nullptr ? self->data_address : options.data_address));
  if (rank_memory.ok()) return *rank_memory;
  spdlog::warn("{}", rank_memory.status().ToString());
  return nullptr;
}

// The gRPC server of the control calls, listening (over TLS when the daemon has a certificate).
Result<std::unique_ptr<grpc::Server>> StartControlServer(const DaemonOptions& options, ControlService& service) {
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!options.tls_cert.empty()) {
    Result<std::string> cert = ReadTextFile(options.tls_cert);
    Result<std::string> key = ReadTextFile(options.tls_key);
    if (!cert.ok() || !key.ok()) return Status::InvalidArgument("TLS needs readable --tls-cert and --tls-key");
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({*key, *cert});
    credentials = grpc::SslServerCredentials(ssl);
  }
  if (options.control_address.rfind("unix:", 0) == 0) {
    std::error_code ec;
    std::filesystem::remove(options.control_address.substr(options.control_address.find(':') + 1), ec);
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.control_address, credentials);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) return Status::Unavailable("cannot listen for control calls on " + options.control_address);
  return server;
}

}  // namespace

Status RunDaemon(const DaemonOptions& options) {
  GRIDCAST_ASSIGN_OR_RETURN(PayloadDirectories directories, OpenDirectories(options));
  const std::string data_dir = directories.data_dir;
  const std::string memory_dir = directories.memory_dir;
  sigset_t signals = BlockShutdownSignals();

  // First, so that it goes last: the transport below (in `execution`) holds sockets of its
  // services, and an early return (a data port in use) must not close them after it.
  boost::asio::io_context io(1);
  auto counters = std::make_shared<DaemonCounters>();
  ExecutionOptions execution = options.execution;
  execution.counters = counters;
  std::shared_ptr<TlsContext> tls;
  if (!options.tls_cert.empty()) {
    GRIDCAST_ASSIGN_OR_RETURN(tls, TlsContext::Load(options.tls_cert, options.tls_key, options.tls_ca));
  }
  TorrentSessionOptions torrent_options = options.torrents;
  torrent_options.counters = counters;
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<TorrentSession> torrents, TorrentSession::Start(torrent_options));

  if (tls) {
    execution.transport = std::make_shared<TlsTransport>(io, tls, options.tcp, options.execution.connect_timeout);
  } else {
    execution.transport = std::make_shared<TcpTransport>(io, options.tcp);
  }
  std::shared_ptr<WarmMemory> warm_memory;
  if (options.warm_memory_bytes > 0) {
    GRIDCAST_ASSIGN_OR_RETURN(warm_memory, WarmMemory::Open((std::filesystem::path(memory_dir) / ".gridcast" / "warm").string(),
                                                            options.warm_memory_bytes, options.warm_memory_idle));
  }
  ParticipantOptions participant_options;
  participant_options.name = options.name;
  participant_options.directories = std::move(directories);
  participant_options.execution = execution;
  participant_options.torrents = torrents.get();
  participant_options.workers = options.workers;
  participant_options.rank_memory = ListenForLentMemory(io, options);
  participant_options.warm_memory = std::move(warm_memory);
  if (tls) {
    // The keys of digests are signed with this member's TLS identity and checked against the CA.
    GRIDCAST_ASSIGN_OR_RETURN(participant_options.signer, MemberSigner::Load(options.tls_cert, options.tls_key));
    if (!options.tls_ca.empty()) {
      GRIDCAST_ASSIGN_OR_RETURN(participant_options.verifier, MemberVerifier::Load(options.tls_ca));
    }
    participant_options.data_host_of = [&cluster = options.cluster](const std::string& member) -> Result<std::string> {
      const ClusterMember* entry = cluster.Find(member);
      if (entry == nullptr) return Status::FailedPrecondition("member '" + member + "' is not in the cluster file");
      GRIDCAST_ASSIGN_OR_RETURN(auto host_port, SplitHostPort(entry->data_address));
      return host_port.first;  // without an IPv6 address's brackets
    };
  }
  Participant participant(io, participant_options);
  DataPlane data_plane(io, execution.transport, options.cluster.secret,
                       [&participant](const PlanId& id) { return participant.plans().Find(id); },
                       options.execution.connect_timeout);
  GRIDCAST_ASSIGN_OR_RETURN(const uint16_t data_port, data_plane.Listen(options.data_address));
  IoThread io_thread(io);

  CoordinatorOptions coordinator_options;
  coordinator_options.client.tls_ca = options.tls_ca;
  coordinator_options.data_tls = tls != nullptr;
  coordinator_options.signer = participant_options.signer;
  if (options.control_fanout > 0) coordinator_options.control_fanout = options.control_fanout;
  if (options.stall_timeout.count() > 0) coordinator_options.stall_after = options.stall_timeout;
  if (options.member_lost_after.count() > 0) coordinator_options.member_lost_after = options.member_lost_after;
  ControlTree tree(participant, options.cluster, coordinator_options.client);
  BroadcastCoordinator coordinator(participant, tree, options.cluster, coordinator_options);
  AllgatherCoordinator allgathers(participant, coordinator, options.cluster, coordinator_options.client);
  TorrentExports exports(data_dir, *torrents);
  ControlService service(participant, tree, coordinator, allgathers, exports, options.cluster.secret, *counters);
  std::unique_ptr<MetricsExporter> metrics;
  if (!options.metrics_address.empty()) {
    GRIDCAST_ASSIGN_OR_RETURN(metrics, MetricsExporter::Start(options.metrics_address, participant, *counters));
  }
  GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<grpc::Server> server, StartControlServer(options, service));
  spdlog::info("gridcastd '{}' up: control {}{}, data {} (port {}{}), BitTorrent {}, data dir {}{}", options.name,
               options.control_address, tls ? " (TLS)" : "", options.data_address, data_port,
               tls ? ", TLS" : "", options.torrents.listen_address, data_dir,
               metrics ? fmt::format(", metrics port {}", metrics->port()) : "");

  {
    RetentionSweeper sweeper(participant.holdings(), options.data_retention, options.memory_retention,
                             options.warm_memory_bytes > 0 ? std::optional(options.warm_memory_idle) : std::nullopt);
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    spdlog::info("gridcastd '{}': signal {}, shutting down", options.name, signal_number);
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  for (const auto& plan : participant.plans().All()) plan->RequestStop("daemon shutting down");
  io_thread.Stop();
  std::error_code ec;
  std::filesystem::remove_all(memory_dir, ec);  // marked as ours by ResetMemoryDir
  return Status::Ok();
}

}  // namespace gridcast
