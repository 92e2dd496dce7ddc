// Observations: what one pull broadcast (BitTorrent, libtorrent) showed about the network, as
// recorded by every receiver per sender, and its JSON form (the file the daemon writes and
// `gridcast tomography` reads).
//
// `members` lists every participant of the broadcast, the source included; every `from` and
// `to` of a pair names a member. Times are seconds since the broadcast started. A pair's
// `bytes_per_bin[k]` holds the bytes received in [k * bin_s, (k + 1) * bin_s) and sums to
// `bytes` (an empty list means the recorder kept no timing for that pair).
//
// Pure functions on values; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "include/gridcast/result.h"

namespace gridcast {

// libtorrent requests pieces in 16 KiB blocks; only a payload's last block may be shorter.
inline constexpr uint64_t kObservationBlockBytes = 16 * 1024;

// Bytes `to` received from `from` during one broadcast.
struct PairObservation {
  std::string from, to;
  uint64_t bytes = 0;  // payload bytes in blocks received from `from`
  uint64_t blocks = 0;
  double first_s = 0, last_s = 0;       // first/last block
  std::vector<uint64_t> bytes_per_bin;  // bytes received in [k*bin_s, (k+1)*bin_s)

  friend bool operator==(const PairObservation&, const PairObservation&) = default;
};

struct MemberObservation {
  std::string name;
  double start_s = 0, finish_s = 0;
  uint64_t bytes_received = 0;
  bool complete = false;

  friend bool operator==(const MemberObservation&, const MemberObservation&) = default;
};

// One broadcast.
struct Observations {
  std::string source;
  uint64_t payload_bytes = 0, piece_bytes = 0;
  double bin_s = 0.25;
  std::vector<MemberObservation> members;
  std::vector<PairObservation> pairs;

  friend bool operator==(const Observations&, const Observations&) = default;
};

// Checks everything ObservationsFromJson() checks, for observations built in memory.
// Errors: InvalidArgument naming the field, e.g. "pairs[3].last_s: 1.5 is before first_s 2".
Status ValidateObservations(const Observations& observations);

// {"version":1,"source":...,"members":[...],"pairs":[...]}; doubles keep full precision, so
// ObservationsFromJson() gives back an equal value.
std::string ObservationsToJson(const Observations& observations);
// The same for several runs: a JSON array of the objects above.
std::string ObservationRunsToJson(const std::vector<Observations>& runs);

// Parses and validates one object. Errors: InvalidArgument for malformed JSON (with the byte
// offset), missing, mistyped or unknown fields, and every check of ValidateObservations().
Result<Observations> ObservationsFromJson(std::string_view json_text);
// Accepts one object (one run) or an array of objects (several runs); errors name the run
// ("runs[2].pairs[0].from: ...").
Result<std::vector<Observations>> ObservationRunsFromJson(std::string_view json_text);

}  // namespace gridcast
