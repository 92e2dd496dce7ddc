#include "client/mpi/bcast_agreement.h"
#include "common/units.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>

namespace gridcast {
namespace {

// What every collective requires of the offers: sizes equal to `reference`'s (else a size
// mismatch), contiguous buffers and a daemon at every rank (else MPI keeps the call). kGridcast
// when they hold.
BcastAgreement::Path CheckOffers(const std::vector<RankOffer>& offers, int reference, const char* whose,
                                 std::string* why) {
  const RankOffer& at = offers[static_cast<size_t>(reference)];
  for (size_t r = 0; r < offers.size(); ++r) {
    const RankOffer& offer = offers[r];
    if (offer.bytes >= 0 && at.bytes >= 0 && offer.bytes != at.bytes) {
      *why = "rank " + std::to_string(r) + "'s buffer has " + std::to_string(offer.bytes) + " bytes, " + whose +
             " (rank " + std::to_string(reference) + ") " + std::to_string(at.bytes);
      return BcastAgreement::Path::kSizeMismatch;
    }
  }
  for (size_t r = 0; r < offers.size(); ++r) {
    if (offers[r].bytes < 0) {
      *why = "rank " + std::to_string(r) + "'s datatype is not contiguous";
      return BcastAgreement::Path::kMpi;
    }
    if (offers[r].member < 0) {
      *why = "no gridcast daemon answers rank " + std::to_string(r);
      return BcastAgreement::Path::kMpi;
    }
  }
  return BcastAgreement::Path::kGridcast;
}

std::string NonceName(const char* prefix, uint64_t nonce, const char* suffix) {
  char name[64];
  std::snprintf(name, sizeof(name), "%s-%016" PRIx64 "%s", prefix, nonce, suffix);
  return name;
}

}  // namespace

BcastAgreement AgreeOnBcast(const std::vector<RankOffer>& offers, int root) {
  BcastAgreement agreement;
  const RankOffer& at_root = offers[static_cast<size_t>(root)];
  agreement.path = CheckOffers(offers, root, "the root's", &agreement.why);
  if (agreement.path != BcastAgreement::Path::kGridcast) return agreement;
  agreement.path = BcastAgreement::Path::kMpi;
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
  agreement.payload_name = NonceName("mpi-bcast", at_root.nonce, ".bin");
  return agreement;
}

AllgatherAgreement AgreeOnAllgather(const std::vector<RankOffer>& offers) {
  AllgatherAgreement agreement;
  agreement.path = CheckOffers(offers, 0, "rank 0's", &agreement.why);
  if (agreement.path != BcastAgreement::Path::kGridcast) return agreement;
  std::set<int> members;
  for (const RankOffer& offer : offers) members.insert(offer.member);
  if (members.size() < 2) {
    agreement.path = BcastAgreement::Path::kMpi;
    agreement.why = "every rank is on one node";
    return agreement;
  }
  agreement.node_members.assign(members.begin(), members.end());
  agreement.ranks_on_node.assign(members.size(), 0);
  for (const RankOffer& offer : offers) {
    const int node = static_cast<int>(std::lower_bound(agreement.node_members.begin(), agreement.node_members.end(),
                                                       offer.member) - agreement.node_members.begin());
    agreement.node_of_rank.push_back(node);
    agreement.slot_of_rank.push_back(agreement.ranks_on_node[static_cast<size_t>(node)]);
    agreement.removes_copy.push_back(agreement.ranks_on_node[static_cast<size_t>(node)]++ == 0);
  }
  agreement.part_name = NonceName("mpi-allgather", offers[0].nonce, ".part");
  agreement.bundle_name = NonceName("mpi-allgather", offers[0].nonce, ".bin");
  return agreement;
}

uint64_t BundleOffset(const AllgatherAgreement& agreement, int rank, uint64_t block_bytes, uint64_t chunk_bytes) {
  const int node = agreement.node_of_rank[static_cast<size_t>(rank)];
  uint64_t offset = 0;
  for (int k = 0; k < node; ++k) {
    const uint64_t part = static_cast<uint64_t>(agreement.ranks_on_node[static_cast<size_t>(k)]) * block_bytes;
    offset += CeilDiv(part, chunk_bytes) * chunk_bytes;
  }
  return offset + static_cast<uint64_t>(agreement.slot_of_rank[static_cast<size_t>(rank)]) * block_bytes;
}

}  // namespace gridcast
