#include "client/cli/cli_util.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "collectives/topology.h"

namespace gridcast::cli {

Result<std::string> ReadTextFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<NetworkModel> LoadTopology(const std::filesystem::path& path) {
  GRIDCAST_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  Result<NetworkModel> model = ParseTopology(text);
  if (!model.ok()) return model.status().WithContext(path.string());
  return model;
}

Result<ClusterConfig> LoadCluster(const std::string& path) {
  GRIDCAST_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  const std::string base = std::filesystem::absolute(path).parent_path().string();
  Result<ClusterConfig> config = ParseClusterFile(text, base);
  if (!config.ok()) return config.status().WithContext(path);
  return config;
}

std::string ProgramBesideSelf(const std::string& name) {
  std::error_code ec;
  const std::filesystem::path beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / name;
  return !ec && std::filesystem::exists(beside, ec) ? beside.string() : name;
}

int ReportError(const Status& status) {
  std::cerr << "gridcast: " << status.message() << "\n";
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      return kExitBadInput;
    default:
      return kExitFailure;
  }
}

}  // namespace gridcast::cli
