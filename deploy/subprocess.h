// Subprocess: run external programs (ip, tc, iperf3, mpirun) without a shell.
//
// Arguments go straight to execvp, so names from topology files are never interpreted by a
// shell. Thread-compatible: calls from several threads are independent.
#pragma once

#include <string>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast {

struct CommandOutput {
  int exit_code = 0;      // the program's exit status, or 128 + signal number
  std::string output;     // stdout and stderr, interleaved as written
};

// Runs argv[0] (looked up in PATH) to completion. Fails only when it cannot be started.
// REQUIRES: !argv.empty().
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv);

// Like RunCommand, but a non-zero exit is an error naming the command and its output.
Status RunChecked(const std::vector<std::string>& argv);

// Starts argv in a new session (it outlives this process), stdin from `stdin_path`, stdout and
// stderr appended to log_path. Returns the pid. For daemons that netgrid down stops later.
Result<int> SpawnDetached(const std::vector<std::string>& argv, const std::string& log_path,
                          const std::string& stdin_path = "/dev/null");

// "ip -n x link set ..." for messages.
std::string JoinCommand(const std::vector<std::string>& argv);

// `word` as one shell word ('...' with every ' escaped), for the few places a shell line is
// unavoidable (a batch script, a namespace's setup).
std::string ShellQuote(const std::string& word);

}  // namespace gridcast

namespace gridcast {

// A program started in the background (a daemon, an iperf3 server). The destructor kills
// (SIGKILL) and reaps it if it is still running, so a failing test cannot leak it.
class ChildProcess {
 public:
  // Starts argv with stdout and stderr appended to log_path ("" = inherit ours).
  static Result<ChildProcess> Start(const std::vector<std::string>& argv,
                                    const std::string& log_path = "");

  ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_) { other.pid_ = -1; }
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  int pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  // Waits for exit; returns the exit code (128 + signal when killed).
  int Wait();
  // Sends `signal` and waits.
  int Stop(int signal);

 private:
  explicit ChildProcess(int pid) : pid_(pid) {}
  int pid_ = -1;
};

}  // namespace gridcast
