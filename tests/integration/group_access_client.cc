// The client of GroupAccessTest, run as an unprivileged user: a buffer broadcast from m0
// through its data directory, and one through its memory directory (as the MPI shim sends),
// each read back at m1. Usage: group_access_client CLUSTER_FILE. Exit 0 when both arrive whole.
#include <cstdio>
#include <string>
#include <vector>

#include "include/gridcast/gridcast.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CLUSTER_FILE\n", argv[0]);
    return 2;
  }
  gridcast::ClientOptions options;
  options.cluster_file = argv[1];
  options.source = "m0";
  gridcast::Result<std::unique_ptr<gridcast::Client>> client = gridcast::Client::Open(options);
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 1;
  }
  std::vector<uint8_t> sent(777'777);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<uint8_t>(i * 2654435761u >> 11);
  for (const bool in_memory : {false, true}) {
    const char* where = in_memory ? "memory directory" : "data directory";
    gridcast::SendOptions send;
    send.algorithm = "chain";
    send.in_memory = in_memory;
    const std::string name = std::string(in_memory ? "in-memory" : "on-disk") + "/buffer.bin";
    gridcast::Result<std::unique_ptr<gridcast::Broadcast>> started = (*client)->StartSendBuffer(sent, name, send);
    gridcast::Status status = started.ok() ? (*started)->Wait().status() : started.status();
    std::vector<uint8_t> received(sent.size());
    if (status.ok()) status = (*client)->Receive("m1", name, received, {});
    if (!status.ok()) {
      std::fprintf(stderr, "%s: %s\n", where, status.ToString().c_str());
      return 1;
    }
    std::printf("%s: m1's copy %s\n", where, received == sent ? "is the buffer" : "differs");
    if (received != sent) return 1;
  }
  return 0;
}
