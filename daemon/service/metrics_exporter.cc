#include "daemon/service/metrics_exporter.h"

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>
#include <sys/statvfs.h>

#include <array>
#include <exception>
#include <map>
#include <utility>
#include <vector>

#include "cluster/cluster_file.h"
#include "common/build_info.h"
#include "common/hex.h"

namespace gridcast {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

const char* GrpcCodeName(int code) {
  static constexpr std::array<const char*, 17> kNames = {
      "OK",          "CANCELLED",       "UNKNOWN",       "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
      "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
      "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",     "UNAVAILABLE",      "DATA_LOSS",         "UNAUTHENTICATED"};
  return code >= 0 && code < static_cast<int>(kNames.size()) ? kNames[code] : "UNKNOWN";
}

// Builds the families of one exposition; a family keeps the order its series were added in.
class Exposition {
 public:
  void Add(const std::string& name, MetricType type, const std::string& help,
           std::vector<prometheus::ClientMetric::Label> labels, double value) {
    auto [it, added] = index_.try_emplace(name, families_.size());
    if (added) families_.push_back(MetricFamily{name, help, type, {}});
    ClientMetric metric;
    metric.label = std::move(labels);
    if (type == MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    families_[it->second].metric.push_back(std::move(metric));
  }
  // A family with no series yet still says what it is (a fresh daemon has no peers).
  void Declare(const std::string& name, MetricType type, const std::string& help) {
    if (index_.try_emplace(name, families_.size()).second) families_.push_back(MetricFamily{name, help, type, {}});
  }
  std::vector<MetricFamily> Take() { return std::move(families_); }

 private:
  std::vector<MetricFamily> families_;
  std::map<std::string, size_t> index_;
};

constexpr MetricType kCounter = MetricType::Counter;
constexpr MetricType kGauge = MetricType::Gauge;

void AddCounters(const DaemonCounters::Snapshot& c, Exposition& out) {
  // Which build answers: 1, labelled (Prometheus' usual info series), to compare nodes after an upgrade.
  out.Add("gridcast_build_info", kGauge, "The gridcastd build: version, commit, build type",
          {{"version", std::string(BuildVersionNumber())},
           {"commit", std::string(BuildCommit())},
           {"build_type", std::string(BuildType())}},
          1);
  out.Declare("gridcast_peer_sent_bytes_total", kCounter, "Payload bytes sent to a peer");
  out.Declare("gridcast_peer_received_bytes_total", kCounter, "Payload bytes received from a peer");
  for (const DaemonCounters::PeerRow& row : c.peers) {
    std::vector<ClientMetric::Label> labels = {{"peer", row.peer}, {"transport", TransportName(row.transport)}};
    out.Add("gridcast_peer_sent_bytes_total", kCounter, "", labels, static_cast<double>(row.sent_bytes));
    out.Add("gridcast_peer_received_bytes_total", kCounter, "", labels, static_cast<double>(row.received_bytes));
  }
  for (int t = 0; t < kTransports; ++t) {
    const std::vector<ClientMetric::Label> labels = {{"transport", TransportName(static_cast<Transport>(t))}};
    out.Add("gridcast_chunks_verified_total", kCounter, "Chunks received and verified against their hash", labels,
            static_cast<double>(c.chunks_verified[t]));
    out.Add("gridcast_chunks_refused_total", kCounter, "Chunks received whose bytes did not match their hash", labels,
            static_cast<double>(c.chunks_refused[t]));
  }
  out.Add("gridcast_chunks_resent_total", kCounter,
          "Chunks sent again to a child (it refused them, or a connection was lost with them)", {},
          static_cast<double>(c.chunks_resent));
  static constexpr std::array<std::pair<const char*, const char*>, kPlanOutcomes> kEnded = {{
      {"gridcast_broadcasts_finished_total", "Plans this member completed, verified"},
      {"gridcast_broadcasts_failed_total", "Plans that failed at this member"},
      {"gridcast_broadcasts_stopped_total", "Plans stopped before completing (cancelled, or given up by their source)"},
  }};
  for (int o = 0; o < kPlanOutcomes; ++o) {
    for (size_t m = 0; m < kPlanModes; ++m) {
      out.Add(kEnded[o].first, kCounter, kEnded[o].second, {{"mode", kPlanModeRows[m].name}},
              static_cast<double>(c.plans_ended[m][o]));
    }
  }
  out.Add("gridcast_resumes_total", kCounter, "Plans prepared over a partial copy (resumed, not started over)", {},
          static_cast<double>(c.resumes));
  out.Add("gridcast_resumed_chunks_total", kCounter, "Verified chunks found at those resumes", {},
          static_cast<double>(c.resumed_chunks));
  out.Add("gridcast_reused_bytes_total", kCounter,
          "Payload bytes taken at Prepare from earlier copies held here instead of received", {},
          static_cast<double>(c.reused_bytes));
  out.Declare("gridcast_control_calls_total", kCounter, "Control calls answered, by method and gRPC code");
  for (const auto& [key, count] : c.control_calls) {
    out.Add("gridcast_control_calls_total", kCounter, "", {{"method", key.first}, {"code", GrpcCodeName(key.second)}},
            static_cast<double>(count));
  }
}

void AddPlans(const Participant& participant, Exposition& out) {
  std::array<int, kPlanModes> active{};
  out.Declare("gridcast_plan_sent_bytes_total", kCounter, "Payload bytes this member sent in a plan it holds");
  out.Declare("gridcast_plan_received_bytes_total", kCounter, "Payload bytes this member received in a plan it holds");
  out.Declare("gridcast_plan_chunks", kGauge, "Chunks in a plan's payload");
  out.Declare("gridcast_plan_chunks_verified", kGauge, "Chunks of a plan's payload this member holds, verified");
  out.Declare("gridcast_plan_progress_ratio", kGauge, "Share of a plan's payload this member holds, verified");
  for (const RunningPlans::Named& held : participant.plans().AllNamed()) {
    const PlanRun& run = held.run;
    const ExecutionSnapshot snapshot = run.Snapshot();
    const PlanTraffic traffic = TrafficOf(snapshot, run.Swarm());
    if (snapshot.state == ExecutionState::kPrepared || snapshot.state == ExecutionState::kRunning) {
      ++active[PlanModeIndex(run.mode())];
    }
    const std::vector<ClientMetric::Label> labels = {{"plan", ToHex(run.id())},
                                                     {"payload", held.payload.name},
                                                     {"mode", PlanModeName(run.mode())},
                                                     {"role", run.IsSource() ? "source" : "member"}};
    out.Add("gridcast_plan_sent_bytes_total", kCounter, "", labels, static_cast<double>(traffic.sent_bytes));
    out.Add("gridcast_plan_received_bytes_total", kCounter, "", labels, static_cast<double>(traffic.received_bytes));
    out.Add("gridcast_plan_chunks", kGauge, "", labels, static_cast<double>(snapshot.chunks_total));
    out.Add("gridcast_plan_chunks_verified", kGauge, "", labels, static_cast<double>(snapshot.chunks_done));
    out.Add("gridcast_plan_progress_ratio", kGauge, "", labels,
            snapshot.chunks_total == 0 ? 1.0
                                       : static_cast<double>(snapshot.chunks_done) /
                                             static_cast<double>(snapshot.chunks_total));
  }
  for (size_t m = 0; m < kPlanModes; ++m) {
    out.Add("gridcast_broadcasts_active", kGauge, "Plans prepared or running at this member",
            {{"mode", kPlanModeRows[m].name}}, active[m]);
  }
}

void AddStore(const Participant& participant, Exposition& out) {
  // [in_memory][complete]
  std::array<std::array<double, 2>, 2> bytes{}, payloads{};
  const v1::ListResponse listed = participant.holdings().List(/*verify=*/false);
  for (const v1::HeldPayload& held : listed.payloads()) {
    bytes[held.in_memory()][held.complete()] += static_cast<double>(held.size_bytes());
    payloads[held.in_memory()][held.complete()] += 1;
  }
  for (int memory = 0; memory < 2; ++memory) {
    const char* dir = memory ? "memory" : "data";
    for (int complete = 0; complete < 2; ++complete) {
      const std::vector<ClientMetric::Label> labels = {{"dir", dir}, {"complete", complete ? "true" : "false"}};
      out.Add("gridcast_store_bytes", kGauge, "Size of the payloads held (partial ones at their full size)", labels,
              bytes[memory][complete]);
      out.Add("gridcast_store_payloads", kGauge, "Payloads held", labels, payloads[memory][complete]);
    }
    struct statvfs fs {};
    if (statvfs(participant.directories().Of(memory != 0).c_str(), &fs) == 0) {
      out.Add("gridcast_store_free_bytes", kGauge, "Bytes free to this user on the directory's filesystem",
              {{"dir", dir}}, static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize));
    }
  }
}

std::vector<MetricFamily> Collect(const Participant& participant, const DaemonCounters& counters) {
  Exposition out;
  AddCounters(counters.Read(), out);
  AddPlans(participant, out);
  AddStore(participant, out);
  return out.Take();
}

class DaemonCollectable final : public prometheus::Collectable {
 public:
  DaemonCollectable(const Participant& participant, const DaemonCounters& counters) : participant_(participant), counters_(counters) {}
  std::vector<MetricFamily> Collect() const override { return gridcast::Collect(participant_, counters_); }

