#include "client/cli/cluster_setup_command.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

#include "client/cli/cli_util.h"
#include "client/cli/cluster_init.h"
#include "cluster/cluster_pki.h"
#include "collectives/topology.h"
#include "common/file_io.h"

namespace gridcast::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kClusterFileHeader =
    "# The cluster's members, where they listen, and its secret: the same file on every node\n"
    "# (/etc/gridcast/cluster.yaml, 0640 root:gridcast) and nowhere else. docs/real-cluster.md\n";

struct InitArgs {
  std::string hosts;
  std::string output;
  std::vector<std::string> sites;
  std::string name;
  bool tls = false;
  int days = 365;
  ClusterPorts ports;
  std::string digest;
  bool force = false;
};

struct AddHostArgs {
  std::vector<std::string> host;  // HOST [NAME [SITE]]
  std::string cluster;
  int days = 365;
};

// The members' hosts as their certificates name them: each distinct control and data host.
PkiMember PkiMemberFor(const ClusterMember& member) {
  PkiMember pki{member.name, {}};
  for (const std::string& address : {member.control_address, member.data_address}) {
    Result<std::pair<std::string, uint16_t>> split = SplitHostPort(address);
    if (split.ok() && std::find(pki.hosts.begin(), pki.hosts.end(), split->first) == pki.hosts.end()) {
      pki.hosts.push_back(split->first);
    }
  }
  return pki;
}

// `path` relative to `dir` when it lies below it: the files of a cluster move together.
std::string RelativeWithin(const std::string& path, const fs::path& dir) {
  if (path.empty()) return path;
  const fs::path relative = fs::path(path).lexically_relative(dir);
  return relative.empty() || *relative.begin() == ".." ? path : relative.string();
}

void PrintPorts(const ClusterPorts& ports) {
  fmt::print("Open between the nodes, TCP: {} (control, gRPC), {} (data), {} (BitTorrent: pull and hybrid "
             "broadcasts); clients reach the control port; the metrics port where you set one.\n",
             ports.control, ports.data, ports.bt != 0 ? ports.bt : ports.data + 1);
}

int Init(const InitArgs& args) {
  Result<std::string> list = ReadTextFile(args.hosts);
  if (!list.ok()) return ReportError(list.status());
  Result<std::vector<ClusterHost>> hosts = ParseHostList(*list, args.sites);
  if (!hosts.ok()) return ReportError(hosts.status().WithContext(args.hosts));
  const fs::path dir = fs::absolute(args.output);
  const fs::path cluster_file = dir / "cluster.yaml";
  std::error_code ec;
  if (fs::exists(cluster_file, ec) && !args.force) {
    return ReportError(Status::AlreadyExists(cluster_file.string() +
                                             " exists: its secret is in use (add hosts with `gridcast cluster "
                                             "add-host`, or --force to make a new cluster)"));
  }
  fs::create_directories(dir, ec);
  if (ec) return ReportError(Status::Unavailable("cannot create " + dir.string() + ": " + ec.message()));

  ClusterConfig config;
  config.secret = NewClusterSecret();
  config.topology_path = "topology.yaml";
  if (!args.digest.empty()) {
    Result<ChunkDigest> digest = ParseChunkDigest(args.digest);
    if (!digest.ok()) return ReportError(digest.status().WithContext("--digest"));
    config.digest = *digest;
  }
  std::vector<PkiMember> pki;
  for (const ClusterHost& host : *hosts) {
    config.members.push_back(MemberFor(host, args.ports));
    pki.push_back(PkiMemberFor(config.members.back()));
  }
  if (args.tls) {
    config.tls_ca_path = "pki/ca.pem";
    Status written = WriteClusterPki(dir / "pki", pki, args.days);
    if (!written.ok()) return ReportError(written);
  }
  const std::string name = args.name.empty() ? dir.filename().string() : args.name;
  Status topology = WriteFileAtomically(dir / "topology.yaml", TopologySkeleton(name, *hosts), 0644);
  if (!topology.ok()) return ReportError(topology);
  Status cluster = WriteFileAtomically(cluster_file, kClusterFileHeader + FormatClusterFile(config), 0600);
  if (!cluster.ok()) return ReportError(cluster);

  std::map<std::string, int> per_site;
  for (const ClusterHost& host : *hosts) ++per_site[host.site];
  std::string sites;
  for (const auto& [site, count] : per_site) {
    if (!site.empty()) sites += (sites.empty() ? " at " : ", ") + site + " (" + std::to_string(count) + ")";
  }
  fmt::print("cluster '{}': {} members{} in {}\n", name, hosts->size(), sites, dir.string());
  fmt::print("  cluster.yaml   members, addresses, the secret (0600): to every node, /etc/gridcast/cluster.yaml\n");
  fmt::print("  topology.yaml  the network; give it its rates (docs/topology.md)\n");
  if (args.tls) {
    fmt::print("  pki/           the CA (ca.pem, to every node; ca.key stays here) and NAME.pem, NAME.key for each\n"
               "                 member, valid {} days: to that member only, /etc/gridcast/pki/\n",
               args.days);
  }
  PrintPorts(args.ports);
  fmt::print("Next: docs/real-cluster.md\n");
  return kExitOk;
}

