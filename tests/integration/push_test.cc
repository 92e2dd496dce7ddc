// Push broadcasts between real gridcastd processes on loopback: every broadcast planner,
// awkward sizes, a restart mid-broadcast, and hostile input.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

#include "cluster/control_client.h"
#include "collectives/registry.h"
#include "common/file_io.h"
#include "common/hex.h"
#include "common/payload_digests.h"
#include "proto/plan_codec.h"
#include "tests/integration/exposition.h"
#include "tests/integration/send_helpers.h"

namespace gridcast {
namespace {

class PushTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = new LocalCluster(GRIDCASTD, "push", 8); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  static LocalCluster* cluster_;
};
LocalCluster* PushTest::cluster_ = nullptr;

TEST_F(PushTest, EveryBroadcastPlannerAwkwardSizes) {
  constexpr uint64_t kChunk = 64 << 10;
  int n = 0;
  for (const PlannerInfo& info : ListPlanners()) {
    if (info.kind != PlannerKind::kBroadcast) continue;
    for (uint64_t size : {uint64_t{0}, uint64_t{1}, kChunk - 1, kChunk + 1, 5 * kChunk + 7}) {
      const std::string name = "p" + std::to_string(n++) + ".bin";
      const std::string path = cluster_->MakePayload(name, size);
      SendResult r = Send(*cluster_, {path, "--algo", info.name, "--chunk", "64KiB"});
      ASSERT_EQ(r.exit_code, 0) << info.name << " size " << size << ": " << r.output;
      ASSERT_TRUE(r.json.is_object()) << r.output;
      EXPECT_TRUE(r.json["verified"].get<bool>()) << r.output;
      if (info.name == "auto") {
        // auto reports the planner it chose, and why.
        EXPECT_NE(r.json["algorithm"], "auto");
        EXPECT_TRUE(MakePlanner(r.json["algorithm"].get<std::string>()).ok()) << r.output;
        EXPECT_FALSE(r.json.value("rationale", "").empty()) << r.output;
      } else {
        EXPECT_EQ(r.json["algorithm"], info.name);
      }
      EXPECT_EQ(r.json["members"].size(), 7u);
      ExpectEverywhere(*cluster_, path, name);
    }
  }
}

// Chunk sizes from the command line: one clear line, a non-zero exit, and the daemons serve the
// next send.
TEST_F(PushTest, AbsurdChunkSizesAreRefusedWithOneLine) {
  const std::string path = cluster_->MakePayload("absurd-chunks.bin", 100'000);
  for (const char* chunk : {"128MiB", "1TiB"}) {
    SendResult r = Send(*cluster_, {path, "--algo", "chain", "--chunk", chunk});
    EXPECT_NE(r.exit_code, 0) << chunk << ": " << r.output;
    EXPECT_NE(r.output.find("64 MiB"), std::string::npos) << chunk << ": " << r.output;
  }
  SendResult pull = Send(*cluster_, {path, "--mode", "pull", "--chunk", "48KiB"});
  EXPECT_NE(pull.exit_code, 0) << pull.output;
  EXPECT_NE(pull.output.find("power of two from 16 KiB to 64 MiB"), std::string::npos) << pull.output;
  SendResult fine = Send(*cluster_, {path, "--algo", "chain", "--chunk", "16KiB"});
  ASSERT_EQ(fine.exit_code, 0) << fine.output;
  ExpectEverywhere(*cluster_, path, "absurd-chunks.bin");
}

// Names as users write them: spaces and non-ASCII survive push, pull
// and hybrid; an empty file is a verified copy by push and one clear refusal by pull.
TEST_F(PushTest, NamesWithSpacesAndNonAsciiAndEmptyFiles) {
  const std::string spaced = cluster_->MakePayload("spaced \u00e9 \u6587\u4ef6.bin", 100'003);
  SendResult r = Send(*cluster_, {spaced, "--algo", "binary"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectEverywhere(*cluster_, spaced, "spaced \u00e9 \u6587\u4ef6.bin");
  const std::string pulled = cluster_->MakePayload("pull \u00fc \u6587\u4ef6.bin", 200'000);
  r = Send(*cluster_, {pulled, "--mode", "pull"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectEverywhere(*cluster_, pulled, "pull \u00fc \u6587\u4ef6.bin");
  const std::string empty = cluster_->MakePayload("empty \u00e9.bin", 0);
  r = Send(*cluster_, {empty, "--algo", "chain"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectEverywhere(*cluster_, empty, "empty \u00e9.bin");
  r = Send(*cluster_, {empty, "--mode", "pull"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("empty payload"), std::string::npos) << r.output;
}

// Every entry below `root`: its path and what it is ("file:<sha256>", "dir", "link:<target>").
std::map<std::string, std::string> TreeOf(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string relative = fs::relative(it->path(), root).string();
    out[relative] = it->is_symlink()     ? "link:" + fs::read_symlink(it->path()).string()
                    : it->is_directory() ? "dir"
                                         : "file:" + FileSha256(it->path());
  }
  return out;
}

// A directory arrives as a directory at every member (push and pull), with its empty files,
// odd names and links within it; a link out of it is refused before a byte moves, naming the
// link, and the daemons serve the next send.
TEST_F(PushTest, DirectoriesArriveWholeAndALinkOutOfOneIsRefused) {
  const fs::path tree = cluster_->dir() / "payloads" / "data set é";
  fs::create_directories(tree / "sub 文件" / "deeper");
  fs::create_directories(tree / "empty-dir");
  std::ofstream(tree / "big.bin", std::ios::binary) << std::string(3'000'017, 'b');
  std::ofstream(tree / "sub 文件" / "deeper" / "small.txt") << "small";
  std::ofstream(tree / "empty.txt");
  fs::create_symlink("sub 文件/deeper/small.txt", tree / "link");
  for (const char* mode : {"push", "pull"}) {
    SCOPED_TRACE(mode);
    SendResult r = Send(*cluster_, {tree.string(), "--mode", mode, "--name", std::string("set-") + mode});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    for (int i = 1; i < cluster_->size(); ++i) {
      const fs::path copy = cluster_->data_dir(i) / (std::string("set-") + mode);
      EXPECT_EQ(TreeOf(copy), TreeOf(tree)) << copy;
      EXPECT_FALSE(fs::exists(copy.string() + ".tar")) << copy;
    }
  }
  EXPECT_TRUE(fs::is_empty(cluster_->data_dir(0) / ".gridcast" / "packs"));  // packed for the send, then removed

  fs::create_symlink("../../../../etc/passwd", tree / "sub 文件" / "escape");
  SendResult r = Send(*cluster_, {tree.string(), "--name", "refused"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("escape is a link to ../../../../etc/passwd, outside the directory"), std::string::npos)
      << r.output;
  for (int i = 1; i < cluster_->size(); ++i) EXPECT_FALSE(fs::exists(cluster_->data_dir(i) / "refused"));
  fs::remove(tree / "sub 文件" / "escape");
  r = Send(*cluster_, {tree.string(), "--name", "refused"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(TreeOf(cluster_->data_dir(3) / "refused"), TreeOf(tree));
}

TEST_F(PushTest, ParallelStreamsAndSubsets) {
  const std::string path = cluster_->MakePayload("streams.bin", 3'000'017);
  SendResult r = Send(*cluster_, {path, "--algo", "binary", "--chunk", "256KiB", "--streams", "3",
                                  "--to", "m2,m5,m7"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.json["members"].size(), 3u);
  for (int i : {2, 5, 7}) EXPECT_EQ(FileSha256(cluster_->data_dir(i) / "streams.bin"), FileSha256(path));
  EXPECT_FALSE(fs::exists(cluster_->data_dir(1) / "streams.bin"));
}

// send --json's "control": what the source's control plane cost. Every member costs at least a
// Prepare, a Start, one Status and a Cancel; every Prepare carries the plan with its chunk
// hashes; the first payload byte leaves after the request. An empty payload sends none.
TEST_F(PushTest, ControlCountersCountTheSourcesCallsAndTheFirstByte) {
  const std::string path = cluster_->MakePayload("counted.bin", 3'000'017);
  SendResult r = Send(*cluster_, {path, "--algo", "multilane", "--chunk", "64KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(r.json.contains("control")) << r.output;
  const nlohmann::json& control = r.json["control"];
  constexpr uint64_t kMembers = 7;
  const uint64_t chunks = (3'000'017 + (64 << 10) - 1) / (64 << 10);
  EXPECT_GE(control["rpcs_at_source"].get<uint64_t>(), 4 * kMembers) << r.output;
  EXPECT_GE(control["bytes_at_source"].get<uint64_t>(), kMembers * chunks * 32) << r.output;
  ASSERT_TRUE(control["first_byte_s"].is_number()) << r.output;
  EXPECT_GT(control["first_byte_s"].get<double>(), 0) << r.output;
  EXPECT_LT(control["first_byte_s"].get<double>(), 30) << r.output;

  const std::string empty = cluster_->MakePayload("counted-empty.bin", 0);
  r = Send(*cluster_, {empty, "--algo", "multilane"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.json["control"]["first_byte_s"].is_null()) << r.output;
  EXPECT_GE(r.json["control"]["rpcs_at_source"].get<uint64_t>(), 3 * kMembers) << r.output;
}

// `gridcast status --member NAME` asks that one member and no other; an unknown name is bad
// input (exit 2) naming it.
TEST_F(PushTest, StatusOfOneMemberAsksOnlyIt) {
  Result<CommandOutput> one =
      RunCommand({GRIDCAST_CLI, "status", "--member", "m3", "--cluster", cluster_->cluster_file()});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->exit_code, 0) << one->output;
  EXPECT_EQ(one->output.rfind("m3 ", 0), 0u) << one->output;
  for (const char* other : {"m0 ", "m1 ", "m2 ", "m4 ", "m7 "}) {
    EXPECT_EQ(one->output.find(std::string("\n") + other), std::string::npos) << one->output;
  }
  Result<CommandOutput> unknown =
      RunCommand({GRIDCAST_CLI, "status", "--member", "m99", "--cluster", cluster_->cluster_file()});
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->exit_code, 2) << unknown->output;
  EXPECT_NE(unknown->output.find("'m99' is not in the cluster"), std::string::npos) << unknown->output;
}

// The scrub: `gridcast list --verify` re-hashes every held payload against the chunk hashes it
// was received with. A byte flipped in one member's finished copy is named, with its chunk,
// and fails the command; the other members' copies read as ok.
TEST_F(PushTest, ListVerifyNamesABadChunkInAFinishedCopy) {
  const std::string path = cluster_->MakePayload("scrub.bin", 5 * (64 << 10) + 99);
  SendResult r = Send(*cluster_, {path, "--algo", "multilane", "--chunk", "64KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<std::string> list = {GRIDCAST_CLI, "list", "--verify", "--cluster", cluster_->cluster_file()};
  Result<CommandOutput> clean = RunCommand(list);
  ASSERT_TRUE(clean.ok());
  EXPECT_EQ(clean->exit_code, 0) << clean->output;
  EXPECT_NE(clean->output.find("scrub.bin"), std::string::npos) << clean->output;
  EXPECT_NE(clean->output.find("verify: ok"), std::string::npos) << clean->output;

  const fs::path copy = cluster_->data_dir(3) / "scrub.bin";
  {
    std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(3 * (64 << 10) + 5);
    const char byte = static_cast<char>(f.get());
    f.seekp(3 * (64 << 10) + 5);
    f.put(static_cast<char>(byte ^ 1));
  }
  Result<CommandOutput> bad = RunCommand(list);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->exit_code, 1) << bad->output;
  EXPECT_NE(bad->output.find("error: m3: scrub.bin has 1 bad chunk(s): 3"), std::string::npos) << bad->output;
  EXPECT_EQ(bad->output.find("error: m2"), std::string::npos) << bad->output;
}

TEST_F(PushTest, WrongSecretIsRefusedAndDaemonsStayUp) {
  ControlClient impostor(cluster_->config().members[0].control_address, "not the secret at all....");
  v1::ListResponse list;
  Status s = impostor.List(&list);
  EXPECT_EQ(s.code(), StatusCode::kUnauthenticated) << s.ToString();
  EXPECT_NE(s.message().find("bad cluster secret"), std::string::npos) << s.message();
  ControlClient member(cluster_->config().members[0].control_address, cluster_->config().secret);
  EXPECT_TRUE(member.List(&list).ok());
}

TEST_F(PushTest, PathTraversalIsRefused) {
  const std::string path = cluster_->MakePayload("trav.bin", 1000);
  for (const char* name : {"../escape.bin", "/etc/escape.bin", "a/../../escape.bin", ".gridcast/x"}) {
    SendResult r = Send(*cluster_, {path, "--algo", "chain", "--name", name});
    EXPECT_NE(r.exit_code, 0) << name;
    EXPECT_NE(r.output.find("payload name"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(cluster_->dir() / "escape.bin"));
  EXPECT_FALSE(fs::exists(cluster_->data_dir(1).parent_path() / "escape.bin"));
  // A payload outside the source's data directory and send roots is refused too.
  SendResult r = Send(*cluster_, {cluster_->cluster_file(), "--algo", "chain"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("outside the data directory"), std::string::npos) << r.output;
}

// What the library's StartSendBuffer does, by hand: the sender declares the payload's size
// (BroadcastRequest.fill), or its chunks' digests too, and writes the file while the source
// already sends it.
class FilledSend {
 public:
  FilledSend(const LocalCluster& cluster, const std::string& name, std::vector<uint8_t> bytes)
      : source_(cluster.config().members[0].control_address, cluster.config().secret),
        path_(cluster.data_dir(0) / (name + ".buffer")),
        bytes_(std::move(bytes)) {
    request_.set_payload_path(path_.string());
    request_.set_name(name);
    request_.set_algorithm("chain");
    request_.set_chunk_bytes(kChunk);
    request_.set_stall_timeout_s(30);
    fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  ~FilledSend() {
    if (call_.joinable()) call_.join();
    close(fd_);
    std::error_code ec;
    fs::remove(path_, ec);
  }
  static constexpr uint64_t kChunk = 64 << 10;

  // Declares `size` bytes (and `sha256`, if given), then starts the broadcast.
  void StartUndeclared(uint64_t size, std::optional<Digest> sha256 = std::nullopt) {
    v1::PayloadFill* fill = request_.mutable_fill();
    fill->set_size_bytes(size);
    if (sha256) fill->set_sha256(AsString(*sha256));
    call_ = std::thread([this] {
      outcome_ = source_.Broadcast(request_, std::chrono::seconds(120), [](const v1::BroadcastProgress&) {});
    });
  }
  // Declares `declared`'s digests, then starts the broadcast.
  void Start(std::span<const uint8_t> declared) {
    const ChunkDigest digest = *ChunkDigestFromProto(request_.digest());
    Result<PayloadDigests> digests =
        DigestPayload(declared.size(), kChunk, digest, [&](uint64_t offset, uint64_t length, std::vector<uint8_t>&) {
          return Result<std::span<const uint8_t>>(declared.subspan(offset, length));
        });
    ASSERT_TRUE(digests.ok());
    v1::PayloadFill* fill = request_.mutable_fill();
    fill->set_size_bytes(declared.size());
    fill->set_chunk_hashes(EncodeChunkHashes(digest, digests->chunk_hashes));
    fill->set_sha256(AsString(digests->sha256));
    call_ = std::thread([this] {
      outcome_ = source_.Broadcast(request_, std::chrono::seconds(120), [](const v1::BroadcastProgress&) {});
    });
  }
  void Write(uint64_t from, uint64_t to) {
    ASSERT_TRUE(PwriteFull(SystemFileIo(), fd_, std::span<const uint8_t>(bytes_).subspan(from, to - from), from).ok());
  }
  Status Wait() {
    call_.join();
    return outcome_;
  }

 private:
  ControlClient source_;
  const fs::path path_;
  const std::vector<uint8_t> bytes_;
  v1::BroadcastRequest request_;
  int fd_ = -1;
  std::thread call_;
  Status outcome_;
};

std::vector<uint8_t> FreshBytes(uint64_t size) {
  std::vector<uint8_t> bytes(size);
  RandomBytes(bytes);
  return bytes;
}

TEST_F(PushTest, APayloadItsSenderStillWritesLeavesChunkByChunk) {
  ControlClient first_child(cluster_->config().members[1].control_address, cluster_->config().secret);
  v1::PlanBroadcastRequest ask;
  ask.mutable_broadcast()->set_algorithm("chain");
  ask.set_size_bytes(40 * FilledSend::kChunk);
  v1::PlanBroadcastResponse planned;
  ASSERT_TRUE(first_child.PlanBroadcast(ask, &planned).ok());
  EXPECT_EQ(planned.algorithm(), "chain");
  EXPECT_GT(planned.chunk_bytes(), 0u);

  // A sender that declares the chunks' digests, and one that declares only the size (the
  // source hashes each batch of digests once the file holds it: 1 MiB first, here 16 chunks).
  for (const bool declared : {true, false}) {
    SCOPED_TRACE(declared ? "declared" : "size only");
    const std::string name = declared ? "filled.bin" : "filled-undeclared.bin";
    const std::vector<uint8_t> payload = FreshBytes(40 * FilledSend::kChunk - 77);
    FilledSend send(*cluster_, name, payload);
    if (declared) {
      send.Start(payload);
    } else {
      send.StartUndeclared(payload.size());
    }
    const uint64_t first_part = declared ? 10 * FilledSend::kChunk + 5 : 17 * FilledSend::kChunk + 5;
    send.Write(0, first_part);
    // The first chunks reach the chain's first member while the rest is not written yet.
    v1::ChunkMapRequest map_request;
    map_request.set_name(name);
    v1::ChunkMapResponse map;
    bool some = false;
    for (int i = 0; i < 500 && !some; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      some = first_child.ChunkMap(map_request, &map).ok() && !map.complete() && !map.verified().empty() &&
             map.verified()[0] != 0;
    }
    ASSERT_TRUE(some);
    EXPECT_FALSE(map.complete());
    const uint64_t unwritten = first_part / FilledSend::kChunk;  // not whole yet
    EXPECT_EQ((static_cast<uint8_t>(map.verified()[unwritten / 8]) >> (unwritten % 8)) & 1, 0)
        << "chunk " << unwritten << " is not whole yet";
    send.Write(first_part, payload.size());
    const Status outcome = send.Wait();
    ASSERT_TRUE(outcome.ok()) << outcome.ToString();
    for (int i = 1; i < cluster_->size(); ++i) {
      std::ifstream copy(cluster_->data_dir(i) / name, std::ios::binary);
      const std::vector<uint8_t> held((std::istreambuf_iterator<char>(copy)), std::istreambuf_iterator<char>());
      EXPECT_EQ(held, payload) << "member " << i;
    }
  }
}

TEST_F(PushTest, BytesASenderWritesOtherThanItDeclaredNeverLeaveTheSource) {
  std::vector<uint8_t> declared = FreshBytes(12 * FilledSend::kChunk);
  std::vector<uint8_t> written = declared;
  written[7 * FilledSend::kChunk + 3] ^= 0x5a;  // the buffer changed after it was hashed
  FilledSend send(*cluster_, "filled-wrong.bin", written);
  send.Start(declared);
  const auto started = std::chrono::steady_clock::now();
  send.Write(0, written.size());
  const Status outcome = send.Wait();
  EXPECT_FALSE(outcome.ok());
  EXPECT_NE(outcome.message().find("chunk 7 of filled-wrong.bin.buffer as written differs"), std::string::npos)
      << outcome.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20)) << "not the 30 s stall timeout";
  for (int i = 1; i < cluster_->size(); ++i) EXPECT_FALSE(fs::exists(cluster_->data_dir(i) / "filled-wrong.bin"));

  // A sender that gives up removes its file: the broadcast ends at once, too.
  FilledSend abandoned(*cluster_, "filled-abandoned.bin", declared);
  abandoned.Start(declared);
  abandoned.Write(0, 3 * FilledSend::kChunk);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  fs::remove(cluster_->data_dir(0) / "filled-abandoned.bin.buffer");
  const Status gave_up = abandoned.Wait();
  EXPECT_NE(gave_up.message().find("removed by its sender"), std::string::npos) << gave_up.ToString();

  // A sender that declares only the size and the whole SHA-256: bytes that do not make it fail
  // every member's copy, found with the last byte.
  FilledSend undeclared(*cluster_, "filled-sha.bin", written);
  undeclared.StartUndeclared(written.size(), Sha256(declared));
  undeclared.Write(0, written.size());
  const Status sha_differs = undeclared.Wait();
  EXPECT_NE(sha_differs.message().find("filled-sha.bin.buffer as written differs from the whole-payload SHA-256"),
            std::string::npos)
      << sha_differs.ToString();
  for (int i = 1; i < cluster_->size(); ++i) EXPECT_FALSE(fs::exists(cluster_->data_dir(i) / "filled-sha.bin"));

  // ... and one that gives up half-way.
  FilledSend half(*cluster_, "filled-half.bin", declared);
  half.StartUndeclared(declared.size());
  half.Write(0, 3 * FilledSend::kChunk);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  fs::remove(cluster_->data_dir(0) / "filled-half.bin.buffer");
  const Status half_gave_up = half.Wait();
  EXPECT_NE(half_gave_up.message().find("removed by its sender"), std::string::npos) << half_gave_up.ToString();
}

// A hand-made Prepare, as a hostile or buggy source would send it.
v1::PrepareRequest CraftPrepare(const LocalCluster& cluster, uint64_t size, int hashes) {
  v1::PrepareRequest request;
  v1::Plan* plan = request.mutable_plan();
  plan->set_plan_id(std::string(16, '\x42'));
  plan->set_algorithm("chain");
  plan->set_mode(v1::PLAN_MODE_PUSH);
  plan->mutable_payload()->set_name("crafted.bin");
  plan->mutable_payload()->set_size_bytes(size);
  plan->mutable_payload()->set_chunk_bytes(1024);
  plan->mutable_payload()->set_sha256(std::string(32, '\0'));
  plan->mutable_payload()->set_chunk_hashes(std::string(32 * static_cast<size_t>(hashes), '\1'));
  for (int i = 0; i < 2; ++i) {
    v1::Member* m = plan->add_members();
    m->set_name(cluster.config().members[i].name);
    m->set_data_address(cluster.config().members[i].data_address);
  }
  v1::Lane* lane = plan->add_lanes();
  lane->set_source(0);
  v1::ChunkRange* range = lane->add_chunks();
  range->set_begin(0);
  range->set_end((size + 1023) / 1024);
  v1::Fanout* fanout = lane->add_fanouts();
  fanout->set_parent(0);
  fanout->add_children(1);
  request.set_member_index(1);
  return request;
}

TEST_F(PushTest, MalformedPlansGetClearErrors) {
  ControlClient m1(cluster_->config().members[1].control_address, cluster_->config().secret);
  v1::PrepareResponse response;
  // Payload size and chunk hashes disagree.
  Status s = m1.Prepare(CraftPrepare(*cluster_, 4096, 3), &response);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("4 chunks needs 4 sha256 digests"), std::string::npos) << s.message();
  // A digest no daemon knows, or hashes of another digest's width.
  v1::PrepareRequest unknown_digest = CraftPrepare(*cluster_, 4096, 4);
  unknown_digest.mutable_plan()->mutable_payload()->set_digest(static_cast<v1::ChunkDigest>(9));
  s = m1.Prepare(unknown_digest, &response);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown chunk digest 9"), std::string::npos) << s.message();
  v1::PrepareRequest narrow = CraftPrepare(*cluster_, 4096, 4);
  narrow.mutable_plan()->mutable_payload()->set_digest(v1::CHUNK_DIGEST_XXH3);
  s = m1.Prepare(narrow, &response);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("4 xxh3 digests of 16 bytes"), std::string::npos) << s.message();
  // A plan whose tree names a member that does not exist.
  v1::PrepareRequest unknown = CraftPrepare(*cluster_, 4096, 4);
  unknown.mutable_plan()->mutable_lanes(0)->mutable_fanouts(0)->add_children(7);
  s = m1.Prepare(unknown, &response);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not a member index"), std::string::npos) << s.message();
  // The receiver is not who the plan says.
  v1::PrepareRequest wrong_index = CraftPrepare(*cluster_, 4096, 4);
  wrong_index.set_member_index(0);
  s = m1.Prepare(wrong_index, &response);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // Absurd sizes are refused before any allocation.
  v1::PrepareRequest huge = CraftPrepare(*cluster_, uint64_t{1} << 62, 0);
  s = m1.Prepare(huge, &response);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  // A chunk a receiver would have to hold in memory whole (a window of them per connection).
  v1::PrepareRequest big_chunks = CraftPrepare(*cluster_, uint64_t{1} << 30, 1);
  big_chunks.mutable_plan()->mutable_payload()->set_chunk_bytes(uint64_t{1} << 30);
  big_chunks.mutable_plan()->mutable_lanes(0)->mutable_chunks(0)->set_end(1);
  s = m1.Prepare(big_chunks, &response);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("a chunk must be from 1 byte to 64 MiB"), std::string::npos) << s.message();
  // A Start whose broadcast age is no age.
  for (double ago : {-1.0, std::nan(""), 1e12}) {
    v1::StartRequest start;
    start.set_plan_id(std::string(16, '\x42'));
    start.set_source_started_ago_s(ago);
    s = m1.Start(start);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << ago << ": " << s.ToString();
    EXPECT_NE(s.message().find("source_started_ago_s"), std::string::npos) << s.message();
  }
  // Nothing was kept from any of them.
  EXPECT_FALSE(fs::exists(cluster_->data_dir(1) / "crafted.bin.part"));
  EXPECT_FALSE(fs::exists(cluster_->data_dir(1) / "crafted.bin"));
  v1::ListResponse list;
  EXPECT_TRUE(m1.List(&list).ok());
}

TEST_F(PushTest, MalformedFramesCloseTheConnectionOnly) {
  const std::string data = cluster_->config().members[2].data_address;
  const std::string port = data.substr(data.find(':') + 1);
  // Garbage instead of a hello, and a well-formed hello with a forged MAC.
  for (const char* junk : {"GET / HTTP/1.0\r\n\r\n", "GCH2xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}) {
    Result<CommandOutput> out = RunCommand(
        {"bash", "-c", std::string("exec 3<>/dev/tcp/127.0.0.1/") + port + "; printf '%s' '" + junk +
                           "' >&3; timeout 20 cat <&3 >/dev/null; echo exit=$?"});
    ASSERT_TRUE(out.ok());
    // exit=0: the daemon closed the connection (short input within its 5 s handshake timeout);
    // exit=124 would mean it kept a bad connection open.
    EXPECT_NE(out->output.find("exit=0"), std::string::npos) << junk << ": " << out->output;
  }
  ControlClient m2(cluster_->config().members[2].control_address, cluster_->config().secret);
  v1::ListResponse list;
  EXPECT_TRUE(m2.List(&list).ok()) << "the daemon must survive malformed input";
  EXPECT_NE(ReadFile(cluster_->log(2)).find("refused connection"), std::string::npos);
}

// Waits until member `m` of `cluster` has verified more than a quarter of its only plan's
// chunks (or gave up after 10 s); what it had then, and of how many.
std::pair<uint64_t, uint64_t> WaitUntilAQuarterIn(const LocalCluster& cluster, int m) {
  ControlClient member(cluster.config().members[m].control_address, cluster.config().secret);
  uint64_t done = 0;
  uint64_t total = 0;
  for (int attempt = 0; attempt < 2000 && (total == 0 || done <= total / 4); ++attempt) {
    v1::StatusResponse status;
    if (member.GetStatus(v1::StatusRequest(), &status).ok() && status.plans_size() == 1) {
      done = status.plans(0).chunks_done();
      total = status.plans(0).chunks_total();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return {done, total};
}

TEST(PushRestart, KilledMemberResumesFromWhatItVerified) {
  // Small windows and chunks make the broadcast long enough to interrupt on loopback.
  // Not given up on while it restarts (seconds under the sanitizers on a loaded host).
  LocalCluster cluster(GRIDCASTD, "restart", 3, {"--window", "4", "--member-lost-after", "30"},
                       LocalCluster::Transport::kPlain,
                       LocalCluster::Metrics::kServe);
  const std::string path = cluster.MakePayload("big.bin", 400u << 20);
  Result<ChildProcess> sender = ChildProcess::Start(
      {GRIDCAST_CLI, "send", path, "--cluster", cluster.cluster_file(), "--algo", "chain",
       "--chunk", "256KiB", "--json"},
      (cluster.dir() / "send.out").string());
  ASSERT_TRUE(sender.ok());
  // Wait until the last member of the chain (m2) is part-way, then kill it.
  const auto [done_before_kill, total] = WaitUntilAQuarterIn(cluster, 2);
  ASSERT_GT(done_before_kill, 0u);
  ASSERT_LT(done_before_kill, total) << "finished before it could be interrupted";
  // Mid-broadcast, the metrics show the plan running at m1 (the middle of the chain).
  const Exposition running(Scrape(cluster, 1));
  EXPECT_EQ(running.Value("gridcast_broadcasts_active", {{"mode", "push"}}), 1);
  const std::map<std::string, std::string> plan = {{"payload", "big.bin"}, {"mode", "push"}, {"role", "member"}};
  const double progress = running.Sum("gridcast_plan_progress_ratio", plan);
  EXPECT_GT(progress, 0);
  EXPECT_LT(progress, 1);
  EXPECT_GT(running.Sum("gridcast_plan_received_bytes_total", plan), 0);
  EXPECT_EQ(running.Sum("gridcast_plan_chunks", plan), total);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  cluster.Restart(2);
  EXPECT_EQ(sender->Wait(), 0) << ReadFile(cluster.dir() / "send.out");
  nlohmann::json summary = nlohmann::json::parse(ReadFile(cluster.dir() / "send.out"), nullptr, false);
  ASSERT_TRUE(summary.is_object()) << ReadFile(cluster.dir() / "send.out");
  EXPECT_TRUE(summary["verified"].get<bool>());
  EXPECT_EQ(FileSha256(cluster.data_dir(2) / "big.bin"), FileSha256(path));
  // The restarted daemon resumed from its verified chunks: everything it had acknowledged
  // except at most the in-flight window (4 chunks) was still there, and held again as the
  // digests came (at Prepare it knows none: they stream).
  const std::string log = ReadFile(cluster.log(2));
  const size_t at = log.rfind(" verified before to check");
  ASSERT_NE(at, std::string::npos) << log;
  const size_t start = log.rfind(", ", at) + 2;
  const uint64_t to_check = std::stoull(log.substr(start, at - start));
  EXPECT_GE(to_check + 4, done_before_kill) << log;
  // ... and counted it: one resume, of exactly those chunks, none received again.
  const Exposition resumed(Scrape(cluster, 2));
  EXPECT_EQ(resumed.Value("gridcast_resumes_total"), 1);
  EXPECT_EQ(resumed.Value("gridcast_resumed_chunks_total"), to_check);
  EXPECT_EQ(resumed.Value("gridcast_chunks_verified_total", {{"transport", "push"}}), total - to_check);
}

// A member killed for good: the source gives it up after 5 s unreachable (not waiting for it
// to come back), the others finish, and the send exits 1 naming it lost (issue 53, step 1 of
// docs/repair.md). The killed member is the chain's leaf: nobody's copy depends on it.
TEST(PushLost, ALeafKilledForGoodIsNamedLostAndTheOthersFinish) {
  LocalCluster cluster(GRIDCASTD, "lost", 4, {"--window", "4"});
  const std::string path = cluster.MakePayload("lost.bin", 300u << 20);
  Result<ChildProcess> sender = ChildProcess::Start(
      {GRIDCAST_CLI, "send", path, "--cluster", cluster.cluster_file(), "--algo", "chain", "--chunk", "256KiB",
       "--json"},
      (cluster.dir() / "send.out").string());
  ASSERT_TRUE(sender.ok());
  const auto [done_before_kill, total] = WaitUntilAQuarterIn(cluster, 3);
  ASSERT_GT(done_before_kill, 0u);
  ASSERT_LT(done_before_kill, total) << "finished before it could be interrupted";
  cluster.Kill(3);
  const auto killed = std::chrono::steady_clock::now();
  EXPECT_EQ(sender->Wait(), 1) << ReadFile(cluster.dir() / "send.out");
  const double after_kill = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  nlohmann::json summary = nlohmann::json::parse(ReadFile(cluster.dir() / "send.out"), nullptr, false);
  ASSERT_TRUE(summary.is_object()) << ReadFile(cluster.dir() / "send.out");
  EXPECT_FALSE(summary["verified"].get<bool>());
  const std::string error = summary.value("error", "");
  EXPECT_NE(error.find("lost: m3"), std::string::npos) << error;
  for (int i = 1; i < 3; ++i) EXPECT_EQ(FileSha256(cluster.data_dir(i) / "lost.bin"), FileSha256(path)) << "m" << i;
  EXPECT_LT(after_kill, 30.0) << "given up on after 5 s, not after the 60 s stall timeout";
}

// --tcp-congestion: an algorithm the kernel lacks leaves the host's default, said once in the
// sender's log, and the broadcast is unharmed; a malformed name stops the daemon at start.
TEST(PushCongestionControl, AMissingAlgorithmFallsBackAndAMalformedNameIsRefused) {
  LocalCluster cluster(GRIDCASTD, "congestion", 3, {"--tcp-congestion", "no-such-cc"});
  const std::string path = cluster.MakePayload("congestion.bin", 1'000'003);
  SendResult r = Send(cluster, {path, "--algo", "binary", "--chunk", "64KiB"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectEverywhere(cluster, path, "congestion.bin");
  std::ifstream in(cluster.log(0));
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string warning = "TCP congestion control 'no-such-cc'";
  const size_t first = log.find(warning);
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find(warning, first + 1), std::string::npos) << "said more than once:\n" << log;

  Result<CommandOutput> refused = RunCommand({GRIDCASTD, "--name", "m0", "--cluster", cluster.cluster_file(),
                                              "--data-dir", (cluster.dir() / "refused").string(),
                                              "--tcp-congestion", "cu bic"});
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->exit_code, 2) << refused->output;
  EXPECT_NE(refused->output.find("--tcp-congestion: 'cu bic'"), std::string::npos) << refused->output;
}

// A member whose disk cannot hold the payload: the send fails at Prepare, before a byte moves,
// naming the member and the missing space; the member keeps no file of it (members that had
// room keep a resumable partial, as after any aborted send) and the next send, which fits, is
// verified everywhere. (During a send a member cannot run out: Prepare reserves the
// whole payload.)
TEST(PushFullDisk, AMemberWithoutSpaceIsNamedAndTheNextSendWorks) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  LocalCluster cluster(GRIDCASTD, "fulldisk", 3);
  const std::string small = cluster.data_dir(2).string();
  Result<CommandOutput> mounted = RunCommand({"mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", small});
  ASSERT_TRUE(mounted.ok() && mounted->exit_code == 0) << (mounted.ok() ? mounted->output : "");
  struct Unmount {  // lazily: it goes before the cluster, whose daemon m2 still has it open
    std::string dir;
    ~Unmount() { (void)RunCommand({"umount", "-l", dir}); }
  } unmount{small};

  const std::string big = cluster.MakePayload("too-big.bin", 4 << 20);
  SendResult r = Send(cluster, {big, "--algo", "chain"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("m2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("space"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(cluster.data_dir(2) / "too-big.bin.part"));  // it would hold what space it got

  const std::string fits = cluster.MakePayload("fits.bin", 300'000);
  r = Send(cluster, {fits, "--algo", "chain"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ExpectEverywhere(cluster, fits, "fits.bin");
}

TEST(PushLarge, PayloadBeyondFourGiB) {
  LocalCluster cluster(GRIDCASTD, "large", 2);
  // Sparse except for marked regions around the 4 GiB boundary and the end: 64-bit offsets
  // must put every byte where it belongs.
  const fs::path path = cluster.dir() / "payloads" / "huge.bin";
  const uint64_t size = (uint64_t{4} << 30) + (3u << 20) + 5;
  {
    std::ofstream out(path, std::ios::binary);
    out.seekp(static_cast<std::streamoff>(size - 1));
    out.put('\x7f');
    for (uint64_t offset : {uint64_t{0}, (uint64_t{4} << 30) - 100, (uint64_t{4} << 30) + 12345, size - 4000}) {
      out.seekp(static_cast<std::streamoff>(offset));
      for (int i = 0; i < 1000; ++i) out.put(static_cast<char>(offset + static_cast<uint64_t>(i) * 7));
    }
  }
  Result<CommandOutput> out = RunCommand({GRIDCAST_CLI, "send", path.string(), "--cluster",
                                          cluster.cluster_file(), "--algo", "chain", "--chunk", "8MiB", "--json"});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->exit_code, 0) << out->output;
  EXPECT_EQ(FileSha256(cluster.data_dir(1) / "huge.bin"), FileSha256(path));
  // The source hashes the payload as it sends it: the first byte leaves within a second of
  // the request (hashing the 4 GiB first took 3-6 s here), and the summary's SHA-256, known
  // only at the end, is the file's.
  const nlohmann::json summary = nlohmann::json::parse(out->output);
  EXPECT_LT(summary["control"]["first_byte_s"].get<double>(), 1.0) << out->output;
  EXPECT_EQ(summary["sha256"], FileSha256(path)) << out->output;
  EXPECT_TRUE(summary["verified"].get<bool>()) << out->output;
}

}  // namespace
}  // namespace gridcast
