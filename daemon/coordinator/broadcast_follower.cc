#include "daemon/coordinator/broadcast_follower.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#include "common/hex.h"
#include "proto/states.h"

namespace gridcast {
namespace {

// Whether every member of a detailed round is done or given up on ("lost").
bool EveryMemberSettled(const v1::BroadcastProgress& progress) {
  return std::all_of(progress.members().begin(), progress.members().end(), [](const v1::MemberProgress& m) {
    return m.state() == v1::MEMBER_STATE_DONE || m.state() == v1::MEMBER_STATE_LOST;
  });
}

ControlDeadline In(std::chrono::milliseconds budget) { return std::chrono::steady_clock::now() + budget; }

}  // namespace

std::string DescribeUnfinished(const v1::BroadcastProgress& progress) {
  std::string names;
  for (const v1::MemberProgress& m : progress.members()) {
    if (m.state() == v1::MEMBER_STATE_DONE && m.chunk_list_sha256() == progress.payload_chunk_list_sha256()) continue;
    const std::string where = m.state() == v1::MEMBER_STATE_RUNNING || m.state() == v1::MEMBER_STATE_PREPARED
                                  ? fmt::format("{} of {} chunks", m.chunks_done(), m.chunks_total())
                                  : MemberStateText(m.state(), m.error());
    names += fmt::format("{}{} ({})", names.empty() ? "" : ", ", m.member(), where);
  }
  return names;
}

BroadcastFollower::BroadcastFollower(ControlTree& tree, const PlanId& id, std::vector<std::string> members,
                                     uint64_t chunks, FollowOptions options)
    : tree_(tree), id_(id), members_(std::move(members)), chunks_(chunks), options_(options) {}

FollowOutcome BroadcastFollower::Follow(v1::BroadcastProgress& progress, Clock::time_point started,
                                        const std::function<void(v1::BroadcastProgress&)>& report) {
  const uint32_t receivers = static_cast<uint32_t>(members_.size() - FirstReceiver());
  progress.set_members_total(receivers);
  last_new_chunk_ = started;
  for (;;) {
    progress.clear_members();
    progress.set_elapsed_s(std::chrono::duration<double>(Clock::now() - started).count());
    Status failure;
    uint32_t lost_now = 0;
    // No member can be done before the source knew the digests: the round counts with them.
    if (progress.payload_chunk_list_sha256().empty() && options_.closing) {
      if (const std::optional<DigestClosing> closing = options_.closing()) {
        progress.set_payload_chunk_list_sha256(AsString(closing->chunk_list_digest));
        progress.set_payload_sha256(AsString(closing->payload_sha256));
      }
    }
    Result<SubtreeReport> round = Poll(PollDetail::kSums, In(options_.poll_timeout), progress);
    const auto now = Clock::now();
    if (!round.ok()) {  // only when the plan was released here meanwhile: a Cancel of the source
      failure = Status::Cancelled("the broadcast was cancelled at the source");
    } else {
      failure = TakeSums(round->progress, progress, now, &lost_now);
    }
    if (failure.ok() && options_.source_failure) failure = options_.source_failure();
    if (failure.ok() && now - last_new_chunk_ > options_.stall_after) {
      failure = Status::Unavailable(fmt::format(
          "no member verified a chunk for {:.0f} s", std::chrono::duration<double>(options_.stall_after).count()));
    }
    if (failure.ok() && now > options_.deadline) {
      failure = Status::DeadlineExceeded(fmt::format("broadcast did not finish within {:g} s", options_.timeout_s));
    }
    if (!round.ok()) {
      // Every member below has forgotten the plan too (Cancel passes down the control tree):
      // none answers for it any more, and none is unreachable.
      ListEveryMemberStopped(progress, tree_.CancelReason(id_).value_or("cancelled"));
    } else if (!failure.ok()) {
      ListEveryMember(progress);
    }
    if (!failure.ok()) {
      const std::string unfinished = DescribeUnfinished(progress);
      if (!unfinished.empty() && failure.code() != StatusCode::kAborted) {
        failure = Status(failure.code(), failure.message() + "; not done: " + unfinished);
      }
      return {failure, false};
    }
    // Everyone done or given up on: confirmed by one detailed round, in which a member given up
    // on may answer after all (a loaded host can keep it silent for a while); one that is not
    // done yet is waited for.
    if (round->progress.done() + lost_now == receivers) {
      ListEveryMember(progress);
      if (EveryMemberSettled(progress)) {
        if (lost_.empty()) return {Status::Ok(), true};
        return {Status::Unavailable("every other member holds a verified copy; lost: " + LostNames()), true};
      }
    }
    report(progress);
    std::this_thread::sleep_for(NextPoll(round->progress.chunks_done(), now));
  }
}

std::chrono::milliseconds BroadcastFollower::NextPoll(uint64_t chunks_done, Clock::time_point now) {
  const uint64_t total = chunks_ * (members_.size() - FirstReceiver());
  std::chrono::milliseconds wait = options_.poll_interval;
  if (chunks_done >= total) {
    // Every chunk is there and the members are finishing, which may take a while (a sync, a
    // directory to unpack): soon, then less and less often.
    wait = std::min(options_.poll_interval, options_.final_poll * (1 << std::min(finishing_rounds_++, 8)));
  } else if (previous_round_ != Clock::time_point{} && chunks_done > previous_chunks_done_) {
    const double rate = static_cast<double>(chunks_done - previous_chunks_done_) /
                        std::chrono::duration<double>(now - previous_round_).count();
    const auto eta = std::chrono::duration<double>(static_cast<double>(total - chunks_done) / rate);
    wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(eta), options_.final_poll,
                      options_.poll_interval);
  }
  previous_chunks_done_ = chunks_done;
  previous_round_ = now;
  return wait;
}

