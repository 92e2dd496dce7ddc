// FetchOrigin: a payload fetched from an HTTP(S) origin into a file, for a source that sends it
// on while it arrives (docs/origin.md). Only the source talks to the origin.
//
// What goes wrong with origins elsewhere, and what this does instead:
// - A dropped connection costs what was lost, not the download: the origin is asked again with
//   a Range request from the first missing byte, with bounded retries and a backoff.
// - A resumed response is used only if it is a 206 whose Content-Range starts at the byte
//   asked for and names the same total (an origin that ignores Range requests would otherwise
//   corrupt every payload larger than what arrived before the drop). A 200 to a Range request
//   restarts from zero only while nothing was sent on (Events::forwarded), else fails.
// - An origin whose bytes change between requests (its ETag or Last-Modified differ from the
//   first response's, or appear or vanish) fails the fetch: two versions are never mixed.
// - Redirects are followed here, not by libcurl, so that the caller's headers (tokens) go only
//   to the URL's own scheme, host and port. Headers and a URL's query (presigned URLs carry
//   their signature there) are never logged nor put in an error.
// - HTTPS is verified against the system's CAs, or `ca_pem`. Compressed transfer encodings
//   are never asked for: ranges count the origin's bytes as stored.
// Blocks the calling thread; meant for a thread of its own.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "include/gridcast/result.h"

namespace gridcast {

struct OriginRequest {
  std::string url;                   // http:// or https://
  std::vector<std::string> headers;  // "Name: value", sent only to the URL's own origin
  std::string ca_pem;                // PEM certificates to verify HTTPS against; empty: the system's CAs
  // The most bytes taken from an origin that sends no length (a chunked response).
  uint64_t size_limit = uint64_t{1} << 40;
  int attempts = 6;  // in a row without a byte gained, before giving up
  std::chrono::milliseconds first_backoff{250};  // before the second attempt, doubled up to max_backoff
  std::chrono::milliseconds max_backoff{8000};
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds stall_timeout{30000};  // no byte for this long fails the attempt
  int max_redirects = 8;
};

// What the origin said of the payload in its first response.
struct OriginHead {
  std::optional<uint64_t> size;  // none: it sent no length
  std::string etag;
  std::string last_modified;
};

struct OriginEvents {
  // Once, before the first byte is written: the first response's size and validators.
  std::function<void(const OriginHead&)> head;
  // The file now holds the payload's bytes [0, bytes).
  std::function<void(uint64_t bytes)> arrived;
  // Whether any byte of the file was already sent on; none means a 200 to a Range request may
  // restart from zero.
  std::function<bool()> forwarded;
};

struct OriginFetched {
  OriginHead head;
  uint64_t bytes = 0;
  int attempts = 0;      // requests made, redirects not counted
  int resumed = 0;       // of them, Range requests from a byte past zero that were answered so
  int restarted = 0;     // 200s to a Range request, taken from zero again
};

// Fetches `request.url` into `fd` (written with io.Pwrite from offset 0; the caller truncates
// or reserves) until the whole payload is in. NotFound / PermissionDenied for 404 / 401-403,
// FailedPrecondition for other 4xx and an origin ignoring a Range request too late, DataLoss
// when the origin's bytes changed, ResourceExhausted past the size limit, Unavailable when
// the attempts ran out (naming the last HTTP status or curl error), Unauthenticated for a
// certificate that does not verify, Cancelled once `cancel` is set. The URL in messages has no
// query and no user information.
Result<OriginFetched> FetchOrigin(const OriginRequest& request, int fd, FileIo& io, const OriginEvents& events,
                                  const std::atomic<bool>& cancel);

// The URL as it may be shown: scheme, host, port and path.
std::string RedactedUrl(const std::string& url);

// The last component of the URL's path, percent-decoded (a payload's default name); empty when
// the path ends with '/' or the URL is not http(s).
std::string UrlFileName(const std::string& url);

}  // namespace gridcast
