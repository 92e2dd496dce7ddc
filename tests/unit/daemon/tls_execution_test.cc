// The data plane over mutual TLS, in one process (plan_execution_fixture.h): chunks cross
// encrypted and verified; a member whose certificate is from another CA, or not for its data
// host, or that speaks no TLS, is refused and named by its parent instead of served.
#include <gtest/gtest.h>

#include "cluster/cluster_pki.h"
#include "daemon/transport/tls/tls_context.h"
#include "plan_execution_fixture.h"

namespace gridcast {
namespace {

class TlsExecutionTest : public PlanExecutionFixture {
 protected:
  // Members m0..m3 with certificates for 127.0.0.1 from CA "a" (and "elsewhere", for
  // 10.9.9.9), the same from CA "b"; `prepare` may change member i's TLS settings (its
  // context, or nullptr for plaintext) before the data planes start.
  void StartWith(const std::function<std::shared_ptr<TlsContext>(int, std::shared_ptr<TlsContext>)>& prepare) {
    pki_ = FreshTestDir("gridcast-pki");
    std::vector<PkiMember> members;
    for (int i = 0; i < kMembers; ++i) members.push_back({Name(i), {"127.0.0.1", "localhost"}});
    ASSERT_TRUE(WriteClusterPki(pki_ / "b", members).ok());
    members.push_back({"elsewhere", {"10.9.9.9"}});
    ASSERT_TRUE(WriteClusterPki(pki_ / "a", members).ok());
    for (int i = 0; i < kMembers; ++i) tls_.push_back(prepare(i, Load("a", Name(i), "a")));
    PlanExecutionFixture::SetUp();
    MakePayloadAndPlan(29 * kChunk + 5, "chain");  // 0 -> 1 -> 2 -> 3
    for (int i = 0; i < kMembers; ++i) StartMember(i, OpenStore(i));
  }
  void SetUp() override {}
  void TearDown() override {
    PlanExecutionFixture::TearDown();
    fs::remove_all(pki_);
  }

  static std::string Name(int i) { return "m" + std::to_string(i); }
  // The certificate and key of `name` from PKI `pki`, trusting the CA of PKI `ca`.
  std::shared_ptr<TlsContext> Load(const std::string& pki, const std::string& name, const std::string& ca) {
    Result<std::shared_ptr<TlsContext>> tls = TlsContext::Load((pki_ / pki / (name + ".pem")).string(),
                                                               (pki_ / pki / (name + ".key")).string(),
                                                               (pki_ / ca / "ca.pem").string());
    EXPECT_TRUE(tls.ok()) << tls.status().message();
    return tls.ok() ? *tls : nullptr;
  }

  // Member 1 (member 2's parent in the chain) fails naming what is wrong; member 2 gets nothing.
  void ExpectParentRefuses(const std::string& why) {
    ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(1).state == ExecutionState::kFailed; })) << SnapshotOf(1).error;
    EXPECT_NE(SnapshotOf(1).error.find(why), std::string::npos) << SnapshotOf(1).error;
    EXPECT_NE(SnapshotOf(1).error.find("child "), std::string::npos) << SnapshotOf(1).error;
    EXPECT_EQ(SnapshotOf(2).chunks_done, 0u);
  }

  fs::path pki_;
};

TEST_F(TlsExecutionTest, EveryChunkCrossesEncryptedAndVerified) {
  StartWith([](int, std::shared_ptr<TlsContext> tls) { return tls; });
  ASSERT_TRUE(WaitAllDone());
  ExpectEveryCopy();
}

TEST_F(TlsExecutionTest, AMemberCertifiedByAnotherCaIsRefused) {
  StartWith([this](int i, std::shared_ptr<TlsContext> tls) { return i == 2 ? Load("b", Name(2), "a") : tls; });
  ExpectParentRefuses("certificate verify failed");
}

// The child refuses the parent's certificate; a TLS 1.3 client hears of it at its first read.
TEST_F(TlsExecutionTest, AParentCertifiedByAnotherCaIsRefusedAndFails) {
  StartWith([this](int i, std::shared_ptr<TlsContext> tls) { return i == 0 ? Load("b", Name(0), "a") : tls; });
  ASSERT_TRUE(WaitUntil([&] { return SnapshotOf(0).state == ExecutionState::kFailed; })) << SnapshotOf(0).error;
  EXPECT_NE(SnapshotOf(0).error.find("child "), std::string::npos) << SnapshotOf(0).error;
  EXPECT_NE(SnapshotOf(0).error.find("TLS"), std::string::npos) << SnapshotOf(0).error;
  EXPECT_EQ(SnapshotOf(1).chunks_done, 0u);
}

TEST_F(TlsExecutionTest, ACertificateForAnotherHostIsRefused) {
  // From the cluster's CA, but for 10.9.9.9, not member 2's 127.0.0.1.
  StartWith([this](int i, std::shared_ptr<TlsContext> tls) { return i == 2 ? Load("a", "elsewhere", "a") : tls; });
  ExpectParentRefuses("certificate is not for 127.0.0.1");
}

TEST_F(TlsExecutionTest, AChildWithoutTlsIsRefused) {
  StartWith([](int i, std::shared_ptr<TlsContext> tls) { return i == 2 ? nullptr : tls; });
  ExpectParentRefuses("TLS handshake");
}

}  // namespace
}  // namespace gridcast