 private:
  const Participant& participant_;
  const DaemonCounters& counters_;
};

}  // namespace

std::string MetricsText(const Participant& participant, const DaemonCounters& counters) {
  return prometheus::TextSerializer().Serialize(Collect(participant, counters));
}

struct MetricsExporter::Impl {
  std::shared_ptr<DaemonCollectable> collectable;
  std::unique_ptr<prometheus::Exposer> exposer;
};

Result<std::unique_ptr<MetricsExporter>> MetricsExporter::Start(const std::string& address, const Participant& participant,
                                                                const DaemonCounters& counters) {
  GRIDCAST_RETURN_IF_ERROR(SplitHostPort(address, /*any_port=*/true).status().WithContext("--metrics"));
  auto impl = std::make_unique<Impl>();
  impl->collectable = std::make_shared<DaemonCollectable>(participant, counters);
  try {
    // One thread: scrapes come every few seconds, one at a time.
    impl->exposer = std::make_unique<prometheus::Exposer>(address, 1);
  } catch (const std::exception& e) {
    return Status::Unavailable("cannot serve metrics on " + address + ": " + e.what());
  }
  impl->exposer->RegisterCollectable(impl->collectable);
  const std::vector<int> ports = impl->exposer->GetListeningPorts();
  const auto port = static_cast<uint16_t>(ports.empty() ? 0 : ports.front());
  return std::unique_ptr<MetricsExporter>(new MetricsExporter(std::move(impl), port));
}

MetricsExporter::MetricsExporter(std::unique_ptr<Impl> impl, uint16_t port) : impl_(std::move(impl)), port_(port) {}

MetricsExporter::~MetricsExporter() = default;

}  // namespace gridcast
