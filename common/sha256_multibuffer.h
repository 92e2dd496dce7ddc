// Multi-buffer SHA-256 with AVX-512: up to 16 independent messages hashed at once, one message
// per 32-bit lane of a 512-bit vector (message schedule and rounds vectorised across lanes);
// 8 or fewer on 256-bit vectors (AVX-512VL).
//
// The digests are plain SHA-256 (FIPS 180-4), byte for byte what OpenSSL's SHA256() gives for
// each message on its own. Per core on this project's test host (AMD EPYC, Zen 5), 16 x 1 MiB:
// 4.6 GB/s, against 2.0 GB/s for OpenSSL's SHA-NI path one message at a time; 8 lanes: 2.6 GB/s.
// So a batch pays only from about 7 messages of about equal length (a group costs what its
// longest message does): HashChunks (chunk_digest.h) decides.
//
// Requirements: the CPU and OS support AVX-512 F, BW and VL. Check Sha256MultiBufferSupported()
// and take another path (OpenSSL) when it is false: the hash is undefined (SIGILL) elsewhere.
// The implementation enables those instructions with target attributes, so it compiles without
// -mavx512* flags and nothing else is built for AVX-512.
//
// Thread-safe: pure functions, no global state. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gridcast {

// True when the running CPU and OS support what Sha256MultiBuffer needs.
bool Sha256MultiBufferSupported() noexcept;

// SHA-256 of `count` messages of any lengths (each its own): out[i] is the digest of
// data[i][0, length[i]). The pointers need no alignment and may repeat or overlap; with length
// 0 they are not read. Reads exactly the given bytes. `count` may be 0.
void Sha256MultiBuffer(const uint8_t* const data[], const size_t length[], size_t count,
                       uint8_t (*out)[32]) noexcept;

}  // namespace gridcast
