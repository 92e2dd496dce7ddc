// The plugins a pull or hybrid member adds to its torrent (network thread only): the stripe
// gate, which decides which pieces the member wants and whom it believes, and the count of
// peers holding each piece (pieces every peer holds may leave the page cache).
#pragma once

#include <libtorrent/peer_connection_handle.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "daemon/pull/plugin_support.h"

namespace gridcast {

// The striped member's side (network thread only). libtorrent asks any peer that holds a
// wanted piece for it, and the source holds everything: left alone, members ask the source for
// pieces their peers could give them, and the source sends many pieces several times. So the
// member ignores the source's have-all and believes only the HAVEs the source sends (pull:
// the pieces DealingSource deals it; hybrid: its stripe, and stripes it took over:
// StripeDispenser). A pull member wants its stripe from the start, a piece the source deals
// it at once, and any other piece once somebody announces it; a hybrid member wants only what Want()
// asks (what its push lanes will not deliver), its stripe first. If no block arrives for the
// stall timeout while wanted pieces are missing (a peer died with pieces nobody else
// announces), it reconnects to the source and believes its have-all this time; a pull member
// then wants every missing piece.
class StripeGate {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Kind { kPull, kHybrid };
  // `looks_first`: the member looks for the pieces it holds already as their digests come
  // (an earlier copy, a resume), and wants a piece only once LookedThrough passed it (the
  // swarm would fetch it meanwhile); libtorrent was given no priority for its stripe then.
  // `limits`: the peers it takes only some pieces from (SwarmMember::takes_only), one flag per
  // piece (none: it takes nothing from that peer). It never learns that they hold other
  // pieces, so it never asks them for those.
  using Limits = std::map<lt::peer_id, std::vector<bool>>;
  StripeGate(Kind kind, std::vector<bool> in_stripe, std::vector<bool> held, bool looks_first,
             lt::tcp::endpoint source, Limits limits, Clock::duration stall_timeout)
      : kind_(kind), in_stripe_(std::move(in_stripe)), wanted_(held.size(), false), held_(std::move(held)),
        looked_through_(looks_first ? 0 : held_.size()), source_(source), limits_(std::move(limits)),
        stall_timeout_(stall_timeout) {
    if (looks_first) {
      deferred_.assign(held_.size(), lt::dont_download);
      for (size_t p = 0; p < deferred_.size() && kind_ == Kind::kPull; ++p) {
        if (in_stripe_[p]) deferred_[p] = lt::top_priority;
      }
    }
  }

  void Arm(lt::torrent_handle handle) { handle_ = std::move(handle); }
  bool IsSource(const lt::peer_connection_handle& peer) const { return peer.remote() == source_; }
  // The pieces it takes from `peer` (beyond its end: none); null: any.
  const std::vector<bool>* LimitOf(const lt::peer_id& peer) const {
    auto it = limits_.find(peer);
    return it == limits_.end() ? nullptr : &it->second;
  }
  int pieces() const { return static_cast<int>(held_.size()); }
  std::vector<int> HeldPieces() const {
    std::vector<int> pieces;
    for (size_t p = 0; p < held_.size(); ++p) {
      if (held_[p]) pieces.push_back(static_cast<int>(p));
    }
    return pieces;
  }
  bool TrustSource() const { return fallback_; }

  // Somebody holds `piece`: a pull member may fetch it now.
  void Open(int piece) {
    if (kind_ != Kind::kPull) return;
    if (piece < 0 || static_cast<size_t>(piece) >= wanted_.size()) return;
    if (wanted_[piece] || held_[piece] || in_stripe_[piece]) return;
    wanted_[piece] = true;
    Prioritize(piece, lt::low_priority);
  }
  // The source announced `piece` to this member: the member is to take it from the source
  // (its stripe, or a piece dealt to it from another's stripe), ahead of what peers offer.
  void Dealt(int piece) {
    if (kind_ != Kind::kPull) return Open(piece);
    if (piece < 0 || static_cast<size_t>(piece) >= wanted_.size()) return;
    if (held_[piece] || in_stripe_[piece]) return;
    wanted_[piece] = true;
    Prioritize(piece, lt::top_priority);
  }
  void OpenAll() {
    for (size_t p = 0; p < wanted_.size(); ++p) Open(static_cast<int>(p));
  }

  // Hybrid: the push lanes will not deliver `pieces`.
  void Want(const std::vector<uint64_t>& pieces) {
    std::vector<std::pair<lt::piece_index_t, lt::download_priority_t>> priorities;
    for (uint64_t p : pieces) {
      if (p >= wanted_.size() || held_[p] || wanted_[p]) continue;
      wanted_[p] = true;
      const lt::download_priority_t priority = in_stripe_[p] ? lt::top_priority : lt::low_priority;
      if (p >= looked_through_) {
        deferred_[p] = std::max(deferred_[p], priority);
      } else {
        priorities.emplace_back(lt::piece_index_t(static_cast<int>(p)), priority);
      }
    }
    if (last_progress_ == Clock::time_point{} && !priorities.empty()) last_progress_ = Clock::now();
    if (!priorities.empty()) handle_.prioritize_pieces(priorities);
  }

  // The member looked through every piece below `end`: those it still lacks may be fetched.
  void LookedThrough(uint64_t end);

  void OnConnection(const lt::peer_connection_handle& peer) {
    if (IsSource(peer)) source_connections_.push_back(peer);
  }

  void OnPiecePassed(int piece) {
    last_progress_ = Clock::now();
    if (piece >= 0 && static_cast<size_t>(piece) < held_.size()) held_[piece] = true;
  }
  // A block arrived: in a busy swarm many pieces are in flight at once and each completes late,
  // so progress is counted in blocks, not pieces.
  void OnBlock() { last_progress_ = Clock::now(); }

  // Once a second: after the stall timeout without progress, fetch from anyone.
  void Tick();

  void Started() {
    if (kind_ == Kind::kPull) last_progress_ = Clock::now();
  }

 private:
  // Sets `piece`'s priority now, or once the member looked through it.
  void Prioritize(int piece, lt::download_priority_t priority);

  const Kind kind_;
  const std::vector<bool> in_stripe_;
  std::vector<bool> wanted_;
  std::vector<bool> held_;
  uint64_t looked_through_;  // pieces below it may be fetched
  std::vector<lt::download_priority_t> deferred_;  // with looks_first: priorities wanted past it
  const lt::tcp::endpoint source_;
  const Limits limits_;
  const Clock::duration stall_timeout_;
  lt::torrent_handle handle_;
  bool fallback_ = false;
  Clock::time_point last_progress_{};
  std::vector<lt::peer_connection_handle> source_connections_;
};

// The plugins that feed `gate`; the gate gets the torrent's handle when they are made, on the
// network thread, before any connection.
TorrentPluginFactory GatePlugin(std::shared_ptr<StripeGate> gate);

// Calls `on_shared(piece)` once this member holds `piece` (it starts with `held`) and every
// peer in `peers` has announced it.
TorrentPluginFactory SharedPiecesPlugin(std::set<lt::peer_id> peers, std::vector<bool> held,
                                        std::function<void(uint64_t)> on_shared);

}  // namespace gridcast
