// The control channel over TLS: daemons serve with a certificate, the client and the source's
// calls to members verify it with the CA; a plaintext client is refused.
#include <gtest/gtest.h>

#include "deploy/local_cluster.h"
#include "deploy/subprocess.h"

namespace gridcast {
namespace {

TEST(Tls, BroadcastOverTlsControlChannel) {
  const fs::path pki = fs::temp_directory_path() / ("gridcast-tls-" + std::to_string(getpid()));
  fs::create_directories(pki);
  // A self-signed certificate for "localhost" (the authority gRPC uses for unix: targets).
  Result<CommandOutput> made = RunCommand(
      {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
       "-addext", "subjectAltName=DNS:localhost", "-keyout", (pki / "key.pem").string(), "-out",
       (pki / "cert.pem").string()});
  ASSERT_TRUE(made.ok());
  ASSERT_EQ(made->exit_code, 0) << made->output;
  const std::string cert = (pki / "cert.pem").string();
  {
    LocalCluster cluster(GRIDCASTD, "tls", 3,
                         {"--tls-cert", cert, "--tls-key", (pki / "key.pem").string(), "--tls-ca", cert});
    const std::string payload = cluster.MakePayload("tls.bin", 777'777);
    Result<CommandOutput> sent = RunCommand({GRIDCAST_CLI, "send", payload, "--cluster", cluster.cluster_file(),
                                             "--algo", "chain", "--tls-ca", cert});
    ASSERT_TRUE(sent.ok());
    EXPECT_EQ(sent->exit_code, 0) << sent->output;
    EXPECT_TRUE(fs::exists(cluster.data_dir(2) / "tls.bin"));
    // Without the CA the client speaks plaintext to a TLS port: refused, no crash.
    Result<CommandOutput> plain = RunCommand({GRIDCAST_CLI, "list", "--cluster", cluster.cluster_file()});
    ASSERT_TRUE(plain.ok());
    EXPECT_NE(plain->exit_code, 0) << plain->output;
  }
  fs::remove_all(pki);
}

}  // namespace
}  // namespace gridcast
