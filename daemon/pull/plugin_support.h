// What the libtorrent plugins of a swarm share: the factory libtorrent takes for a torrent's
// plugin, and how members are known to it (peer ids, stripes).
#pragma once

#include <libtorrent/extensions.hpp>
#include <libtorrent/peer_id.hpp>
#include <libtorrent/torrent_handle.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectives/plan.h"
#include "daemon/pull/torrent_session.h"

namespace gridcast {

using TorrentPluginFactory =
    std::function<std::shared_ptr<lt::torrent_plugin>(lt::torrent_handle const&, lt::client_data_t)>;

inline lt::peer_id PeerIdOf(const std::string& member_name) {
  const std::string id = PeerIdForMember(member_name);
  return lt::peer_id(id.data());
}

// One flag per chunk of the plan: whether it is in `ranges`.
inline std::vector<bool> ChunksIn(const Plan& plan, const std::vector<ChunkRange>& ranges) {
  std::vector<bool> in(plan.NumChunks(), false);
  for (const ChunkRange& range : ranges) {
    for (uint64_t c = range.begin; c < range.end; c += range.step) in[c] = true;
  }
  return in;
}

// One flag per chunk of the plan: whether it is in `member`'s stripe.
inline std::vector<bool> StripeOf(const Plan& plan, const SwarmMember& member) { return ChunksIn(plan, member.stripe); }

}  // namespace gridcast
