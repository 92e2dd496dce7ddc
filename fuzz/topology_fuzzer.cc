// Topology files (the network model every part reads; a client can send one with a request).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collectives/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gridcast::ParseTopology(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
