// A real HTTP(S) origin for tests: origin_server.py (Debian's python3) on loopback, serving
// the files under DIR/root and misbehaving on request (see the script), and a test CA of its
// own for HTTPS. Used by the fetcher's unit tests and the daemons' integration tests.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace gridcast {

inline std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes DIR/ca.crt (a CA of the test's own) and DIR/server.crt and server.key (127.0.0.1 and
// localhost, signed by it) with openssl. False when openssl failed.
inline bool MakeTestCa(const std::filesystem::path& dir) {
  const std::string d = dir.string();
  const std::string command =
      "cd " + d + " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 "
      "-subj /CN=gridcast-test-ca >/dev/null 2>&1 && openssl req -newkey rsa:2048 -nodes "
      "-keyout server.key -out server.csr -subj /CN=127.0.0.1 >/dev/null 2>&1 && "
      "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost' > san.ext && openssl x509 -req -in "
      "server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile "
      "san.ext >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

// The server process, serving DIR/root, logging requests to DIR/log (DIR/log-tls over HTTPS,
// with DIR/server.crt and server.key from MakeTestCa). `launcher` runs it (e.g. "ip netns exec
// NS": then it listens on that namespace's loopback), on `port` (0: one the kernel chooses).
class OriginServer {
 public:
  OriginServer(const std::filesystem::path& dir, bool tls, std::vector<std::string> launcher = {}, int port = 0)
      : dir_(dir) {
    using namespace std::chrono_literals;
    // Servers on one port in several namespaces (launcher's last word) each write their own.
    const std::string suffix =
        (port == 0 ? "" : "-" + std::to_string(port)) + (launcher.empty() ? "" : "-" + launcher.back());
    const std::filesystem::path port_file = dir / ((tls ? "port-tls" : "port") + suffix);
    std::vector<std::string> args = std::move(launcher);
    args.insert(args.end(), {"/usr/bin/python3", GRIDCAST_ORIGIN_SERVER, "--root", (dir / "root").string(),
                             "--port-file", port_file.string(), "--port", std::to_string(port), "--log",
                             (dir / ((tls ? "log-tls" : "log") + suffix)).string()});
    if (tls) {
      args.insert(args.end(), {"--cert", (dir / "server.crt").string(), "--key", (dir / "server.key").string()});
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawnp(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
    for (int i = 0; i < 200 && !std::filesystem::exists(port_file); ++i) std::this_thread::sleep_for(25ms);
    port_ = ReadWholeFile(port_file);
  }
  ~OriginServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  OriginServer(const OriginServer&) = delete;
  OriginServer& operator=(const OriginServer&) = delete;

  bool up() const { return pid_ > 0 && !port_.empty(); }
  const std::string& port() const { return port_; }
  // The requests it logged (to `log`, "log" or "log-tls") whose path ends with `suffix`: their
  // headers, one JSON text each.
  std::vector<std::string> Requests(const std::string& log, const std::string& suffix) const {
    std::vector<std::string> found;
    std::ifstream in(dir_ / log);
    for (std::string line; std::getline(in, line);) {
      const size_t end = line.find("\", \"headers\"");
      if (end != std::string::npos && line.substr(0, end).ends_with(suffix)) found.push_back(line);
    }
    return found;
  }

 private:
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  std::string port_;
};

}  // namespace gridcast
