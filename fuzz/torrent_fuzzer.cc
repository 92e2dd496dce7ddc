// A .torrent parsed and checked against a payload (ParsePayloadTorrent). The first 16 bytes
// choose the payload's size and chunk size.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "daemon/pull/plan_torrent.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 16) return 0;
  uint64_t size_bytes = 0;
  uint64_t chunk_bytes = 0;
  std::memcpy(&size_bytes, data, 8);
  std::memcpy(&chunk_bytes, data + 8, 8);
  (void)gridcast::ParsePayloadTorrent(std::string_view(reinterpret_cast<const char*>(data) + 16, size - 16), size_bytes,
                                   chunk_bytes);
  return 0;
}
