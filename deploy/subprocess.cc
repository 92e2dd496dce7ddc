#include "deploy/subprocess.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace gridcast {

std::string JoinCommand(const std::vector<std::string>& argv) {
  std::string joined;
  for (const std::string& arg : argv) {
    if (!joined.empty()) joined += ' ';
    joined += arg;
  }
  return joined;
}

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  pid_t pid = 0;
  int spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawn_error != 0) {
    close(pipe_fds[0]);
    return Status::FailedPrecondition("cannot run '" + argv[0] + "': " + std::strerror(spawn_error));
  }

  CommandOutput result;
  char buffer[4096];
  for (;;) {
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);

  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return Status::Internal(std::string("waitpid: ") + std::strerror(errno));
  }
  result.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status)
                                            : 128 + WTERMSIG(wait_status);
  return result;
}

namespace {

// posix_spawnp with stdin from `stdin_path` and, when log_path is set, stdout and stderr
// appended to it; in a new session when `detach`.
Result<int> Spawn(const std::vector<std::string>& argv, const std::string& log_path, bool detach,
                  const std::string& stdin_path = "/dev/null") {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin_path.c_str(), O_RDONLY, 0);
  if (!log_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (detach) posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int spawn_error = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error != 0) {
    return Status::FailedPrecondition("cannot run '" + argv[0] + "': " + std::strerror(spawn_error));
  }
  return static_cast<int>(pid);
}

}  // namespace

Result<int> SpawnDetached(const std::vector<std::string>& argv, const std::string& log_path,
                          const std::string& stdin_path) {
  return Spawn(argv, log_path, /*detach=*/true, stdin_path);
}

std::string ShellQuote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

Status RunChecked(const std::vector<std::string>& argv) {
  GRIDCAST_ASSIGN_OR_RETURN(CommandOutput out, RunCommand(argv));
  if (out.exit_code != 0) {
    while (!out.output.empty() && out.output.back() == '\n') out.output.pop_back();
    return Status::Internal("'" + JoinCommand(argv) + "' failed (exit " +
                            std::to_string(out.exit_code) + "): " + out.output);
  }
  return Status::Ok();
}

}  // namespace gridcast

namespace gridcast {

Result<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv,
                                         const std::string& log_path) {
  GRIDCAST_ASSIGN_OR_RETURN(int pid, Spawn(argv, log_path, /*detach=*/false));
  return ChildProcess(pid);
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (running()) Stop(SIGKILL);
    pid_ = other.pid_;
    other.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (running()) Stop(SIGKILL);
}

int ChildProcess::Wait() {
  if (!running()) return -1;
  int wait_status = 0;
  while (waitpid(pid_, &wait_status, 0) < 0) {
    if (errno != EINTR) {
      pid_ = -1;
      return -1;
    }
  }
  pid_ = -1;
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

int ChildProcess::Stop(int signal) {
  if (!running()) return -1;
  kill(pid_, signal);
  return Wait();
}

}  // namespace gridcast
