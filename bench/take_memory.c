/* take_memory: what taking 1 GiB of memory costs in CPU on this host, each way a receiver can
 * take it (docs/performance.md, "Taking memory here"). A file in DIR (default /dev/shm):
 * fallocate; fallocate then MADV_POPULATE_WRITE on a mapping; MADV_POPULATE_WRITE alone;
 * pwrite in 1 MiB pieces (the copy included); and an anonymous buffer with a byte written per
 * page, as the MPI benchmark touches its buffer. Usage: bench_take_memory [DIR] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { kPiece = 1 << 20 };
static const size_t kGiB = (size_t)1 << 30;

static double CpuSeconds(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + 1e-6 * (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
}

/* Takes the memory `how`; 0 on success. */
static int Take(const char* how, const char* path) {
  if (strcmp(how, "anonymous, a byte per page") == 0) {
    unsigned char* p = malloc(kGiB);
    if (p == NULL) return -1;
    for (size_t i = 0; i < kGiB; i += 4096) p[i] = 1;
    free(p);
    return 0;
  }
  const int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return -1;
  int failed = ftruncate(fd, (off_t)kGiB);
  if (!failed && strstr(how, "fallocate") != NULL) failed = posix_fallocate(fd, 0, (off_t)kGiB);
  if (!failed && strstr(how, "populate") != NULL) {
    void* p = mmap(NULL, kGiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    failed = p == MAP_FAILED || madvise(p, kGiB, MADV_POPULATE_WRITE) != 0;
    if (p != MAP_FAILED) munmap(p, kGiB);
  }
  if (!failed && strcmp(how, "pwrite") == 0) {
    static unsigned char piece[kPiece];
    memset(piece, 1, sizeof piece);
    for (size_t o = 0; !failed && o < kGiB; o += kPiece) failed = pwrite(fd, piece, kPiece, (off_t)o) != kPiece;
  }
  close(fd);
  return failed ? -1 : 0;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : "/dev/shm";
  char path[4096];
  snprintf(path, sizeof path, "%s/gridcast-take-memory-%d", dir, (int)getpid());
  const char* ways[] = {"fallocate", "fallocate, then populate", "populate", "pwrite", "anonymous, a byte per page"};
  for (size_t w = 0; w < sizeof ways / sizeof ways[0]; ++w) {
    const double before = CpuSeconds();
    const int failed = Take(ways[w], path);
    const double cpu_s = CpuSeconds() - before;  /* the file is removed after: not counted */
    unlink(path);
    if (failed) {
      fprintf(stderr, "%s: failed in %s\n", ways[w], dir);
      return 1;
    }
    printf("%-28s %.3f CPU-s per GiB\n", ways[w], cpu_s);
  }
  return 0;
}
