#include "collectives/registry.h"

#include <charconv>
#include <functional>

#include "collectives/planners/all_to_all_auto.h"
#include "collectives/planners/all_to_all_hypercube.h"
#include "collectives/planners/auto_planner.h"
#include "collectives/planners/capacity.h"
#include "collectives/planners/all_to_all_kprefix.h"
#include "collectives/planners/all_to_all_kshift.h"
#include "collectives/planners/all_to_all_mesh2d.h"
#include "collectives/planners/all_to_all_prefix_send.h"
#include "collectives/planners/all_to_all_ring.h"
#include "collectives/planners/binary.h"
#include "collectives/planners/binomial.h"
#include "collectives/planners/chain.h"
#include "collectives/planners/flat.h"
#include "collectives/planners/swarm.h"
#include "collectives/planners/knomial.h"
#include "collectives/planners/scatter_allgather.h"
#include "collectives/planners/splitstream.h"
#include "collectives/planners/multilane.h"
#include "collectives/planners/multilane_sites.h"
#include "collectives/planners/sssmst.h"
#include "collectives/planners/upload_packing.h"

namespace gridcast {
namespace {

struct Entry {
  PlannerInfo info;
  int default_parameter;  // 0 = takes no parameter
  int min_parameter;
  std::function<std::unique_ptr<Planner>(int parameter)> make;
};

const std::vector<Entry>& Entries() {
  static const std::vector<Entry> entries = {
      {{"flat", PlannerKind::kBroadcast, "the source sends to every member itself"}, 0, 0,
       [](int) { return std::make_unique<FlatPlanner>(); }},
      {{"chain", PlannerKind::kBroadcast, "pipelined chain through all members"}, 0, 0,
       [](int) { return std::make_unique<ChainPlanner>(); }},
      {{"binary", PlannerKind::kBroadcast, "pipelined binary tree, heap numbering"}, 0, 0,
       [](int) { return std::make_unique<BinaryPlanner>(); }},
      {{"binomial", PlannerKind::kBroadcast, "binomial tree, largest subtree first"}, 0, 0,
       [](int) { return std::make_unique<BinomialPlanner>(); }},
      {{"knomial:4", PlannerKind::kBroadcast, "k-nomial tree (k >= 2; k = 2 is binomial)"}, 4, 2,
       [](int k) { return std::make_unique<KnomialPlanner>(k); }},
      {{"scatter-allgather", PlannerKind::kBroadcast,
        "van de Geijn: binomial scatter, then ring allgather", /*lane_per_member=*/true}, 0, 0,
       [](int) {
         return std::make_unique<ScatterAllgatherPlanner>(
             ScatterAllgatherPlanner::Allgather::kRing);
       }},
      {{"scatter-allgather-rd", PlannerKind::kBroadcast,
        "van de Geijn: binomial scatter, then recursive-doubling allgather", /*lane_per_member=*/true}, 0, 0,
       [](int) {
         return std::make_unique<ScatterAllgatherPlanner>(
             ScatterAllgatherPlanner::Allgather::kRecursiveDoubling);
       }},
      {{"splitstream:2", PlannerKind::kBroadcast,
        "k stripes down k interior-node-disjoint trees (k >= 1)"}, 2, 1,
       [](int k) { return std::make_unique<SplitStreamPlanner>(k); }},
      {{"multilane", PlannerKind::kBroadcast,
        "two lanes down two binary trees whose leaves swap halves ([ML], one site)"}, 0, 0,
       [](int) { return std::make_unique<MultiLanePlanner>(); }},
      {{"multilane-sites", PlannerKind::kBroadcast,
        "multilane per site (switch), sites chained over the best WAN links"}, 0, 0,
       [](int) { return std::make_unique<MultiLaneSitesPlanner>(); }},
      {{"sssmst", PlannerKind::kBroadcast,
        "shortest-path switch tree, ordered down-to-up, re-parented up-to-down ([SMP])"}, 0, 0,
       [](int) { return std::make_unique<SssMstPlanner>(); }},
      {{"capacity", PlannerKind::kBroadcast,
        "k equal-rate lanes packed by upload capacity, each uplink crossed once per lane"}, 0, 0,
       [](int) { return std::make_unique<CapacityPlanner>(); }},
      {{"upload-packing", PlannerKind::kBroadcast,
        "k equal-rate lanes using every member's upload; poor sites served across uplinks",
        /*lane_per_member=*/false, /*many_lanes=*/true}, 0, 0,
       [](int) { return std::make_unique<UploadPackingPlanner>(); }},
      {{"auto", PlannerKind::kBroadcast,
        "simulates the other broadcast planners (chunk sizes, streams) and keeps the fastest"},
       0, 0, [](int) { return std::make_unique<AutoPlanner>(); }},
      {{"swarm", PlannerKind::kSwarm,
        "pull: per bandwidth group, stripes from the source and the rest from peers"}, 0, 0,
       [](int) { return std::make_unique<SwarmPlanner>(false); }},
      {{"swarm-free", PlannerKind::kSwarm,
        "pull for measurement: everyone peers with everyone and picks chunks freely"}, 0, 0,
       [](int) { return std::make_unique<SwarmPlanner>(true); }},
      {{"ring", PlannerKind::kAllToAll, "all-to-all: every message around the ring"}, 0, 0,
       [](int) { return std::make_unique<AllToAllRingPlanner>(); }},
      {{"prefix-send", PlannerKind::kAllToAll, "all-to-all: direct sends in XOR order"}, 0, 0,
       [](int) { return std::make_unique<AllToAllPrefixSendPlanner>(); }},
      {{"kprefix:8", PlannerKind::kAllToAll,
        "all-to-all: prefix-send in blocks of k, ring across blocks (k a power of two)"}, 8, 1,
       [](int k) { return std::make_unique<AllToAllKPrefixPlanner>(k); }},
      {{"kshift:8", PlannerKind::kAllToAll,
        "all-to-all: each carrier covers a window of k, then shifts by k (k >= 1)"}, 8, 1,
       [](int k) { return std::make_unique<AllToAllKShiftPlanner>(k); }},
      {{"mesh2d", PlannerKind::kAllToAll, "all-to-all: 2-D virtual mesh, row then column"}, 0, 0,
       [](int) { return std::make_unique<AllToAllMesh2dPlanner>(); }},
      {{"hypercube", PlannerKind::kAllToAll, "all-to-all: hypercube dimension exchange"}, 0, 0,
       [](int) { return std::make_unique<AllToAllHypercubePlanner>(); }},
      {{"auto-alltoall", PlannerKind::kAllToAll,
        "all-to-all: simulates the other all-to-all planners and keeps the fastest"}, 0, 0,
       [](int) { return std::make_unique<AllToAllAutoPlanner>(); }},
  };
  return entries;
}

std::string KnownNames() {
  std::string names;
  for (const Entry& e : Entries()) names += (names.empty() ? "" : ", ") + e.info.name;
  return names;
}

}  // namespace

std::string_view PlannerBaseName(std::string_view name) { return name.substr(0, name.find(':')); }

Result<std::unique_ptr<Planner>> MakePlanner(std::string_view name) {
  const size_t colon = name.find(':');
  const std::string_view base = PlannerBaseName(name);
  for (const Entry& e : Entries()) {
    if (PlannerBaseName(e.info.name) != base) continue;
    int parameter = e.default_parameter;
    if (colon != std::string_view::npos) {
      const std::string_view text = name.substr(colon + 1);
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parameter);
      if (e.default_parameter == 0) {
        return Status::InvalidArgument("algorithm '" + std::string(base) + "' takes no parameter");
      }
      if (ec != std::errc() || ptr != text.data() + text.size() || parameter < e.min_parameter) {
        return Status::InvalidArgument("bad parameter in '" + std::string(name) + "': expected an integer >= " +
                                       std::to_string(e.min_parameter));
      }
    }
    return e.make(parameter);
  }
  return Status::InvalidArgument("unknown algorithm '" + std::string(name) + "' (known: " + KnownNames() + ")");
}

const std::vector<PlannerInfo>& ListPlanners() {
  static const std::vector<PlannerInfo> infos = [] {
    std::vector<PlannerInfo> result;
    for (const Entry& e : Entries()) result.push_back(e.info);
    return result;
  }();
  return infos;
}

const PlannerInfo* FindPlanner(std::string_view name) {
  for (const PlannerInfo& info : ListPlanners()) {
    if (PlannerBaseName(info.name) == PlannerBaseName(name)) return &info;
  }
  return nullptr;
}

}  // namespace gridcast
