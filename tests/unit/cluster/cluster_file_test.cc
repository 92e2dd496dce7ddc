// Cluster file addresses: what fuzz_cluster_file found (an empty bracketed host that parsed
// but gave a default BitTorrent address that did not), and IPv6 defaults that format back;
// the files the cluster file names (topology, the cluster's CA).
#include "cluster/cluster_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

// digest: names the default chunk digest of sends to the cluster; none named is none (each
// kind of sender has its default); a name no digest has is refused on its line.
TEST(ClusterFileTest, TheDefaultDigestIsNamedOrAbsentAndFormatsBack) {
  const std::string members = "members:\n  - name: a\n    control: unix:/a.sock\n    data: 10.0.0.1:7701\n";
  Result<ClusterConfig> none = ParseClusterFile(kSecret + members, "/");
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE(none->digest.has_value());
  EXPECT_EQ(*none->DigestFor(""), ChunkDigest::kSha256);
  EXPECT_EQ(*none->DigestFor("xxh3"), ChunkDigest::kXxh3);
  EXPECT_FALSE(none->DigestFor("md5").ok());
  EXPECT_EQ(FormatClusterFile(*none).find("digest"), std::string::npos);

  Result<ClusterConfig> xxh3 = ParseClusterFile(kSecret + "digest: xxh3\n" + members, "/");
  ASSERT_TRUE(xxh3.ok()) << xxh3.status().message();
  EXPECT_EQ(xxh3->digest, ChunkDigest::kXxh3);
  EXPECT_EQ(*xxh3->DigestFor(""), ChunkDigest::kXxh3);
  EXPECT_EQ(*xxh3->DigestFor("sha256"), ChunkDigest::kSha256);
  Result<ClusterConfig> again = ParseClusterFile(FormatClusterFile(*xxh3), "/");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->digest, ChunkDigest::kXxh3);

  Result<ClusterConfig> bad = ParseClusterFile(kSecret + "digest: crc32\n" + members, "/");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2: digest: unknown chunk digest 'crc32'"), std::string::npos)
      << bad.status().message();
}

TEST(SecretExposure, AFileEveryUserCanReadIsNamed) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("cluster-exposure-" + std::to_string(getpid()) + ".yaml")).string();
  std::ofstream(path) << "secret: x\n";
  chmod(path.c_str(), 0640);
  EXPECT_EQ(SecretExposure(path), "");
  chmod(path.c_str(), 0600);
  EXPECT_EQ(SecretExposure(path), "");
  chmod(path.c_str(), 0644);
  EXPECT_EQ(SecretExposure(path), path + " holds the cluster's secret and every user of this host can read it: chmod o-rwx " +
                                      path + " (0640 for the daemon's group, docs/real-cluster.md)");
  chmod(path.c_str(), 0602);
  EXPECT_NE(SecretExposure(path).find("can write it"), std::string::npos);
  std::filesystem::remove(path);
  EXPECT_EQ(SecretExposure(path), "");  // a file that is not there exposes nothing
}

TEST(ClusterFileHelpers, AddressesAreToldFromNamesAndSecretsAreFresh) {
  EXPECT_TRUE(IsIpAddress("10.2.0.7"));
  EXPECT_TRUE(IsIpAddress("fd00::9"));
  EXPECT_FALSE(IsIpAddress("lyon-0.grid.example.org"));
  EXPECT_FALSE(IsIpAddress(""));
  const std::string secret = NewClusterSecret();
  EXPECT_EQ(secret.size(), 32u);
  EXPECT_NE(secret, NewClusterSecret());
}

}  // namespace
}  // namespace gridcast
