/* mpi_allgather: times one MPI_Allgather of large parts for `gridcast bench --mode mpi-allgather`.
 *
 * Usage: mpi_allgather TOTAL_BYTES
 * Each rank contributes TOTAL_BYTES / ranks bytes (rounded up; at most INT_MAX, MPI's count
 * limit), filled with pseudo-random bytes of its own. After a barrier every rank times
 * MPI_Allgather of its part into a buffer of all parts; a second barrier ends the clock, so the
 * time is until the last rank holds every part. Each rank hashes its own part (64-bit FNV-1a),
 * the hashes are gathered everywhere, and every rank checks each part it received against its
 * contributor's hash. Every rank also measures its user + system CPU time between the two
 * barriers (all its threads, and its main thread alone) and that of taking its receive buffer's
 * memory before them, gathered at rank 0. Rank 0 prints one JSON line: {"completion_s": F,
 * "verified": B, "ranks": N, "part_bytes": P, "cpu_s": [F, ...], "thread_cpu_s": [F, ...],
 * "buffer_cpu_s": [F, ...], "timed_from_unix_s": F} (by rank; the last when rank 0's timed
 * region began).
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
  const unsigned long long total = argc == 2 ? strtoull(argv[1], &end, 10) : 0;
  const unsigned long long part = total == 0 ? 0 : (total + (unsigned long long)ranks - 1) / (unsigned long long)ranks;
  if (argc != 2 || *end != '\0' || total == 0 || part > INT_MAX) {
    if (rank == 0) fprintf(stderr, "usage: mpi_allgather TOTAL_BYTES (0 < TOTAL_BYTES / ranks <= INT_MAX)\n");
    MPI_Finalize();
    return 2;
  }
  unsigned char* mine = malloc(part);
  unsigned char* all = malloc(part * (size_t)ranks);
  uint64_t* hashes = malloc(sizeof(uint64_t) * (size_t)ranks);
  if (mine == NULL || all == NULL || hashes == NULL) {
    fprintf(stderr, "rank %d: cannot allocate %llu bytes\n", rank, part * (unsigned long long)(ranks + 1));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  FillPseudoRandom(mine, part, (uint64_t)(MPI_Wtime() * 1000003.0) + 7919u * (uint64_t)rank);
  /* Touch every page of the receive buffer so page faults are not timed. */
  const double buffer_cpu_start_s = ProcessCpuSeconds();
  for (unsigned long long i = 0; i < part * (unsigned long long)ranks; i += 4096) all[i] = 0;
  const double buffer_cpu_s = ProcessCpuSeconds() - buffer_cpu_start_s;

  MPI_Barrier(MPI_COMM_WORLD);
  const double timed_from_unix_s = UnixSeconds();
  const double start = MPI_Wtime();
  const double cpu_start_s = ProcessCpuSeconds();
  const double thread_cpu_start_s = ThreadCpuSeconds();
  MPI_Allgather(mine, (int)part, MPI_BYTE, all, (int)part, MPI_BYTE, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double completion_s = MPI_Wtime() - start;
  const double cpu_s = ProcessCpuSeconds() - cpu_start_s;
  const double thread_cpu_s = ThreadCpuSeconds() - thread_cpu_start_s;

  const uint64_t own = Fnv1a64(mine, part);
  MPI_Allgather(&own, 1, MPI_UINT64_T, hashes, 1, MPI_UINT64_T, MPI_COMM_WORLD);
  int ok = 1;
  for (int r = 0; r < ranks; ++r) {
    if (Fnv1a64(all + (size_t)r * part, part) != hashes[r]) {
      ok = 0;
      fprintf(stderr, "rank %d: the part of rank %d differs from what it sent\n", rank, r);
    }
  }
  int all_ok = 0;
  MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("{\"completion_s\": %.6f, \"verified\": %s, \"ranks\": %d, \"part_bytes\": %llu, ", completion_s,
           all_ok ? "true" : "false", ranks, part);
  }
  PrintCpuOfRanks(cpu_s, thread_cpu_s, buffer_cpu_s, timed_from_unix_s, rank, ranks);
  if (rank == 0) {
    printf("}\n");
    fflush(stdout);
  }
  free(mine);
  free(all);
  free(hashes);
  MPI_Finalize();
  return 0;
}
