// PayloadStore: one payload on disk at one member, chunk by chunk, verified.
//
// A receiver writes chunks into "<name>.part" at their offsets (pwrite) only after their
// digest (the plan's: SHA-256 or XXH3-128, common/chunk_digest.h) matches the plan; each
// verified chunk is marked in a bitmap persisted under "<data_dir>/.gridcast/state/". A
// restarted daemon reopens the same payload, re-verifies the chunks its bitmap marks (a torn
// write or a crash before writeback costs a re-receive, never a bad chunk) and receives only
// the rest.
//
// Each chunk's bytes are hashed once, when they are verified; the store keeps those digests.
// The end-to-end check does not read the payload again: Finalize() digests the list of what
// each stored chunk hashed to (ChunkListDigest, as BitTorrent v2's piece layers) and compares
// it with the list agreed at Prepare, so a member's final digest says that every chunk it
// holds was hashed on arrival and matched the source's. Bytes that change on disk afterwards
// are found by Scrub() (`gridcast list --verify`) or by the re-verification on resume, never
// on the hot path. A finished payload keeps its chunk list under .gridcast/state for those.
//
// A push receiver may instead write each verified chunk into memory that processes of its host
// lent it (OpenForRankMemory, rank_memory.h: the MPI shim's ranks), keeping no file; a source
// may send from such memory (OpenLentSource).
//
// The kinds are types behind this one interface, each in a file of its own: SourceFile
// (source_file.h: a complete file read, or one its sender still fills), ReceivedFile
// (received_file.h: a receiver's .part file with its resume bitmap), both on FileStore
// (file_store.h: chunks at their offsets in a file), and LentMemoryStore (lent_memory_store.h).
// This class keeps what they share: which chunks are verified, with what digests, and how a
// received chunk becomes verified. The factories below choose the kind.
//
// What only some kinds do is a capability (StoreCapabilities), asked for once when a plan's
// execution is made, never per chunk: receiving into the payload's final pages
// (ChunkPlacement), a source still being written (GrowingSource), letting chunks forwarded to
// every child leave memory (ForwardedChunks).
//
// Two writers may share a store: the push executor (whole verified chunks) and the BitTorrent
// swarm (blocks of a chunk as they arrive, then a check of the stored chunk). Unverified
// blocks only ever land in chunks the bitmap does not mark, and marking happens only after
// the stored bytes hash right, so a chunk marked verified is never overwritten.
// Thread-safe, except that Finalize() must not race with itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/chunk_bits.h"
#include "common/chunk_digest.h"
#include "common/chunk_run.h"
#include "common/chunk_ref.h"
#include "common/crypto.h"
#include "common/file_io.h"
#include "common/safe_path.h"
#include "daemon/store/digest_log.h"
#include "daemon/store/payload_identity.h"
#include "daemon/store/rank_memory.h"
#include "daemon/store/state_files.h"
#include "delta/byte_source.h"
#include "include/gridcast/result.h"

