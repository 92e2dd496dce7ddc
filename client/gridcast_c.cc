// The C API (include/gridcast/gridcast.h) over the C++ one.
#include <cstring>
#include <string>

#include "common/chunk_digest.h"
#include "include/gridcast/gridcast.h"
#include "include/gridcast/gridcast.hpp"

struct gridcast_client {
  std::unique_ptr<gridcast::Client> client;
  std::string last_error;
  std::string digest;  // gridcast_set_digest; empty: the cluster file's
  bool reuse = true;   // gridcast_set_reuse
};

struct gridcast_broadcast {
  std::unique_ptr<gridcast::Broadcast> broadcast;
};

namespace {

int Fail(gridcast_client* client, const gridcast::Status& status) {
  if (client != nullptr) client->last_error = status.ToString();
  return -static_cast<int>(status.code());
}

gridcast::SendOptions Options(const gridcast_client& client, const char* algorithm) {
  gridcast::SendOptions options;
  if (algorithm != nullptr) options.algorithm = algorithm;
  options.digest = client.digest;
  options.no_reuse = !client.reuse;
  return options;
}

int Started(gridcast_client* client, gridcast::Result<std::unique_ptr<gridcast::Broadcast>> started,
            gridcast_broadcast** out) {
  if (!started.ok()) return Fail(client, started.status());
  *out = new gridcast_broadcast{std::move(*started)};
  return 0;
}

}  // namespace

extern "C" {

int gridcast_open(const char* cluster_file, const char* source, gridcast_client** out) {
  if (cluster_file == nullptr || out == nullptr) return -static_cast<int>(gridcast::StatusCode::kInvalidArgument);
  gridcast::ClientOptions options;
  options.cluster_file = cluster_file;
  if (source != nullptr) options.source = source;
  auto* handle = new gridcast_client;
  gridcast::Result<std::unique_ptr<gridcast::Client>> client = gridcast::Client::Open(options);
  *out = handle;
  if (!client.ok()) return Fail(handle, client.status());
  handle->client = std::move(*client);
  return 0;
}

void gridcast_close(gridcast_client* client) { delete client; }

int gridcast_set_reuse(gridcast_client* client, int reuse) {
  if (client == nullptr || (reuse != 0 && reuse != 1)) return -static_cast<int>(gridcast::StatusCode::kInvalidArgument);
  client->reuse = reuse == 1;
  return 0;
}

int gridcast_set_digest(gridcast_client* client, const char* digest) {
  if (client == nullptr) return -static_cast<int>(gridcast::StatusCode::kInvalidArgument);
  if (digest == nullptr || *digest == '\0') {
    client->digest.clear();
    return 0;
  }
  gridcast::Result<gridcast::ChunkDigest> parsed = gridcast::ParseChunkDigest(digest);
  if (!parsed.ok()) return Fail(client, parsed.status());
  client->digest = digest;
  return 0;
}

const char* gridcast_last_error(const gridcast_client* client) {
  return client == nullptr ? "no client" : client->last_error.c_str();
}

int gridcast_send_file_start(gridcast_client* client, const char* path, const char* algorithm,
                             gridcast_broadcast** out) {
  if (client == nullptr || client->client == nullptr || path == nullptr || out == nullptr) {
    return Fail(client, gridcast::Status::InvalidArgument("null argument"));
  }
  return Started(client, client->client->StartSendFile(path, Options(*client, algorithm)), out);
}

int gridcast_send_buffer_start(gridcast_client* client, const void* data, size_t size, const char* name,
                               const char* algorithm, gridcast_broadcast** out) {
  if (client == nullptr || client->client == nullptr || (data == nullptr && size > 0) || name == nullptr ||
      out == nullptr) {
    return Fail(client, gridcast::Status::InvalidArgument("null argument"));
  }
  std::span<const uint8_t> bytes(static_cast<const uint8_t*>(data), size);
  return Started(client, client->client->StartSendBuffer(bytes, name, Options(*client, algorithm)), out);
}

int gridcast_send_url_start(gridcast_client* client, const char* url, const char* name, const char* algorithm,
                            const char* sha256_hex, const char* const* headers, size_t header_count,
                            const char* ca_pem, gridcast_broadcast** out) {
  if (client == nullptr || client->client == nullptr || url == nullptr || out == nullptr ||
      (headers == nullptr && header_count > 0)) {
    return Fail(client, gridcast::Status::InvalidArgument("null argument"));
  }
  gridcast::SendOptions options = Options(*client, algorithm);
  if (name != nullptr) options.name = name;
  gridcast::OriginOptions origin;
  for (size_t i = 0; i < header_count; ++i) {
    if (headers[i] == nullptr) return Fail(client, gridcast::Status::InvalidArgument("null header"));
    origin.headers.emplace_back(headers[i]);
  }
  if (sha256_hex != nullptr) origin.sha256 = sha256_hex;
  if (ca_pem != nullptr) origin.ca_pem = ca_pem;
  return Started(client, client->client->StartSendUrl(url, options, origin), out);
}

int gridcast_poll(gridcast_broadcast* broadcast, double* fraction) {
  if (broadcast == nullptr) return -static_cast<int>(gridcast::StatusCode::kInvalidArgument);
  gridcast::Progress progress;
  const bool ended = broadcast->broadcast->Poll(&progress);
  if (fraction != nullptr) {
    *fraction = progress.chunks_total == 0 ? (ended ? 1.0 : 0.0)
                                           : double(progress.chunks_done) / double(progress.chunks_total);
  }
  return ended ? 1 : 0;
}

int gridcast_wait(gridcast_client* client, gridcast_broadcast* broadcast, double* completion_s) {
  if (broadcast == nullptr) return Fail(client, gridcast::Status::InvalidArgument("null broadcast"));
  gridcast::Result<gridcast::BroadcastResult> summary = broadcast->broadcast->Wait();
  if (!summary.ok()) return Fail(client, summary.status());
  if (completion_s != nullptr) *completion_s = summary->completion_s;
  return 0;
}

void gridcast_broadcast_free(gridcast_broadcast* broadcast) { delete broadcast; }

int gridcast_receive_buffer(gridcast_client* client, const char* member, const char* name, void* data,
                            size_t size, double timeout_s) {
  if (client == nullptr || client->client == nullptr || member == nullptr || name == nullptr ||
      (data == nullptr && size > 0)) {
    return Fail(client, gridcast::Status::InvalidArgument("null argument"));
  }
  std::span<uint8_t> out(static_cast<uint8_t*>(data), size);
  gridcast::Status status = client->client->ReceiveIntoBuffer(member, name, out, timeout_s);
  return status.ok() ? 0 : Fail(client, status);
}

}  // extern "C"
