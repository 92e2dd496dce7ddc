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
#include <memory>
#include <set>
#include <vector>

#include "common/control_tree_shape.h"
#include "daemon/executor/execution_context.h"

namespace gridcast {

// A plan's digest tree: the control tree's shape over `members` members, member indices
// rotated so that `source` is its root. REQUIRES: fanout >= 1, 0 <= source < members, and
// every member asked about below `members`.
struct DigestTree {
  int source = 0;
  int members = 1;
  int fanout = kDefaultControlFanout;

  int ParentOf(int member) const;  // -1 at the root
  std::vector<int> ChildrenOf(int member) const;
  // Whether `ancestor` is above `member` (its parent, its parent's parent, ...).
  bool IsAncestor(int ancestor, int member) const;
};

class DigestTreeFeed;

// One edge of the tree, from this member to `child`.
class DigestTreeSender {
 public:
  DigestTreeSender(ExecutionContext& context, DigestTreeFeed& feed, int child)
      : context_(context), feed_(feed), child_(child) {}

  // Returns once the child said it holds every batch, or the execution stops; reconnects
  // (sending every batch again) after a lost connection. A child that fails the handshake for
  // good (another secret or protocol version) fails the execution, naming it.
  boost::asio::awaitable<void> Run();

 private:
  boost::asio::awaitable<Status> SendOnce();

  ExecutionContext& context_;
  DigestTreeFeed& feed_;
  const int child_;
};

// One member's part of the tree: it dials its children, and the children of a child it cannot
// reach (or whose connection ended before the child held every batch), so that a dead member
// costs its subtree nothing but a reconnect delay; a member accepts any of its ancestors as
// its parent on the tree's lane. io thread only.
class DigestTreeFeed {
 public:
  DigestTreeFeed(ExecutionContext& context, int self, DigestTree tree)
      : context_(context), self_(self), tree_(tree) {}

  const DigestTree& tree() const { return tree_; }
  // Dials this member's children.
  void Start();
  // The child side of a handshake on the tree's lane.
  Status CheckParent(const Hello& hello) const;
  // Dials `member` unless this member does already (or the execution stops, or the slice of
  // the plan has no address for it).
  void Feed(int member);

 private:
  ExecutionContext& context_;
  const int self_;
  const DigestTree tree_;
  std::set<int> fed_;
  std::vector<std::unique_ptr<DigestTreeSender>> senders_;
};

// The child's side of one connection from its parent in the tree (the handshake is done):
// until the parent hangs up, or sends a frame that does not belong (then the connection is
// closed and the parent dials again).
boost::asio::awaitable<void> ReceiveDigestTree(ExecutionContext& context, ConnectionPtr connection);

}  // namespace gridcast
