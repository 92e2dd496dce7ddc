// The installed gridcast as a node and a user get it: `cmake --install` into a fresh prefix (the
// programs, libgridcast with its SONAME, headers that stand alone, pkg-config, the unit), a C
// program built against that prefix alone sending a buffer through real daemons, and the Debian
// package `cpack -G DEB` makes (runtime dependencies only, installable by apt, its programs run).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "deploy/local_cluster.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

// Runs a shell command line; its output, and a failure naming it.
std::string Shell(const std::string& line, int* exit_code = nullptr) {
  Result<CommandOutput> out = RunCommand({"sh", "-c", line});
  if (!out.ok()) {
    ADD_FAILURE() << out.status().ToString();
    return "";
  }
  if (exit_code != nullptr) {
    *exit_code = out->exit_code;
  } else {
    EXPECT_EQ(out->exit_code, 0) << line << "\n" << out->output;
  }
  return out->output;
}

class PackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gridcast-package-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A C program built against `prefix` alone (its pkg-config file, headers and library, with
  // a SONAME) sends a buffer through real daemons; the C++ header compiles on its own.
  void ExpectAProgramBuiltAgainstItSends(const fs::path& prefix) {
    const std::string libdir = Shell("ls -d " + ShellQuote(prefix.string()) + "/lib*/pkgconfig/.. | head -1");
    const fs::path lib = fs::canonical(fs::path(libdir.substr(0, libdir.find('\n'))));
    EXPECT_TRUE(fs::is_symlink(lib / "libgridcast.so")) << lib;
    EXPECT_NE(Shell("readelf -d " + ShellQuote((lib / "libgridcast.so").string())).find("[libgridcast.so.1]"),
              std::string::npos)
        << "no SONAME libgridcast.so.1";
    const std::string pkg = "PKG_CONFIG_PATH=" + ShellQuote((lib / "pkgconfig").string()) + " pkg-config";
    const std::string flags = Shell(pkg + " --cflags --libs gridcast");
    EXPECT_NE(flags.find("-lgridcast"), std::string::npos) << flags;
    const std::string program = (root_ / "send_buffer").string();
    Shell("cc " GRIDCAST_SANITIZE_FLAGS " -o " + ShellQuote(program) + " " + ShellQuote(GRIDCAST_PACKAGE_TEST_DIR) +
          "/send_buffer.c $(" + pkg + " --cflags --libs gridcast)");
    Shell("printf '#include <gridcast/gridcast.hpp>\\nint main() { gridcast::Status s; return s.ok() ? 0 : 1; }\\n' | "
          "c++ -std=c++20 -x c++ -fsyntax-only $(" + pkg + " --cflags gridcast) -");

    LocalCluster cluster(GRIDCASTD, "package", 3);
    // (Under the sanitizers, the leak checker's findings in gRPC's process-wide state are not ours.)
    const std::string sent = Shell("ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=" + ShellQuote(lib.string()) + " " +
                                   ShellQuote(program) + " " +
                                   ShellQuote(cluster.cluster_file()) + " m0 m2");
    EXPECT_NE(sent.find("m2's copy is the buffer"), std::string::npos) << sent;

    // The Python package under `prefix` imports with Debian's python3 and finds libgridcast by
    // itself (no LD_LIBRARY_PATH: its RUNPATH is relative to where the install put both).
    const std::string module = Shell("find " + ShellQuote(prefix.string()) + " -name '_gridcast.*.so'");
    ASSERT_FALSE(module.empty()) << "no Python package under " << prefix;
    const fs::path site = fs::path(module.substr(0, module.find('\n'))).parent_path().parent_path();
    EXPECT_TRUE(fs::exists(site / "gridcast/__init__.py") && fs::exists(site / "gridcast/py.typed")) << site;
    const std::string python = Shell(
        "ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD=" + ShellQuote(GRIDCAST_SANITIZER_PRELOAD) + " PYTHONPATH=" +
        ShellQuote(site.string()) + " /usr/bin/python3 -c " +
        ShellQuote("import gridcast, sys; c = gridcast.Cluster(sys.argv[1], source='m0'); "
                   "r = c.send(b'py' * 70000, name='from-python', members=['m1']); "
                   "print('python:', r.verified, c.receive('from-python', member='m1') == b'py' * 70000)") +
        " " + ShellQuote(cluster.cluster_file()));
    EXPECT_NE(python.find("python: True True"), std::string::npos) << python;
  }

  fs::path root_;
};

