// Keys signed with a member's TLS identity (common/member_signature.h): a signature verifies
// only for the member's own certificate from the cluster's CA, at the member's host, over the
// very key and plan it was made for.
#include "common/member_signature.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster/cluster_pki.h"
#include "test_dir.h"

namespace gridcast {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(MemberSignature, OnlyTheNamedMembersCertificateFromTheCaSignsItsKey) {
  const fs::path dir = FreshTestDir("gridcast-member-signature");
  ASSERT_TRUE(WriteClusterPki(dir / "pki", {{"source", {"10.1.0.1"}}, {"relay", {"relay.example"}}}).ok());
  ASSERT_TRUE(WriteClusterPki(dir / "other", {{"source", {"10.1.0.1"}}}).ok());  // another CA
  Result<std::shared_ptr<const MemberSigner>> source =
      MemberSigner::Load((dir / "pki" / "source.pem").string(), (dir / "pki" / "source.key").string());
  Result<std::shared_ptr<const MemberSigner>> relay =
      MemberSigner::Load((dir / "pki" / "relay.pem").string(), (dir / "pki" / "relay.key").string());
  Result<std::shared_ptr<const MemberSigner>> stranger =
      MemberSigner::Load((dir / "other" / "source.pem").string(), (dir / "other" / "source.key").string());
  Result<std::shared_ptr<const MemberVerifier>> verifier = MemberVerifier::Load((dir / "pki" / "ca.pem").string());
  ASSERT_TRUE(source.ok() && relay.ok() && stranger.ok() && verifier.ok());
  EXPECT_EQ((*source)->certificate(), ReadText(dir / "pki" / "source.pem"));

  const PlanId plan = PlanId::Random();
  const PublicKey key = SigningKey::Generate()->public_key();
  const PublicKey other_key = SigningKey::Generate()->public_key();
  const std::string statement = DigestKeyStatement(plan, key);
  const std::string signature = *(*source)->Sign(statement);
  const std::string certificate = (*source)->certificate();
  EXPECT_TRUE((*verifier)->Verify(certificate, "10.1.0.1", statement, signature, "the source").ok());

  auto refused = [&](std::string_view cert, const std::string& host, const std::string& message,
                     const std::string& sig) {
    const Status status = (*verifier)->Verify(cert, host, message, sig, "the source");
    EXPECT_EQ(status.code(), StatusCode::kUnauthenticated) << status.ToString();
    return status.message();
  };
  // A relay's key put in the plan, with the source's signature: refused.
  refused(certificate, "10.1.0.1", DigestKeyStatement(plan, other_key), signature);
  // The same key moved into another plan: refused.
  refused(certificate, "10.1.0.1", DigestKeyStatement(PlanId::Random(), key), signature);
  // The relay signing its own key with its own (valid) certificate, for the source's host.
  const std::string relayed = DigestKeyStatement(plan, other_key);
  EXPECT_NE(refused((*relay)->certificate(), "10.1.0.1", relayed, *(*relay)->Sign(relayed)).find("not for 10.1.0.1"),
            std::string::npos);
  // A certificate of another CA, naming the right host.
  EXPECT_NE(refused((*stranger)->certificate(), "10.1.0.1", statement, *(*stranger)->Sign(statement))
                .find("not from the cluster's CA"),
            std::string::npos);
  // No certificate, or bytes that are none.
  refused("", "10.1.0.1", statement, signature);
  refused("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "10.1.0.1", statement, signature);
  // Part keys are bound to their nonce.
  const std::string part = PartKeyStatement("0123456789abcdef", key);
  const std::string part_signature = *(*relay)->Sign(part);
  EXPECT_TRUE((*verifier)->Verify((*relay)->certificate(), "relay.example", part, part_signature, "a holder").ok());
  refused((*relay)->certificate(), "relay.example", PartKeyStatement("fedcba9876543210", key), part_signature);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gridcast
