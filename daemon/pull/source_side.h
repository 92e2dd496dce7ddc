// The source's side of a striped swarm (network thread only): what it tells members as they
// connect, report pieces (HAVE) and leave. Pull: the pieces PieceDealer deals each member;
// hybrid: fixed stripes, handed over to the group when a member leaves.
#pragma once

#include <libtorrent/peer_connection_handle.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectives/plan.h"
#include "daemon/pull/plugin_support.h"

namespace gridcast {

class SourceSide {
 public:
  virtual ~SourceSide() = default;
  virtual void Connected(const lt::peer_connection_handle& peer) = 0;
  virtual void Reported(const lt::peer_connection_handle& peer, int piece) = 0;
  virtual void Disconnected(const lt::peer_connection_handle& peer, const lt::error_code& error) = 0;
  // About once a second (libtorrent's torrent tick).
  virtual void Tick() {}
};

// The side of the source of `plan`'s striped swarm (not free choice): pull plans deal, hybrid
// plans dispense stripes. `endpoints` (BitTorrent addresses) and `names` (by peer id) cover
// the members this source knows.
std::shared_ptr<SourceSide> MakeSourceSide(const Plan& plan, const std::vector<lt::tcp::endpoint>& endpoints,
                                           const std::map<lt::peer_id, std::string>& names);

TorrentPluginFactory SourcePlugin(std::shared_ptr<SourceSide> side);

}  // namespace gridcast
