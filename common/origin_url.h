// What makes a payload an origin to fetch rather than a path: an http:// or https:// URL. The
// command line tells payloads apart by it and the daemon checks requests with it.
#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>

namespace gridcast {

// `text` starts with http:// or https:// (the scheme in any case) and has more after it.
inline bool IsHttpUrl(std::string_view text) {
  const auto starts = [text](std::string_view scheme) {
    return text.size() > scheme.size() &&
           std::equal(scheme.begin(), scheme.end(), text.begin(),
                      [](char s, char t) { return s == std::tolower(static_cast<unsigned char>(t)); });
  };
  return starts("http://") || starts("https://");
}

}  // namespace gridcast