namespace gridcast {

// What Scrub() found in one held payload.
struct ScrubReport {
  uint64_t chunks = 0;
  std::vector<uint64_t> bad_chunks;  // whose stored bytes no longer hash to the recorded digest
};

// Receiving a chunk straight into the payload's final pages: one copy in per hop, where a
// buffer and a pwrite make two. A mapped in-memory payload offers it (ReceiveOptions::in_place).
class ChunkPlacement {
 public:
  virtual ~ChunkPlacement() = default;
  // The final pages of `chunk`, claimed for one receiver (its memory taken now, not page by
  // page as bytes land) until PayloadStore::StoreReceived stores them (ReceivedChunk::in_place)
  // or Release(). Empty when the chunk is held or claimed: then receive it into a buffer.
  virtual std::span<uint8_t> Claim(uint64_t chunk) = 0;
  // Ends a claim whose bytes did not all arrive; they stay unmarked.
  virtual void Release(uint64_t chunk) = 0;
};

// A source whose sender is still writing the payload (PayloadStore::OpenFilling).
class GrowingSource {
 public:
  virtual ~GrowingSource() = default;
  // Verifies, in order, the chunks now whole in the file (below its size), and the whole
  // payload's SHA-256 with the last one, and holds those that match. Returns how many it
  // newly holds. DataLoss when the bytes differ from what the sender declared (the chunk, or
  // the last one for the whole SHA-256, is then never held); InvalidArgument when the file
  // grew past the declared size; Aborted when the sender removed it (it gave up). Must not
  // race with itself.
  virtual Result<uint64_t> VerifyFilled() = 0;
};

// A source that reads its payload as it sends it (PayloadStore::OpenStreamedSource): nothing
// was read at open, and a chunk is held once its batch of digests is sealed (SourceSealing,
// daemon/executor/source_sealing.h, hashes them on the workers a few batches ahead of the
// senders). The first byte then waits for the first batch, not for the whole payload.
class StreamedSource {
 public:
  virtual ~StreamedSource() = default;
  struct Hashed {
    std::vector<Digest> digests;  // one per chunk, in order
    std::vector<uint32_t> weak;   // their weak checksums, when asked for
  };
  // Reads and hashes `count` chunks from `first`. Any thread; calls for other chunks may
  // run at the same time. A payload its sender still writes (OpenStreamedFilling):
  // Unavailable while the chunks are not all in the file yet (ask again later), Aborted once
  // the sender removed the file, InvalidArgument when it grew past the declared size.
  virtual Result<Hashed> HashChunks(uint64_t first, uint32_t count, WeakChecksums weak) = 0;
  // Feeds the payload's bytes from where the call before stopped up to `end`, in order, to its
  // SHA-256. The digest once the last byte is in; DataLoss when it is not the SHA-256 the
  // payload's sender declared (OpenStreamedFilling). Must not race with itself.
  virtual Result<std::optional<Digest>> HashWholeUpTo(uint64_t end) = 0;
  // Holds `count` chunks from `first`: their batch is sealed, and they may be sent.
  virtual Status HoldSealed(uint64_t first, uint32_t count) = 0;
};

// Chunks this member has forwarded to every child may leave memory: a received file's window
// of page cache (ReceiveOptions::page_cache_window_bytes), lent memory's kept buffers.
class ForwardedChunks {
 public:
  virtual ~ForwardedChunks() = default;
  virtual void Forwarded(uint64_t chunk) = 0;
  // Forwarded() may wait for the disk: then it is called off the io thread.
  virtual bool MayBlock() const = 0;
};

// Chunks a receiver may take from bytes it holds already: an earlier attempt's ".part" (its
// resume bitmap names them) and an earlier copy (the one under the payload's name, or the
// base) when the source offers reuse. Each is taken only once the digest it must have is known here, and only when its
// bytes hash to it; where the digests arrive batch by batch (docs/streamed-digests.md), so
// does this.
class KnownChunks {
 public:
  virtual ~KnownChunks() = default;
  // Takes what the bytes here supply among the `count` chunks from `first`, whose expected
  // digests are now known (PayloadStore::ExpectedDigest); `weak`: their weak checksums, one
  // per chunk, when the source offers reuse (empty: nothing is searched by weak checksum,
  // only the resume bitmap). Reads and hashes: not on the io thread.
  struct Taken {
    std::vector<uint64_t> chunks;  // newly held, in increasing order
    uint64_t resumed_chunks = 0;   // of them, from an earlier attempt's ".part"
    uint64_t reused_bytes = 0;     // the others' bytes, from an earlier copy
  };
  virtual Taken TakeKnownChunks(uint64_t first, uint64_t count, std::span<const uint32_t> weak) = 0;
  // Whether there is anything to look in: an earlier attempt's verified chunks, an earlier copy.
  virtual bool Searches() const = 0;
  // The chunks an earlier attempt verified that are not held again yet.
  virtual uint64_t Candidates() const = 0;
};

class WarmMemory;

struct StoreCapabilities {
  ChunkPlacement* placement = nullptr;
  GrowingSource* growing = nullptr;
  StreamedSource* streamed = nullptr;
  ForwardedChunks* forwarded = nullptr;
  KnownChunks* known = nullptr;
  // Storing a chunk received into a buffer is one copy, as receiving into place is (lent
  // memory, written with process_vm_writev): where the digest is cheap, worth doing at once.
  bool one_copy_writes = false;
};

// How a receiver makes sure the payload fits before the broadcast starts.
enum class ReceiveSpace {
  kReserve,  // allocate it all now (fallocate), up to kLargestReservedBytes; beyond, as kCheckFree
  // Only check that the file system has it free now, and take it as chunks arrive. On tmpfs
  // allocating is zeroing memory: 15 members reserving 256 MiB at once on a 2-core host
  // spent 0.45 s of Prepare doing it, where taking the pages as chunks arrive overlaps the
  // transfer (PrepareRequest.take_memory_lazily).
  kCheckFree,
};

inline constexpr uint64_t kLargestReservedBytes = uint64_t{128} << 30;

// An earlier copy a receiver searches for chunks it need not receive (docs/delta.md).
struct EarlierCopy {
  std::string name;  // below data_dir by the same rules (BroadcastRequest.base), or empty
  // Bytes this daemon composed itself (a directory payload's tree read as its archive,
  // ReadDirectoryAsArchive), or null. Either replaces the copy under `name`.
  std::shared_ptr<const ByteSource> bytes = nullptr;
};

struct ReceiveOptions {
  ReceiveSpace space = ReceiveSpace::kReserve;
  EarlierCopy earlier{};
  // In memory: a payload on a tmpfs is mapped, and its chunks received into their final pages
  // (StoreCapabilities::placement) and forwarded from them. On a disk nothing changes: its
  // pages would be read (or zeroed) in before they are written, where a pwrite fills them.
  // Only for one writer per chunk at a time (push plans: a swarm's blocks go through
  // WriteBlock).
  bool in_place = false;
  // Takes the memory of every chunk not held yet now, as an MPI program allocates and touches
  // its receive buffer before the broadcast, not chunk by chunk while data arrives: a mapped
  // payload's pages are populated, another's are written with zeros (harmless: those bytes
  // are unverified anyway).
  bool take_memory_now = false;
  // Push receivers recycle a window of page cache instead of filling memory with the payload:
  // each chunk written starts its writeback at once, and a chunk forwarded to every child
  // (StoreCapabilities::forwarded) leaves the page cache, oldest first, once more than this
  // many bytes of such chunks wait. Besides bounding memory for payloads larger than RAM,
  // reusing freed pages is much cheaper than taking fresh ones (docs/performance.md). 0 leaves
  // the page cache to the kernel.
  uint64_t page_cache_window_bytes = 0;
  // A new ".part" on a tmpfs takes a spare's pages, held already, where there is one
  // (warm_memory.h); null takes fresh ones.
  WarmMemory* warm = nullptr;
};

class PayloadStore {
 public:
  // Reads an existing file to compute its identity (chunk hashes with `digest` and the whole
  // SHA-256). The file is only read, never written.
  // `io`, here and in OpenForReceive, makes the store's reads and writes (tests inject faults).
  // With `weak` kCompute, the identity also has every chunk's weak checksum, computed in the
  // same pass.
  static Result<std::unique_ptr<PayloadStore>> OpenSource(const std::string& path, uint64_t chunk_bytes,
                                                          ChunkDigest digest, FileIo& io = SystemFileIo(),
                                                          WeakChecksums weak = WeakChecksums::kSkip);

