#include "cluster/control_auth.h"

#include <charconv>
#include <cstdlib>

#include "common/crypto.h"
#include "common/hex.h"

namespace gridcast {
namespace {

std::string SignedText(std::string_view method, std::string_view unix_ms, std::string_view nonce) {
  std::string text(method);
  text += '\n';
  text += unix_ms;
  text += '\n';
  text += nonce;
  return text;
}

}  // namespace

int64_t UnixMillisNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string MakeControlToken(std::string_view secret, std::string_view method, int64_t unix_ms) {
  const std::string ms = std::to_string(unix_ms);
  const std::string nonce = RandomHex(16);
  const Digest mac = HmacSha256(secret, AsBytes(SignedText(method, ms, nonce)));
  return ms + "." + nonce + "." + ToHex(mac);
}

Status ControlAuthenticator::Check(std::string_view method, std::string_view token,
                                   int64_t now_unix_ms) {
  if (token.empty()) return Status::Unauthenticated("missing gridcast-auth metadata");
  const size_t dot1 = token.find('.');
  const size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.size() > 256) {
    return Status::Unauthenticated("malformed gridcast-auth token");
  }
  const std::string_view ms_text = token.substr(0, dot1);
  const std::string_view nonce = token.substr(dot1 + 1, dot2 - dot1 - 1);
  const std::string_view mac_hex = token.substr(dot2 + 1);
  int64_t ms = 0;
  auto [ptr, ec] = std::from_chars(ms_text.data(), ms_text.data() + ms_text.size(), ms);
  if (ec != std::errc() || ptr != ms_text.data() + ms_text.size() || nonce.size() != 32) {
    return Status::Unauthenticated("malformed gridcast-auth token");
  }
  Result<std::string> mac = FromHex(mac_hex);
  const Digest expected = HmacSha256(secret_, AsBytes(SignedText(method, ms_text, nonce)));
  if (!mac.ok() || !ConstantTimeEqual(AsBytes(*mac), expected)) {
    return Status::Unauthenticated("bad cluster secret");
  }
  if (std::llabs(now_unix_ms - ms) > max_skew_ms_) {
    return Status::Unauthenticated("stale gridcast-auth token (clock skew or replay)");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  while (!recent_.empty() && recent_.front().first < now_unix_ms - 2 * max_skew_ms_) {
    recent_set_.erase(recent_.front().second);
    recent_.pop_front();
  }
  std::string key(nonce);
  if (!recent_set_.insert(key).second) return Status::Unauthenticated("replayed gridcast-auth token");
  recent_.emplace_back(now_unix_ms, std::move(key));
  return Status::Ok();
}

}  // namespace gridcast
