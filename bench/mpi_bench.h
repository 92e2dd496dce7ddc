/* What the MPI benchmark programs (mpi_bcast.c, mpi_allgather.c) share: a fast checksum of a
 * buffer and a fast pseudo-random fill. */
#ifndef GRIDCAST_BENCH_MPI_BENCH_H_
#define GRIDCAST_BENCH_MPI_BENCH_H_

#include <stddef.h>
#include <stdint.h>

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

#endif /* GRIDCAST_BENCH_MPI_BENCH_H_ */
