#include "deploy/slurm_job.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>

#include "deploy/subprocess.h"

namespace gridcast {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// A Slurm command's output, or its failure with what it said.
Result<std::string> Scontrol(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"scontrol"};
  argv.insert(argv.end(), args.begin(), args.end());
  GRIDCAST_ASSIGN_OR_RETURN(CommandOutput out, RunCommand(argv));
  if (out.exit_code != 0) return Status::Unavailable("scontrol " + args.front() + " failed: " + out.output);
  return out.output;
}

}  // namespace

Result<std::vector<SlurmNode>> ParseScontrolNodes(const std::string& text) {
  std::vector<SlurmNode> nodes;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::map<std::string, std::string> fields;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      const size_t equals = word.find('=');
      if (equals != std::string::npos) fields.emplace(word.substr(0, equals), word.substr(equals + 1));
    }
    if (!fields.count("NodeName")) continue;
    const std::string& name = fields["NodeName"];
    const std::string address = fields.count("NodeAddr") ? fields["NodeAddr"] : name;
    if (name.empty() || address.empty()) return Status::InvalidArgument("scontrol: a node record without a name or address");
    nodes.push_back({name, address});
  }
  return nodes;
}

Result<SlurmJob> CurrentSlurmJob() {
  SlurmJob job;
  job.job_id = Env("SLURM_JOB_ID");
  const std::string list = Env("SLURM_JOB_NODELIST");
  if (job.job_id.empty() || list.empty()) {
    return Status::FailedPrecondition("not inside a Slurm allocation (no SLURM_JOB_ID and SLURM_JOB_NODELIST): "
                                      "run it in an sbatch script or a salloc shell");
  }
  GRIDCAST_ASSIGN_OR_RETURN(const std::string names, Scontrol({"show", "hostnames", list}));
  GRIDCAST_ASSIGN_OR_RETURN(const std::string records, Scontrol({"--oneliner", "show", "node", list}));
  GRIDCAST_ASSIGN_OR_RETURN(std::vector<SlurmNode> known, ParseScontrolNodes(records));
  std::istringstream in(names);
  std::string name;
  while (in >> name) {
    auto it = std::find_if(known.begin(), known.end(), [&](const SlurmNode& n) { return n.name == name; });
    job.nodes.push_back(it != known.end() ? *it : SlurmNode{name, name});
  }
  if (job.nodes.empty()) return Status::FailedPrecondition("the allocation " + list + " has no nodes");
  job.this_node = Env("SLURMD_NODENAME");
  return job;
}

Result<std::string> ExpandJobPattern(const std::string& pattern, const std::string& job_id, const std::string& node) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (next == 'j') {
      out += job_id;
    } else if (next == 'N') {
      out += node;
    } else if (next == '%') {
      out += '%';
    } else {
      return Status::InvalidArgument("'" + pattern + "': only %j (job id), %N (node name) and %% may follow %");
    }
    ++i;
  }
  return out;
}

uint16_t JobPortBase(const std::string& job_id) {
  // 3 ports a job, 5,000 jobs apart: 15000..29999.
  return static_cast<uint16_t>(15000 + (std::hash<std::string>{}(job_id) % 5000) * 3);
}

ClusterConfig SlurmClusterConfig(const SlurmJob& job, uint16_t port_base, std::string secret) {
  ClusterConfig config;
  config.secret = std::move(secret);
  for (const SlurmNode& node : job.nodes) {
    const std::string host = node.address.find(':') != std::string::npos ? "[" + node.address + "]" : node.address;
    config.members.push_back({node.name, host + ":" + std::to_string(port_base), host + ":" + std::to_string(port_base + 1),
                              host + ":" + std::to_string(port_base + 2)});
  }
  return config;
}

}  // namespace gridcast
