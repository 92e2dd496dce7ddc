#include "daemon/metrics/daemon_counters.h"

namespace gridcast {

const char* TransportName(Transport transport) {
  switch (transport) {
    case Transport::kPush: return "push";
    case Transport::kBitTorrent: return "bittorrent";
  }
  return "unknown";
}

const char* PlanOutcomeName(PlanOutcome outcome) {
  switch (outcome) {
    case PlanOutcome::kFinished: return "finished";
    case PlanOutcome::kFailed: return "failed";
    case PlanOutcome::kStopped: return "stopped";
  }
  return "unknown";
}

PeerTraffic& DaemonCounters::Peer(const std::string& peer, Transport transport) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_pair(peer, transport);
  auto it = peers_.find(key);
  if (it == peers_.end()) {
    if (peers_.size() >= kMaxPeers) key.first = kOtherPeers;
    it = peers_.try_emplace(std::move(key), std::make_unique<PeerTraffic>()).first;
  }
  return *it->second;
}

void DaemonCounters::PlanEnded(PlanMode mode, PlanOutcome outcome) {
  plans_ended_[PlanModeIndex(mode)][static_cast<int>(outcome)].fetch_add(1, kRelaxed);
}

void DaemonCounters::ControlCall(const std::string& method, int code) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++control_calls_[{method, code}];
}

DaemonCounters::Snapshot DaemonCounters::Read() const {
  Snapshot s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [key, traffic] : peers_) {
      s.peers.push_back({key.first, key.second, traffic->sent_bytes.load(kRelaxed), traffic->received_bytes.load(kRelaxed)});
    }
    s.control_calls = control_calls_;
  }
  for (int t = 0; t < kTransports; ++t) {
    s.chunks_verified[t] = verified_[t].load(kRelaxed);
    s.chunks_refused[t] = refused_[t].load(kRelaxed);
  }
  s.chunks_resent = resent_.load(kRelaxed);
  for (size_t m = 0; m < kPlanModes; ++m) {
    for (int o = 0; o < kPlanOutcomes; ++o) s.plans_ended[m][o] = plans_ended_[m][o].load(kRelaxed);
  }
  s.resumes = resumes_.load(kRelaxed);
  s.resumed_chunks = resumed_chunks_.load(kRelaxed);
  s.reused_bytes = reused_bytes_.load(kRelaxed);
  return s;
}

}  // namespace gridcast
