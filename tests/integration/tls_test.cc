// TLS end to end, with real daemons: every daemon serves its control port and its data plane
// with a certificate from the cluster's CA (cluster/cluster_pki.h), the cluster file names
// the CA, and a send needs nothing more; the keys of digests are signed with the members'
// certificates (checked by every member); a client that does not know the CA is refused.
#include <gtest/gtest.h>

#include <fstream>

#include "deploy/local_cluster.h"
#include "deploy/subprocess.h"
#include "tests/integration/send_helpers.h"

namespace gridcast {
namespace {

TEST(Tls, BroadcastOverTlsControlAndDataPlanes) {
  LocalCluster cluster(GRIDCASTD, "tls", 4, {}, LocalCluster::Transport::kTls);
  const std::string payload = cluster.MakePayload("tls.bin", 3'777'777);
  // Either chunk digest: TLS authenticates every byte, the digest checks each chunk again.
  for (const char* algo : {"chain", "multilane"}) {
    Result<CommandOutput> sent = RunCommand({GRIDCAST_CLI, "send", payload, "--cluster", cluster.cluster_file(),
                                             "--algo", algo, "--chunk", "256KiB", "--name",
                                             std::string("tls-") + algo + ".bin", "--digest",
                                             std::string(algo) == "chain" ? "sha256" : "xxh3"});
    ASSERT_TRUE(sent.ok());
    EXPECT_EQ(sent->exit_code, 0) << sent->output;
    for (int i = 1; i < cluster.size(); ++i) {
      EXPECT_EQ(FileSha256(cluster.data_dir(i) / (std::string("tls-") + algo + ".bin")), FileSha256(payload))
          << algo << " at m" << i;
    }
  }
  // An allgather: every holder signs its part's key with its certificate, every member checks
  // each part's against the CA and the holder's host (common/member_signature.h).
  std::vector<std::string> allgather = {GRIDCAST_CLI, "allgather", "--cluster", cluster.cluster_file(),
                                        "--name", "tls-gathered", "--chunk", "64KiB"};
  for (int i = 0; i < cluster.size(); ++i) {
    std::ofstream(cluster.data_dir(i) / "tls-part.bin", std::ios::binary)
        << std::string(70'000 + 9'999 * static_cast<size_t>(i), static_cast<char>('k' + i));
    allgather.insert(allgather.end(), {"--part", "m" + std::to_string(i) + "=tls-part.bin"});
  }
  Result<CommandOutput> gathered = RunCommand(allgather);
  ASSERT_TRUE(gathered.ok());
  EXPECT_EQ(gathered->exit_code, 0) << gathered->output;
  for (int i = 0; i < cluster.size(); ++i) {
    for (int part = 0; part < cluster.size(); ++part) {
      EXPECT_EQ(FileSha256(cluster.data_dir(i) / "tls-gathered" / ("m" + std::to_string(part))),
                FileSha256(cluster.data_dir(part) / "tls-part.bin"))
          << "m" << i << " part " << part;
    }
  }
  // BitTorrent is not encrypted: pull and hybrid are refused, naming why.
  for (const char* mode : {"pull", "hybrid"}) {
    Result<CommandOutput> refused = RunCommand(
        {GRIDCAST_CLI, "send", payload, "--cluster", cluster.cluster_file(), "--mode", mode, "--name", "no.bin"});
    ASSERT_TRUE(refused.ok());
    EXPECT_NE(refused->exit_code, 0) << refused->output;
    EXPECT_NE(refused->output.find("does not encrypt"), std::string::npos) << refused->output;
  }
  // The same cluster without the CA: the client speaks plaintext to TLS ports, and is refused.
  ClusterConfig plain = cluster.config();
  plain.tls_ca_path.clear();
  const fs::path plain_file = cluster.dir() / "plain.yaml";
  std::ofstream(plain_file) << FormatClusterFile(plain);
  fs::permissions(plain_file, fs::perms::owner_read | fs::perms::owner_write);
  Result<CommandOutput> listed = RunCommand({GRIDCAST_CLI, "list", "--cluster", plain_file.string()});
  ASSERT_TRUE(listed.ok());
  EXPECT_NE(listed->exit_code, 0) << listed->output;
}

}  // namespace
}  // namespace gridcast