Status BroadcastFollower::TakeSums(const v1::SubtreeProgress& sum, v1::BroadcastProgress& progress,
                                   Clock::time_point now, uint32_t* lost_now) {
  progress.set_members_done(sum.done());
  progress.set_chunks_done_total(sum.chunks_done());
  progress.set_slowest_member(sum.slowest_member());
  progress.set_slowest_chunks(sum.slowest_chunks());
  // A member that comes back adds its chunks again: only a sum above the best so far is new.
  if (sum.chunks_done() > most_chunks_seen_) {
    most_chunks_seen_ = sum.chunks_done();
    last_new_chunk_ = now;
  }
  // Every member holds every chunk: what is left (a sync, unpacking a directory) verifies no
  // chunk, and is not a stall.
  if (sum.chunks_done() >= chunks_ * (members_.size() - FirstReceiver())) last_new_chunk_ = now;
  Status failure;
  std::set<std::string> silent;
  for (const v1::MemberProgress& attention : sum.attention()) {
    v1::MemberProgress* mp = progress.add_members();
    *mp = attention;
    mp->set_chunks_total(chunks_);
    const std::string& member = attention.member();
    const v1::MemberState state = attention.state();
    if (state == v1::MEMBER_STATE_UNREACHABLE) {
      silent.insert(member);
      const auto since = unreachable_since_.emplace(member, now).first->second;
      if (lost_.count(member) != 0) {
        mp->set_state(v1::MEMBER_STATE_LOST);
        ++*lost_now;
      } else if (options_.gives_up_on_unreachable && now - since > options_.member_lost_after) {
        spdlog::warn("broadcast {}: member {} unreachable for {} ms: given up on, the others go on without it",
                     ToHex(id_), member, options_.member_lost_after.count());
        lost_.insert(member);
        mp->set_state(v1::MEMBER_STATE_LOST);
        ++*lost_now;
      }
    } else if (state == v1::MEMBER_STATE_RUNNING) {
      NoteLaneTrouble(attention);
    } else if (state == v1::MEMBER_STATE_DONE) {  // done, but not with the source's chunk list digest
      failure = Status::DataLoss("member '" + member + "' stored chunks whose digests differ from the source's");
    } else if (state == v1::MEMBER_STATE_FAILED || state == v1::MEMBER_STATE_STOPPED) {
      failure = Status::Aborted("member '" + member + "' " + MemberStateText(state, attention.error()));
    }
  }
  if (options_.on_round) {
    options_.on_round(std::vector<v1::MemberProgress>(sum.attention().begin(), sum.attention().end()), lost_, progress);
  }
  std::erase_if(unreachable_since_, [&](const auto& entry) { return silent.count(entry.first) == 0; });
  // Given up on, but it answered this round: it is back (and counted as what it reports).
  std::erase_if(lost_, [&](const std::string& member) {
    const bool back = silent.count(member) == 0;
    if (back) spdlog::info("broadcast {}: member {} answers again", ToHex(id_), member);
    return back;
  });
  return failure;
}

