#include "client/cli/torrent_command.h"

#include <fmt/core.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "client/cli/cli_util.h"
#include "cluster/control_client.h"
#include "common/crypto.h"
#include "common/units.h"

namespace gridcast::cli {
namespace {

struct TorrentArgs {
  std::string payload;
  std::string output;
  std::string address;
  std::string cluster;
  std::string member;
  std::string piece;
  double timeout_s = 0;
  std::string tls_ca;
};

// Hashing a large payload takes a while: the export call may last this long.
constexpr auto kExportCallTimeout = std::chrono::hours(1);

Result<uint64_t> PieceBytes(const std::string& text) {
  if (text.empty()) return uint64_t{0};
  Result<uint64_t> bytes = ParseSizeBytes(text);
  if (!bytes.ok()) return Status::InvalidArgument("--piece: " + bytes.status().message());
  return bytes;
}

// The member that answers for `payload`: `requested`, else the first member in the cluster
// file whose daemon lists it as complete.
Result<const ClusterMember*> ChooseMember(const ClusterConfig& cluster, const std::string& payload,
                                          const std::string& requested, const std::string& tls_ca) {
  if (!requested.empty()) {
    const ClusterMember* member = cluster.Find(requested);
    if (member == nullptr) return Status::InvalidArgument("--member: '" + requested + "' is not in the cluster");
    return member;
  }
  std::string unreachable;
  for (const ClusterMember& member : cluster.members) {
    ControlClient client(member.control_address, cluster.secret, {cluster.TlsCa(tls_ca), std::chrono::seconds(5)});
    v1::ListResponse held;
    Status listed = client.List(&held);
    if (!listed.ok()) {
      unreachable += (unreachable.empty() ? "" : ", ") + member.name;
      continue;
    }
    for (const v1::HeldPayload& p : held.payloads()) {
      if (p.name() == payload && p.complete()) return &member;
    }
  }
  return Status::NotFound("no member holds a complete '" + payload + "' (see gridcast list)" +
                          (unreachable.empty() ? "" : "; unreachable: " + unreachable));
}

struct Target {
  ClusterConfig cluster;
  const ClusterMember* member = nullptr;
  uint64_t piece_bytes = 0;
};

Result<Target> Resolve(const TorrentArgs& args) {
  Target target;
  GRIDCAST_ASSIGN_OR_RETURN(target.piece_bytes, PieceBytes(args.piece));
  GRIDCAST_ASSIGN_OR_RETURN(target.cluster, LoadCluster(args.cluster));
  GRIDCAST_ASSIGN_OR_RETURN(target.member, ChooseMember(target.cluster, args.payload, args.member, args.tls_ca));
  return target;
}

int Export(const TorrentArgs& args) {
  Result<Target> target = Resolve(args);
  if (!target.ok()) return ReportError(target.status());
  ControlClient client(target->member->control_address, target->cluster.secret,
                       {target->cluster.TlsCa(args.tls_ca), kExportCallTimeout});
  v1::ExportTorrentRequest request;
  request.set_name(args.payload);
  request.set_piece_bytes(target->piece_bytes);
  v1::ExportTorrentResponse response;
  Status exported = client.ExportTorrent(request, &response);
  if (!exported.ok()) return ReportError(exported.WithContext(target->member->name));
  std::ofstream out(args.output, std::ios::binary | std::ios::trunc);
  out.write(response.torrent().data(), static_cast<std::streamsize>(response.torrent().size()));
  out.close();
  if (!out) return ReportError(Status::Internal("cannot write " + args.output));
  std::cerr << fmt::format("{}: {} ({} in pieces of {}) -> {}\n", target->member->name, args.payload,
                           FormatSize(response.size_bytes()), FormatSize(response.piece_bytes()), args.output);
  fmt::print("{}\n", response.magnet());
  return kExitOk;
}

int ServeTo(const TorrentArgs& args) {
  Result<Target> target = Resolve(args);
  if (!target.ok()) return ReportError(target.status());
  v1::ServeToRequest request;
  request.set_name(args.payload);
  request.set_address(args.address);
  request.set_piece_bytes(target->piece_bytes);
  request.set_timeout_s(args.timeout_s);
  // The daemon ends the serve at its own timeout (automatic when 0); this only bounds a hang.
  const auto call_timeout = std::chrono::seconds(args.timeout_s > 0 ? static_cast<int64_t>(args.timeout_s) + 60
                                                                     : int64_t{86400} * 7);
  ControlClient client(target->member->control_address, target->cluster.secret, {target->cluster.TlsCa(args.tls_ca)});
  std::cerr << fmt::format("{} dials {} and serves {}\n", target->member->name, args.address, args.payload);
  v1::ServeToResponse response;
  Status served = client.ServeTo(request, std::chrono::duration_cast<std::chrono::milliseconds>(call_timeout),
                                 &response);
  if (!served.ok()) return ReportError(served.WithContext(target->member->name));
  const v1::ServeStatus& s = response.serve();
  fmt::print("{}: the client at {} has all {} pieces of {} after {:.1f} s ({:.1f} s since the dial; {} uploaded)\n",
             target->member->name, s.address(), s.pieces_total(), s.name(), s.elapsed_s(), s.transfer_s(),
             FormatSize(s.uploaded_bytes()));
  return kExitOk;
}

}  // namespace

void AddTorrentCommands(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TorrentArgs>();
  auto add_common = [args](CLI::App* command) {
    command->add_option("payload", args->payload, "The payload's name in the daemons' data directories")
        ->required();
    AddClusterFileOption(command, &args->cluster, "Cluster file (netgrid up --daemons writes STATE/cluster.yaml)");
    command->add_option("--member", args->member,
                        "Member that serves it (default: the first in the cluster file holding it complete)");
    command->add_option("--piece", args->piece,
                        "Piece size, a power of two from 16KiB to 64MiB (default: by payload size); "
                        "export and serve-to must agree");
    command->add_option("--tls-ca", args->tls_ca, "PEM CA when the daemons serve TLS (default: the cluster file's tls_ca)");
  };

  CLI::App* torrent = app.add_subcommand("torrent", "BitTorrent metadata of payloads the daemons hold");
  torrent->require_subcommand(1);
  CLI::App* export_command =
      torrent->add_subcommand("export", "Write the .torrent of a payload and print its magnet link");
  add_common(export_command);
  export_command->add_option("-o,--output", args->output, "Where to write the .torrent")->required();
  export_command->callback([args, exit_code] { *exit_code = Export(*args); });

  CLI::App* serve = app.add_subcommand(
      "serve-to", "Have a daemon dial a waiting BitTorrent client (aria2c, transmission) and seed a payload to it");
  serve->add_option("address", args->address, "The client's IP:PORT (its listen port)")->required();
  add_common(serve);
  serve->add_option("--timeout", args->timeout_s, "Seconds before giving up (default: 120 + 1 per MB)")
      ->check(CLI::NonNegativeNumber);
  serve->callback([args, exit_code] { *exit_code = ServeTo(*args); });
}

}  // namespace gridcast::cli
