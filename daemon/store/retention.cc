#include "daemon/store/retention.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

namespace gridcast {

namespace fs = std::filesystem;

std::vector<std::string> ChooseForRemoval(std::vector<HeldEntry> held, std::chrono::system_clock::time_point now,
                                          const RetentionPolicy& policy) {
  std::sort(held.begin(), held.end(), [](const HeldEntry& a, const HeldEntry& b) {
    return a.arrived != b.arrived ? a.arrived < b.arrived : a.name < b.name;
  });
  uint64_t total = 0;
  for (const HeldEntry& entry : held) total += entry.bytes;
  std::vector<std::string> chosen;
  for (const HeldEntry& entry : held) {
    const bool too_old = policy.max_age && now - entry.arrived > *policy.max_age;
    const bool too_much = policy.max_bytes > 0 && total > policy.max_bytes;
    if (!too_old && !too_much) break;  // the rest are younger, and fit
    chosen.push_back(entry.name);
    total -= entry.bytes;
  }
  return chosen;
}

namespace {

std::chrono::system_clock::time_point ChangedAt(const struct stat& st) {
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(st.st_ctim.tv_sec) + std::chrono::nanoseconds(st.st_ctim.tv_nsec)));
}

}  // namespace

std::vector<HeldEntry> ScanStore(const std::string& dir) {
  std::vector<HeldEntry> held;
  std::error_code ec;
  for (const fs::directory_entry& top : fs::directory_iterator(dir, ec)) {
    const std::string name = top.path().filename().string();
    if (name == ".gridcast" || name.ends_with(".part") || name.ends_with(".tmp")) continue;
    struct stat st {};
    if (lstat(top.path().c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) continue;
    HeldEntry entry{name, S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0, ChangedAt(st)};
    bool complete = true;
    if (S_ISDIR(st.st_mode)) {
      std::error_code walk;
      for (auto it = fs::recursive_directory_iterator(top.path(), walk); !walk && it != fs::recursive_directory_iterator();
           it.increment(walk)) {
        struct stat below {};
        if (lstat(it->path().c_str(), &below) != 0) continue;
        if (S_ISREG(below.st_mode)) {
          if (it->path().filename().string().ends_with(".part")) complete = false;
          entry.bytes += static_cast<uint64_t>(below.st_size);
        }
        entry.arrived = std::max(entry.arrived, ChangedAt(below));
      }
      if (walk) complete = false;  // unreadable: not ours to judge
    }
    if (complete) held.push_back(std::move(entry));
  }
  return held;
}

}  // namespace gridcast
