// Shared by the integration tests: run `gridcast send` against a LocalCluster and check copies.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include <algorithm>
#include <chrono>
#include <thread>

#include "cluster/control_client.h"
#include "common/hex.h"
#include "deploy/local_cluster.h"

namespace gridcast {

inline std::string FileSha256(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  Sha256Stream sha;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    sha.Update({reinterpret_cast<const uint8_t*>(buffer.data()), static_cast<size_t>(in.gcount())});
  }
  return ToHex(sha.Finish());
}

struct SendResult {
  int exit_code = -1;
  std::string output;
  nlohmann::json json;
};

inline SendResult Send(const LocalCluster& cluster, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {GRIDCAST_CLI, "send"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--cluster", cluster.cluster_file(), "--json"});
  Result<CommandOutput> out = RunCommand(argv);
  SendResult result;
  if (!out.ok()) return result;
  result.exit_code = out->exit_code;
  result.output = out->output;
  result.json = nlohmann::json::parse(out->output, nullptr, false);
  return result;
}

// Every member's copy of `name` has the source file's digest.
inline void ExpectEverywhere(const LocalCluster& cluster, const std::string& source_path, const std::string& name) {
  const std::string expected = FileSha256(source_path);
  for (int i = 1; i < cluster.size(); ++i) {
    const fs::path copy = cluster.data_dir(i) / name;
    ASSERT_TRUE(fs::exists(copy)) << copy;
    EXPECT_EQ(fs::file_size(copy), fs::file_size(source_path)) << copy;
    EXPECT_EQ(FileSha256(copy), expected) << copy;
    EXPECT_FALSE(fs::exists(copy.string() + ".part")) << copy;
  }
}

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Kills `victims` once member `watched` has received its first chunks, well before the end.
// Returns once member `watched` verified its first chunk (and fails the test if it is already
// past half, or never starts).
inline void WaitUntilUnderWay(LocalCluster& cluster, int watched) {
  ControlClient client(cluster.config().members[watched].control_address, cluster.config().secret, {});
  for (int i = 0; i < 4000; ++i) {
    v1::StatusRequest request;
    v1::StatusResponse response;
    if (client.GetStatus(request, &response).ok() && response.plans_size() == 1 &&
        response.plans(0).chunks_done() > 0) {
      ASSERT_LT(response.plans(0).chunks_done(), response.plans(0).chunks_total() / 2) << "too late";
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  FAIL() << "the broadcast never reached m" << watched;
}

inline void KillOnceUnderWay(LocalCluster& cluster, int watched, const std::vector<int>& victims) {
  ASSERT_NO_FATAL_FAILURE(WaitUntilUnderWay(cluster, watched));
  for (int victim : victims) cluster.Kill(victim);
}

// The killed members are reported lost (and named in the error); every other receiver holds a
// verified, byte-identical copy.
inline void ExpectLostAndTheRestVerified(const SendResult& r, const LocalCluster& cluster, const std::vector<int>& killed,
                                  const std::string& path, const std::string& name_in_store) {
  EXPECT_NE(r.exit_code, 0);
  ASSERT_TRUE(r.json.is_object()) << r.output;
  std::string lost;
  for (int k : killed) lost += (lost.empty() ? "lost: m" : ", m") + std::to_string(k);
  EXPECT_NE(r.json["error"].get<std::string>().find(lost), std::string::npos) << r.output;
  const std::string expected = FileSha256(path);
  ASSERT_EQ(r.json["members"].size(), static_cast<size_t>(cluster.size() - 1)) << r.output;
  for (const auto& member : r.json["members"]) {
    const int i = std::stoi(member["name"].get<std::string>().substr(1));  // "m<i>"
    if (std::find(killed.begin(), killed.end(), i) != killed.end()) {
      EXPECT_EQ(member["state"], "lost");
    } else {
      EXPECT_TRUE(member["digest_ok"].get<bool>()) << member.dump();
      EXPECT_EQ(FileSha256(cluster.data_dir(i) / name_in_store), expected) << "m" << i;
    }
  }
}

}  // namespace gridcast
