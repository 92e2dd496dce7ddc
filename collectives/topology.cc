#include "collectives/topology.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "common/units.h"

namespace gridcast {
namespace {

// Error with the position of `node` (yaml-cpp lines are 0-based; editors count from 1).
Status ErrorAt(const YAML::Node& node, const std::string& field, const std::string& message) {
  const YAML::Mark mark = node.Mark();
  std::string where = mark.is_null() ? std::string() : "line " + std::to_string(mark.line + 1) + ": ";
  return Status::InvalidArgument(where + field + ": " + message);
}

Status CheckKeys(const YAML::Node& map, const std::string& field,
                 const std::set<std::string>& allowed) {
  for (const auto& entry : map) {
    std::string key = entry.first.Scalar();
    if (!allowed.count(key)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return ErrorAt(entry.first, field + "." + key, "unknown field (expected one of: " + list + ")");
    }
  }
  return Status::Ok();
}

Result<std::string> ScalarString(const YAML::Node& node, const std::string& field) {
  if (!node.IsScalar()) return ErrorAt(node, field, "expected a scalar value");
  return node.Scalar();
}

Status CheckName(const YAML::Node& node, const std::string& field, const std::string& name) {
  if (name.empty() || name.size() > 64) {
    return ErrorAt(node, field, "name '" + name + "' must have 1 to 64 characters");
  }
  if (!IsTopologyName(name)) {
    return ErrorAt(node, field, "name '" + name + "' may only use letters, digits, '-', '_', '.'");
  }
  return Status::Ok();
}

Result<double> Rate(const YAML::Node& node, const std::string& field) {
  GRIDCAST_ASSIGN_OR_RETURN(std::string text, ScalarString(node, field));
  Result<double> rate = ParseRateBps(text);
  if (!rate.ok()) return ErrorAt(node, field, rate.status().message());
  return rate;
}

class Parser {
 public:
  Result<NetworkModel> Parse(std::string_view text) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument("line " + std::to_string(e.mark.line + 1) +
                                     ": yaml: " + e.msg);
    }
    if (!root.IsDefined() || root.IsNull()) {
      return Status::InvalidArgument("empty network: the file has no switches and no nodes");
    }
    if (!root.IsMap()) return ErrorAt(root, "topology", "expected a mapping at the top level");
    GRIDCAST_RETURN_IF_ERROR(CheckKeys(root, "topology", {"name", "switches", "nodes", "source"}));
    if (root["name"]) {
      GRIDCAST_ASSIGN_OR_RETURN(model_.name, ScalarString(root["name"], "name"));
    }
    GRIDCAST_RETURN_IF_ERROR(ParseSwitches(root));
    GRIDCAST_RETURN_IF_ERROR(ParseNodes(root));
    if (root["source"]) {
      const YAML::Node& source = root["source"];
      GRIDCAST_ASSIGN_OR_RETURN(std::string name, ScalarString(source, "source"));
      std::optional<int> index = model_.FindNode(name);
      if (!index) return ErrorAt(source, "source", "unknown node '" + name + "'");
      model_.source = *index;
    }
    return std::move(model_);
  }

 private:
  Status ParseSwitches(const YAML::Node& root) {
    const YAML::Node switches = root["switches"];
    if (!switches || switches.IsNull() || (switches.IsSequence() && switches.size() == 0)) {
      return ErrorAt(root, "switches", "empty network: at least one switch is needed");
    }
    if (!switches.IsSequence()) return ErrorAt(switches, "switches", "expected a list");

    std::vector<std::pair<YAML::Node, std::string>> parent_names;  // (node, name) per switch
    for (size_t i = 0; i < switches.size(); ++i) {
      const YAML::Node& entry = switches[i];
      const std::string field = "switches[" + std::to_string(i) + "]";
      if (!entry.IsMap()) return ErrorAt(entry, field, "expected a mapping");
      GRIDCAST_RETURN_IF_ERROR(CheckKeys(
          entry, field, {"name", "parent", "uplink", "uplink_up", "uplink_down", "latency"}));
      Switch sw;
      if (!entry["name"]) return ErrorAt(entry, field + ".name", "missing");
      GRIDCAST_ASSIGN_OR_RETURN(sw.name, ScalarString(entry["name"], field + ".name"));
      GRIDCAST_RETURN_IF_ERROR(ClaimName(entry["name"], field + ".name", sw.name));

      const bool has_parent = static_cast<bool>(entry["parent"]);
      if (i == 0 && has_parent) {
        return ErrorAt(entry["parent"], field + ".parent",
                       "the first switch is the root and has no parent");
      }
      if (i > 0 && !has_parent) {
        return ErrorAt(entry, field + ".parent",
                       "missing (only the first switch, the root, has no parent)");
      }
      std::string parent;
      if (has_parent) {
        GRIDCAST_ASSIGN_OR_RETURN(parent, ScalarString(entry["parent"], field + ".parent"));
      }
      parent_names.emplace_back(has_parent ? entry["parent"] : entry, parent);

      GRIDCAST_RETURN_IF_ERROR(ParseUplink(entry, field, /*root=*/i == 0, &sw));
      model_.switches.push_back(std::move(sw));
    }

    return LinkParents(parent_names);
  }