  // Like OpenSource, without reading anything now: the file is hashed as it is sent
  // (StreamedSource). Its identity has no list of chunk digests; its SHA-256 is known once the
  // last batch is sealed (PayloadStore::digest_log()'s closing). With `weak` kCompute the
  // batches carry weak checksums (PayloadIdentity::streams_weak_checksums).
  static Result<std::unique_ptr<PayloadStore>> OpenStreamedSource(const std::string& path, uint64_t chunk_bytes,
                                                                  ChunkDigest digest, FileIo& io = SystemFileIo(),
                                                                  WeakChecksums weak = WeakChecksums::kSkip);

  // A payload its sender is still writing to `path`, in order (BroadcastRequest.fill): the
  // source sends each chunk as soon as it is there, instead of after a copy of the whole.
  // `identity` is what the sender says the file will hold. No chunk is held until its
  // GrowingSource found it whole in the file, hashing to the identity's digest. The file is
  // only read.
  static Result<std::unique_ptr<PayloadStore>> OpenFilling(const std::string& path, PayloadIdentity identity,
                                                           FileIo& io = SystemFileIo());
  // The same for a sender that declares only the size (and perhaps the whole payload's
  // SHA-256): hashed as it is sent, as OpenStreamedSource, each batch once the file holds all
  // of its chunks. The bytes below the file's size are taken as the sender's: it writes in
  // order. REQUIRES: size_bytes > 0.
  static Result<std::unique_ptr<PayloadStore>> OpenStreamedFilling(const std::string& path, uint64_t size_bytes,
                                                                   uint64_t chunk_bytes, ChunkDigest digest,
                                                                   WeakChecksums weak,
                                                                   std::optional<Digest> declared_sha256,
                                                                   FileIo& io = SystemFileIo());

