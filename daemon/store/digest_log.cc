#include "daemon/store/digest_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/crypto.h"

namespace gridcast {

Result<std::unique_ptr<DigestLog>> DigestLog::Open(const std::string& path, ChunkDigest kind,
                                                   const DigestBatches& rule, FileIo& io) {
  std::array<int, 3> fds{-1, -1, -1};
  const std::array<std::string, 3> paths = {path, path + ".weak", path + ".signatures"};
  for (size_t i = 0; i < fds.size(); ++i) {
    fds[i] = io.OpenAt(AT_FDCWD, paths[i].c_str(), O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fds[i] < 0) {
      const int error = errno;
      for (size_t j = 0; j < i; ++j) close(fds[j]);
      return ErrnoStatus("cannot open " + paths[i], error);
    }
  }
  return Over(fds, kind, rule, io);
}

Result<std::unique_ptr<DigestLog>> DigestLog::OpenUnnamed(const std::string& dir, ChunkDigest kind,
                                                          const DigestBatches& rule, FileIo& io) {
  std::array<int, 3> fds{-1, -1, -1};
  for (size_t i = 0; i < fds.size(); ++i) {
    fds[i] = io.OpenAt(AT_FDCWD, dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fds[i] < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
      // A file system without O_TMPFILE (overlayfs before Linux 6.6): a name, gone at once.
      const std::string path = dir + "/.digests-" + RandomHex(8);
      fds[i] = io.OpenAt(AT_FDCWD, path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fds[i] >= 0) unlink(path.c_str());
    }
    if (fds[i] < 0) {
      const int error = errno;
      for (size_t j = 0; j < i; ++j) close(fds[j]);
      return ErrnoStatus("cannot make a file in " + dir, error);
    }
  }
  return Over(fds, kind, rule, io);
}

Result<std::unique_ptr<DigestLog>> DigestLog::Over(std::array<int, 3> fds, ChunkDigest kind,
                                                   const DigestBatches& rule, FileIo& io) {
  std::unique_ptr<DigestLog> log(new DigestLog(fds, kind, rule, io));
  log->weak_.assign(rule.count(), false);
  std::lock_guard<std::mutex> lock(log->mutex_);
  GRIDCAST_RETURN_IF_ERROR(log->FoldInOrder());  // an empty payload's list is known at once
  return log;
}

DigestLog::~DigestLog() {
  close(fd_);
  close(weak_fd_);
  close(signatures_fd_);
}

Status DigestLog::Record(const DigestBatch& batch) {
  if (batch.kind != kind_) return Status::InvalidArgument("a digest batch of another digest");
  if (batch.index >= rule_.count() || rule_.RangeOf(batch.index).first != batch.first_chunk ||
      rule_.RangeOf(batch.index).count != batch.digests.size() ||
      (!batch.weak.empty() && batch.weak.size() != batch.digests.size())) {
    return Status::InvalidArgument("digest batch " + std::to_string(batch.index) + " is not one of this payload's");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (recorded_[batch.index]) return Status::Ok();
  const size_t digest_bytes = DigestBytes(kind_);
  std::vector<uint8_t> bytes(batch.digests.size() * digest_bytes);
  for (size_t i = 0; i < batch.digests.size(); ++i) {
    std::copy_n(batch.digests[i].begin(), digest_bytes, bytes.begin() + static_cast<std::ptrdiff_t>(i * digest_bytes));
  }
  GRIDCAST_RETURN_IF_ERROR(PwriteFull(io_, fd_, bytes, batch.first_chunk * digest_bytes));
  if (!batch.weak.empty()) {
    const auto* weak = reinterpret_cast<const uint8_t*>(batch.weak.data());
    GRIDCAST_RETURN_IF_ERROR(
        PwriteFull(io_, weak_fd_, {weak, batch.weak.size() * sizeof(uint32_t)}, batch.first_chunk * sizeof(uint32_t)));
  }
  GRIDCAST_RETURN_IF_ERROR(PwriteFull(io_, signatures_fd_, batch.signature, batch.index * sizeof(Signature)));
  recorded_[batch.index] = true;
  weak_[batch.index] = !batch.weak.empty();
  if (batch.closing) closing_ = batch.closing;
  ++recorded_count_;
  cache_[batch.index] = batch;
  cached_order_.push_back(batch.index);
  if (cached_order_.size() > kCachedBatches) {
    cache_.erase(cached_order_.front());
    cached_order_.pop_front();
  }
  return FoldInOrder();
}

Status DigestLog::FoldInOrder() {
  const size_t digest_bytes = DigestBytes(kind_);
  while (folded_ < rule_.count() && recorded_[folded_]) {
    GRIDCAST_ASSIGN_OR_RETURN(const DigestBatch batch, Load(folded_));
    for (const Digest& digest : batch.digests) fold_.Update({digest.data(), digest_bytes});
    ++folded_;
  }
  if (folded_ == rule_.count() && !list_digest_) list_digest_ = fold_.Finish();
  return Status::Ok();
}

Result<DigestBatch> DigestLog::Load(uint64_t index) const {
  if (auto cached = cache_.find(index); cached != cache_.end()) return cached->second;
  const DigestBatches::Range range = rule_.RangeOf(index);
  const size_t digest_bytes = DigestBytes(kind_);
  DigestBatch batch;
  batch.index = index;
  batch.first_chunk = range.first;
  batch.kind = kind_;
  std::vector<uint8_t> bytes(range.count * digest_bytes);
  GRIDCAST_RETURN_IF_ERROR(PreadFull(io_, fd_, bytes, range.first * digest_bytes));
  batch.digests.assign(range.count, Digest{});
  for (size_t i = 0; i < batch.digests.size(); ++i) {
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(i * digest_bytes), digest_bytes, batch.digests[i].begin());
  }
  if (weak_[index]) {
    batch.weak.resize(range.count);
    auto* weak = reinterpret_cast<uint8_t*>(batch.weak.data());
    GRIDCAST_RETURN_IF_ERROR(
        PreadFull(io_, weak_fd_, {weak, batch.weak.size() * sizeof(uint32_t)}, range.first * sizeof(uint32_t)));
  }
  GRIDCAST_RETURN_IF_ERROR(PreadFull(io_, signatures_fd_, batch.signature, index * sizeof(Signature)));
  if (rule_.Closes(index)) batch.closing = closing_;
  return batch;
}

bool DigestLog::Has(uint64_t batch) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return batch < recorded_.size() && recorded_[batch];
}

