#include "deploy/mpi_launch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "deploy/subprocess.h"

namespace gridcast {
namespace {

NetgridState ThreeNodes() {
  NetgridState state;
  state.prefix = "gc123456";
  state.topology_name = "t";
  state.nodes = {{"a-0", "gc123456-a-0", "198.18.0.1", "a"},
                 {"a-1", "gc123456-a-1", "198.18.0.2", "a"},
                 {"b-0", "gc123456-b-0", "198.18.0.3", "b"}};
  return state;
}

TEST(MpiLaunch, AgentMapsEveryAddressAndNameToItsNamespace) {
  const std::string script = RshAgentScript(ThreeNodes(), "/s/tmp");
  EXPECT_EQ(script.rfind("#!/bin/sh\n", 0), 0u);
  EXPECT_NE(script.find("  198.18.0.1|a-0) netns=gc123456-a-0 node=a-0 ;;\n"), std::string::npos) << script;
  EXPECT_NE(script.find("  198.18.0.3|b-0) netns=gc123456-b-0 node=b-0 ;;\n"), std::string::npos) << script;
  EXPECT_NE(script.find("tmp_base='/s/tmp'\n"), std::string::npos) << script;
  EXPECT_NE(script.find("exec ip netns exec \"$netns\" env TMPDIR=\"$tmp_base/$node\" sh -c \"$*\"\n"),
            std::string::npos)
      << script;
}

TEST(MpiLaunch, HostfilePutsTheSourceFirstOneSlotEach) {
  EXPECT_EQ(MpiHostfile(ThreeNodes(), "a-1"), "198.18.0.2 slots=1\n198.18.0.1 slots=1\n198.18.0.3 slots=1\n");
  EXPECT_EQ(MpiHostfile(ThreeNodes(), "a-0", 2), "198.18.0.1 slots=2\n198.18.0.2 slots=2\n198.18.0.3 slots=2\n");
}

TEST(MpiLaunch, MpirunRunsInTheSourceNamespaceOverTcpOnEth0) {
  MpiCollectiveOptions options;
  options.program = "/bin/mpi_bcast";
  options.size_bytes = 1000;
  options.timeout_s = 90;
  const std::string plain =
      JoinCommand(MpirunArgv(ThreeNodes(), "b-0", "/s/tmp", "/s/agent", "/s/hosts", MpiCollectiveRun(options)));
  EXPECT_EQ(plain.rfind("timeout -k 10 90 ip netns exec gc123456-b-0 env TMPDIR=/s/tmp/b-0 mpirun --allow-run-as-root "
                        "--hostfile /s/hosts -np 3 --map-by node --mca plm_rsh_agent /s/agent ",
                        0),
            0u)
      << plain;
  for (const char* part : {"--mca pml ob1", "--mca btl self,tcp", "--mca btl_tcp_if_include eth0",
                           "--mca oob_tcp_if_include eth0", "/bin/mpi_bcast 1000"}) {
    EXPECT_NE(plain.find(part), std::string::npos) << part << " in " << plain;
  }
  EXPECT_EQ(plain.find("coll_tuned"), std::string::npos) << "Open MPI's own decision: no coll_tuned";

  options.tuned_algorithm = "pipeline";
  const std::string tuned =
      JoinCommand(MpirunArgv(ThreeNodes(), "b-0", "/s/tmp", "/s/agent", "/s/hosts", MpiCollectiveRun(options)));
  EXPECT_NE(tuned.find("--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_bcast_algorithm pipeline "
                       "--mca coll_tuned_bcast_algorithm_segmentsize 1048576 /bin/mpi_bcast 1000"),
            std::string::npos)
      << tuned;

  // Variables for every rank, two ranks a node.
  MpiRun run = MpiCollectiveRun(options);
  run.environment = {"LD_PRELOAD=/lib/libgridcast-mpi.so", "GRIDCAST_CLUSTER=/s/cluster.yaml"};
  run.ranks_per_node = 2;
  const std::string shim = JoinCommand(MpirunArgv(ThreeNodes(), "b-0", "/s/tmp", "/s/agent", "/s/hosts", run));
  EXPECT_NE(shim.find(" -np 6 "), std::string::npos) << shim;
  EXPECT_NE(shim.find("-x LD_PRELOAD=/lib/libgridcast-mpi.so -x GRIDCAST_CLUSTER=/s/cluster.yaml /bin/mpi_bcast 1000"),
            std::string::npos)
      << shim;
}

TEST(MpiLaunch, ParsesTheResultLineAmongOpenMpiNoise) {
  Result<MpiCollectiveResult> result = ParseMpiCollectiveOutput(
      "Warning: Permanently added 198.18.0.2\n"
      "{\"completion_s\": 2.5, \"verified\": true, \"ranks\": 3, \"cpu_s\": [0.5, 1.25, 0.75], "
      "\"thread_cpu_s\": [0.375, 1.0, 0.5], \"buffer_cpu_s\": [0.25, 0.125, 0.5], \"timed_from_unix_s\": 1700000000.25}\n");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_DOUBLE_EQ(result->completion_s, 2.5);
  EXPECT_TRUE(result->verified);
  EXPECT_EQ(result->ranks, 3);
  EXPECT_EQ(result->cpu_s, (std::vector<double>{0.5, 1.25, 0.75}));
  EXPECT_EQ(result->thread_cpu_s, (std::vector<double>{0.375, 1.0, 0.5}));
  EXPECT_EQ(result->buffer_cpu_s, (std::vector<double>{0.25, 0.125, 0.5}));
  EXPECT_NEAR(std::chrono::duration<double>(result->timed_from.time_since_epoch()).count(), 1'700'000'000.25, 1e-6);
  // mpi_allgather's line has part_bytes too.
  result = ParseMpiCollectiveOutput(
      "{\"completion_s\": 1.0, \"verified\": false, \"ranks\": 2, \"part_bytes\": 4, \"cpu_s\": [0.1, 0.2], "
      "\"buffer_cpu_s\": [0.1, 0.2], \"timed_from_unix_s\": 1.5}\n");
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_FALSE(result->verified);
  EXPECT_EQ(result->cpu_s.size(), 2u);
  EXPECT_TRUE(result->thread_cpu_s.empty());  // a program that does not measure its main thread
  EXPECT_FALSE(ParseMpiCollectiveOutput("rank 3: cannot allocate\n").ok());
  EXPECT_FALSE(ParseMpiCollectiveOutput("{\"completion_s\": 1.0}\n").ok());
  // A CPU time per rank, no more, no less.
  EXPECT_FALSE(ParseMpiCollectiveOutput("{\"completion_s\": 1.0, \"verified\": true, \"ranks\": 2}\n").ok());
  EXPECT_FALSE(ParseMpiCollectiveOutput("{\"completion_s\": 1.0, \"verified\": true, \"ranks\": 2, \"cpu_s\": [0.1], "
                                        "\"buffer_cpu_s\": [0.1, 0.2], \"timed_from_unix_s\": 1.5}\n")
                   .ok());
  EXPECT_FALSE(ParseMpiCollectiveOutput("{\"completion_s\": 1.0, \"verified\": true, \"ranks\": 2, "
                                        "\"cpu_s\": [0.1, 0.2], \"buffer_cpu_s\": [0.1], \"timed_from_unix_s\": 1.5}\n")
                   .ok());
  EXPECT_FALSE(ParseMpiCollectiveOutput("{\"completion_s\": 1.0, \"verified\": true, \"ranks\": 2, "
                                        "\"cpu_s\": [0.1, 0.2], \"thread_cpu_s\": [0.1], \"buffer_cpu_s\": [0.1, 0.2], "
                                        "\"timed_from_unix_s\": 1.5}\n")
                   .ok());
  // When the timed region began, for the daemons' share of it.
  EXPECT_FALSE(ParseMpiCollectiveOutput("{\"completion_s\": 1.0, \"verified\": true, \"ranks\": 2, "
                                        "\"cpu_s\": [0.1, 0.2], \"buffer_cpu_s\": [0.1, 0.2]}\n")
                   .ok());
}

TEST(MpiLaunch, RanksRunOnTheHostfilesNodesInTurn) {
  EXPECT_EQ(MpiNodeOrder(ThreeNodes(), "a-1"), (std::vector<std::string>{"a-1", "a-0", "b-0"}));
  EXPECT_EQ(MpiSecondsByNode({0.5, 1.0, 2.0}, MpiNodeOrder(ThreeNodes(), "b-0")),
            (std::map<std::string, double>{{"b-0", 0.5}, {"a-0", 1.0}, {"a-1", 2.0}}));
  // Two ranks a node (--map-by node): rank r on node r mod 3, their times summed.
  EXPECT_EQ(MpiSecondsByNode({0.5, 1.0, 2.0, 0.25, 0.125, 4.0}, MpiNodeOrder(ThreeNodes(), "a-0")),
            (std::map<std::string, double>{{"a-0", 0.75}, {"a-1", 1.125}, {"b-0", 6.0}}));
}

TEST(MpiLaunch, KnowsOpenMpisBcastAlgorithms) {
  const std::vector<std::string>& names = OpenMpiAlgorithms(MpiCollective::kBcast);
  EXPECT_NE(std::find(names.begin(), names.end(), "pipeline"), names.end());
  EXPECT_EQ(std::find(names.begin(), names.end(), "ignore"), names.end());
}

}  // namespace
}  // namespace gridcast