  // A switch's uplink rates and latency; the root has none.
  Status ParseUplink(const YAML::Node& entry, const std::string& field, bool root, Switch* sw) {
    for (const char* key : {"uplink", "uplink_up", "uplink_down", "latency"}) {
      if (root && entry[key]) {
        return ErrorAt(entry[key], field + "." + key, "the root switch has no uplink");
      }
    }
    if (entry["uplink"]) {
      GRIDCAST_ASSIGN_OR_RETURN(double rate, Rate(entry["uplink"], field + ".uplink"));
      sw->uplink_up_bps = sw->uplink_down_bps = rate;
    }
    if (entry["uplink_up"]) {
      GRIDCAST_ASSIGN_OR_RETURN(sw->uplink_up_bps, Rate(entry["uplink_up"], field + ".uplink_up"));
    }
    if (entry["uplink_down"]) {
      GRIDCAST_ASSIGN_OR_RETURN(sw->uplink_down_bps,
                                Rate(entry["uplink_down"], field + ".uplink_down"));
    }
    if (entry["latency"]) {
      GRIDCAST_ASSIGN_OR_RETURN(std::string text,
                                ScalarString(entry["latency"], field + ".latency"));
      Result<double> latency = ParseDurationSeconds(text);
      if (!latency.ok()) {
        return ErrorAt(entry["latency"], field + ".latency", latency.status().message());
      }
      sw->latency_s = *latency;
    }
    return Status::Ok();
  }

  // Each switch's parent by name; every chain of parents must reach the root.
  Status LinkParents(const std::vector<std::pair<YAML::Node, std::string>>& parent_names) {
    for (size_t i = 1; i < model_.switches.size(); ++i) {
      const auto& [node, parent] = parent_names[i];
      const std::string field = "switches[" + std::to_string(i) + "].parent";
      std::optional<int> index = model_.FindSwitch(parent);
      if (!index) return ErrorAt(node, field, "unknown parent switch '" + parent + "'");
      model_.switches[i].parent = *index;
    }
    // Every chain of parents must reach the root; anything else loops.
    for (size_t i = 1; i < model_.switches.size(); ++i) {
      size_t steps = 0;
      int s = static_cast<int>(i);
      while (s > 0 && steps <= model_.switches.size()) {
        s = model_.switches[s].parent;
        ++steps;
      }
      if (s != 0) {
        return ErrorAt(parent_names[i].first, "switches[" + std::to_string(i) + "].parent",
                       "cycle: switch '" + model_.switches[i].name +
                           "' never reaches the root switch '" + model_.switches[0].name + "'");
      }
    }
    return Status::Ok();
  }

