// Cluster file addresses: what fuzz_cluster_file found (an empty bracketed host that parsed
// but gave a default BitTorrent address that did not), and IPv6 defaults that format back;
// the files the cluster file names (topology, the cluster's CA).
#include "cluster/cluster_file.h"

#include <gtest/gtest.h>

namespace gridcast {
namespace {

const std::string kSecret = "secret: " + std::string(64, 'a') + "\n";

TEST(ClusterFileTest, AnAddressWithoutAHostIsRefused) {
  for (const char* address : {"[]:7701", "[:7701", "a]:7701", ":7701"}) {
    EXPECT_FALSE(SplitHostPort(address).ok()) << address;
  }
  Result<ClusterConfig> config =
      ParseClusterFile(kSecret + "members:\n  - name: a\n    control: unix:/a.sock\n    data: \"[]:7701\"\n", "/");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("members[0].data"), std::string::npos) << config.status().message();
}

TEST(ClusterFileTest, AnIpv6DataAddressGivesABracketedDefaultThatFormatsBack) {
  Result<ClusterConfig> config =
      ParseClusterFile(kSecret + "members:\n  - name: a\n    control: unix:/a.sock\n    data: \"[::1]:7701\"\n", "/");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->members[0].bt_address, "[::1]:7702");
  Result<ClusterConfig> again = ParseClusterFile(FormatClusterFile(*config), "/");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->members[0].bt_address, "[::1]:7702");
  EXPECT_EQ(again->members[0].data_address, "[::1]:7701");
}

TEST(ClusterFileTest, TheClusterCaIsRelativeToTheFileAndFormatsBack) {
  const std::string members = "members:\n  - name: a\n    control: unix:/a.sock\n    data: 10.0.0.1:7701\n";
  Result<ClusterConfig> config = ParseClusterFile(kSecret + "tls_ca: pki/ca.pem\n" + members, "/etc/gridcast");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->tls_ca_path, "/etc/gridcast/pki/ca.pem");
  Result<ClusterConfig> again = ParseClusterFile(FormatClusterFile(*config), "/elsewhere");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->tls_ca_path, "/etc/gridcast/pki/ca.pem");
  EXPECT_TRUE(ParseClusterFile(kSecret + members, "/").value().tls_ca_path.empty());
  Result<ClusterConfig> empty = ParseClusterFile(kSecret + "tls_ca: \"\"\n" + members, "/");
  EXPECT_FALSE(empty.ok());
}

}  // namespace
}  // namespace gridcast
