// MetricsExporter: gridcastd --metrics ADDR serves the Prometheus text format at
// http://ADDR/metrics. Each scrape reads what happened from DaemonCounters and what runs and
// is held from the Participant; nothing is sampled in between, so a scrape is exact at its
// moment and costs nothing when nobody scrapes. prometheus-cpp's headers stay in the .cc.
//
// The series (docs/operations.md, "Metrics", has the list with alert examples):
//   gridcast_peer_{sent,received}_bytes_total{peer,transport}
//   gridcast_plan_{sent,received}_bytes_total{plan,payload,mode,role}, gridcast_plan_chunks{...},
//   gridcast_plan_chunks_verified{...}, gridcast_plan_progress_ratio{...}
//   gridcast_chunks_{verified,refused}_total{transport}, gridcast_chunks_resent_total
//   gridcast_broadcasts_active{mode}, gridcast_broadcasts_{finished,failed,stopped}_total{mode}
//   gridcast_resumes_total, gridcast_resumed_chunks_total, gridcast_reused_bytes_total
//   gridcast_store_bytes{dir,complete}, gridcast_store_payloads{dir,complete}, gridcast_store_free_bytes{dir}
//   gridcast_control_calls_total{method,code}
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "include/gridcast/result.h"
#include "daemon/metrics/daemon_counters.h"
#include "daemon/participant/participant.h"

namespace gridcast {

// The whole exposition, as a scrape of `participant` and `counters` would return it.
std::string MetricsText(const Participant& participant, const DaemonCounters& counters);

class MetricsExporter {
 public:
  // Listens on `address` ("ip:port"; port 0 takes a free one). Unavailable when it cannot.
  // `participant` and `counters` must outlive the exporter.
  static Result<std::unique_ptr<MetricsExporter>> Start(const std::string& address, const Participant& participant,
                                                        const DaemonCounters& counters);
  ~MetricsExporter();
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  uint16_t port() const { return port_; }

 private:
  struct Impl;
  explicit MetricsExporter(std::unique_ptr<Impl> impl, uint16_t port);
  std::unique_ptr<Impl> impl_;
  uint16_t port_;
};

}  // namespace gridcast