  Status ParseNodes(const YAML::Node& root) {
    const YAML::Node groups = root["nodes"];
    if (!groups || groups.IsNull() || (groups.IsSequence() && groups.size() == 0)) {
      return ErrorAt(root, "nodes", "empty network: no nodes");
    }
    if (!groups.IsSequence()) return ErrorAt(groups, "nodes", "expected a list");
    std::map<int, int> next_number;  // per switch: numbering goes on across its groups
    for (size_t i = 0; i < groups.size(); ++i) {
      const YAML::Node& group = groups[i];
      const std::string field = "nodes[" + std::to_string(i) + "]";
      if (!group.IsMap()) return ErrorAt(group, field, "expected a mapping");
      GRIDCAST_RETURN_IF_ERROR(CheckKeys(group, field, {"switch", "count", "names", "up", "down"}));
      if (!group["switch"]) return ErrorAt(group, field + ".switch", "missing");
      GRIDCAST_ASSIGN_OR_RETURN(std::string switch_name,
                                ScalarString(group["switch"], field + ".switch"));
      std::optional<int> switch_index = model_.FindSwitch(switch_name);
      if (!switch_index) {
        return ErrorAt(group["switch"], field + ".switch", "unknown switch '" + switch_name + "'");
      }
      Node prototype;
      prototype.switch_index = *switch_index;
      if (group["up"]) {
        GRIDCAST_ASSIGN_OR_RETURN(prototype.up_bps, Rate(group["up"], field + ".up"));
      }
      if (group["down"]) {
        GRIDCAST_ASSIGN_OR_RETURN(prototype.down_bps, Rate(group["down"], field + ".down"));
      }

      const bool has_count = static_cast<bool>(group["count"]);
      const bool has_names = static_cast<bool>(group["names"]);
      if (has_count == has_names) {
        return ErrorAt(group, field, "give exactly one of 'count' or 'names'");
      }
      if (has_count) {
        const YAML::Node& count_node = group["count"];
        GRIDCAST_ASSIGN_OR_RETURN(std::string text, ScalarString(count_node, field + ".count"));
        int count = 0;
        try {
          count = count_node.as<int>();
        } catch (const YAML::Exception&) {
          return ErrorAt(count_node, field + ".count", "'" + text + "' is not an integer");
        }
        if (count < 1 || count > 100000) {
          return ErrorAt(count_node, field + ".count", "must be between 1 and 100000");
        }
        int& number = next_number[*switch_index];
        for (int k = 0; k < count; ++k) {
          Node node = prototype;
          node.name = switch_name + "-" + std::to_string(number++);
          GRIDCAST_RETURN_IF_ERROR(ClaimName(count_node, field + ".count", node.name));
          model_.nodes.push_back(std::move(node));
        }
      } else {
        const YAML::Node& names = group["names"];
        if (!names.IsSequence() || names.size() == 0) {
          return ErrorAt(names, field + ".names", "expected a non-empty list of node names");
        }
        for (size_t k = 0; k < names.size(); ++k) {
          const std::string name_field = field + ".names[" + std::to_string(k) + "]";
          Node node = prototype;
          GRIDCAST_ASSIGN_OR_RETURN(node.name, ScalarString(names[k], name_field));
          GRIDCAST_RETURN_IF_ERROR(ClaimName(names[k], name_field, node.name));
          model_.nodes.push_back(std::move(node));
        }
      }
    }
    return Status::Ok();
  }

  // Switch and node names share one space so that every name means one thing.
  Status ClaimName(const YAML::Node& node, const std::string& field, const std::string& name) {
    GRIDCAST_RETURN_IF_ERROR(CheckName(node, field, name));
    if (!names_.insert(name).second) return ErrorAt(node, field, "duplicate name '" + name + "'");
    return Status::Ok();
  }

  NetworkModel model_;
  std::set<std::string> names_;
};

}  // namespace

bool IsTopologyName(std::string_view name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
         });
}

Result<NetworkModel> ParseTopology(std::string_view yaml_text) {
  return Parser().Parse(yaml_text);
}

std::string FormatTopology(const NetworkModel& model) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (!model.name.empty()) out << YAML::Key << "name" << YAML::Value << model.name;
  out << YAML::Key << "switches" << YAML::Value << YAML::BeginSeq;
  for (const Switch& sw : model.switches) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << sw.name;
    if (sw.parent >= 0) {
      out << YAML::Key << "parent" << YAML::Value << model.switches[sw.parent].name;
      if (sw.uplink_up_bps == sw.uplink_down_bps) {
        if (std::isfinite(sw.uplink_up_bps)) {
          out << YAML::Key << "uplink" << YAML::Value << FormatRate(sw.uplink_up_bps);
        }
      } else {
        if (std::isfinite(sw.uplink_up_bps)) {
          out << YAML::Key << "uplink_up" << YAML::Value << FormatRate(sw.uplink_up_bps);
        }
        if (std::isfinite(sw.uplink_down_bps)) {
          out << YAML::Key << "uplink_down" << YAML::Value << FormatRate(sw.uplink_down_bps);
        }
      }
      if (sw.latency_s > 0) {
        out << YAML::Key << "latency" << YAML::Value
            << std::to_string(static_cast<long long>(std::llround(sw.latency_s * 1e6))) + "us";
      }
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  // Consecutive nodes on one switch with equal rates share a group.
  for (size_t i = 0; i < model.nodes.size();) {
    const Node& first = model.nodes[i];
    size_t end = i + 1;
    while (end < model.nodes.size() && model.nodes[end].switch_index == first.switch_index &&
           model.nodes[end].up_bps == first.up_bps && model.nodes[end].down_bps == first.down_bps) {
      ++end;
    }
    out << YAML::BeginMap << YAML::Key << "switch" << YAML::Value
        << model.switches[first.switch_index].name;
    out << YAML::Key << "names" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (size_t k = i; k < end; ++k) out << model.nodes[k].name;
    out << YAML::EndSeq;
    if (std::isfinite(first.up_bps)) out << YAML::Key << "up" << YAML::Value << FormatRate(first.up_bps);
    if (std::isfinite(first.down_bps)) {
      out << YAML::Key << "down" << YAML::Value << FormatRate(first.down_bps);
    }
    out << YAML::EndMap;
    i = end;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "source" << YAML::Value << model.nodes[model.source].name;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace gridcast