TEST_F(PackageTest, AProgramBuiltAgainstTheInstalledPrefixSendsABuffer) {
  const fs::path prefix = root_ / "prefix";
  Shell("cmake --install " + ShellQuote(GRIDCAST_BUILD_DIR) + " --prefix " + ShellQuote(prefix.string()) +
        " >/dev/null");
  for (const char* file : {"bin/gridcast", "bin/gridcastd", "include/gridcast/gridcast.h",
                           "include/gridcast/gridcast.hpp", "include/gridcast/result.h", "include/gridcast/status.h",
                           "lib/systemd/system/gridcastd.service", "etc/gridcast/gridcastd.yaml"}) {
    EXPECT_TRUE(fs::exists(prefix / file)) << file;
  }
  // The unit names the programs where this prefix put them.
  std::ifstream unit(prefix / "lib/systemd/system/gridcastd.service");
  std::stringstream unit_text;
  unit_text << unit.rdbuf();
  EXPECT_NE(unit_text.str().find("ExecStart=" + (prefix / "bin/gridcastd").string()), std::string::npos);
  EXPECT_NE(Shell(ShellQuote((prefix / "bin/gridcast").string()) + " --version").find("gridcast 0."), std::string::npos);

  ExpectAProgramBuiltAgainstItSends(prefix);
}

TEST_F(PackageTest, TheDebianPackageHoldsTheRuntimeAndAptCanInstallIt) {
  int missing = 0;  // `command -v` fails for a program that is not there
  if (Shell("command -v dpkg-deb >/dev/null && echo yes", &missing).find("yes") == std::string::npos) {
    GTEST_SKIP() << "no dpkg-deb here";
  }
  Shell("cpack -G DEB --config " + ShellQuote(std::string(GRIDCAST_BUILD_DIR) + "/CPackConfig.cmake") + " -B " +
        ShellQuote((root_ / "deb").string()) + " >/dev/null");
  const std::string deb = Shell("ls " + ShellQuote((root_ / "deb").string()) + "/gridcast_*.deb");
  ASSERT_FALSE(deb.empty());
  const std::string package = deb.substr(0, deb.find('\n'));

  const std::string depends = Shell("dpkg-deb -f " + ShellQuote(package) + " Depends");
  EXPECT_NE(depends.find("libgrpc++"), std::string::npos) << depends;
  EXPECT_NE(depends.find("libtorrent-rasterbar"), std::string::npos) << depends;
  std::istringstream packages(depends);
  for (std::string entry; std::getline(packages, entry, ',');) {
    std::istringstream words(entry);
    std::string name;
    words >> name;  // "libfoo1", without its version
    const bool build_only = name.ends_with("-dev") || name == "cmake" || name == "gcc" || name == "g++" ||
                            name == "build-essential" || name == "googletest" || name == "prometheus" ||
                            name.starts_with("slurm");
    EXPECT_FALSE(build_only) << name << " in " << depends;
  }
  const std::string contents = Shell("dpkg-deb -c " + ShellQuote(package));
  for (const char* file : {"/bin/gridcastd", "/bin/gridcast", "/lib/systemd/system/gridcastd.service",
                           "/gridcast/gridcastd.yaml", "/pkgconfig/gridcast.pc", "/include/gridcast/gridcast.hpp"}) {
    EXPECT_NE(contents.find(file), std::string::npos) << file;
  }
  EXPECT_NE(Shell("dpkg-deb -I " + ShellQuote(package)).find("postinst"), std::string::npos);

  // Its programs run from what it unpacks to, on the libraries the system has.
  const fs::path unpacked = root_ / "unpacked";
  Shell("dpkg-deb -x " + ShellQuote(package) + " " + ShellQuote(unpacked.string()));
  const std::string gridcastd = Shell("find " + ShellQuote(unpacked.string()) + " -path '*/bin/gridcastd'");
  EXPECT_NE(Shell(gridcastd.substr(0, gridcastd.find('\n')) + " --version").find("gridcastd 0."), std::string::npos);
  // The unit reads the configuration the package ships, which dpkg keeps across upgrades.
  const std::string unit = Shell("cat $(find " + ShellQuote(unpacked.string()) + " -name gridcastd.service)");
  const size_t config_at = unit.find("ExecStart=");
  ASSERT_NE(config_at, std::string::npos) << unit;
  const size_t path_at = unit.find("--config ", config_at) + std::string("--config ").size();
  const std::string config = unit.substr(path_at, unit.find_first_of(" \n", path_at) - path_at);
  EXPECT_TRUE(config.starts_with("/") && fs::exists(unpacked / config.substr(1))) << config << " is not in the package";
  EXPECT_EQ(Shell("dpkg-deb -I " + ShellQuote(package) + " conffiles"), config + "\n");
  // What it installs is enough to build against: bin/ and include/ lie under its prefix.
  ExpectAProgramBuiltAgainstItSends(fs::path(gridcastd.substr(0, gridcastd.find('\n'))).parent_path().parent_path());

  // apt resolves it on this machine (simulated here; real_cluster_e2e_test installs, upgrades
  // and purges it).
  if (getuid() == 0 && Shell("command -v apt-get >/dev/null && echo yes", &missing).find("yes") != std::string::npos) {
    const std::string plan = Shell("apt-get install --simulate -q " + ShellQuote(package));
    EXPECT_NE(plan.find("Inst gridcast"), std::string::npos) << plan;
  }
}

}  // namespace
}  // namespace gridcast