  // Like OpenSource, for a complete payload this daemon holds: `name` below data_dir under
  // the rules of safe_path.h, and the file itself may not be a symlink either. The chunk size
  // is `chunk_bytes_for_size(size)`. NotFound when no complete payload has that name.
  static Result<std::unique_ptr<PayloadStore>> OpenHeld(
      const std::string& data_dir, const std::string& name,
      const std::function<uint64_t(uint64_t size_bytes)>& chunk_bytes_for_size, FileIo& io = SystemFileIo());

  // Prepares to receive `name` below data_dir (see safe_path.h), making sure of the space
  // (ResourceExhausted when the file system cannot hold it). Chunks an earlier attempt
  // verified (its resume bitmap) and chunks of an earlier copy (KnownChunks) are held once
  // they hash to their digests: at once when the identity lists every digest, else as the
  // digests arrive. The earlier copy, searched only when weak checksums are offered, is the
  // one under `name` (complete: only a finished copy has the name) or `options.earlier`; it is
  // searched near where each chunk falls (docs/delta.md), what it gives is copied into the
  // new one, and it stays whole until Finalize renames the new one over it.
  static Result<std::unique_ptr<PayloadStore>> OpenForReceive(const std::string& data_dir,
                                                              const std::string& name,
                                                              PayloadIdentity identity,
                                                              FileIo& io = SystemFileIo(),
                                                              const ReceiveOptions& options = {});

  // A receiver whose payload goes into memory local processes lent (rank_memory.h), not into a
  // file: no file is written, nothing is resumed, and once complete the payload is theirs
  // (Finalize checks the chunk list and records nothing). Whole chunks only: push plans.
  static Result<std::unique_ptr<PayloadStore>> OpenForRankMemory(const std::string& name, PayloadIdentity identity,
                                                                 std::shared_ptr<RankMemory> destination);
  // A source whose payload is memory a local process lent (its MPI shim's root): `identity` is
  // what the lender declared it holds; every chunk counts as held, is read from there as it is
  // sent, and is checked by each receiver as always.
  static Result<std::unique_ptr<PayloadStore>> OpenLentSource(const std::string& name, PayloadIdentity identity,
                                                              std::shared_ptr<RankMemory> lent);

  virtual ~PayloadStore() = default;
  // Where this store's bitmaps, and an execution's over its chunks, are mapped from past
  // ChunkBits::kInMemoryBits chunks; empty: memory.
  const std::string& spill_dir() const { return spill_dir_; }
  PayloadStore(const PayloadStore&) = delete;
  PayloadStore& operator=(const PayloadStore&) = delete;

  // What this kind offers beyond the chunk interface; the same for the store's whole life.
  virtual StoreCapabilities capabilities() { return {}; }

  const PayloadIdentity& identity() const { return identity_; }
  // Where the digests the chunks are checked against come from once the plan streams them
  // (docs/streamed-digests.md): the log of the batches this member verified (or, at the
  // source, signed). Set before the store is shared with another thread. Without one, or for a
  // chunk whose batch the log lacks, the identity's list (while Prepare still carries it).
  void ExpectDigestsFrom(std::shared_ptr<DigestLog> log) { digest_log_ = std::move(log); }
  const std::shared_ptr<DigestLog>& digest_log() const { return digest_log_; }
  // WriteChunk of bytes the caller has just hashed to `digest` (a chunk found in an earlier
  // copy, an allgather part seeded: read once and hashed once): the same checks, without
  // hashing them again.
  Status WriteHashedChunk(uint64_t chunk, std::span<const uint8_t> data, const Digest& digest, bool* newly_verified);
  // What `chunk`'s bytes must hash to; none while it is not known here yet.
  std::optional<Digest> ExpectedDigest(uint64_t chunk) const;
  bool Has(uint64_t chunk) const;
  uint64_t VerifiedCount() const { return verified_.load(std::memory_order_relaxed); }
  // The bytes of the chunks taken from an earlier copy the member held (an identical one, or
  // chunks found in another version: docs/delta.md), each verified like a received one; those
  // chunks count in VerifiedCount().
  uint64_t ReusedBytes() const { return reused_bytes_.load(std::memory_order_relaxed); }
  uint64_t ReusedChunks() const { return reused_chunks_.load(std::memory_order_relaxed); }
  // The chunks an earlier attempt at this payload had verified, held again (KnownChunks).
  uint64_t ResumedChunks() const { return resumed_chunks_.load(std::memory_order_relaxed); }
  bool Complete() const { return VerifiedCount() == identity_.NumChunks(); }
  // The verified-chunk bitmap of chunks [first, first + count) (cut at the last chunk), chunk
  // first + c at bit c % 8 of byte c / 8.
  std::vector<uint8_t> BitmapBytes(uint64_t first, uint64_t count) const;
  // The runs of verified chunks, from the first, at most `most` of them.
  std::vector<ChunkRun> HeldRuns(size_t most) const;

