#include "deploy/bench_netgrid.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>

namespace gridcast {
namespace {

namespace fs = std::filesystem;

// The signal handler only writes the signal number into a pipe; a watcher thread does the
// teardown, which runs commands and so cannot run in a handler. The watcher takes g_mutex, so
// a teardown never races Up() building namespaces or the destructor removing them.
std::mutex g_mutex;
std::optional<fs::path> g_active;  // guarded by g_mutex: the state directory to tear down
int g_signal_pipe[2] = {-1, -1};

void TearDown(const fs::path& state_dir) {
  Status down = NetgridDown(state_dir);
  if (!down.ok()) std::fprintf(stderr, "gridcast: netgrid down: %s\n", down.message().c_str());
  std::error_code ec;
  fs::remove_all(state_dir, ec);
  if (ec) std::fprintf(stderr, "gridcast: cannot remove %s: %s\n", state_dir.c_str(), ec.message().c_str());
}

void OnSignal(int signal) {
  const unsigned char number = static_cast<unsigned char>(signal);
  [[maybe_unused]] ssize_t written = write(g_signal_pipe[1], &number, 1);
}

[[noreturn]] void WatchSignals() {
  unsigned char number = 0;
  while (read(g_signal_pipe[0], &number, 1) != 1) {
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_active) {
    std::fprintf(stderr, "gridcast: interrupted (signal %d); tearing down the netgrid in %s\n", number,
                 g_active->c_str());
    TearDown(*g_active);
  }
  _exit(128 + number);
}

Status InstallSignalWatcher() {
  static std::once_flag once;
  static Status installed;
  std::call_once(once, [] {
    if (pipe2(g_signal_pipe, O_CLOEXEC) != 0) {
      installed = Status::Internal("cannot create the signal pipe");
      return;
    }
    std::thread(WatchSignals).detach();
    struct sigaction action = {};
    action.sa_handler = OnSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal, &action, nullptr);
  });
  return installed;
}

}  // namespace

Result<std::unique_ptr<BenchNetgrid>> BenchNetgrid::Up(const NetworkModel& model, const fs::path& state_dir,
                                                       const std::optional<NetgridDaemonOptions>& daemons) {
  GRIDCAST_RETURN_IF_ERROR(InstallSignalWatcher());
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_active) return Status::FailedPrecondition("a benchmark netgrid is already up in " + g_active->string());
  // The directory is deleted at the end, so it must be ours alone.
  std::error_code ec;
  if (fs::exists(state_dir, ec) && !fs::is_empty(state_dir, ec)) {
    return Status::FailedPrecondition("state directory " + state_dir.string() +
                                      " is not empty (a netgrid there? 'gridcast netgrid down --state " +
                                      state_dir.string() + "', then remove it)");
  }
  GRIDCAST_ASSIGN_OR_RETURN(NetgridState state, NetgridUp(model, state_dir));
  g_active = state_dir;
  std::string cluster_file;
  if (daemons) {
    Result<std::string> started = StartNetgridDaemons(model, state, state_dir, *daemons);
    if (!started.ok()) {
      TearDown(state_dir);
      g_active.reset();
      return started.status().WithContext("starting the daemons (netgrid torn down)");
    }
    cluster_file = *started;
  }
  return std::unique_ptr<BenchNetgrid>(new BenchNetgrid(state_dir, std::move(state), std::move(cluster_file)));
}

BenchNetgrid::~BenchNetgrid() {
  std::lock_guard<std::mutex> lock(g_mutex);
  TearDown(state_dir_);
  g_active.reset();
}

}  // namespace gridcast
