// Probe payloads: fresh pseudo-random content a source daemon writes into its own data
// directory for a measurement broadcast (`gridcast tomography`), because the client cannot
// write files on remote hosts and every run must move new bytes (no member may already hold
// them from an earlier run).
#pragma once

#include <cstdint>
#include <string>

#include "include/gridcast/result.h"

namespace gridcast {

// Upper bound of a probe: measurements need megabytes to gigabytes, never more than this.
inline constexpr uint64_t kMaxProbeBytes = uint64_t{64} << 30;

// Writes `size_bytes` fresh pseudo-random bytes (a random seed per call) to `name` below
// `data_dir` and returns the file's path. The name is confined like every payload name
// (safe_path.h: no symlinks on the way); the bytes go to a reserved temporary name first and
// are renamed over `name`, so an existing file, or a symlink planted there, is replaced and
// never followed. Errors: InvalidArgument for a bad name or a size of 0 or above
// kMaxProbeBytes; ResourceExhausted when the file system has not that much room; Internal for
// write failures (the temporary file is removed).
Result<std::string> WriteProbePayload(const std::string& data_dir, const std::string& name, uint64_t size_bytes);

}  // namespace gridcast
