#include "cluster/cluster_file.h"

#include <sys/stat.h>

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>

#include "common/crypto.h"
#include "common/hex.h"

namespace gridcast {
namespace {

// A member's BitTorrent address when the file names none: the data host, the data port + 1.
// Empty for a data address that has no such port.
std::string DefaultBtAddress(const std::string& data_address) {
  Result<std::pair<std::string, uint16_t>> data = SplitHostPort(data_address);
  if (!data.ok() || data->second == 65535) return "";
  const bool ipv6 = data->first.find(':') != std::string::npos;
  return (ipv6 ? "[" + data->first + "]" : data->first) + ":" + std::to_string(data->second + 1);
}

Status ErrorAt(const YAML::Node& node, const std::string& field, const std::string& message) {
  const YAML::Mark mark = node.Mark();
  std::string where = mark.is_null() ? "" : "line " + std::to_string(mark.line + 1) + ": ";
  return Status::InvalidArgument(where + field + ": " + message);
}

Result<std::string> Scalar(const YAML::Node& parent, const char* key, const std::string& field) {
  const YAML::Node node = parent[key];
  if (!node) return ErrorAt(parent, field, "missing");
  if (!node.IsScalar() || node.Scalar().empty()) return ErrorAt(node, field, "expected a value");
  return node.Scalar();
}

}  // namespace

const ClusterMember* ClusterConfig::Find(std::string_view name) const {
  for (const ClusterMember& m : members) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

Result<ChunkDigest> ClusterConfig::DigestFor(const std::string& flag) const {
  if (flag.empty()) return digest.value_or(ChunkDigest::kSha256);
  return ParseChunkDigest(flag);
}

Result<std::pair<std::string, uint16_t>> SplitHostPort(std::string_view address, bool any_port) {
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == address.size()) {
    return Status::InvalidArgument("address '" + std::string(address) + "' is not host:port");
  }
  std::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty() || host.find_first_of("[]") != std::string_view::npos) {
    return Status::InvalidArgument("address '" + std::string(address) + "' has no host");
  }
  unsigned port = 0;
  const std::string_view port_text = address.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || (port == 0 && !any_port) || port > 65535) {
    return Status::InvalidArgument("address '" + std::string(address) + "' has a bad port");
  }
  return std::make_pair(std::string(host), static_cast<uint16_t>(port));
}

