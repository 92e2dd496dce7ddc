#include "daemon/pull/recent_pieces.h"

#include <algorithm>

namespace gridcast {

void RecentPieces::Add(const Key& key, Piece piece) {
  if (piece == nullptr || piece->size() > budget_bytes_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (pieces_.count(key) != 0) return;
  while (recent_bytes_ + piece->size() > budget_bytes_ && !order_.empty()) {
    Remove(order_.front());
    order_.pop_front();
  }
  recent_bytes_ += piece->size();
  pieces_.emplace(key, std::move(piece));
  order_.push_back(key);
}

const uint8_t* RecentPieces::Lend(const Key& key, uint64_t offset, uint64_t length) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = pieces_.find(key);
  if (it == pieces_.end() || offset > it->second->size() || length > it->second->size() - offset) return nullptr;
  const uint8_t* bytes = it->second->data() + offset;
  lent_.emplace(bytes, it->second);
  return bytes;
}

bool RecentPieces::Return(const uint8_t* bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = lent_.find(bytes);
  if (it == lent_.end()) return false;
  lent_.erase(it);
  return true;
}

void RecentPieces::DropStorage(int storage) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Key> gone;
  for (const auto& [key, piece] : pieces_) {
    if (key.first == storage) gone.push_back(key);
  }
  for (const Key& key : gone) Remove(key);
  std::erase_if(order_, [storage](const Key& key) { return key.first == storage; });
}

void RecentPieces::Remove(const Key& key) {
  auto it = pieces_.find(key);
  if (it == pieces_.end()) return;
  recent_bytes_ -= it->second->size();
  pieces_.erase(it);
}

}  // namespace gridcast
