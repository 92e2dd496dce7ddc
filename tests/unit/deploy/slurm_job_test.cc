// What gridcast slurm stage reads of Slurm (scontrol's node records) and makes of it (paths
// per node, ports, the cluster file).
#include "deploy/slurm_job.h"
#include "deploy/subprocess.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

TEST(SlurmJobTest, ScontrolNodeRecordsGiveNamesAndAddresses) {
  // `scontrol --oneliner show node` as Slurm 22.05 prints it (abridged).
  const std::string text =
      "NodeName=lyon-0 Arch=x86_64 CoresPerSocket=1 CPUAlloc=1 CPUTot=1 NodeAddr=198.18.0.1 NodeHostName=lyon-0 "
      "Version=22.05.8 OS=Linux State=ALLOCATED Partitions=netgrid\n"
      "NodeName=nancy-3 Arch=x86_64 NodeAddr=nancy-3.example.org NodeHostName=nancy-3 State=IDLE\n"
      "NodeName=bare State=IDLE\n";
  Result<std::vector<SlurmNode>> nodes = ParseScontrolNodes(text);
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].name, "lyon-0");
  EXPECT_EQ((*nodes)[0].address, "198.18.0.1");
  EXPECT_EQ((*nodes)[1].address, "nancy-3.example.org");
  EXPECT_EQ((*nodes)[2].address, "bare");  // no NodeAddr: the name is the address, as for Slurm
  EXPECT_TRUE(ParseScontrolNodes("").value().empty());
  EXPECT_FALSE(ParseScontrolNodes("NodeName= NodeAddr=1.2.3.4\n").ok());
}

TEST(SlurmJobTest, PatternsExpandPerJobAndNode) {
  EXPECT_EQ(ExpandJobPattern("/tmp/gridcast-%j", "4242", "n1").value(), "/tmp/gridcast-4242");
  EXPECT_EQ(ExpandJobPattern("/scratch/%j/%N/data", "7", "lyon-0").value(), "/scratch/7/lyon-0/data");
  EXPECT_EQ(ExpandJobPattern("/a/100%%", "7", "n").value(), "/a/100%");
  EXPECT_EQ(ExpandJobPattern("/plain", "7", "n").value(), "/plain");
  for (const char* bad : {"/tmp/%x", "/tmp/%", "%n"}) {
    Result<std::string> expanded = ExpandJobPattern(bad, "7", "n");
    EXPECT_FALSE(expanded.ok()) << bad;
  }
}

TEST(SlurmJobTest, TheClusterFileHasAMemberPerNodeOnItsAddress) {
  SlurmJob job{"99", {{"n0", "10.0.0.1"}, {"n1", "fe80::1"}}, "n0"};
  const uint16_t base = JobPortBase(job.job_id);
  EXPECT_GE(base, 15000);
  EXPECT_LE(base + 2, 30000);  // below Linux's ephemeral ports
  const ClusterConfig config = SlurmClusterConfig(job, 17000, std::string(32, 's'));
  ASSERT_EQ(config.members.size(), 2u);
  EXPECT_EQ(config.members[0].name, "n0");
  EXPECT_EQ(config.members[0].control_address, "10.0.0.1:17000");
  EXPECT_EQ(config.members[0].data_address, "10.0.0.1:17001");
  EXPECT_EQ(config.members[0].bt_address, "10.0.0.1:17002");
  EXPECT_EQ(config.members[1].control_address, "[fe80::1]:17000");
  // What gridcastd will read back.
  Result<ClusterConfig> parsed = ParseClusterFile(FormatClusterFile(config), ".");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->members.size(), 2u);
  EXPECT_EQ(parsed->secret, config.secret);
}

TEST(SlurmJobTest, ShellQuoteMakesOneWordOfAnything) {
  EXPECT_EQ(ShellQuote("plain"), "'plain'");
  EXPECT_EQ(ShellQuote("a b;$(rm -rf x)"), "'a b;$(rm -rf x)'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  Result<CommandOutput> echoed = RunCommand({"sh", "-c", "printf %s " + ShellQuote("it's a $HOME `x`")});
  ASSERT_TRUE(echoed.ok());
  EXPECT_EQ(echoed->output, "it's a $HOME `x`");
}

}  // namespace
}  // namespace gridcast
