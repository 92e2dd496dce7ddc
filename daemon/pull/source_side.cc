#include "daemon/pull/source_side.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <chrono>
#include <set>

#include "daemon/pull/piece_dealer.h"

namespace gridcast {
namespace {

// How much a pull member may have dealt to it by the source and not yet completed: enough to
// keep its requests to the source flowing (about a second at its share of the source's
// upload), small enough that the last deals drain quickly.
constexpr uint64_t kDealtBytes = 1 << 20;

// Pull: pieces dealt by PieceDealer (see there why), announced in HAVE messages the member
// believes.
class DealingSource final : public SourceSide {
 public:
  DealingSource(std::map<lt::peer_id, int> members, PieceDealer dealer)
      : members_(std::move(members)), dealer_(std::move(dealer)) {}
  ~DealingSource() override {
    if (dealer_.redealt() > 0) spdlog::info("pull: the end game dealt {} late pieces a second time", dealer_.redealt());
  }

  void Connected(const lt::peer_connection_handle& peer) override {
    auto member = members_.find(peer.pid());
    if (member == members_.end()) return;
    live_[member->second].push_back(peer);
    SendHaves(peer, dealer_.Joined(member->second, Holds(peer)));
  }
  void Reported(const lt::peer_connection_handle& peer, int piece) override {
    auto member = members_.find(peer.pid());
    if (member == members_.end()) return;
    Tick();  // reports come many times a second: the dealer's clock, read before the report
    Announce(member->second, dealer_.Completed(member->second, piece, Holds(peer)));
  }
  void Tick() override {
    const double now_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    const std::vector<PieceDealer::Deal> deals =
        dealer_.Advance(now_s, [this](int member) { return Holds(live_.at(member).front()); });
    for (const PieceDealer::Deal& deal : deals) Announce(deal.member, deal.pieces);
  }
  void Disconnected(const lt::peer_connection_handle& peer, const lt::error_code&) override {
    auto member = members_.find(peer.pid());
    if (member == members_.end()) return;
    auto live = live_.find(member->second);
    if (live == live_.end() || std::erase(live->second, peer) == 0 || !live->second.empty()) return;
    live_.erase(live);
    dealer_.Left(member->second, Holds(peer));
  }

 private:
  static PieceDealer::Holds Holds(const lt::peer_connection_handle& peer) {
    return [peer](int piece) { return peer.has_piece(lt::piece_index_t(piece)); };
  }
  void Announce(int member, const std::vector<int>& pieces) {
    if (auto live = live_.find(member); live != live_.end()) {
      for (const auto& connection : live->second) SendHaves(connection, pieces);
    }
  }

  const std::map<lt::peer_id, int> members_;
  PieceDealer dealer_;
  std::map<int, std::vector<lt::peer_connection_handle>> live_;  // never an empty vector
};

// Hybrid: fixed stripes (network thread only). After its have-all, the source tells
// each member (known by peer id) that it has that member's stripe, in BitTorrent HAVE messages
// the member believes. When a member's last connection ends before it holds its stripe (it
// died or left), the pieces of its stripe it lacks go to the members of its bandwidth group
// still connected, round-robin: pieces it would have passed on still leave the source once,
// instead of waiting for every survivor's stall timeout and then being asked of the source by
// all of them. (A member falling back to the full have-all reconnects holding its stripe:
// nothing to hand over.) A member that died before it ever connected shows up as a refused
// dial to its address: nothing listens there, so its whole stripe is handed over.
class StripeDispenser final : public SourceSide {
 public:
  struct Stripe {
    std::vector<int> pieces;
    std::vector<lt::peer_id> group;  // who may take the stripe over (not the source)
    lt::tcp::endpoint address;       // where the member listens
  };
  StripeDispenser(std::map<lt::peer_id, Stripe> stripes, std::map<lt::peer_id, std::string> names)
      : stripes_(std::move(stripes)), names_(std::move(names)) {}

