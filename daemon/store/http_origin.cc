#include "daemon/store/http_origin.h"

#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>
#include <mutex>
#include <thread>

namespace gridcast {
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// A URL's parts, as libcurl's own parser reads them (the same parser the request then uses).
struct UrlParts {
  std::string scheme, host, port, path, user, password;
  bool SameOrigin(const UrlParts& other) const {
    return scheme == other.scheme && Lower(host) == Lower(other.host) && port == other.port;
  }
};

std::optional<UrlParts> ParseUrl(const std::string& url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> handle(curl_url(), &curl_url_cleanup);
  if (handle == nullptr || curl_url_set(handle.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return std::nullopt;
  const auto part = [&](CURLUPart which, unsigned flags = 0) {
    char* value = nullptr;
    std::string text;
    if (curl_url_get(handle.get(), which, &value, flags) == CURLUE_OK && value != nullptr) text = value;
    curl_free(value);
    return text;
  };
  UrlParts parts{Lower(part(CURLUPART_SCHEME)), part(CURLUPART_HOST), part(CURLUPART_PORT, CURLU_DEFAULT_PORT),
                 part(CURLUPART_PATH), part(CURLUPART_USER), part(CURLUPART_PASSWORD)};
  if (parts.scheme != "http" && parts.scheme != "https") return std::nullopt;
  if (parts.host.empty()) return std::nullopt;
  return parts;
}

// "bytes FIRST-LAST/TOTAL" (TOTAL may be "*").
struct ContentRange {
  uint64_t first = 0;
  std::optional<uint64_t> total;
};

// A decimal count, all of `text`.
std::optional<uint64_t> ParseCount(std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<ContentRange> ParseContentRange(std::string_view text) {
  if (Lower(std::string(text.substr(0, 6))) != "bytes ") return std::nullopt;
  text.remove_prefix(6);
  const size_t dash = text.find('-');
  const size_t slash = text.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) return std::nullopt;
  ContentRange range;
  const std::optional<uint64_t> first = ParseCount(text.substr(0, dash));
  if (!first || !ParseCount(text.substr(dash + 1, slash - dash - 1))) return std::nullopt;
  range.first = *first;
  if (text.substr(slash + 1) != "*") {
    range.total = ParseCount(text.substr(slash + 1));
    if (!range.total) return std::nullopt;
  }
  return range;
}

// What one response said, from its status line and headers.
struct Response {
  long status = 0;
  std::optional<uint64_t> content_length;
  std::optional<std::string> content_range;
  std::string etag, last_modified;
  bool body_seen = false;
};

struct Transfer {
  const OriginRequest& request;
  const std::string shown;  // the URL as errors may name it
  int fd;
  FileIo& io;
  const OriginEvents& events;
  const std::atomic<bool>& cancel;

  std::optional<OriginHead> head;  // from the first response with a body
  uint64_t asked_from = 0;         // this attempt's Range start
  Response response;
  Status failure;                  // set by a callback that ended the fetch for good
  OriginFetched fetched;

  void Fail(Status status) {
    if (failure.ok()) failure = std::move(status);
  }

  // The first body byte of a 2xx response: is it the payload from asked_from on?
  bool Accept() {
    const Response& r = response;
    std::optional<uint64_t> size;  // the payload's, as this response says it
    if (r.status == 200) {
      size = r.content_length;
      if (asked_from > 0) {
        if (events.forwarded && events.forwarded()) {
          Fail(Status::FailedPrecondition("origin " + shown + " answered a Range request from byte " +
                                          std::to_string(asked_from) +
                                          " with the whole payload (HTTP 200): it does not serve ranges, and "
                                          "bytes it sent before were sent on already"));
          return false;
        }
        ++fetched.restarted;
        spdlog::warn("origin {}: no ranges served (HTTP 200 to a Range request); fetching from byte 0 again", shown);
        fetched.bytes = 0;
      }
    } else if (r.status == 206) {
      const std::optional<ContentRange> range = r.content_range ? ParseContentRange(*r.content_range) : std::nullopt;
      if (asked_from == 0 || !range || range->first != asked_from ||
          (head && head->size && range->total != head->size)) {
        Fail(Status::FailedPrecondition("origin " + shown + " answered a Range request from byte " +
                                        std::to_string(asked_from) + " with Content-Range '" +
                                        r.content_range.value_or("") + "'"));
        return false;
      }
      ++fetched.resumed;
      size = range->total;
    } else {
      Fail(Status::FailedPrecondition("origin " + shown + " answered HTTP " + std::to_string(r.status) +
                                      " with a body that is not the payload"));
      return false;
    }
    if (!head) {
      head = OriginHead{size, r.etag, r.last_modified};
      if (events.head) events.head(*head);
      return true;
    }
    if (r.etag != head->etag || r.last_modified != head->last_modified || (size && head->size && size != head->size)) {
      Fail(Status::DataLoss("origin " + shown + " changed between requests (ETag '" + head->etag + "' then '" + r.etag +
                            "', Last-Modified '" + head->last_modified + "' then '" + r.last_modified +
                            "'): two versions are never mixed"));
      return false;
    }
    return true;
  }

  bool Write(const char* data, size_t bytes) {
    if (!response.body_seen) {
      response.body_seen = true;
      if (!Accept()) return false;
    }
    const uint64_t end = fetched.bytes + bytes;
    if (head->size && end > *head->size) {
      Fail(Status::FailedPrecondition("origin " + shown + " sent more than the " + std::to_string(*head->size) +
                                      " bytes it announced"));
      return false;
    }
    if (!head->size && end > request.size_limit) {
      Fail(Status::ResourceExhausted("origin " + shown + " sent no length and more than the size limit, " +
                                     std::to_string(request.size_limit) + " bytes"));
      return false;
    }
    const Status written = PwriteFull(io, fd, {reinterpret_cast<const uint8_t*>(data), bytes}, fetched.bytes);
    if (!written.ok()) {
      Fail(written.WithContext("writing what origin " + shown + " sent"));
      return false;
    }
    fetched.bytes = end;
    if (events.arrived) events.arrived(fetched.bytes);
    return true;
  }
};

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  std::string_view line(data, bytes);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  if (line.substr(0, 5) == "HTTP/") {
    transfer.response = Response{};
    const size_t space = line.find(' ');
    if (space != std::string_view::npos) {
      transfer.response.status = static_cast<long>(ParseCount(line.substr(space + 1, 3)).value_or(0));
    }
    return bytes;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return bytes;
  const std::string name = Lower(std::string(line.substr(0, colon)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  Response& r = transfer.response;
  if (name == "content-length") {
    r.content_length = ParseCount(value);
  } else if (name == "content-range") {
    r.content_range = std::string(value);
  } else if (name == "etag") {
    r.etag = value;
  } else if (name == "last-modified") {
    r.last_modified = value;
  }
  return bytes;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  if (transfer.response.status < 200 || transfer.response.status >= 300) return bytes;  // an error page
  return transfer.Write(data, bytes) ? bytes : 0;  // 0 ends the transfer (CURLE_WRITE_ERROR)
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Transfer*>(user)->cancel.load() ? 1 : 0;
}

bool IsRedirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// Waits `time`, or less once `cancel` is set.
void Backoff(std::chrono::milliseconds time, const std::atomic<bool>& cancel) {
  const auto until = std::chrono::steady_clock::now() + time;
  while (!cancel.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(20), until - std::chrono::steady_clock::now()));
  }
}

}  // namespace

std::string RedactedUrl(const std::string& url) {
  const std::optional<UrlParts> parts = ParseUrl(url);
  if (!parts) return "(a URL that does not parse)";
  return parts->scheme + "://" + parts->host + ":" + parts->port + parts->path;
}

std::string UrlFileName(const std::string& url) {
  if (!ParseUrl(url)) return {};
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> handle(curl_url(), &curl_url_cleanup);
  char* path = nullptr;
  if (handle == nullptr || curl_url_set(handle.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK ||
      curl_url_get(handle.get(), CURLUPART_PATH, &path, CURLU_URLDECODE) != CURLUE_OK || path == nullptr) {
    return {};
  }
  std::string decoded(path);
  curl_free(path);
  const size_t slash = decoded.rfind('/');
  return slash == std::string::npos ? decoded : decoded.substr(slash + 1);
}

Result<OriginFetched> FetchOrigin(const OriginRequest& request, int fd, FileIo& io, const OriginEvents& events,
                                  const std::atomic<bool>& cancel) {
  static std::once_flag initialized;
  std::call_once(initialized, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  const std::optional<UrlParts> origin = ParseUrl(request.url);
  if (!origin) return Status::InvalidArgument("not an http:// or https:// URL: " + RedactedUrl(request.url));
  for (const std::string& header : request.headers) {
    if (header.find(':') == std::string::npos || header.find_first_of("\r\n") != std::string::npos) {
      return Status::InvalidArgument("a header is not one 'Name: value' line (its text is not shown)");
    }
  }
  Transfer transfer{request, RedactedUrl(request.url), fd, io, events, cancel, {}, 0, {}, Status::Ok(), {}};
  std::string url = request.url;
  int redirects = 0;
  int failures = 0;  // attempts in a row that gained no byte
  auto backoff = request.first_backoff;
  std::string last_error;
  while (true) {
    const std::optional<UrlParts> target = ParseUrl(url);
    if (!target) return Status::FailedPrecondition("origin " + transfer.shown + " redirected to a URL that is not http(s)");
    const bool same_origin = target->SameOrigin(*origin);
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
    if (curl == nullptr) return Status::Internal("libcurl could not start a transfer");
    std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(nullptr, &curl_slist_free_all);
    if (same_origin) {
      for (const std::string& header : request.headers) headers.reset(curl_slist_append(headers.release(), header.c_str()));
    }
    CURL* h = curl.get();
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "gridcast");
    if (same_origin && target->user.empty() && !origin->user.empty()) {
      curl_easy_setopt(h, CURLOPT_USERNAME, origin->user.c_str());
      curl_easy_setopt(h, CURLOPT_PASSWORD, origin->password.c_str());
    }
    if (headers != nullptr) curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    if (!request.ca_pem.empty()) {
      // Copied by libcurl (CURL_BLOB_COPY): the request outlives no handle.
      curl_blob ca{const_cast<char*>(request.ca_pem.data()), request.ca_pem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
    }
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
                     std::max(1L, static_cast<long>(request.stall_timeout.count() / 1000)));
    transfer.asked_from = transfer.fetched.bytes;
    const std::string range = std::to_string(transfer.asked_from) + "-";
    if (transfer.asked_from > 0) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &transfer);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    transfer.response = Response{};
    const uint64_t before = transfer.fetched.bytes;
    const CURLcode code = curl_easy_perform(h);
    if (!transfer.failure.ok()) return transfer.failure;
    if (cancel.load()) return Status::Cancelled("fetching " + transfer.shown + " was cancelled");
    const long status = transfer.response.status;
    if (code == CURLE_OK && IsRedirect(status)) {
      char* location = nullptr;
      curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &location);
      if (location == nullptr) {
        return Status::FailedPrecondition("origin " + transfer.shown + " redirected (HTTP " + std::to_string(status) +
                                          ") without a Location");
      }
      if (++redirects > request.max_redirects) {
        return Status::FailedPrecondition("origin " + transfer.shown + " redirected more than " +
                                          std::to_string(request.max_redirects) + " times");
      }
      url = location;
      continue;
    }
    ++transfer.fetched.attempts;
    if (code == CURLE_OK && status >= 200 && status < 300) {
      if (!transfer.head) {
        // A 2xx without a body byte: an empty payload, if it says so.
        if (transfer.asked_from == 0 && status == 200 && transfer.response.content_length.value_or(0) == 0) {
          transfer.head = OriginHead{0, transfer.response.etag, transfer.response.last_modified};
          if (events.head) events.head(*transfer.head);
          transfer.fetched.head = *transfer.head;
          return transfer.fetched;
        }
      } else if (!transfer.head->size || transfer.fetched.bytes == *transfer.head->size) {
        transfer.fetched.head = *transfer.head;
        return transfer.fetched;
      }
      last_error = "the response ended at byte " + std::to_string(transfer.fetched.bytes);
    } else if (code == CURLE_OK) {
      const std::string what = "origin " + transfer.shown + " answered HTTP " + std::to_string(status);
      if (status == 404 || status == 410) return Status::NotFound(what);
      if (status == 401 || status == 403) return Status::PermissionDenied(what);
      if (status != 408 && status != 429 && status < 500) return Status::FailedPrecondition(what);
      last_error = "HTTP " + std::to_string(status);
    } else if (code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE ||
               code == CURLE_SSL_CERTPROBLEM) {
      return Status::Unauthenticated("origin " + transfer.shown + ": " + curl_easy_strerror(code));
    } else if (code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_URL_MALFORMAT) {
      return Status::InvalidArgument("origin " + transfer.shown + ": " + curl_easy_strerror(code));
    } else {
      last_error = std::string(curl_easy_strerror(code)) + " (curl error " + std::to_string(code) + ")";
    }
    if (transfer.fetched.bytes > before) {
      failures = 0;
      backoff = request.first_backoff;
    }
    if (++failures >= request.attempts) {
      return Status::Unavailable("origin " + transfer.shown + ": " + last_error + ", " + std::to_string(failures) +
                                 " attempts in a row without a byte gained");
    }
    spdlog::warn("origin {}: {} at byte {}; asking again from there in {} ms", transfer.shown, last_error,
                 transfer.fetched.bytes, backoff.count());
    Backoff(backoff, cancel);
    if (cancel.load()) return Status::Cancelled("fetching " + transfer.shown + " was cancelled");
    backoff = std::min(request.max_backoff, backoff * 2);
  }
}

}  // namespace gridcast
