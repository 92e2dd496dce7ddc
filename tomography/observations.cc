#include "tomography/observations.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace gridcast {
namespace {

using Json = nlohmann::json;

constexpr int kVersion = 1;

std::string Number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

Status Invalid(const std::string& field, const std::string& message) {
  return Status::InvalidArgument(field + ": " + message);
}

Status CheckTime(const std::string& field, double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) {
    return Invalid(field, Number(seconds) + " must be a finite number of seconds >= 0");
  }
  return Status::Ok();
}

Status ValidateMembers(const Observations& obs, std::set<std::string>& names) {
  if (obs.members.empty()) return Invalid("members", "empty: a broadcast has at least its source");
  for (size_t i = 0; i < obs.members.size(); ++i) {
    const MemberObservation& m = obs.members[i];
    const std::string field = "members[" + std::to_string(i) + "]";
    if (m.name.empty()) return Invalid(field + ".name", "empty");
    if (!names.insert(m.name).second) return Invalid(field + ".name", "duplicate '" + m.name + "'");
    GRIDCAST_RETURN_IF_ERROR(CheckTime(field + ".start_s", m.start_s));
    GRIDCAST_RETURN_IF_ERROR(CheckTime(field + ".finish_s", m.finish_s));
    if (m.finish_s < m.start_s) {
      return Invalid(field + ".finish_s",
                     Number(m.finish_s) + " is before start_s " + Number(m.start_s));
    }
  }
  if (!names.count(obs.source)) {
    return Invalid("source", "'" + obs.source + "' is not one of the members");
  }
  return Status::Ok();
}

Status ValidatePair(const PairObservation& p, const std::string& field,
                    const std::set<std::string>& names) {
  if (!names.count(p.from)) return Invalid(field + ".from", "unknown member '" + p.from + "'");
  if (!names.count(p.to)) return Invalid(field + ".to", "unknown member '" + p.to + "'");
  if (p.from == p.to) return Invalid(field + ".to", "'" + p.to + "' cannot receive from itself");
  GRIDCAST_RETURN_IF_ERROR(CheckTime(field + ".first_s", p.first_s));
  GRIDCAST_RETURN_IF_ERROR(CheckTime(field + ".last_s", p.last_s));
  if (p.last_s < p.first_s) {
    return Invalid(field + ".last_s", Number(p.last_s) + " is before first_s " + Number(p.first_s));
  }
  if ((p.bytes == 0) != (p.blocks == 0)) {
    return Invalid(field + ".blocks", std::to_string(p.blocks) + " blocks do not fit " +
                                          std::to_string(p.bytes) + " bytes");
  }
  if (p.blocks > p.bytes || p.bytes / kObservationBlockBytes > p.blocks ||
      (p.bytes / kObservationBlockBytes == p.blocks && p.bytes % kObservationBlockBytes != 0)) {
    return Invalid(field + ".bytes", std::to_string(p.bytes) + " bytes do not fit in " +
                                         std::to_string(p.blocks) + " blocks of 16 KiB");
  }
  if (!p.bytes_per_bin.empty()) {
    uint64_t sum = 0;
    for (uint64_t b : p.bytes_per_bin) {
      if (b > p.bytes - sum) {
        return Invalid(field + ".bytes_per_bin",
                       "sums to more than bytes " + std::to_string(p.bytes));
      }
      sum += b;
    }
    if (sum != p.bytes) {
      return Invalid(field + ".bytes_per_bin",
                     "sums to " + std::to_string(sum) + ", not bytes " + std::to_string(p.bytes));
    }
  }
  return Status::Ok();
}

// --- JSON reading: every accessor names the field it failed on. ---

std::string Path(const std::string& field, const char* key) {
  return field.empty() ? key : field + "." + key;
}

Status CheckKeys(const Json& object, const std::string& field,
                 std::initializer_list<const char*> keys) {
  if (!object.is_object()) {
    return Invalid(field.empty() ? "observations" : field, "expected a JSON object");
  }
  std::set<std::string> allowed(keys.begin(), keys.end());
  for (const auto& [key, value] : object.items()) {
    if (!allowed.count(key)) return Invalid(Path(field, key.c_str()), "unknown field");
  }
  for (const char* key : keys) {
    if (!object.contains(key)) return Invalid(Path(field, key), "missing");
  }
  return Status::Ok();
}

Result<std::string> GetString(const Json& object, const std::string& field, const char* key) {
  const Json& value = object.at(key);
  if (!value.is_string()) return Invalid(Path(field, key), "expected a string");
  return value.get<std::string>();
}

Result<uint64_t> ToUint(const Json& value, const std::string& field) {
  if (!value.is_number_unsigned()) {
    return Invalid(field, "expected an integer >= 0, got " + value.dump());
  }
  return value.get<uint64_t>();
}