  void Connected(const lt::peer_connection_handle& peer) override {
    auto stripe = stripes_.find(peer.pid());
    if (stripe == stripes_.end()) return;
    live_[peer.pid()].push_back(peer);
    handed_over_.erase(peer.pid());
    SendHaves(peer, stripe->second.pieces);
    SendHaves(peer, taken_over_[peer.pid()]);
  }

  void Reported(const lt::peer_connection_handle&, int) override {}  // stripes are fixed
  void Disconnected(const lt::peer_connection_handle& peer, const lt::error_code& error) override {
    if (error == boost::asio::error::connection_refused) {
      for (const auto& [pid, stripe] : stripes_) {
        if (stripe.address == peer.remote() && !live_.count(pid)) {
          std::vector<int> everything = stripe.pieces;
          const std::vector<int>& inherited = taken_over_[pid];
          everything.insert(everything.end(), inherited.begin(), inherited.end());
          HandOver(pid, everything);
        }
      }
      return;
    }
    // A member may hold several connections at once (both sides dialled; libtorrent closes one).
    auto live = live_.find(peer.pid());
    if (live == live_.end() || std::erase(live->second, peer) == 0) return;
    if (!live->second.empty()) return;
    live_.erase(live);
    std::vector<int> lacking;
    const std::vector<int>& stripe = stripes_.at(peer.pid()).pieces;
    const std::vector<int>& inherited = taken_over_[peer.pid()];
    for (const std::vector<int>* pieces : {&stripe, &inherited}) {
      for (int p : *pieces) {
        if (!peer.has_piece(lt::piece_index_t(p))) lacking.push_back(p);
      }
    }
    HandOver(peer.pid(), lacking);
  }

 private:
  // The group's members not known to be gone take `pieces` over; those connected hear of
  // them now, the others when they connect.
  void HandOver(const lt::peer_id& gone, const std::vector<int>& pieces) {
    if (!handed_over_.insert(gone).second) return;  // until it connects again
    std::vector<lt::peer_id> takers;
    for (const lt::peer_id& pid : stripes_.at(gone).group) {
      if (!handed_over_.count(pid)) takers.push_back(pid);
    }
    if (takers.empty() || pieces.empty()) return;
    std::vector<std::vector<int>> shares(takers.size());
    for (size_t i = 0; i < pieces.size(); ++i) shares[i % takers.size()].push_back(pieces[i]);
    for (size_t t = 0; t < takers.size(); ++t) {
      std::vector<int>& held = taken_over_[takers[t]];
      held.insert(held.end(), shares[t].begin(), shares[t].end());
      if (auto live = live_.find(takers[t]); live != live_.end()) SendHaves(live->second.front(), shares[t]);
    }
    spdlog::info("swarm: {} left without {} pieces of its stripe; they go to {} members of its group", Name(gone),
                 pieces.size(), takers.size());
  }

  std::string Name(const lt::peer_id& pid) const {
    auto it = names_.find(pid);
    return it != names_.end() ? it->second : "a member";
  }

  const std::map<lt::peer_id, Stripe> stripes_;
  const std::map<lt::peer_id, std::string> names_;
  std::map<lt::peer_id, std::vector<lt::peer_connection_handle>> live_;  // never an empty vector
  std::map<lt::peer_id, std::vector<int>> taken_over_;  // pieces a member holds for others
  std::set<lt::peer_id> handed_over_;                    // gone members whose pieces went to others
};

class SourcePeerPlugin final : public lt::peer_plugin {
 public:
  SourcePeerPlugin(lt::peer_connection_handle peer, std::shared_ptr<SourceSide> side)
      : peer_(std::move(peer)), side_(std::move(side)) {}

  void sent_have_all() override { side_->Connected(peer_); }
  bool on_have(lt::piece_index_t piece) override {
    side_->Reported(peer_, static_cast<int>(piece));
    return false;
  }
  bool on_bitfield(lt::bitfield const& pieces) override {  // a member that resumed
    for (int p = 0; p < pieces.size(); ++p) {
      if (pieces.get_bit(p)) side_->Reported(peer_, p);
    }
    return false;
  }
  void on_disconnect(lt::error_code const& error) override { side_->Disconnected(peer_, error); }

