#include "daemon/coordinator/progress_sum.h"

namespace gridcast {
namespace {

void TakeIfSlower(const std::string& member, uint64_t chunks, v1::SubtreeProgress* sum) {
  if (sum->slowest_member().empty() || chunks < sum->slowest_chunks()) {
    sum->set_slowest_member(member);
    sum->set_slowest_chunks(chunks);
  }
}

}  // namespace

void CountMember(const v1::MemberProgress& entry, const std::string& chunk_list_digest, v1::SubtreeProgress* sum) {
  sum->set_members(sum->members() + 1);
  sum->set_chunks_done(sum->chunks_done() + entry.chunks_done());
  const v1::MemberState state = entry.state();
  // Done before the list's digest is known here (a source that hashes as it sends): receiving.
  const bool digest_known = !chunk_list_digest.empty();
  if (state == v1::MEMBER_STATE_DONE && digest_known && entry.chunk_list_sha256() == chunk_list_digest) {
    sum->set_done(sum->done() + 1);
    return;
  }
  const bool receiving = state == v1::MEMBER_STATE_RUNNING || state == v1::MEMBER_STATE_PREPARED ||
                         (state == v1::MEMBER_STATE_DONE && !digest_known);
  if (receiving) TakeIfSlower(entry.member(), entry.chunks_done(), sum);
  if (!receiving || !entry.lane_trouble().empty()) {
    // By name and state: its observations (a detailed round's) travel in its detail entry only.
    v1::MemberProgress* named = sum->add_attention();
    *named = entry;
    named->clear_received();
  }
}

void AddSum(const v1::SubtreeProgress& add, v1::SubtreeProgress* sum) {
  sum->set_members(sum->members() + add.members());
  sum->set_done(sum->done() + add.done());
  sum->set_chunks_done(sum->chunks_done() + add.chunks_done());
  if (!add.slowest_member().empty()) TakeIfSlower(add.slowest_member(), add.slowest_chunks(), sum);
  for (const v1::MemberProgress& m : add.attention()) *sum->add_attention() = m;
}

}  // namespace gridcast
