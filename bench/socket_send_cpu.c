/* socket_send_cpu: CPU per GiB of streaming over loopback TCP with send() and with
 * MSG_ZEROCOPY (both ends in this process; 256 KiB sends; docs/performance.md, "io_uring and
 * MSG_ZEROCOPY"). Also counts the completions the kernel marked as copied anyway.
 * Usage: bench_socket_send_cpu [GIB] (default 4) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

enum { kChunk = 256 << 10, kBuffers = 64 };

struct Receiver {
  int listener;
  size_t total;
};

static double CpuSeconds(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + 1e-6 * (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

static void* Receive(void* arg) {
  const struct Receiver* r = arg;
  const int s = accept(r->listener, NULL, NULL);
  char* buffer = malloc(kChunk);
  for (size_t got = 0; s >= 0 && buffer != NULL && got < r->total;) {
    const ssize_t n = recv(s, buffer, kChunk, MSG_WAITALL);
    if (n <= 0) break;
    got += (size_t)n;
  }
  free(buffer);
  if (s >= 0) close(s);
  return NULL;
}

/* Reaps zero-copy completions until at most `keep` sends are pending. */
static void Reap(int s, long* pending, long keep, long* copied) {
  while (*pending > keep) {
    char control[128];
    struct msghdr m = {.msg_control = control, .msg_controllen = sizeof control};
    if (recvmsg(s, &m, MSG_ERRQUEUE) < 0) {
      struct pollfd p = {s, 0, 0};
      poll(&p, 1, 10);
      continue;
    }
    const struct sock_extended_err* e = (const void*)CMSG_DATA(CMSG_FIRSTHDR(&m));
    *pending -= (long)(e->ee_data - e->ee_info) + 1;
    if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED) ++*copied;
  }
}

static int Stream(int zerocopy, size_t total) {
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof a;
  struct Receiver r = {socket(AF_INET, SOCK_STREAM, 0), total};
  if (r.listener < 0 || bind(r.listener, (struct sockaddr*)&a, sizeof a) != 0 || listen(r.listener, 1) != 0 ||
      getsockname(r.listener, (struct sockaddr*)&a, &length) != 0) {
    return -1;
  }
  pthread_t receiver;
  if (pthread_create(&receiver, NULL, Receive, &r) != 0) return -1;
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  int failed = s < 0 || connect(s, (struct sockaddr*)&a, sizeof a) != 0 ||
               (zerocopy && setsockopt(s, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) != 0);
  char* buffers = calloc(kBuffers, kChunk);
  failed = failed || buffers == NULL;
  const double before = CpuSeconds();
  long pending = 0, copied = 0;
  for (size_t sent = 0, i = 0; !failed && sent < total; ++i) {
    const ssize_t n = send(s, buffers + (i % kBuffers) * kChunk, kChunk, zerocopy ? MSG_ZEROCOPY : 0);
    if (n < 0 && errno != ENOBUFS) failed = 1;
    if (n > 0) sent += (size_t)n, pending += zerocopy;
    if (zerocopy) Reap(s, &pending, kBuffers / 2, &copied);
  }
  if (zerocopy && !failed) Reap(s, &pending, 0, &copied);
  if (s >= 0) shutdown(s, SHUT_WR);
  pthread_join(receiver, NULL);
  const double cpu_s = CpuSeconds() - before;
  if (s >= 0) close(s);
  close(r.listener);
  free(buffers);
  if (failed) return -1;
  printf("%-12s %.3f CPU-s per GiB (both ends)", zerocopy ? "MSG_ZEROCOPY" : "send", cpu_s / (double)(total >> 30));
  if (zerocopy) printf(", %ld completions said copied", copied);
  printf("\n");
  return 0;
}

int main(int argc, char** argv) {
  const size_t total = (size_t)(argc > 1 ? atoi(argv[1]) : 4) << 30;
  if (total == 0) {
    fprintf(stderr, "usage: %s [GIB]\n", argv[0]);
    return 2;
  }
  for (int zerocopy = 0; zerocopy <= 1; ++zerocopy) {
    if (Stream(zerocopy, total) != 0) {
      perror(zerocopy ? "MSG_ZEROCOPY" : "send");
      return 1;
    }
  }
  return 0;
}