  // Chunks received, for StoreReceived: each in a buffer, or in its place (ChunkPlacement).
  // StoreReceived fills `status` and `newly_verified`.
  struct ReceivedChunk {
    uint64_t chunk = 0;
    std::span<const uint8_t> data;  // the buffer, or the claimed place when in_place
    // The buffer `data` lies in, when the caller lets the store keep it (a rank-memory store
    // forwards from it).
    std::shared_ptr<const std::vector<uint8_t>> buffer;
    bool in_place = false;
    Status status;
    bool newly_verified = false;
  };
  // Verifies each received chunk against its digest, stores it and marks it, hashed together
  // (HashChunks: SHA-256 hashes up to kChunksHashedTogether at once). Per chunk: DataLoss on a
  // digest or size mismatch (nothing is written; in place, the bytes stay unmarked);
  // ResourceExhausted when the disk is full; Aborted when another connection is receiving the
  // chunk into place (nothing is written: ask again later). A chunk received in place ends its
  // claim either way. Storing a chunk that is already verified is a no-op; `newly_verified`
  // says whether this call marked it.
  void StoreReceived(std::span<ReceivedChunk> received);
  // StoreReceived of one chunk in a buffer.
  Status WriteChunk(uint64_t chunk, std::span<const uint8_t> data, bool* newly_verified = nullptr);

  // Writes unverified bytes at `offset` inside a chunk that is not verified yet (a BitTorrent
  // block); a no-op for a verified chunk. VerifyStoredChunk() later decides whether they count.
  virtual Status WriteBlock(uint64_t chunk, uint64_t offset, std::span<const uint8_t> data) = 0;

  // Hashes what is stored for the chunk and marks it verified when it matches; DataLoss when
  // it does not (the bytes stay unmarked and will be overwritten). OK if already verified;
  // `newly_verified` as for WriteChunk.
  virtual Status VerifyStoredChunk(uint64_t chunk, bool* newly_verified = nullptr) = 0;

  // REQUIRES: Has(chunk). Reads the chunk into `out` (sized ChunkSize(chunk)).
  Status ReadChunk(uint64_t chunk, std::span<uint8_t> out) const;
  // REQUIRES: Has(chunk). Reads `out.size()` bytes at `offset` inside the chunk.
  Status ReadBlock(uint64_t chunk, uint64_t offset, std::span<uint8_t> out) const;

  // Where the bytes of `chunk` are, for sending them: a range of the payload's file (the
  // transport may send it without a copy through user space), or its mapped pages when it
  // is received in place (copied into the socket, as MPI sends: a sendfile from a tmpfs
  // looks up, marks and splices each 4 KiB page, which costs more than the copy; on flat8-10g a
  // receiver's CPU per GiB fell from 0.78-0.82 to 0.74). Valid as long as the store.
  // REQUIRES: Has(chunk) for the bytes to be the chunk's. Only a rank-memory store can fail
  // (the memory it reads back was taken back).
  virtual Result<ChunkRef> ChunkAt(uint64_t chunk) const = 0;
  uint64_t ChunkOffset(uint64_t chunk) const { return chunk * identity_.chunk_bytes; }

  // REQUIRES: Complete(). Records the chunk list for Scrub(), renames the .part file to its
  // final name and removes the bitmap. Returns ChunkListDigest of the chunks' digests: every
  // chunk was marked only once its bytes hashed to its digest, so it is also the list of what
  // the stored chunks hashed to. Idempotent. With `sync`, the data reaches the disk first (fdatasync). Without it a power
  // loss can lose data the page cache held; gridcast notices (a re-prepared payload is
  // verified again and re-received where it differs), but the copy is not durable until the
  // kernel writes it.
  Result<Digest> Finalize(bool sync);
  // ChunkListDigest of every chunk's expected digest; FailedPrecondition until all are known.
  Result<Digest> ListDigest() const;