Result<uint64_t> GetUint(const Json& object, const std::string& field, const char* key) {
  return ToUint(object.at(key), Path(field, key));
}

Result<double> GetDouble(const Json& object, const std::string& field, const char* key) {
  const Json& value = object.at(key);
  if (!value.is_number())
    return Invalid(Path(field, key), "expected a number, got " + value.dump());
  return value.get<double>();
}

Result<bool> GetBool(const Json& object, const std::string& field, const char* key) {
  const Json& value = object.at(key);
  if (!value.is_boolean()) return Invalid(Path(field, key), "expected true or false");
  return value.get<bool>();
}

Result<const Json*> GetArray(const Json& object, const std::string& field, const char* key) {
  const Json& value = object.at(key);
  if (!value.is_array()) return Invalid(Path(field, key), "expected a list");
  return &value;
}

Result<MemberObservation> MemberFromJson(const Json& j, const std::string& field) {
  GRIDCAST_RETURN_IF_ERROR(
      CheckKeys(j, field, {"name", "start_s", "finish_s", "bytes_received", "complete"}));
  MemberObservation m;
  GRIDCAST_ASSIGN_OR_RETURN(m.name, GetString(j, field, "name"));
  GRIDCAST_ASSIGN_OR_RETURN(m.start_s, GetDouble(j, field, "start_s"));
  GRIDCAST_ASSIGN_OR_RETURN(m.finish_s, GetDouble(j, field, "finish_s"));
  GRIDCAST_ASSIGN_OR_RETURN(m.bytes_received, GetUint(j, field, "bytes_received"));
  GRIDCAST_ASSIGN_OR_RETURN(m.complete, GetBool(j, field, "complete"));
  return m;
}

Result<PairObservation> PairFromJson(const Json& j, const std::string& field) {
  GRIDCAST_RETURN_IF_ERROR(
      CheckKeys(j, field, {"from", "to", "bytes", "blocks", "first_s", "last_s", "bytes_per_bin"}));
  PairObservation p;
  GRIDCAST_ASSIGN_OR_RETURN(p.from, GetString(j, field, "from"));
  GRIDCAST_ASSIGN_OR_RETURN(p.to, GetString(j, field, "to"));
  GRIDCAST_ASSIGN_OR_RETURN(p.bytes, GetUint(j, field, "bytes"));
  GRIDCAST_ASSIGN_OR_RETURN(p.blocks, GetUint(j, field, "blocks"));
  GRIDCAST_ASSIGN_OR_RETURN(p.first_s, GetDouble(j, field, "first_s"));
  GRIDCAST_ASSIGN_OR_RETURN(p.last_s, GetDouble(j, field, "last_s"));
  GRIDCAST_ASSIGN_OR_RETURN(const Json* bins, GetArray(j, field, "bytes_per_bin"));
  p.bytes_per_bin.reserve(bins->size());
  for (size_t k = 0; k < bins->size(); ++k) {
    GRIDCAST_ASSIGN_OR_RETURN(
        uint64_t b, ToUint((*bins)[k], field + ".bytes_per_bin[" + std::to_string(k) + "]"));
    p.bytes_per_bin.push_back(b);
  }
  return p;
}

// `field` prefixes every error: "" for a single run, "runs[2]" inside an array.
Result<Observations> RunFromJson(const Json& j, const std::string& field) {
  GRIDCAST_RETURN_IF_ERROR(CheckKeys(
      j, field,
      {"version", "source", "payload_bytes", "piece_bytes", "bin_s", "members", "pairs"}));
  GRIDCAST_ASSIGN_OR_RETURN(uint64_t version, GetUint(j, field, "version"));
  if (version != kVersion) {
    return Invalid(
        Path(field, "version"),
        std::to_string(version) + " is not supported (expected " + std::to_string(kVersion) + ")");
  }
  Observations obs;
  GRIDCAST_ASSIGN_OR_RETURN(obs.source, GetString(j, field, "source"));
  GRIDCAST_ASSIGN_OR_RETURN(obs.payload_bytes, GetUint(j, field, "payload_bytes"));
  GRIDCAST_ASSIGN_OR_RETURN(obs.piece_bytes, GetUint(j, field, "piece_bytes"));
  GRIDCAST_ASSIGN_OR_RETURN(obs.bin_s, GetDouble(j, field, "bin_s"));
  GRIDCAST_ASSIGN_OR_RETURN(const Json* members, GetArray(j, field, "members"));
  for (size_t i = 0; i < members->size(); ++i) {
    GRIDCAST_ASSIGN_OR_RETURN(
        MemberObservation m,
        MemberFromJson((*members)[i], Path(field, "members") + "[" + std::to_string(i) + "]"));
    obs.members.push_back(std::move(m));
  }
  GRIDCAST_ASSIGN_OR_RETURN(const Json* pairs, GetArray(j, field, "pairs"));
  for (size_t i = 0; i < pairs->size(); ++i) {
    GRIDCAST_ASSIGN_OR_RETURN(
        PairObservation p,
        PairFromJson((*pairs)[i], Path(field, "pairs") + "[" + std::to_string(i) + "]"));
    obs.pairs.push_back(std::move(p));
  }
  Status valid = ValidateObservations(obs);
  if (valid.ok()) return obs;
  if (field.empty()) return valid;
  return Status::InvalidArgument(field + "." + valid.message());
}

