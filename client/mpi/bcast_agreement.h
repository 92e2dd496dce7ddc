// What the ranks of one MPI_Bcast or MPI_Allgather agree on before the shim moves a byte
// (client/mpi/).
//
// Every rank offers what it knows (its buffer's size, its node's daemon, and at the root a
// fresh nonce that names the payload); the ranks exchange offers with one PMPI_Allgather, and
// each computes the same Agreement from the same offers. So all ranks take the same path, or
// all fail with the same MPI error: a rank whose buffer differs in size is an error on every
// rank, never a rank left waiting for a broadcast the others did not start. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gridcast {

// One rank's offer: fixed size, exchanged as bytes.
struct RankOffer {
  int64_t bytes = 0;    // the buffer, in bytes; -1 when its datatype is not contiguous
  int32_t member = -1;  // this node's daemon: its index in the cluster file; -1: none answers
  int32_t unused = 0;
  uint64_t nonce = 0;   // the root's names the payload
};
static_assert(sizeof(RankOffer) == 24);

struct BcastAgreement {
  enum class Path {
    kGridcast,       // the root's daemon broadcasts to the other ranks' daemons
    kMpi,            // PMPI_Bcast, unchanged (why says why)
    kSizeMismatch,   // an MPI error on every rank (why names the first rank that differs)
  };
  Path path = Path::kMpi;
  std::string why;
  std::string payload_name;           // kGridcast: the payload's name at every daemon
  int source_member = -1;             // the root's daemon
  std::vector<int> receiver_members;  // the other ranks' daemons, each once, increasing
  // For each rank, true when it is the lowest rank on its daemon: that rank removes the
  // daemon's in-memory copy once every rank has read it.
  std::vector<bool> removes_copy;
};

// offers[r] is rank r's offer. REQUIRES: 0 <= root < offers.size().
BcastAgreement AgreeOnBcast(const std::vector<RankOffer>& offers, int root);

// An MPI_Allgather through gridcast: each node (daemon) contributes one part, its ranks'
// blocks side by side in rank order, written by those ranks into one file in the daemon's
// memory; the daemons gather the parts into a bundle, nodes in increasing member order (each
// part padded to whole chunks), from which every rank copies each rank's block.
struct AllgatherAgreement {
  BcastAgreement::Path path = BcastAgreement::Path::kMpi;
  std::string why;
  std::string part_name;    // kGridcast: each node's part in its daemon's memory directory
  std::string bundle_name;  // kGridcast: the gathered parts at every daemon
  std::vector<int> node_members;   // the nodes' daemons, increasing: the parts' order
  std::vector<int> node_of_rank;   // index into node_members
  std::vector<int> slot_of_rank;   // the rank's place among its node's ranks
  std::vector<int> ranks_on_node;
  std::vector<bool> removes_copy;  // the lowest rank of each node removes the part and bundle
};

// offers[r] is rank r's offer (bytes: its block); rank 0's nonce names the files.
// REQUIRES: offers is not empty.
AllgatherAgreement AgreeOnAllgather(const std::vector<RankOffer>& offers);

// Where rank `rank`'s block of `block_bytes` lies in the bundle gathered in chunks of
// chunk_bytes. REQUIRES: a kGridcast agreement, chunk_bytes > 0.
uint64_t BundleOffset(const AllgatherAgreement& agreement, int rank, uint64_t block_bytes, uint64_t chunk_bytes);

}  // namespace gridcast