int AddHost(const AddHostArgs& args) {
  Result<ClusterConfig> config = LoadCluster(args.cluster);
  if (!config.ok()) return ReportError(config.status());
  std::string topology;
  std::vector<std::string> sites;  // a member whose name starts with a site's joins it
  if (!config->topology_path.empty()) {
    Result<std::string> text = ReadTextFile(config->topology_path);
    if (!text.ok()) return ReportError(text.status());
    topology = std::move(*text);
    Result<NetworkModel> model = ParseTopology(topology);
    if (!model.ok()) return ReportError(model.status().WithContext(config->topology_path));
    for (size_t s = 1; s < model->switches.size(); ++s) sites.push_back(model->switches[s].name);
  }
  std::string line;
  for (const std::string& word : args.host) line += word + " ";
  Result<ClusterHost> host = ParseHost(line, sites);
  if (!host.ok()) return ReportError(host.status());
  if (config->Find(host->name) != nullptr) {
    return ReportError(Status::AlreadyExists("'" + host->name + "' is a member of " + args.cluster + " already"));
  }
  const fs::path dir = fs::absolute(args.cluster).parent_path();
  // The new member listens on the ports the others do.
  ClusterPorts ports;
  const ClusterMember& first = config->members.front();
  Result<std::pair<std::string, uint16_t>> control = SplitHostPort(first.control_address);
  Result<std::pair<std::string, uint16_t>> data = SplitHostPort(first.data_address);
  Result<std::pair<std::string, uint16_t>> bt = SplitHostPort(first.bt_address);
  if (!control.ok() || !data.ok() || !bt.ok()) {
    return ReportError(Status::InvalidArgument("the first member of " + args.cluster +
                                               " has no host:port control address to copy the ports from"));
  }
  ports.control = control->second;
  ports.data = data->second;
  if (bt->second != data->second + 1) ports.bt = bt->second;
  const ClusterMember member = MemberFor(*host, ports);

  // Everything that can be refused first; then the certificate, the topology, the cluster file.
  std::string added;
  if (!config->topology_path.empty()) {
    Result<std::string> with_host = AddHostToTopology(topology, *host);
    if (!with_host.ok()) return ReportError(with_host.status().WithContext(config->topology_path));
    added = std::move(*with_host);
  }
  if (!config->tls_ca_path.empty()) {
    Status issued = AddClusterPkiMember(fs::path(config->tls_ca_path).parent_path(), PkiMemberFor(member), args.days);
    if (!issued.ok()) return ReportError(issued.WithContext("a certificate for " + host->name));
  }
  if (!config->topology_path.empty()) {
    Status written = WriteFileAtomically(config->topology_path, added, 0644);
    if (!written.ok()) return ReportError(written);
  }
  config->members.push_back(member);
  config->topology_path = RelativeWithin(config->topology_path, dir);
  config->tls_ca_path = RelativeWithin(config->tls_ca_path, dir);
  Status written = WriteFileAtomically(args.cluster, kClusterFileHeader + FormatClusterFile(*config), 0600);
  if (!written.ok()) return ReportError(written);
  fmt::print("{} ({}) added to {}: {} members{}{}\n", host->name, host->host, args.cluster, config->members.size(),
             config->topology_path.empty() ? "" : "; topology " + config->topology_path,
             config->tls_ca_path.empty()
                 ? ""
                 : "; certificate " + (fs::path(config->tls_ca_path).parent_path() / (host->name + ".pem")).string());
  fmt::print("Copy the cluster file to every node again; the daemons read it when they start.\n");
  return kExitOk;
}

}  // namespace

void AddClusterSetupCommands(CLI::App& app, int* exit_code) {
  CLI::App* cluster = app.add_subcommand("cluster", "Make a cluster's files for real machines (docs/real-cluster.md)");
  cluster->require_subcommand(1);

  auto init_args = std::make_shared<InitArgs>();
  CLI::App* init = cluster->add_subcommand(
      "init", "From a host list (lines of HOST [NAME [SITE]]): cluster.yaml with a fresh secret, topology.yaml, "
              "with --tls a CA and a certificate per member");
  init->add_option("--hosts", init_args->hosts, "Host list: HOST [NAME [SITE]] per line, # comments")
      ->required()
      ->check(CLI::ExistingFile);
  init->add_option("-o,--output", init_args->output, "Directory to write the cluster's files to")->required();
  init->add_option("--sites", init_args->sites,
                   "Site names, comma-separated: a member whose name starts with one is in that site "
                   "(when its line names no site)")
      ->delimiter(',');
  init->add_option("--name", init_args->name, "The cluster's name in the topology (default: the directory's name)");
  init->add_flag("--tls", init_args->tls, "Make a CA and a certificate per member (pki/), and name the CA in the cluster file");
  init->add_option("--days", init_args->days, "Validity of the certificates in days")
      ->capture_default_str()
      ->check(CLI::Range(1, 36500));
  init->add_option("--control-port", init_args->ports.control, "Every member's control (gRPC) port")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  init->add_option("--data-port", init_args->ports.data, "Every member's data port")
      ->capture_default_str()
      ->check(CLI::Range(1, 65534));
  init->add_option("--bt-port", init_args->ports.bt, "Every member's BitTorrent port (default: the data port + 1)")
      ->check(CLI::Range(1, 65535));
  init->add_option("--digest", init_args->digest, "The cluster's default chunk digest (digest: in the cluster file)");
  init->add_flag("--force", init_args->force, "Replace an existing cluster.yaml (a new secret: every node needs the new file)");
  init->callback([init_args, exit_code] { *exit_code = Init(*init_args); });

  auto add_args = std::make_shared<AddHostArgs>();
  CLI::App* add = cluster->add_subcommand(
      "add-host", "Add a member to a cluster file (and its topology, and a certificate when the cluster has a CA here)");
  add->add_option("host", add_args->host, "HOST [NAME [SITE]], as a line of the host list")->required()->expected(1, 3);
  AddClusterFileOption(add, &add_args->cluster, "Cluster file to add the member to");
  add->add_option("--days", add_args->days, "Validity of the certificate in days")
      ->capture_default_str()
      ->check(CLI::Range(1, 36500));
  add->callback([add_args, exit_code] { *exit_code = AddHost(*add_args); });
}

}  // namespace gridcast::cli
