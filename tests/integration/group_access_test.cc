// The systemd unit's layout with unprivileged users: daemons run as a service user (uid 1) in
// directories of the modes and with the umask deploy/systemd/gridcastd.service gives them
// (read from the unit: 2770 and 0007); a
// user of the service's group (uid 65534 with the group as a supplementary one, umask 0077)
// sends a buffer through the data directory and one through the memory directory (the MPI
// shim's way) and reads both back at another member. A user outside the group cannot.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster_file.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

constexpr int kServiceUid = 1;  // "daemon" on Debian: an unprivileged system user and group
constexpr int kServiceGid = 1;
constexpr int kUserUid = 65534;  // "nobody"

// The octal value of `key=` in the systemd unit; -1 when it has none.
int UnitOctal(const std::string& key) {
  std::ifstream unit(GRIDCAST_SYSTEMD_UNIT);
  for (std::string line; std::getline(unit, line);) {
    if (line.rfind(key + "=", 0) == 0) return std::stoi(line.substr(key.size() + 1), nullptr, 8);
  }
  return -1;
}

class GroupAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to run the daemons and the client as other users";
    if (RunCommand({"sh", "-c", "command -v setpriv"})->exit_code != 0) GTEST_SKIP() << "no setpriv";
    // A build tree other users cannot reach (a private home directory) cannot show it.
    for (const char* program : {GRIDCASTD, GROUP_ACCESS_CLIENT}) {
      if (RunCommand({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "test", "-x", program})->exit_code != 0) {
        GTEST_SKIP() << program << " cannot be run by other users from where it is";
      }
    }
    dir_ = fs::temp_directory_path() / ("gridcast-group-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    chmod(dir_.c_str(), 0755);
    // As systemd makes StateDirectory= and RuntimeDirectory= for the unit.
    for (const auto& [shared, key] : {std::pair{"state", "StateDirectoryMode"}, std::pair{"runtime", "RuntimeDirectoryMode"}}) {
      const fs::path path = dir_ / shared;
      fs::create_directory(path);
      const int mode = UnitOctal(key);
      ASSERT_GE(mode, 0) << "the unit sets no " << key;
      ASSERT_EQ(chown(path.c_str(), kServiceUid, kServiceGid), 0);
      ASSERT_EQ(chmod(path.c_str(), static_cast<mode_t>(mode)), 0);
    }
    const int umask_value = UnitOctal("UMask");
    ASSERT_GE(umask_value, 0) << "the unit sets no UMask";
    char daemon_umask[8];
    std::snprintf(daemon_umask, sizeof(daemon_umask), "%04o", umask_value);
    ClusterConfig cluster;
    cluster.secret = NewClusterSecret();
    const int base = 24000 + static_cast<int>(getpid() % 500) * 4;
    for (int i = 0; i < 2; ++i) {
      const std::string name = "m" + std::to_string(i);
      cluster.members.push_back({name, "unix:" + (dir_ / "runtime" / (name + ".sock")).string(),
                                 "127.0.0.1:" + std::to_string(base + i), "127.0.0.1:" + std::to_string(base + 2 + i)});
    }
    // The cluster file as docs/operations.md installs it: 0640 root:<the service's group>.
    cluster_file_ = dir_ / "cluster.yaml";
    std::ofstream(cluster_file_) << FormatClusterFile(cluster);
    ASSERT_EQ(chown(cluster_file_.c_str(), 0, kServiceGid), 0);
    ASSERT_EQ(chmod(cluster_file_.c_str(), 0640), 0);
    for (int i = 0; i < 2; ++i) {
      const std::string name = "m" + std::to_string(i);
      Result<ChildProcess> daemon = ChildProcess::Start(
          {"sh", "-c",
           "umask " + std::string(daemon_umask) + "; exec setpriv --reuid=" + std::to_string(kServiceUid) + " --regid=" + std::to_string(kServiceGid) +
               " --clear-groups env ASAN_OPTIONS=detect_leaks=0 " + GRIDCASTD + " --name " + name + " --cluster " +
               cluster_file_.string() + " --data-dir " + (dir_ / "state" / ("data-" + name)).string() +
               " --memory-dir " + (dir_ / "runtime" / ("memory-" + name)).string()},
          (dir_ / (name + ".log")).string());
      ASSERT_TRUE(daemon.ok()) << daemon.status().ToString();
      daemons_.push_back(std::move(*daemon));
    }
    for (int i = 0; i < 2; ++i) {
      const fs::path socket = dir_ / "runtime" / ("m" + std::to_string(i) + ".sock");
      for (int attempt = 0; attempt < 400 && !fs::exists(socket); ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
      ASSERT_TRUE(fs::exists(socket)) << socket;
    }
  }
  void TearDown() override {
    daemons_.clear();
    fs::remove_all(dir_);
  }

  // The client as `uid` with `groups` (comma-separated gids, or empty for none), umask 0077.
  CommandOutput Client(int uid, const std::string& groups) const {
    const std::string group_flag = groups.empty() ? " --clear-groups" : " --groups=" + groups;
    Result<CommandOutput> out = RunCommand(
        {"sh", "-c",
         "umask 0077; exec setpriv --reuid=" + std::to_string(uid) + " --regid=" + std::to_string(uid) + group_flag +
             " env ASAN_OPTIONS=detect_leaks=0 " + GROUP_ACCESS_CLIENT + " " + cluster_file_.string()});
    return out.ok() ? *out : CommandOutput{-1, out.status().ToString()};
  }

  fs::path dir_;
  fs::path cluster_file_;
  std::vector<ChildProcess> daemons_;
};

TEST_F(GroupAccessTest, AMemberOfTheServicesGroupSendsBuffersAndOthersCannot) {
  const CommandOutput member = Client(kUserUid, std::to_string(kServiceGid));
  EXPECT_EQ(member.exit_code, 0) << member.output;
  EXPECT_NE(member.output.find("data directory: m1's copy is the buffer"), std::string::npos) << member.output;
  EXPECT_NE(member.output.find("memory directory: m1's copy is the buffer"), std::string::npos) << member.output;
  // What the user handed over belongs to the service's group, readable by it and nobody else.
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir_ / "state" / "data-m0")) {
    struct stat st {};
    ASSERT_EQ(lstat(entry.path().c_str(), &st), 0);
    if (!S_ISREG(st.st_mode) || entry.path().string().find(".gridcast") != std::string::npos) continue;
    EXPECT_EQ(st.st_gid, static_cast<gid_t>(kServiceGid)) << entry.path();
    EXPECT_EQ(st.st_mode & 0007, 0u) << entry.path();
  }

  const CommandOutput outsider = Client(kUserUid, "");
  EXPECT_NE(outsider.exit_code, 0) << outsider.output;
  EXPECT_NE(outsider.output.find("cluster.yaml"), std::string::npos) << outsider.output;
}

}  // namespace
}  // namespace gridcast