Result<Json> Parse(std::string_view json_text) {
  try {
    return Json::parse(json_text);
  } catch (const Json::parse_error& e) {
    return Status::InvalidArgument("malformed JSON at byte " + std::to_string(e.byte) + ": " +
                                   e.what());
  } catch (const Json::exception& e) {  // e.g. out_of_range: a number beyond a double (4e444)
    return Status::InvalidArgument(std::string("malformed JSON: ") + e.what());
  }
}

Json RunToJson(const Observations& obs) {
  Json members = Json::array();
  for (const MemberObservation& m : obs.members) {
    members.push_back({{"name", m.name},
                       {"start_s", m.start_s},
                       {"finish_s", m.finish_s},
                       {"bytes_received", m.bytes_received},
                       {"complete", m.complete}});
  }
  Json pairs = Json::array();
  for (const PairObservation& p : obs.pairs) {
    pairs.push_back({{"from", p.from},
                     {"to", p.to},
                     {"bytes", p.bytes},
                     {"blocks", p.blocks},
                     {"first_s", p.first_s},
                     {"last_s", p.last_s},
                     {"bytes_per_bin", p.bytes_per_bin}});
  }
  return Json{{"version", kVersion},
              {"source", obs.source},
              {"payload_bytes", obs.payload_bytes},
              {"piece_bytes", obs.piece_bytes},
              {"bin_s", obs.bin_s},
              {"members", std::move(members)},
              {"pairs", std::move(pairs)}};
}

}  // namespace

Status ValidateObservations(const Observations& obs) {
  if (obs.source.empty()) return Invalid("source", "empty");
  if (obs.payload_bytes == 0) return Invalid("payload_bytes", "must be > 0");
  if (obs.piece_bytes == 0) return Invalid("piece_bytes", "must be > 0");
  if (!std::isfinite(obs.bin_s) || obs.bin_s <= 0) {
    return Invalid("bin_s", Number(obs.bin_s) + " must be a finite number of seconds > 0");
  }
  std::set<std::string> names;
  GRIDCAST_RETURN_IF_ERROR(ValidateMembers(obs, names));
  std::map<std::pair<std::string, std::string>, size_t> seen;
  for (size_t i = 0; i < obs.pairs.size(); ++i) {
    const PairObservation& p = obs.pairs[i];
    const std::string field = "pairs[" + std::to_string(i) + "]";
    GRIDCAST_RETURN_IF_ERROR(ValidatePair(p, field, names));
    auto [it, inserted] = seen.emplace(std::make_pair(p.from, p.to), i);
    if (!inserted) {
      return Invalid(field, "duplicate pair from '" + p.from + "' to '" + p.to + "' (also pairs[" +
                                std::to_string(it->second) + "])");
    }
  }
  return Status::Ok();
}

std::string ObservationsToJson(const Observations& observations) {
  return RunToJson(observations).dump();
}

std::string ObservationRunsToJson(const std::vector<Observations>& runs) {
  Json array = Json::array();
  for (const Observations& run : runs) array.push_back(RunToJson(run));
  return array.dump();
}

Result<Observations> ObservationsFromJson(std::string_view json_text) {
  GRIDCAST_ASSIGN_OR_RETURN(Json j, Parse(json_text));
  return RunFromJson(j, "");
}

Result<std::vector<Observations>> ObservationRunsFromJson(std::string_view json_text) {
  GRIDCAST_ASSIGN_OR_RETURN(Json j, Parse(json_text));
  std::vector<Observations> runs;
  if (!j.is_array()) {
    GRIDCAST_ASSIGN_OR_RETURN(Observations run, RunFromJson(j, ""));
    runs.push_back(std::move(run));
    return runs;
  }
  if (j.empty()) return Status::InvalidArgument("runs: empty list (expected at least one run)");
  for (size_t r = 0; r < j.size(); ++r) {
    GRIDCAST_ASSIGN_OR_RETURN(Observations run,
                              RunFromJson(j[r], "runs[" + std::to_string(r) + "]"));
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace gridcast
