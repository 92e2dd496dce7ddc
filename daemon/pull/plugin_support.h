// What the libtorrent plugins of a swarm share: the factory libtorrent takes for a torrent's
// plugin, and how members are known to it (peer ids, stripes).
#pragma once

#include <libtorrent/extensions.hpp>
#include <libtorrent/peer_connection_handle.hpp>
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

// Announces `pieces` to `peer` in HAVE messages written straight to its connection (libtorrent
// announces only what its own torrent holds, once).
inline void SendHaves(lt::peer_connection_handle peer, const std::vector<int>& pieces) {
  if (pieces.empty() || peer.is_disconnecting()) return;
  std::string messages;
  messages.reserve(pieces.size() * 9);
  for (int piece : pieces) {
    const char have[9] = {0, 0, 0, 5, 4, static_cast<char>((piece >> 24) & 0xff), static_cast<char>((piece >> 16) & 0xff),
                          static_cast<char>((piece >> 8) & 0xff), static_cast<char>(piece & 0xff)};
    messages.append(have, sizeof have);
  }
  peer.send_buffer(messages.data(), static_cast<int>(messages.size()));
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
