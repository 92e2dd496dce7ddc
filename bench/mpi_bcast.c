/* mpi_bcast: times one MPI_Bcast of a large buffer for `gridcast bench --mode mpi`.
 *
 * Usage: mpi_bcast SIZE_BYTES
 * Rank 0 fills the buffer with pseudo-random bytes; after a barrier every rank times
 * MPI_Bcast of the whole buffer (in pieces of at most INT_MAX bytes, MPI's count limit), then a
 * second barrier ends the clock, so the time is until the last rank holds its copy. Every rank
 * hashes its copy (64-bit FNV-1a) and rank 0 gathers the hashes and compares them with its own.
 * Every rank also measures its user + system CPU time between the two barriers (all its threads,
 * and its main thread alone) and that of taking its buffer's memory before them, gathered at
 * rank 0 too. Rank 0 prints one JSON line: {"completion_s": F, "verified": B, "ranks": N,
 * "cpu_s": [F, ...], "thread_cpu_s": [F, ...], "buffer_cpu_s": [F, ...], "timed_from_unix_s": F}
 * (by rank; the last when rank 0's timed region began).
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi_bench.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  char* end = NULL;
  const unsigned long long size = argc == 2 ? strtoull(argv[1], &end, 10) : 0;
  if (argc != 2 || *end != '\0' || size == 0) {
    if (rank == 0) fprintf(stderr, "usage: mpi_bcast SIZE_BYTES (SIZE_BYTES > 0)\n");
    MPI_Finalize();
    return 2;
  }
  const double buffer_cpu_start_s = ProcessCpuSeconds();
  unsigned char* buffer = malloc(size);
  if (buffer == NULL) {
    fprintf(stderr, "rank %d: cannot allocate %llu bytes\n", rank, size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) {
    FillPseudoRandom(buffer, size, (uint64_t)MPI_Wtime() * 1000003u);
  } else {
    /* Touch every page so page faults are not timed. */
    for (unsigned long long i = 0; i < size; i += 4096) buffer[i] = 0;
  }
  const double buffer_cpu_s = ProcessCpuSeconds() - buffer_cpu_start_s;

  MPI_Barrier(MPI_COMM_WORLD);
  const double timed_from_unix_s = UnixSeconds();
  const double start = MPI_Wtime();
  const double cpu_start_s = ProcessCpuSeconds();
  const double thread_cpu_start_s = ThreadCpuSeconds();
  for (unsigned long long offset = 0; offset < size;) {
    const unsigned long long left = size - offset;
    const int count = left > INT_MAX ? INT_MAX : (int)left;
    MPI_Bcast(buffer + offset, count, MPI_BYTE, 0, MPI_COMM_WORLD);
    offset += (unsigned long long)count;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double completion_s = MPI_Wtime() - start;
  const double cpu_s = ProcessCpuSeconds() - cpu_start_s;
  const double thread_cpu_s = ThreadCpuSeconds() - thread_cpu_start_s;

  uint64_t hash = Fnv1a64(buffer, size);
  uint64_t* hashes = rank == 0 ? malloc(sizeof(uint64_t) * (size_t)ranks) : NULL;
  MPI_Gather(&hash, 1, MPI_UINT64_T, hashes, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    int verified = 1;
    for (int r = 0; r < ranks; ++r) {
      if (hashes[r] != hash) {
        verified = 0;
        fprintf(stderr, "rank %d: checksum differs from rank 0's\n", r);
      }
    }
    printf("{\"completion_s\": %.6f, \"verified\": %s, \"ranks\": %d, ", completion_s,
           verified ? "true" : "false", ranks);
    free(hashes);
  }
  PrintCpuOfRanks(cpu_s, thread_cpu_s, buffer_cpu_s, timed_from_unix_s, rank, ranks);
  if (rank == 0) {
    printf("}\n");
    fflush(stdout);
  }
  free(buffer);
  MPI_Finalize();
  return 0;
}
