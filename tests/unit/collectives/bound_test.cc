// The physical lower bound against values computed by hand from topology.md's five terms.
#include "collectives/bound.h"

#include <gtest/gtest.h>

#include "tests/unit/collectives/simulator/sim_test_util.h"

namespace gridcast {
namespace {

constexpr uint64_t kPayload = 100'000'000;  // 8e8 bits: 8 s at 100mbit

TEST(BroadcastBound, OneSwitchHomogeneousIsTheSourceUpload) {
  // Source upload 8 s = any download 8 s > total upload 3 * 8e8 / 4e8 = 6 s; ties keep the first.
  const BroadcastBound bound = ComputeBroadcastBound(OneSwitch(4, 100e6), 0, {}, kPayload);
  EXPECT_DOUBLE_EQ(bound.seconds, 8.0);
  EXPECT_EQ(bound.term, BoundTerm::kSourceUpload);
  EXPECT_EQ(bound.where, 0);
}

TEST(BroadcastBound, OneSwitchMixedNics) {
  NetworkModel net = OneSwitch(4, 100e6);
  for (int v = 1; v < 4; ++v) net.nodes[v] = {net.nodes[v].name, 0, 10e6, 1e9};
  // Source 8 s, downloads 0.8 s, total upload 3 * 8e8 / (100 + 3 * 10)e6 = 18.46 s.
  BroadcastBound bound = ComputeBroadcastBound(net, 0, {}, kPayload);
  EXPECT_DOUBLE_EQ(bound.seconds, 24e8 / 1.3e8);
  EXPECT_EQ(bound.term, BoundTerm::kTotalUpload);
  // A 20mbit download: 8e8 / 2e7 = 40 s.
  net.nodes[2].down_bps = 20e6;
  bound = ComputeBroadcastBound(net, 0, {}, kPayload);
  EXPECT_DOUBLE_EQ(bound.seconds, 40.0);
  EXPECT_EQ(bound.term, BoundTerm::kReceiverDownload);
  EXPECT_EQ(bound.where, 2);
}

TEST(BroadcastBound, TwoSitesTheSlowUplinkDominates) {
  // 8 + 8 nodes at 100mbit, uplinks 400mbit (source's site) and 50mbit. Terms: source 8 s,
  // downloads 8 s, uplink a (up, toward site b) 2 s, uplink b (down) 8e8 / 5e7 = 16 s, total
  // 15 * 8e8 / 16e8 = 7.5 s, cut a: 8 * 8e8 / (4e8 + 8e8) = 5.33 s, cut b:
  // 8 * 8e8 / (5e7 + 8e8) = 7.53 s.
  const NetworkModel net = TwoSites(8, 8, 100e6, 400e6, 50e6, 0);
  const BroadcastBound bound = ComputeBroadcastBound(net, 0, {}, kPayload);
  EXPECT_DOUBLE_EQ(bound.seconds, 16.0);
  EXPECT_EQ(bound.term, BoundTerm::kUplink);
  EXPECT_EQ(bound.where, 2);
  EXPECT_EQ(DescribeBound(bound, net), "uplink of switch site-b");
  EXPECT_DOUBLE_EQ(BroadcastBoundSeconds(net, 0, {}, kPayload), 16.0);
}

TEST(BroadcastBound, AsymmetricUplinkCountsTheDirectionAwayFromTheSource) {
  // Site b: 20mbit up, 400mbit down. From a source in site b the 4 receivers in site a sit
  // behind b's up direction: 8e8 / 2e7 = 40 s. From a source in site a, b's down direction
  // serves: 2 s, and the source upload (8 s) binds.
  NetworkModel net = TwoSites(4, 4, 100e6, 400e6, 400e6, 0);
  net.switches[2].uplink_up_bps = 20e6;
  BroadcastBound bound = ComputeBroadcastBound(net, 4, {}, kPayload);
  EXPECT_DOUBLE_EQ(bound.seconds, 40.0);
  EXPECT_EQ(bound.term, BoundTerm::kUplink);
  EXPECT_EQ(bound.where, 2);
  bound = ComputeBroadcastBound(net, 0, {}, kPayload);
  EXPECT_DOUBLE_EQ(bound.seconds, 8.0);
  EXPECT_EQ(bound.term, BoundTerm::kSourceUpload);
}

TEST(BroadcastBound, CutTermWhenTheFarSideUploadsSlowly) {
  // Site b: 8 nodes uploading 10mbit behind 50mbit. Uplink b alone: 16 s; the cut:
  // 8 * 8e8 / (5e7 + 8 * 1e7) = 49.2 s.
  NetworkModel net = TwoSites(8, 8, 100e6, 400e6, 50e6, 0);
  for (int v = 8; v < 16; ++v) net.nodes[v].up_bps = 10e6;
  const BroadcastBound bound = ComputeBroadcastBound(net, 0, {}, kPayload);
  EXPECT_DOUBLE_EQ(bound.seconds, 64e8 / 1.3e8);
  EXPECT_EQ(bound.term, BoundTerm::kCutUpload);
  EXPECT_EQ(bound.where, 2);
}

TEST(BroadcastBound, OnlyMembersCount) {
  const NetworkModel net = TwoSites(8, 8, 100e6, 400e6, 50e6, 0);
  // Receivers all in the source's site: no uplink term; source upload 8 s.
  BroadcastBound bound = ComputeBroadcastBound(net, 0, {1, 2, 3}, kPayload);
  EXPECT_DOUBLE_EQ(bound.seconds, 8.0);
  EXPECT_EQ(bound.term, BoundTerm::kSourceUpload);
  // Source + one slow receiver on a 10mbit download, listed twice: 80 s.
  NetworkModel slow = net;
  slow.nodes[3].down_bps = 10e6;
  EXPECT_DOUBLE_EQ(BroadcastBoundSeconds(slow, 0, {3, 3}, kPayload), 80.0);
  // Non-members do not upload: 3 members of 10mbit upload, the source 100mbit:
  // total = 2 * 8e8 / 1.2e8 = 13.3 s > source 8 s.
  NetworkModel weak = OneSwitch(6, 100e6);
  for (int v = 1; v < 6; ++v) weak.nodes[v].up_bps = 10e6;
  EXPECT_DOUBLE_EQ(BroadcastBoundSeconds(weak, 0, {1, 2}, kPayload), 16e8 / 1.2e8);
}

TEST(BroadcastBound, NothingToSendOrNothingShaped) {
  const NetworkModel net = OneSwitch(3, kUnshaped);
  BroadcastBound bound = ComputeBroadcastBound(net, 0, {}, kPayload);
  EXPECT_EQ(bound.seconds, 0);
  EXPECT_EQ(bound.term, BoundTerm::kNone);
  bound = ComputeBroadcastBound(OneSwitch(3, 100e6), 1, {1}, kPayload);
  EXPECT_EQ(bound.seconds, 0);
  EXPECT_EQ(bound.term, BoundTerm::kNone);
  EXPECT_EQ(BroadcastBoundSeconds(OneSwitch(3, 100e6), 0, {}, 0), 0);
}

TEST(AllgatherBound, OneSwitchEqualPartsIsEachDownload) {
  // 4 parts of 1e8 bytes at 100mbit: each member downloads 3e8 bytes (24 s); uploads 8 s each,
  // total upload 3 * 4e8 * 8 / 4e8 = 24 s.
  EXPECT_DOUBLE_EQ(AllgatherBoundSeconds(OneSwitch(4, 100e6), {0, 1, 2, 3}, {kPayload, kPayload, kPayload, kPayload}),
                   24.0);
  // One member holds nothing: it downloads 4e8 bytes (32 s).
  EXPECT_DOUBLE_EQ(AllgatherBoundSeconds(OneSwitch(4, 100e6), {0, 1, 2, 3}, {kPayload, kPayload, kPayload, 0}),
                   24.0);
  EXPECT_DOUBLE_EQ(AllgatherBoundSeconds(OneSwitch(5, 100e6), {0, 1, 2, 3, 4}, {kPayload, kPayload, kPayload, kPayload, 0}),
                   32.0);
}

TEST(AllgatherBound, SlowUploadAndUplinks) {
  NetworkModel net = OneSwitch(3, 100e6);
  net.nodes[1].up_bps = 10e6;  // its part leaves in 80 s
  EXPECT_DOUBLE_EQ(AllgatherBoundSeconds(net, {0, 1, 2}, {kPayload, kPayload, kPayload}), 80.0);
  // Two sites of 2 at 100mbit, site b's uplink 50mbit both ways: b's 2e8 bytes leave through
  // it (32 s) and a's 2e8 enter through it (32 s); downloads 24 s.
  const NetworkModel sites = TwoSites(2, 2, 100e6, 400e6, 50e6, 0);
  EXPECT_DOUBLE_EQ(AllgatherBoundSeconds(sites, {0, 1, 2, 3}, {kPayload, kPayload, kPayload, kPayload}), 32.0);
  // Nothing to gather among fewer than two members.
  EXPECT_DOUBLE_EQ(AllgatherBoundSeconds(sites, {0}, {kPayload}), 0.0);
}

}  // namespace
}  // namespace gridcast