  // Re-hashes every chunk of the complete payload `name` below data_dir against the chunk list
  // recorded when it was received. NotFound when there is no such payload or no list (a file
  // gridcast did not receive). Reads the whole payload: on demand only.
  static Result<ScrubReport> Scrub(const std::string& data_dir, const std::string& name, FileIo& io = SystemFileIo());
  // The identity recorded when `name` was received (no payload bytes are read). NotFound as
  // for Scrub().
  static Result<PayloadIdentity> RecordedIdentity(const std::string& data_dir, const std::string& name,
                                                  FileIo& io = SystemFileIo());
  // The same without the digests (sizes, digest kind, SHA-256): what `list` shows, at any size.
  static Result<PayloadIdentity> RecordedHeader(const std::string& data_dir, const std::string& name,
                                                FileIo& io = SystemFileIo());

 protected:
  // Holds no chunk yet; `base_name` names the payload in errors.
  // `spill_dir`: where bitmaps past ChunkBits::kInMemoryBits chunks are mapped from (the state
  // directory of the data directory; none: memory).
  PayloadStore(PayloadIdentity identity, std::string base_name, std::string spill_dir = {});
  // What every store that receives needs of the identity it is given.
  static Status CheckReceivable(const PayloadIdentity& identity);
  // Every chunk held and nothing to finalize: a source's store.
  void HoldAll();

  // Writes the bytes of a received chunk whose digest matched, at its place. REQUIRES: mutex_ held.
  virtual Status PutVerified(const ReceivedChunk& received) = 0;
  // Records beyond memory that `chunk` is verified (a receiver's resume bitmap). REQUIRES: mutex_ held.
  virtual Status RecordVerified(uint64_t /*chunk*/) { return Status::Ok(); }
  // Reads `out.size()` stored bytes at `offset` of the payload.
  virtual Status ReadStored(uint64_t offset, std::span<uint8_t> out) const = 0;
  // Finalize()'s work after the check: what makes the copy last (a file's chunk list and name).
  virtual Status Persist(bool /*sync*/) { return Status::Ok(); }

  // Records the chunk list of a finished copy at `path` (WriteChunkList), from the log batch by
  // batch where the digests streamed: never the whole list in memory.
  Status WriteListTo(FileIo& io, const std::string& path, bool sync) const;
  // "chunk N of NAME", for errors.
  std::string ChunkName(uint64_t chunk) const;
  // DataLoss: the chunk's bytes do not hash to the plan's digest.
  Status DigestMismatch(uint64_t chunk) const;
  // OK when `digest`, what the chunk's bytes hashed to, is its expected digest; DataLoss when
  // it differs, Unavailable while the expected digest is not known here.
  Status CheckDigest(uint64_t chunk, const Digest& digest) const;
  // REQUIRES: mutex_ held, and the chunk's bytes hashed to its expected digest.
  Status MarkVerified(uint64_t chunk);
  // REQUIRES: mutex_ held. A receiver claimed the chunk's place (ChunkPlacement).
  bool Claimed(uint64_t chunk) const { return !claimed_.empty() && claimed_[chunk]; }

  PayloadIdentity identity_;
  std::string base_name_;  // final component of the name
  std::string spill_dir_;  // ChunkBits
  mutable std::mutex mutex_;  // guards have_, claimed_ and the bytes of unverified chunks
  ChunkBits have_;
  std::shared_ptr<DigestLog> digest_log_;
  // Per chunk, whether a receiver claimed its place (ChunkPlacement); empty without placement.
  ChunkBits claimed_;
  std::atomic<uint64_t> verified_{0};
  std::atomic<uint64_t> reused_bytes_{0};
  std::atomic<uint64_t> reused_chunks_{0};
  std::atomic<uint64_t> resumed_chunks_{0};
  std::atomic<bool> finalized_{false};  // set by Finalize(), which may run on another thread

 private:
  // StoreReceived's checks of a chunk received into a buffer; OK with *held when it is held already.
  Status CheckReceived(uint64_t chunk, std::span<const uint8_t> data, bool* held) const;
  // The ends of StoreReceived, once `digest` is what the chunk's bytes hash to.
  Status StoreHashed(const ReceivedChunk& received, const Digest& digest, bool* newly_verified);
  Status MarkHashedInPlace(uint64_t chunk, const Digest& digest, bool* newly_verified);
};

}  // namespace gridcast
