// BroadcastFollower: the source's side of a started broadcast, until it ends. Every poll
// interval it asks the control tree for sums. It gives up on a member unreachable for too long
// when the swarm can route around it (pull, hybrid; a push subtree depends on its root, so
// there the member is waited for); it stops at the first member that failed, at a stall (no
// new verified chunk anywhere for a while: a partition, a paused member, a push subtree cut
// off from its parent) and at the deadline, naming every member not done; and it confirms the
// end with one detailed round that lists every member.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/digest_batches.h"
#include "daemon/coordinator/control_tree.h"
#include "proto/control.pb.h"

namespace gridcast {

struct FollowOptions {
  std::chrono::milliseconds poll_interval{200};
  // The shortest wait between rounds, taken when the chunks still missing should arrive
  // sooner than poll_interval at the last rounds' rate: the end is noticed about this late,
  // not up to a whole interval late.
  std::chrono::milliseconds final_poll{20};
  std::chrono::milliseconds poll_timeout{2000};
  std::chrono::milliseconds member_lost_after{5000};
  std::chrono::milliseconds stall_after{60000};
  std::chrono::steady_clock::time_point deadline;
  double timeout_s = 0;             // what `deadline` was made from, for the message
  // A member unreachable for member_lost_after is given up on: the others finish without it,
  // and the broadcast ends (Unavailable, naming it) once every other member is done. Not in an
  // allgather, whose members each hold a part nobody else has.
  bool gives_up_on_unreachable = false;
  // The final round asks every member for its observations too (pull and hybrid: the swarm's).
  bool observations = false;
  // The source receives too (an allgather): it is followed and listed as the others are.
  bool source_receives = false;
  // Asked every round when set: not OK once the source's own execution failed (a payload its
  // sender writes did not hash right), which ends the broadcast with that error.
  std::function<Status()> source_failure;
  // The payload's digests as the source knows them (none yet: a source that hashes as it
  // sends knows them at the end); the progress reports them from then on, and a member is done
  // once it is done with that chunk-list digest.
  std::function<std::optional<DigestClosing>()> closing;
  // Called every round with the members that need attention (running ones with lane trouble
  // among them) and those given up on; it may add to the progress (the repairs it made). The
  // source's PlanRepairer.
  std::function<void(const std::vector<v1::MemberProgress>& attention, const std::set<std::string>& lost,
                     v1::BroadcastProgress& progress)>
      on_round;
};

struct FollowOutcome {
  // OK when every member holds a verified copy; Unavailable when every member but the lost
  // ones does; else why the broadcast stopped, with the members not done named.
  Status status;
  bool settled = false;  // every member done or lost: the broadcast finished (status aside)
};

class BroadcastFollower {
 public:
  // `members` in plan order, the source first; `chunks` in the payload.
  BroadcastFollower(ControlTree& tree, const PlanId& id, std::vector<std::string> members, uint64_t chunks,
                    FollowOptions options);

  // Follows from `started` until the end, passing every round's progress to `report`. Leaves
  // in `progress` the last round (every member listed), to be marked finished by the caller.
  FollowOutcome Follow(v1::BroadcastProgress& progress, std::chrono::steady_clock::time_point started,
                       const std::function<void(v1::BroadcastProgress&)>& report);

 private:
  using Clock = std::chrono::steady_clock;
  // Takes one round of sums into `progress`: members given up on or back, failures. Returns
  // the failure it found (or OK) and counts in `lost_now` the lost members it names.
  Status TakeSums(const v1::SubtreeProgress& sum, v1::BroadcastProgress& progress, Clock::time_point now,
                  uint32_t* lost_now);
  // One detailed round: every member in `progress`, in member order.
  void ListEveryMember(v1::BroadcastProgress& progress);
  // Every receiver in `progress`, stopped for `why` (a cancel released the plan everywhere),
  // but those given up on before: lost.
  void ListEveryMemberStopped(v1::BroadcastProgress& progress, const std::string& why) const;
  // Logs each lane trouble `member` reports the first time it does (docs/repair.md: the
  // source decides on them).
  void NoteLaneTrouble(const v1::MemberProgress& member);
  std::string LostNames() const;
  // The members followed: every one but the source, or with source_receives every one.
  size_t FirstReceiver() const { return options_.source_receives ? 0 : 1; }
  // One progress round over the members followed, done counted with `progress`'s chunk-list
  // digest.
  Result<SubtreeReport> Poll(PollDetail detail, ControlDeadline deadline, const v1::BroadcastProgress& progress);
  // How long to wait before the next round, `chunks_done` (of every member) being verified.
  std::chrono::milliseconds NextPoll(uint64_t chunks_done, Clock::time_point now);

  ControlTree& tree_;
  const PlanId id_;
  const std::vector<std::string> members_;
  const uint64_t chunks_;
  const FollowOptions options_;
  std::map<std::string, Clock::time_point> unreachable_since_;
  std::set<std::string> lost_;
  // Lane trouble members reported (member, lane, parent, reason), each logged once.
  std::set<std::tuple<std::string, uint32_t, std::string, int>> troubles_reported_;
  uint64_t most_chunks_seen_ = 0;  // the highest sum of verified chunks a round reported
  Clock::time_point last_new_chunk_;
  uint64_t previous_chunks_done_ = 0;  // at the previous round, for NextPoll's rate
  Clock::time_point previous_round_;
  int finishing_rounds_ = 0;  // rounds since every chunk was verified everywhere
};

// The members of a detailed round that are not done, with where they are:
// "west-0 (140 of 384 chunks), west-1 (unreachable)".
std::string DescribeUnfinished(const v1::BroadcastProgress& progress);

}  // namespace gridcast
