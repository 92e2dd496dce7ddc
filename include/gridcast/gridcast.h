/* libgridcast C API: for MPI programs and other languages. Mirrors gridcast.hpp.
 *
 * Every function returns 0 on success and a negative value on failure; gridcast_last_error()
 * then describes the failure of the last call on that client (thread-local per client).
 * Handles are freed by their *_free / *_close function. */
#ifndef GRIDCAST_GRIDCAST_H_
#define GRIDCAST_GRIDCAST_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gridcast_client gridcast_client;
typedef struct gridcast_broadcast gridcast_broadcast;

/* source may be NULL (the member on this host, else the topology's source, else the first member). */
int gridcast_open(const char* cluster_file, const char* source, gridcast_client** out);
void gridcast_close(gridcast_client* client);
const char* gridcast_last_error(const gridcast_client* client);
/* The chunk digest of this client's later sends: "sha256" or "xxh3" (see SendOptions::digest
 * in gridcast.hpp); NULL or "" = the cluster file's digest:, else sha256. */
int gridcast_set_digest(gridcast_client* client, const char* digest);
/* Whether receivers of this client's later sends take what they can from an earlier copy of
 * the payload they hold (SendOptions::no_reuse in gridcast.hpp): 1 (the default) or 0. */
int gridcast_set_reuse(gridcast_client* client, int reuse);

/* algorithm may be NULL ("auto"). Split-phase: start, then poll or wait. */
int gridcast_send_file_start(gridcast_client* client, const char* path, const char* algorithm,
                             gridcast_broadcast** out);
int gridcast_send_buffer_start(gridcast_client* client, const void* data, size_t size,
                               const char* name, const char* algorithm, gridcast_broadcast** out);
/* The payload at an http:// or https:// URL, fetched by the source daemon while it sends
 * (docs/origin.md). name may be NULL (the URL's last path component), sha256_hex NULL (not
 * checked), ca_pem NULL (the system's CAs); headers holds header_count "Name: value" lines
 * (tokens: sent to the URL's own host only, never logged). */
int gridcast_send_url_start(gridcast_client* client, const char* url, const char* name, const char* algorithm,
                            const char* sha256_hex, const char* const* headers, size_t header_count,
                            const char* ca_pem, gridcast_broadcast** out);
/* 1 when ended, 0 while running; *fraction (may be NULL) gets the share of chunks delivered. */
int gridcast_poll(gridcast_broadcast* broadcast, double* fraction);
/* 0 when every member verified its copy; *completion_s (may be NULL) gets the wall time. */
int gridcast_wait(gridcast_client* client, gridcast_broadcast* broadcast, double* completion_s);
void gridcast_broadcast_free(gridcast_broadcast* broadcast);

int gridcast_receive_buffer(gridcast_client* client, const char* member, const char* name,
                            void* data, size_t size, double timeout_s);

#ifdef __cplusplus
}
#endif

#endif /* GRIDCAST_GRIDCAST_H_ */
