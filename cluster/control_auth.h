// Authentication of control (gRPC) calls with the cluster secret.
//
// Each call carries metadata "gridcast-auth: <unix_ms>.<nonce>.<hmac>" with
// hmac = HMAC-SHA256(secret, method "\n" unix_ms "\n" nonce). The server accepts a token whose
// time is within the skew window and whose nonce it has not seen in that window, so a captured
// token cannot be replayed. TLS (--tls-*) adds confidentiality; this adds authorisation.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

#include "include/gridcast/status.h"

namespace gridcast {

inline constexpr const char* kAuthMetadataKey = "gridcast-auth";

// Token for one call to `method` (the full gRPC method name, e.g. "/gridcast.v1.Control/List").
std::string MakeControlToken(std::string_view secret, std::string_view method, int64_t unix_ms);

class ControlAuthenticator {
 public:
  explicit ControlAuthenticator(std::string secret,
                                std::chrono::milliseconds max_skew = std::chrono::minutes(5))
      : secret_(std::move(secret)), max_skew_ms_(max_skew.count()) {}

  // Unauthenticated with the reason when the token is missing, malformed, stale, replayed
  // or signed with another secret.
  Status Check(std::string_view method, std::string_view token, int64_t now_unix_ms);

 private:
  const std::string secret_;
  const int64_t max_skew_ms_;
  std::mutex mutex_;
  // Nonces seen within the skew window, oldest first (guarded by mutex_).
  std::deque<std::pair<int64_t, std::string>> recent_;
  std::unordered_set<std::string> recent_set_;
};

int64_t UnixMillisNow();

}  // namespace gridcast