Result<ClusterConfig> ParseClusterFile(std::string_view yaml_text, const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument("line " + std::to_string(e.mark.line + 1) + ": yaml: " + e.msg);
  }
  if (!root.IsMap()) return Status::InvalidArgument("cluster file: expected a mapping");
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (key != "secret" && key != "topology" && key != "tls_ca" && key != "digest" && key != "members" &&
        key != "name") {
      return ErrorAt(entry.first, key, "unknown field (expected secret, topology, tls_ca, digest, members)");
    }
  }
  ClusterConfig config;
  GRIDCAST_ASSIGN_OR_RETURN(std::string secret_hex, Scalar(root, "secret", "secret"));
  Result<std::string> secret = FromHex(secret_hex);
  if (!secret.ok() || secret->size() < 16) {
    return ErrorAt(root["secret"], "secret", "expected at least 32 hex digits");
  }
  config.secret = *secret;
  auto path_field = [&](const char* key, std::string* out) -> Status {
    if (!root[key]) return Status::Ok();
    GRIDCAST_ASSIGN_OR_RETURN(std::string value, Scalar(root, key, key));
    std::filesystem::path path(value);
    *out = (path.is_absolute() ? path : std::filesystem::path(base_dir) / path).string();
    return Status::Ok();
  };
  GRIDCAST_RETURN_IF_ERROR(path_field("topology", &config.topology_path));
  GRIDCAST_RETURN_IF_ERROR(path_field("tls_ca", &config.tls_ca_path));
  if (root["digest"]) {
    GRIDCAST_ASSIGN_OR_RETURN(const std::string digest, Scalar(root, "digest", "digest"));
    Result<ChunkDigest> parsed = ParseChunkDigest(digest);
    if (!parsed.ok()) return ErrorAt(root["digest"], "digest", parsed.status().message());
    config.digest = *parsed;
  }
  const YAML::Node members = root["members"];
  if (!members || !members.IsSequence() || members.size() == 0) {
    return ErrorAt(root, "members", "expected a non-empty list");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string field = "members[" + std::to_string(i) + "]";
    const YAML::Node m = members[i];
    if (!m.IsMap()) return ErrorAt(m, field, "expected a mapping");
    ClusterMember member;
    GRIDCAST_ASSIGN_OR_RETURN(member.name, Scalar(m, "name", field + ".name"));
    GRIDCAST_ASSIGN_OR_RETURN(member.control_address, Scalar(m, "control", field + ".control"));
    GRIDCAST_ASSIGN_OR_RETURN(member.data_address, Scalar(m, "data", field + ".data"));
    Result<std::pair<std::string, uint16_t>> data = SplitHostPort(member.data_address);
    if (!data.ok()) return ErrorAt(m["data"], field + ".data", data.status().message());
    if (m["bt"]) {
      GRIDCAST_ASSIGN_OR_RETURN(member.bt_address, Scalar(m, "bt", field + ".bt"));
      Result<std::pair<std::string, uint16_t>> bt = SplitHostPort(member.bt_address);
      if (!bt.ok()) return ErrorAt(m["bt"], field + ".bt", bt.status().message());
    } else {
      if (data->second == 65535) return ErrorAt(m["data"], field + ".data", "port 65535 leaves no default bt port");
      member.bt_address = DefaultBtAddress(member.data_address);
    }
    if (!names.insert(member.name).second) {
      return ErrorAt(m["name"], field + ".name", "duplicate member '" + member.name + "'");
    }
    config.members.push_back(std::move(member));
  }
  return config;
}

std::string FormatClusterFile(const ClusterConfig& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "secret" << YAML::Value << ToHex(AsBytes(config.secret));
  if (!config.topology_path.empty()) out << YAML::Key << "topology" << YAML::Value << config.topology_path;
  if (!config.tls_ca_path.empty()) out << YAML::Key << "tls_ca" << YAML::Value << config.tls_ca_path;
  if (config.digest) out << YAML::Key << "digest" << YAML::Value << std::string(DigestName(*config.digest));
  out << YAML::Key << "members" << YAML::Value << YAML::BeginSeq;
  for (const ClusterMember& m : config.members) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << m.name << YAML::Key << "control"
        << YAML::Value << m.control_address << YAML::Key << "data" << YAML::Value << m.data_address;
    if (!m.bt_address.empty() && m.bt_address != DefaultBtAddress(m.data_address)) {
      out << YAML::Key << "bt" << YAML::Value << m.bt_address;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

Result<ClusterConfig> LoadClusterFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument("cannot read cluster file " + path);
  std::stringstream text;
  text << in.rdbuf();
  std::error_code ec;
  Result<ClusterConfig> cluster = ParseClusterFile(text.str(), std::filesystem::absolute(path, ec).parent_path().string());
  if (!cluster.ok()) return cluster.status().WithContext(path);
  return cluster;
}

bool IsIpAddress(std::string_view host) {
  const bool ipv4 = !host.empty() && host.find_first_not_of("0123456789.") == std::string_view::npos;
  return ipv4 || host.find(':') != std::string_view::npos;
}

std::string NewClusterSecret() {
  std::string secret(32, '\0');
  RandomBytes({reinterpret_cast<uint8_t*>(secret.data()), secret.size()});
  return secret;
}

std::string SecretExposure(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || (st.st_mode & (S_IROTH | S_IWOTH)) == 0) return "";
  return path + " holds the cluster's secret and every user of this host can " +
         ((st.st_mode & S_IWOTH) != 0 ? "write" : "read") +
         " it: chmod o-rwx " + path + " (0640 for the daemon's group, docs/real-cluster.md)";
}

}  // namespace gridcast
