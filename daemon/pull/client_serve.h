// ServeTo()'s side: what the one outside BitTorrent client announced and asked for, its
// redialling, and the ClientServe handle the caller follows.
#pragma once

#include <libtorrent/socket.hpp>

#include <cstdint>
#include <memory>

#include "daemon/executor/swarm.h"
#include "daemon/pull/plugin_support.h"
#include "daemon/pull/torrent_session.h"
#include "daemon/store/payload_store.h"

namespace gridcast {

class ClientTracker;

std::shared_ptr<ClientTracker> MakeClientTracker(const PayloadIdentity& payload, lt::tcp::endpoint client);
// The plugin that feeds `tracker` from the client's connections and redials it.
TorrentPluginFactory ClientPlugin(std::shared_ptr<ClientTracker> tracker);
// The serve, as the caller follows and stops it: `swarm` holds the torrent.
std::shared_ptr<ClientServe> MakeServedClient(std::shared_ptr<PullSwarm> swarm, std::shared_ptr<ClientTracker> tracker,
                                              uint64_t payload_bytes);

}  // namespace gridcast