 private:
  const lt::peer_connection_handle peer_;
  const std::shared_ptr<SourceSide> side_;
};

class SourceTorrentPlugin final : public lt::torrent_plugin {
 public:
  explicit SourceTorrentPlugin(std::shared_ptr<SourceSide> side) : side_(std::move(side)) {}
  std::shared_ptr<lt::peer_plugin> new_connection(lt::peer_connection_handle const& peer) override {
    return std::make_shared<SourcePeerPlugin>(peer, side_);
  }
  void tick() override { side_->Tick(); }

 private:
  const std::shared_ptr<SourceSide> side_;
};

}  // namespace

std::shared_ptr<SourceSide> MakeSourceSide(const Plan& plan, const std::vector<lt::tcp::endpoint>& endpoints,
                                           const std::map<lt::peer_id, std::string>& names) {
  const Swarm& swarm = plan.swarm;
  const std::vector<int> group = swarm.GroupOfEachMember();
  if (!plan.HasLanes()) {
    std::map<lt::peer_id, int> index;
    std::vector<PieceDealer::Member> members(swarm.members.size());
    for (size_t i = 0; i < swarm.members.size(); ++i) index[PeerIdOf(plan.members[swarm.members[i].member])] = static_cast<int>(i);
    for (size_t i = 0; i < swarm.members.size(); ++i) {
      const std::vector<bool> in_stripe = StripeOf(plan, swarm.members[i]);
      for (size_t c = 0; c < in_stripe.size(); ++c) {
        if (in_stripe[c]) members[i].stripe.push_back(static_cast<int>(c));
      }
      for (size_t j = 0; j < swarm.members.size(); ++j) {
        if (j != i && group[j] == group[i]) members[i].group.push_back(static_cast<int>(j));
      }
      members[i].pieces_per_s = swarm.members[i].source_share_bps / 8 / static_cast<double>(plan.chunk_bytes);
      std::vector<ChunkRange> imported;
      for (const PeerChunks& limit : swarm.members[i].takes_only) imported.insert(imported.end(), limit.chunks.begin(), limit.chunks.end());
      const std::vector<bool> in_backstop = ChunksIn(plan, imported);
      for (size_t c = 0; c < in_backstop.size(); ++c) {
        if (in_backstop[c] && !in_stripe[c]) members[i].backstop.push_back(static_cast<int>(c));
      }
    }
    const int window = std::max<int>(2, static_cast<int>(kDealtBytes / plan.chunk_bytes));
    return std::make_shared<DealingSource>(std::move(index), PieceDealer(std::move(members), window));
  }
  std::map<lt::peer_id, StripeDispenser::Stripe> stripes;
  for (size_t i = 0; i < swarm.members.size(); ++i) {
    const SwarmMember& m = swarm.members[i];
    StripeDispenser::Stripe& stripe = stripes[PeerIdOf(plan.members[m.member])];
    const std::vector<bool> in_stripe = StripeOf(plan, m);
    for (size_t c = 0; c < in_stripe.size(); ++c) {
      if (in_stripe[c]) stripe.pieces.push_back(static_cast<int>(c));
    }
    for (size_t j = 0; j < swarm.members.size(); ++j) {
      if (j != i && group[j] == group[i]) stripe.group.push_back(PeerIdOf(plan.members[swarm.members[j].member]));
    }
    stripe.address = endpoints[m.member];
  }
  return std::make_shared<StripeDispenser>(std::move(stripes), names);
}

TorrentPluginFactory SourcePlugin(std::shared_ptr<SourceSide> side) {
  return [side = std::move(side)](lt::torrent_handle const&, lt::client_data_t) {
    return std::make_shared<SourceTorrentPlugin>(side);
  };
}

}  // namespace gridcast
