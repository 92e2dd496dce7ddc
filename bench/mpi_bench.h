/* What the MPI benchmark programs (mpi_bcast.c, mpi_allgather.c) share: a fast checksum of a
 * buffer, a fast pseudo-random fill, and the CPU time of the calling process. */
#ifndef GRIDCAST_BENCH_MPI_BENCH_H_
#define GRIDCAST_BENCH_MPI_BENCH_H_

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* 64-bit FNV-1a. */
static inline uint64_t Fnv1a64(const unsigned char* data, size_t size) {
  uint64_t hash = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

/* xorshift64*: fast, and different payloads per run do not matter to the collectives. */
static inline void FillPseudoRandom(unsigned char* data, size_t size, uint64_t seed) {
  uint64_t state = seed | 1;
  size_t i = 0;
  while (i < size) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    uint64_t word = state * 2685821657736338717ull;
    for (int b = 0; b < 8 && i < size; ++b, ++i) data[i] = (unsigned char)(word >> (8 * b));
  }
}

/* User + system CPU seconds this process has used so far, all its threads (Open MPI's, and the
 * gridcast shim's when it is preloaded) together. */
static inline double ProcessCpuSeconds(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (double)usage.ru_utime.tv_sec + 1e-6 * (double)usage.ru_utime.tv_usec + (double)usage.ru_stime.tv_sec +
         1e-6 * (double)usage.ru_stime.tv_usec;
}

/* User + system CPU seconds the calling thread has used so far: a rank's main thread, where its
 * MPI_Bcast or MPI_Allgather makes progress (Open MPI's TCP transport has no thread of its own
 * by default). */
static inline double ThreadCpuSeconds(void) {
  struct timespec used;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
  return (double)used.tv_sec + 1e-9 * (double)used.tv_nsec;
}

/* Every rank's `value` at rank 0, in rank order (malloc'd there, the caller frees it; NULL at
 * the other ranks). Collective: every rank calls it. */
static inline double* GatherAtRankZero(double value, int rank, int ranks) {
  double* all = rank == 0 ? malloc(sizeof(double) * (size_t)ranks) : NULL;
  MPI_Gather(&value, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return all;
}

/* Seconds since the epoch: when the timed region began, for bench to measure the gridcast
 * daemons (the shim's) over the same region. */
static inline double UnixSeconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

/* Prints `"NAME": [F, ...]`, one per rank: members of the result line bench parses. */
static inline void PrintSecondsOfRanks(const char* name, const double* seconds, int ranks) {
  printf("\"%s\": [", name);
  for (int r = 0; r < ranks; ++r) printf("%s%.6f", r == 0 ? "" : ", ", seconds[r]);
  printf("]");
}

/* The CPU members of the result line: each rank's CPU over the timed region ("cpu_s"), its main
 * thread's alone ("thread_cpu_s"), that of taking its receive buffer's memory before it
 * ("buffer_cpu_s": what a gridcast receiver does at Prepare), and when rank 0's timed region
 * began. Collective: every rank calls it. */
static inline void PrintCpuOfRanks(double cpu_s, double thread_cpu_s, double buffer_cpu_s, double timed_from_unix_s,
                                   int rank, int ranks) {
  double* timed = GatherAtRankZero(cpu_s, rank, ranks);
  double* thread = GatherAtRankZero(thread_cpu_s, rank, ranks);
  double* buffer = GatherAtRankZero(buffer_cpu_s, rank, ranks);
  if (rank == 0) {
    PrintSecondsOfRanks("cpu_s", timed, ranks);
    printf(", ");
    PrintSecondsOfRanks("thread_cpu_s", thread, ranks);
    printf(", ");
    PrintSecondsOfRanks("buffer_cpu_s", buffer, ranks);
    printf(", \"timed_from_unix_s\": %.6f", timed_from_unix_s);
  }
  free(timed);
  free(thread);
  free(buffer);
}

#endif /* GRIDCAST_BENCH_MPI_BENCH_H_ */
