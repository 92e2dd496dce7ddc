#include "client/mpi/bcast_agreement.h"

#include <gtest/gtest.h>

#include "cluster/local_member.h"

namespace gridcast {
namespace {

using Path = BcastAgreement::Path;

RankOffer Offer(int64_t bytes, int member, uint64_t nonce = 0) { return RankOffer{bytes, member, 0, nonce}; }

TEST(BcastAgreement, RanksOnSeveralNodesGoThroughTheRootsDaemon) {
  // Ranks 0..4 on members 3, 1, 1, 0, 3; root 2 (member 1).
  const std::vector<RankOffer> offers = {Offer(100, 3), Offer(100, 1), Offer(100, 1, 0xabcdef), Offer(100, 0),
                                         Offer(100, 3)};
  const BcastAgreement a = AgreeOnBcast(offers, 2);
  ASSERT_EQ(a.path, Path::kGridcast) << a.why;
  EXPECT_EQ(a.source_member, 1);
  EXPECT_EQ(a.receiver_members, std::vector<int>({0, 3}));
  EXPECT_EQ(a.payload_name, "mpi-bcast-0000000000abcdef.bin");
  // The lowest rank on each node removes its copy: ranks 0 (member 3), 1 (member 1), 3 (member 0).
  EXPECT_EQ(a.removes_copy, std::vector<bool>({true, true, false, true, false}));
}

TEST(BcastAgreement, EveryRankSeesTheSameSizeMismatch) {
  const std::vector<RankOffer> offers = {Offer(100, 0), Offer(100, 1), Offer(96, 2)};
  for (int root : {0, 1}) {
    const BcastAgreement a = AgreeOnBcast(offers, root);
    EXPECT_EQ(a.path, Path::kSizeMismatch);
    EXPECT_NE(a.why.find("rank 2's buffer has 96 bytes"), std::string::npos) << a.why;
  }
  // A size mismatch is an error even where the shim would not have run (no daemon at rank 1).
  EXPECT_EQ(AgreeOnBcast({Offer(100, 0), Offer(100, -1), Offer(7, 2)}, 0).path, Path::kSizeMismatch);
}

TEST(BcastAgreement, AnyRankThatCannotTakePartSendsEveryoneToMpi) {
  BcastAgreement a = AgreeOnBcast({Offer(100, 0), Offer(-1, 1)}, 0);
  EXPECT_EQ(a.path, Path::kMpi);
  EXPECT_NE(a.why.find("rank 1's datatype is not contiguous"), std::string::npos) << a.why;
  a = AgreeOnBcast({Offer(100, 0), Offer(100, 1), Offer(100, -1)}, 1);
  EXPECT_EQ(a.path, Path::kMpi);
  EXPECT_NE(a.why.find("no gridcast daemon answers rank 2"), std::string::npos) << a.why;
  // All on the root's node: MPI's shared memory does better than a copy through a daemon.
  a = AgreeOnBcast({Offer(100, 4), Offer(100, 4)}, 0);
  EXPECT_EQ(a.path, Path::kMpi);
  EXPECT_NE(a.why.find("root's node"), std::string::npos) << a.why;
}

TEST(AllgatherAgreement, NodesInMemberOrderRanksSideBySide) {
  // Ranks 0 and 3 on member 7, ranks 1 and 2 on member 2: member 2's part comes first.
  std::vector<RankOffer> offers = {Offer(100, 7), Offer(100, 2), Offer(100, 2), Offer(100, 7)};
  offers[0].nonce = 0xabc;
  const AllgatherAgreement a = AgreeOnAllgather(offers);
  ASSERT_EQ(a.path, Path::kGridcast) << a.why;
  EXPECT_EQ(a.node_members, (std::vector<int>{2, 7}));
  EXPECT_EQ(a.node_of_rank, (std::vector<int>{1, 0, 0, 1}));
  EXPECT_EQ(a.slot_of_rank, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(a.ranks_on_node, (std::vector<int>{2, 2}));
  EXPECT_EQ(a.removes_copy, (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(a.bundle_name, "mpi-allgather-0000000000000abc.bin");
  EXPECT_EQ(a.part_name, "mpi-allgather-0000000000000abc.part");
  // Member 2's part (200 bytes) takes 4 chunks of 64: member 7's starts at 256.
  EXPECT_EQ(BundleOffset(a, 1, 100, 64), 0u);
  EXPECT_EQ(BundleOffset(a, 2, 100, 64), 100u);
  EXPECT_EQ(BundleOffset(a, 0, 100, 64), 256u);
  EXPECT_EQ(BundleOffset(a, 3, 100, 64), 356u);
}

TEST(AllgatherAgreement, MismatchesAndWhatMpiKeeps) {
  AllgatherAgreement a = AgreeOnAllgather({Offer(100, 0), Offer(100, 1), Offer(90, 1)});
  EXPECT_EQ(a.path, Path::kSizeMismatch);
  EXPECT_NE(a.why.find("rank 2's buffer has 90 bytes, rank 0's (rank 0) 100"), std::string::npos) << a.why;
  EXPECT_EQ(AgreeOnAllgather({Offer(100, 0), Offer(-1, 1)}).path, Path::kMpi);
  EXPECT_EQ(AgreeOnAllgather({Offer(100, 0), Offer(100, -1)}).path, Path::kMpi);
  a = AgreeOnAllgather({Offer(100, 3), Offer(100, 3)});
  EXPECT_EQ(a.path, Path::kMpi);
  EXPECT_NE(a.why.find("one node"), std::string::npos) << a.why;
}

TEST(LocalMember, NamedOrTheOneWhoseAddressIsHere) {
  ClusterConfig cluster;
  cluster.members = {{"a", "10.0.0.1:7000", "10.0.0.1:7001", "10.0.0.1:7002"},
                     {"b", "10.0.0.2:7000", "10.0.0.2:7001", "10.0.0.2:7002"},
                     {"c", "127.0.0.1:7100", "", ""},
                     {"d", "127.0.0.1:7200", "", ""},
                     {"e", "unix:/run/e.sock", "10.0.0.5:7001", ""},
                     {"f", "f.grid.example.org:7000", "f.grid.example.org:7001", ""},
                     {"node-7", "node-7.example.org:7000", "10.9.0.7:7001", ""}};
  auto local = [&](const std::string& named, std::vector<std::string> addresses, std::string host_name = "elsewhere") {
    return LocalMember(cluster, named, ThisHost{std::move(addresses), std::move(host_name)}, "--name");
  };
  EXPECT_EQ(*local("", {"192.168.1.1", "10.0.0.2"}), "b");
  EXPECT_EQ(*local("a", {"10.0.0.2"}), "a");
  EXPECT_EQ(*local("", {"10.0.0.5"}), "e");  // by its data address
  EXPECT_NE(local("zz", {}).status().message().find("--name 'zz' is not in the cluster file"), std::string::npos);
  const Status none = local("", {"192.168.1.1"}).status();
  EXPECT_EQ(none.code(), StatusCode::kNotFound);
  EXPECT_NE(none.message().find("(elsewhere): set --name"), std::string::npos) << none.message();
  // Members on loopback ports share an address: which one is ours cannot be guessed.
  const Status several = local("", {"127.0.0.1"}).status();
  EXPECT_NE(several.message().find("several members have an address of this host (c, d)"), std::string::npos)
      << several.message();
  // Where no address says it, the host name does: in an address, or as the member's name.
  EXPECT_EQ(*local("", {"192.168.1.1"}, "f.grid.example.org"), "f");
  EXPECT_EQ(*local("", {"192.168.1.1"}, "node-7"), "node-7");
  EXPECT_EQ(*local("", {"10.0.0.1"}, "node-7"), "a");  // an address first
  // This host has at least its loopback address.
  const std::vector<std::string> here = CurrentHost().addresses;
  EXPECT_NE(std::find(here.begin(), here.end(), "127.0.0.1"), here.end());
}

}  // namespace
}  // namespace gridcast
