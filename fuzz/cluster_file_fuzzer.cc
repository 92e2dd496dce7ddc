// Cluster files (members, secret, topology path), as an operator or a script writes them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cluster/cluster_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gridcast::Result<gridcast::ClusterConfig> cluster = gridcast::ParseClusterFile(text, "/nonexistent");
  if (cluster.ok()) {
    // What parses must format back to a file that parses to the same members.
    gridcast::Result<gridcast::ClusterConfig> again =
        gridcast::ParseClusterFile(gridcast::FormatClusterFile(*cluster), "/nonexistent");
    if (!again.ok() || again->members.size() != cluster->members.size() || again->secret != cluster->secret) {
      __builtin_trap();
    }
  }
  (void)gridcast::SplitHostPort(text);
  return 0;
}
