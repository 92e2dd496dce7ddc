// bench_control_plane_scale: the control plane of one broadcast at 16 to 100,000 members, by
// simulation (docs/scale.md, "The control plane at 10,000 and 100,000 members").
//
//   bench_control_plane_scale [--members N,N,...] [--fanout K] [--size BYTES] [--chunk BYTES]
//                             [--link BPS] [--rtt SECONDS] [--json]
//
// For each N: the plan the source would send (multilane over one switch of N members, with
// every member's addresses and every chunk hash), the slices the control tree hands down
// (proto/plan_slice.h), cut along the tree for a sample of members at each level, and on this
// machine the time to cut and to parse them (PlanPartFromProto, as a member's Prepare does).
// From those, per broadcast: Prepare's calls and bytes at the source for the star (the whole
// plan to every member), the tree with whole plans and the tree with slices; what a member
// of each level receives; and the time for Prepare to reach the deepest level, each level
// costing a round trip, its parent's k slices leaving over one --link NIC, the cutting and
// the parsing. The final detailed progress round (one entry per member, about 60 bytes) is
// the one thing at the source that still grows with N; it is counted apart.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/registry.h"
#include "daemon/coordinator/control_tree.h"
#include "proto/plan_codec.h"
#include "proto/plan_slice.h"