void BroadcastFollower::NoteLaneTrouble(const v1::MemberProgress& member) {
  for (const v1::LaneTrouble& trouble : member.lane_trouble()) {
    const auto key = std::make_tuple(member.member(), trouble.lane(), trouble.parent(), static_cast<int>(trouble.reason()));
    if (!troubles_reported_.insert(key).second) continue;
    spdlog::warn("broadcast {}: member {} reports {}", ToHex(id_), member.member(), LaneTroubleText(trouble));
  }
}

void BroadcastFollower::ListEveryMember(v1::BroadcastProgress& progress) {
  const PollDetail detail =
      options_.observations ? PollDetail::kEveryMemberWithObservations : PollDetail::kEveryMember;
  std::map<std::string, v1::MemberProgress> by_name;
  if (Result<SubtreeReport> round = Poll(detail, In(2 * options_.poll_timeout), progress); round.ok()) {
    for (v1::MemberProgress& m : round->detail) by_name[m.member()] = std::move(m);
  }
  progress.clear_members();
  for (size_t i = FirstReceiver(); i < members_.size(); ++i) {
    v1::MemberProgress* mp = progress.add_members();
    auto it = by_name.find(members_[i]);
    if (it != by_name.end()) *mp = std::move(it->second);
    mp->set_member(members_[i]);
    if (it == by_name.end()) mp->set_state(v1::MEMBER_STATE_UNREACHABLE);
    // A member given up on that answers now is reported as it is (a loaded host can keep a
    // member from answering for a while without the member being gone).
    if (mp->state() != v1::MEMBER_STATE_UNREACHABLE) lost_.erase(members_[i]);
    if (lost_.count(members_[i]) != 0) mp->set_state(v1::MEMBER_STATE_LOST);
    mp->set_chunks_total(chunks_);
  }
}

void BroadcastFollower::ListEveryMemberStopped(v1::BroadcastProgress& progress, const std::string& why) const {
  progress.clear_members();
  for (size_t i = FirstReceiver(); i < members_.size(); ++i) {
    v1::MemberProgress* mp = progress.add_members();
    mp->set_member(members_[i]);
    if (lost_.count(members_[i]) != 0) {
      mp->set_state(v1::MEMBER_STATE_LOST);
    } else {
      mp->set_state(v1::MEMBER_STATE_STOPPED);
      mp->set_error(why);
    }
    mp->set_chunks_total(chunks_);
  }
}

Result<SubtreeReport> BroadcastFollower::Poll(PollDetail detail, ControlDeadline deadline,
                                              const v1::BroadcastProgress& progress) {
  const std::string& list = progress.payload_chunk_list_sha256();
  return options_.source_receives ? tree_.PollWhole(id_, detail, deadline, list)
                                  : tree_.PollBelow(id_, detail, deadline, list);
}

std::string BroadcastFollower::LostNames() const {
  std::string names;
  for (size_t i = FirstReceiver(); i < members_.size(); ++i) {
    if (lost_.count(members_[i]) != 0) names += (names.empty() ? "" : ", ") + members_[i];
  }
  return names;
}

}  // namespace gridcast