Result<DigestBatch> DigestLog::Batch(uint64_t batch) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (batch >= recorded_.size() || !recorded_[batch]) {
    return Status::FailedPrecondition("digest batch " + std::to_string(batch) + " is not recorded here");
  }
  return Load(batch);
}

Result<std::optional<Digest>> DigestLog::DigestOf(uint64_t chunk) const {
  if (chunk >= rule_.chunks()) return Status::InvalidArgument("chunk " + std::to_string(chunk) + " is past the payload");
  const uint64_t batch = rule_.BatchOf(chunk);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!recorded_[batch]) return std::optional<Digest>();
  if (auto cached = cache_.find(batch); cached != cache_.end()) {
    return std::optional<Digest>(cached->second.digests[chunk - cached->second.first_chunk]);
  }
  const size_t digest_bytes = DigestBytes(kind_);
  Digest digest{};
  GRIDCAST_RETURN_IF_ERROR(PreadFull(io_, fd_, {digest.data(), digest_bytes}, chunk * digest_bytes));
  return std::optional<Digest>(digest);
}

std::optional<Digest> DigestLog::ListDigest() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return list_digest_;
}

std::optional<DigestClosing> DigestLog::Closing() const {
  std::lock_guard<std::mutex> lock(mutex_);
  // Segments close nothing: the list is whole once folded, and nobody held the whole payload
  // to hash it, so its digest stands for both (an allgather's bundle).
  if (!rule_.ClosesList() && list_digest_) return DigestClosing{*list_digest_, *list_digest_};
  return closing_;
}

uint64_t DigestLog::recorded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_count_;
}

}  // namespace gridcast
