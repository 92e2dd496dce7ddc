// DaemonCounters: what this gridcastd has done since it started — bytes per peer, chunks
// verified, refused and resent, plans ended by mode and outcome, resumes, control calls by
// method and code. The data plane, the BitTorrent session, the Participant and the control
// service count into it; the metrics exporter (metrics_exporter.h) reads it on a scrape.
//
// Counting is a relaxed atomic add on the data path (once per chunk or per 16 KiB block), so
// the counters cost nothing worth measuring whether or not anyone scrapes them. They only grow:
// what a plan did stays counted after the plan is forgotten.
// Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "collectives/plan.h"

namespace gridcast {

// How payload bytes travel: gridcast's own framed TCP (push lanes) or BitTorrent (pull and
// hybrid swarms).
enum class Transport { kPush = 0, kBitTorrent = 1 };
inline constexpr int kTransports = 2;
const char* TransportName(Transport transport);

struct PeerTraffic {
  std::atomic<uint64_t> sent_bytes{0};
  std::atomic<uint64_t> received_bytes{0};
};

// How a plan ended at this member.
enum class PlanOutcome { kFinished = 0, kFailed = 1, kStopped = 2 };
inline constexpr int kPlanOutcomes = 3;
const char* PlanOutcomeName(PlanOutcome outcome);

class DaemonCounters {
 public:
  // Peers beyond this many share the entry named kOtherPeers: a plan's member names are
  // input from its source, and a scrape stays small whatever plans arrive.
  static constexpr size_t kMaxPeers = 4096;
  static constexpr const char* kOtherPeers = "(other)";

  // The counters of the bytes exchanged with `peer` over `transport`; the reference stays valid
  // as long as this object (look it up once per connection, not per chunk).
  PeerTraffic& Peer(const std::string& peer, Transport transport);

  void ChunkVerified(Transport transport) { verified_[static_cast<int>(transport)].fetch_add(1, kRelaxed); }
  // A chunk whose bytes did not match its hash (not written as good).
  void ChunkRefused(Transport transport) { refused_[static_cast<int>(transport)].fetch_add(1, kRelaxed); }
  // A chunk sent again to a child that had been sent it before (refused, or lost with a
  // connection).
  void ChunkResent() { resent_.fetch_add(1, kRelaxed); }
  void PlanEnded(PlanMode mode, PlanOutcome outcome);
  // A plan prepared here over a store an earlier attempt had verified chunks of.
  void ResumeBegun() { resumes_.fetch_add(1, kRelaxed); }
  // Chunks of such a store held again (at Prepare, or as their digests arrive).
  void ChunksResumed(uint64_t chunks) { resumed_chunks_.fetch_add(chunks, kRelaxed); }
  // A plan prepared here over an earlier copy of the payload from which it took `bytes`.
  void Reused(uint64_t bytes) { reused_bytes_.fetch_add(bytes, kRelaxed); }
  // One control call answered with `code` (gRPC's numbering).
  void ControlCall(const std::string& method, int code);

  struct PeerRow {
    std::string peer;
    Transport transport;
    uint64_t sent_bytes, received_bytes;
  };
  struct Snapshot {
    std::vector<PeerRow> peers;
    std::array<uint64_t, kTransports> chunks_verified{}, chunks_refused{};
    uint64_t chunks_resent = 0;
    // [mode - 1][outcome]
    std::array<std::array<uint64_t, kPlanOutcomes>, kPlanModes> plans_ended{};
    uint64_t resumes = 0, resumed_chunks = 0, reused_bytes = 0;
    std::map<std::pair<std::string, int>, uint64_t> control_calls;  // (method, code)
  };
  Snapshot Read() const;

 private:
  static constexpr auto kRelaxed = std::memory_order_relaxed;

  mutable std::mutex mutex_;
  std::map<std::pair<std::string, Transport>, std::unique_ptr<PeerTraffic>> peers_;  // guarded by mutex_
  std::map<std::pair<std::string, int>, uint64_t> control_calls_;                    // guarded by mutex_
  std::array<std::atomic<uint64_t>, kTransports> verified_{}, refused_{};
  std::atomic<uint64_t> resent_{0};
  std::array<std::array<std::atomic<uint64_t>, kPlanOutcomes>, kPlanModes> plans_ended_{};
  std::atomic<uint64_t> resumes_{0}, resumed_chunks_{0}, reused_bytes_{0};
};

}  // namespace gridcast