namespace gridcast {
namespace {

struct Options {
  std::vector<int> members = {16, 64, 256, 1000, 10000, 100000};
  int fanout = 8;
  uint64_t payload_bytes = uint64_t{100} << 30;
  uint64_t chunk_bytes = uint64_t{4} << 20;
  double link_bps = 10e9;
  double rtt_s = 0.3e-3;
  bool json = false;
};

// What the members of one level of the control tree receive and cost (over the sample).
struct Level {
  int depth = 0;
  int members = 0;
  size_t slice_bytes_max = 0;
  size_t slice_bytes_mean = 0;
  double cut_s = 0;    // for its parent to cut its slice (the largest sampled)
  double parse_s = 0;  // for it to parse and check its slice (the largest sampled)
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The plan as the source sends it: addresses like a cluster file's, random chunk hashes.
v1::Plan SourcePlan(int n, const Options& options) {
  NetworkModel net;
  net.switches.push_back({"core", -1});
  for (int i = 0; i < n; ++i) net.nodes.push_back({"node-" + std::to_string(i), 0, 10e9, 10e9});
  PlanOptions plan_options;
  plan_options.chunk_bytes = options.chunk_bytes;
  Result<Plan> plan = (*MakePlanner("multilane"))->MakePlan(net, options.payload_bytes, plan_options);
  if (!plan.ok()) {
    std::fprintf(stderr, "%s\n", plan.status().ToString().c_str());
    std::exit(1);
  }
  v1::Plan proto;
  PlanToProto(*plan, &proto);
  proto.set_plan_id(std::string(16, '\x5a'));
  for (int i = 0; i < n; ++i) {
    const std::string ip = "10." + std::to_string(i >> 16) + "." + std::to_string((i >> 8) & 255) + "." +
                           std::to_string(i & 255);
    v1::Member* m = proto.mutable_members(i);
    m->set_control_address(ip + ":7100");
    m->set_data_address(ip + ":7101");
    m->set_bt_address(ip + ":7102");
  }
  std::mt19937_64 random(7);
  std::string hashes(32 * plan->NumChunks(), '\0');
  for (char& b : hashes) b = static_cast<char>(random());
  proto.mutable_payload()->set_chunk_hashes(hashes);
  proto.mutable_payload()->set_sha256(hashes.substr(0, 32));
  return proto;
}

// Members sampled at each depth: the first, the last and evenly spaced ones, at most 32.
std::vector<std::vector<int>> SampleLevels(int n, int k) {
  std::vector<std::vector<int>> levels;
  for (int64_t first = 1, width = k; first < n; first += width, width *= k) {
    const int64_t last = std::min<int64_t>(n - 1, first + width - 1);
    std::vector<int> sample;
    const int64_t count = last - first + 1;
    const int64_t step = std::max<int64_t>(1, count / 31);
    for (int64_t m = first; m <= last; m += step) sample.push_back(static_cast<int>(m));
    if (sample.back() != last) sample.push_back(static_cast<int>(last));
    levels.push_back(std::move(sample));
  }
  return levels;
}

std::vector<Level> MeasureLevels(const v1::Plan& whole, int k) {
  const int n = static_cast<int>(WholeMemberCount(whole));
  std::vector<Level> levels;
  std::map<int, v1::Plan> interior;  // the slices of sampled members' control ancestors
  double cut_s = 0;                  // the last cut's time
  std::function<const v1::Plan&(int)> slice_of = [&](int m) -> const v1::Plan& {
    if (m == 0) return whole;
    auto it = interior.find(m);
    if (it != interior.end()) return it->second;
    const v1::Plan& parent = slice_of(ControlParent(m, k));
    const auto start = std::chrono::steady_clock::now();
    v1::Plan cut = SlicePlan(parent, ControlSubtree(m, n, k));
    cut_s = SecondsSince(start);
    return interior.emplace(m, std::move(cut)).first->second;
  };
  int depth = 0;
  for (const std::vector<int>& sample : SampleLevels(n, k)) {
    Level level;
    level.depth = ++depth;
    size_t total = 0;
    for (int m : sample) {
      interior.erase(m);  // measure its own cut
      const v1::Plan& slice = slice_of(m);
      const auto start = std::chrono::steady_clock::now();
      const std::string wire = slice.SerializeAsString();
      v1::Plan received;
      received.ParseFromString(wire);
      Result<Plan> part = PlanPartFromProto(received, m);
      const double parse_s = SecondsSince(start);
      if (!part.ok()) {
        std::fprintf(stderr, "member %d: %s\n", m, part.status().ToString().c_str());
        std::exit(1);
      }
      level.slice_bytes_max = std::max(level.slice_bytes_max, wire.size());
      total += wire.size();
      level.cut_s = std::max(level.cut_s, cut_s);
      level.parse_s = std::max(level.parse_s, parse_s);
      if (ControlChildren(m, n, k).empty()) interior.erase(m);
    }
    level.slice_bytes_mean = total / sample.size();
    level.members = static_cast<int>(sample.back() - sample.front() + 1);
    levels.push_back(level);
  }
  return levels;
}

// What one level of the tree costs a Prepare when every member gets the whole plan: its
// parent copies the request once per child (as relays did before slices).
struct WholePlanCosts {
  size_t bytes = 0;
  double copy_s = 0;
  double parse_s = 0;
};

// Time for Prepare to reach the deepest level: at each level the parent makes its k requests
// one after the other (cut or copied), they leave over one NIC, a round trip, the child parses.
double PrepareLatency(const std::vector<Level>& levels, int k, const Options& options, const WholePlanCosts* whole) {
  double t = 0;
  for (const Level& level : levels) {
    const size_t bytes = whole ? whole->bytes : level.slice_bytes_max;
    const double parse_s = whole ? whole->parse_s : level.parse_s;
    const double make_s = k * (whole ? whole->copy_s : level.cut_s);
    t += make_s + 8.0 * static_cast<double>(k * bytes) / options.link_bps + options.rtt_s + parse_s;
  }
  return t;
}

std::vector<int> ParseList(const std::string& text) {
  std::vector<int> values;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) values.push_back(std::atoi(item.c_str()));
  return values;
}

int Run(const Options& options) {
  const int k = options.fanout;
  if (!options.json) {
    std::printf("control plane per broadcast: %llu MiB payload in %llu KiB chunks, control fanout %d, NIC %.0f "
                "Gbit/s, round trip %.1f ms\n",
                static_cast<unsigned long long>(options.payload_bytes >> 20),
                static_cast<unsigned long long>(options.chunk_bytes >> 10), k, options.link_bps / 1e9,
                options.rtt_s * 1e3);
    std::printf("%8s %5s | %12s %12s %12s | %10s %10s %10s | %9s %9s %9s | %8s %8s | %10s\n", "members", "depth",
                "star B", "tree-whole B", "tree-slice B", "lvl1 B", "leaf B", "whole B", "cut ms", "parse1 ms",
                "parseW ms", "prep-W s", "prep-S s", "detail B");
  } else {
    std::printf("[");
  }
  bool first = true;
  for (int n : options.members) {
    if (n < 2) continue;
    const v1::Plan whole = SourcePlan(n, options);
    const std::string whole_wire = whole.SerializeAsString();
    WholePlanCosts whole_costs;
    whole_costs.bytes = whole_wire.size();
    auto start = std::chrono::steady_clock::now();
    v1::Plan received;
    received.ParseFromString(whole_wire);
    Result<Plan> parsed = PlanPartFromProto(received, n - 1);
    whole_costs.parse_s = SecondsSince(start);
    if (!parsed.ok()) return 1;
    start = std::chrono::steady_clock::now();
    const v1::Plan copy = whole;
    whole_costs.copy_s = SecondsSince(start);
    static_cast<void>(copy);
    start = std::chrono::steady_clock::now();
    size_t sliced_at_source = 0;
    for (int child : ControlChildren(0, n, k)) {
      sliced_at_source += SlicePlan(whole, ControlSubtree(child, n, k)).ByteSizeLong();
    }
    const double source_cut_s = SecondsSince(start);
    const std::vector<Level> levels = MeasureLevels(whole, k);
    const size_t star = whole_wire.size() * static_cast<size_t>(n - 1);
    const size_t tree_whole = whole_wire.size() * std::min<size_t>(k, n - 1);
    const double prepare_whole_s = PrepareLatency(levels, k, options, &whole_costs);
    const double prepare_sliced_s = PrepareLatency(levels, k, options, nullptr);
    const size_t detail = static_cast<size_t>(n - 1) * 60;
    if (options.json) {
      std::printf("%s\n{\"members\": %d, \"depth\": %zu, \"star_prepare_bytes\": %zu, \"tree_whole_prepare_bytes\": %zu, "
                  "\"tree_sliced_prepare_bytes\": %zu, \"whole_plan_bytes\": %zu, \"whole_parse_s\": %.6f, "
                  "\"source_cut_s\": %.6f, \"prepare_latency_whole_s\": %.6f, \"prepare_latency_sliced_s\": %.6f, "
                  "\"final_detail_bytes\": %zu, \"calls_at_source_per_round\": %d, \"levels\": [",
                  first ? "" : ",", n, levels.size(), star, tree_whole, sliced_at_source, whole_wire.size(),
                  whole_costs.parse_s, source_cut_s, prepare_whole_s, prepare_sliced_s, detail, std::min(k, n - 1));
      for (size_t i = 0; i < levels.size(); ++i) {
        const Level& l = levels[i];
        std::printf("%s{\"depth\": %d, \"members\": %d, \"slice_bytes_max\": %zu, \"slice_bytes_mean\": %zu, "
                    "\"cut_s\": %.6f, \"parse_s\": %.6f}",
                    i == 0 ? "" : ", ", l.depth, l.members, l.slice_bytes_max, l.slice_bytes_mean, l.cut_s, l.parse_s);
      }
      std::printf("]}");
    } else {
      std::printf("%8d %5zu | %12zu %12zu %12zu | %10zu %10zu %10zu | %9.2f %9.2f %9.2f | %8.3f %8.3f | %10zu\n", n,
                  levels.size(), star, tree_whole, sliced_at_source, levels.front().slice_bytes_max,
                  levels.back().slice_bytes_mean, whole_wire.size(), source_cut_s * 1e3, levels.front().parse_s * 1e3,
                  whole_costs.parse_s * 1e3, prepare_whole_s, prepare_sliced_s, detail);
    }
    std::fflush(stdout);
    first = false;
  }
  if (options.json) std::printf("\n]\n");
  return 0;
}

}  // namespace
}  // namespace gridcast

int main(int argc, char** argv) {
  gridcast::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--members") {
      options.members = gridcast::ParseList(value());
    } else if (arg == "--fanout") {
      options.fanout = std::atoi(value().c_str());
    } else if (arg == "--size") {
      options.payload_bytes = std::strtoull(value().c_str(), nullptr, 10);
    } else if (arg == "--chunk") {
      options.chunk_bytes = std::strtoull(value().c_str(), nullptr, 10);
    } else if (arg == "--link") {
      options.link_bps = std::atof(value().c_str());
    } else if (arg == "--rtt") {
      options.rtt_s = std::atof(value().c_str());
    } else if (arg == "--json") {
      options.json = true;
    } else {
      std::fprintf(stderr, "unknown argument %s (see the comment at the top of bench/control_plane_scale.cc)\n",
                   arg.c_str());
      return 2;
    }
  }
  if (options.fanout < 1 || options.chunk_bytes == 0 || options.payload_bytes == 0 || options.link_bps <= 0) {
    std::fprintf(stderr, "fanout, size, chunk and link must be positive\n");
    return 2;
  }
  return gridcast::Run(options);
}
