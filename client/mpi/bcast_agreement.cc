#include "client/mpi/bcast_agreement.h"

#include <cinttypes>
#include <cstdio>
#include <set>

namespace gridcast {

BcastAgreement AgreeOnBcast(const std::vector<RankOffer>& offers, int root) {
  BcastAgreement agreement;
  const RankOffer& at_root = offers[static_cast<size_t>(root)];
  for (size_t r = 0; r < offers.size(); ++r) {
    const RankOffer& offer = offers[r];
    if (offer.bytes >= 0 && at_root.bytes >= 0 && offer.bytes != at_root.bytes) {
      agreement.path = BcastAgreement::Path::kSizeMismatch;
      agreement.why = "rank " + std::to_string(r) + "'s buffer has " + std::to_string(offer.bytes) +
                      " bytes, the root's (rank " + std::to_string(root) + ") " + std::to_string(at_root.bytes);
      return agreement;
    }
  }
  for (size_t r = 0; r < offers.size(); ++r) {
    if (offers[r].bytes < 0) {
      agreement.why = "rank " + std::to_string(r) + "'s datatype is not contiguous";
      return agreement;
    }
    if (offers[r].member < 0) {
      agreement.why = "no gridcast daemon answers rank " + std::to_string(r);
      return agreement;
    }
  }
  std::set<int> receivers;
  std::set<int> seen;
  agreement.removes_copy.resize(offers.size());
  for (size_t r = 0; r < offers.size(); ++r) {
    const int member = offers[r].member;
    if (member != at_root.member) receivers.insert(member);
    agreement.removes_copy[r] = seen.insert(member).second;
  }
  if (receivers.empty()) {
    agreement.removes_copy.clear();
    agreement.why = "every rank is on the root's node";
    return agreement;
  }
  agreement.path = BcastAgreement::Path::kGridcast;
  agreement.source_member = at_root.member;
  agreement.receiver_members.assign(receivers.begin(), receivers.end());
  char name[64];
  std::snprintf(name, sizeof(name), "mpi-bcast-%016" PRIx64 ".bin", at_root.nonce);
  agreement.payload_name = name;
  return agreement;
}

}  // namespace gridcast
