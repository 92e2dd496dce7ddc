// The digest tree: how a plan's signed batches of chunk digests reach members that no lane
// feeds (a pull member, a hybrid member whose lane stalls). docs/streamed-digests.md, section 2.
//
// The tree has the control tree's shape (common/control_tree_shape.h) rooted at the
// plan's source; each parent dials its children on the data plane, lane kDigestTreeLane, and
// sends every batch of the plan in order, each once it holds it (the source signs it then),
// with keepalives while it waits; the child verifies each batch as a lane's child does
// (DigestStream::Accept) and answers one ACK once it holds every batch. A batch is a few
// hundred bytes per MiB of payload, so the tree costs the source a copy per child of almost
// nothing and no member more than its fanout. Push plans do not open it: their lanes carry
// every batch a member needs, ahead of its chunks. io thread only.
#pragma once

#include <utility>  // Boost 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio/awaitable.hpp>
#include <vector>

#include "daemon/executor/execution_context.h"

namespace gridcast {

// Where a member sits in its plan's digest tree: its parent (-1 at the root) and children,
// whole-plan member indices.
struct DigestTreePlace {
  int parent = -1;
  std::vector<int> children;
};

// The place of `self` in the tree of `fanout` over `members` members rooted at `source`:
// the control tree's shape, with member indices rotated so that the source is its root.
// REQUIRES: fanout >= 1, 0 <= self, source < members.
DigestTreePlace DigestTreePlaceOf(int self, int source, int members, int fanout);

class DigestTreeSender {
 public:
  DigestTreeSender(ExecutionContext& context, int child) : context_(context), child_(child) {}

  // Returns once the child said it holds every batch, or the execution stops; reconnects
  // (sending every batch again) after a lost connection. A child that fails the handshake for
  // good (another secret or protocol version) fails the execution, naming it.
  boost::asio::awaitable<void> Run();

 private:
  boost::asio::awaitable<Status> SendOnce();

  ExecutionContext& context_;
  const int child_;
};

// The child's side of one connection from its parent in the tree (the handshake is done):
// until the parent hangs up, or sends a frame that does not belong (then the connection is
// closed and the parent dials again).
boost::asio::awaitable<void> ReceiveDigestTree(ExecutionContext& context, ConnectionPtr connection);

}  // namespace gridcast
