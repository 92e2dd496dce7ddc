// libgridcast: the C++ client API of gridcast.
//
// A Client talks to the daemons of one cluster (a cluster file). Sending is split-phase:
// StartSend* returns a Broadcast handle at once; Poll() reports progress without blocking and
// Wait() blocks until every member holds a verified copy (or the broadcast failed), so a
// caller can compute while a broadcast runs. Buffers go through the source daemon's data
// directory and received payloads are read from the member daemon's, so the process must run
// on the same host as those daemons (as an MPI rank next to its node's gridcastd does).
//
// Thread-safety: a Client may be shared; each Broadcast handle belongs to one thread, but for
// Cancel, which any thread may call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "result.h"  // beside this header, in the tree and where installed

namespace gridcast {

struct ClientOptions {
  std::string cluster_file;   // written by `gridcast netgrid up --daemons`, or by hand
  std::string source;         // source member; empty = the member on this host, else the topology's source, else the first
  std::string tls_ca;         // when the daemons serve TLS; empty = the cluster file's tls_ca
};

// How a broadcast moves its payload (gridcast send --mode).
enum class Mode { kPush = 1, kPull = 2, kHybrid = 3 };
// "push", "pull" or "hybrid".
const char* ModeName(Mode mode);

struct SendOptions {
  std::string algorithm = "auto";
  uint64_t chunk_bytes = 0;   // 0 = the planner's choice
  double timeout_s = 0;       // 0 = derived from the size
  std::string name;           // name at the receivers; empty = the file's base name
  // Receivers keep the payload in memory (their daemon's memory directory, a tmpfs), never on
  // disk; ReceiveIntoBuffer takes it from there and removes it.
  bool in_memory = false;
  // With in_memory: receivers take the memory as chunks arrive, overlapping it with the
  // transfer, instead of all at Prepare (BroadcastRequest.take_memory_lazily).
  bool take_memory_lazily = false;
  // With in_memory, for push plans: a receiver whose host's processes lent their daemon memory
  // for this payload's name (the MPI shim's ranks) receives it there, not into its memory
  // directory (BroadcastRequest.into_registered_memory).
  bool into_registered_memory = false;
  // StartSendBuffer, push plans: the caller lent the buffer to the source daemon under the
  // payload's name (the MPI shim's root), which sends it from there: no copy into the daemon's
  // directory. Other plans copy as without it (BroadcastRequest.from_registered_memory).
  bool from_registered_memory = false;
  std::vector<std::string> members;  // the receivers; empty = every member of the cluster
  // The chunk digest: "sha256" (proves each chunk is the source's, even against a member that
  // lies) or "xxh3" (XXH3-128: catches corruption at a fraction of the CPU, for a cluster's own
  // authenticated network); empty = the cluster file's digest:, else sha256.
  std::string digest;
  // Receivers take nothing from an earlier copy of the payload they hold. By default a
  // receiver holding another version under the same name receives only the chunks it does
  // not find in it (docs/delta.md).
  bool no_reuse = false;
  // Push, pull or hybrid (gridcast send --mode); unset: the source daemon decides.
  std::optional<Mode> mode;
};

// StartSendUrl: what the source daemon needs to fetch the payload from its HTTP(S) origin
// (docs/origin.md).
struct OriginOptions {
  // "Name: value" lines (tokens) sent to the URL's own host only; never logged.
  std::vector<std::string> headers;
  std::string ca_pem;  // PEM certificates HTTPS is verified against; empty = the system's CAs
  std::string sha256;  // the whole payload's SHA-256 as 64 hex digits, if known; a mismatch fails every copy
  uint64_t size_limit = 0;  // the most bytes taken from an origin that sends no length; 0 = 1 TiB
};

// One member's part of an allgather (gridcast allgather, docs/allgather.md).
struct AllgatherPart {
  std::string member;
  // At that member: relative to its data directory (its memory directory with in_memory), or
  // absolute inside one of them or a send root.
  std::string path;
  bool in_memory = false;
  std::string name;  // its file name in every member's NAME/; empty: the member's name
};

struct AllgatherOptions {
  std::string algorithm = "auto";  // an all-to-all planner or auto
  uint64_t chunk_bytes = 0;        // 0 = chosen from the parts' sizes
  double timeout_s = 0;            // 0 = derived from the size
  // Members keep the gathered parts whole in memory, as NAME (BroadcastResult::parts says
  // where each lies; ReadRanges copies them out), instead of the directory NAME/.
  bool in_memory = false;
  std::string digest;  // as SendOptions::digest
};

// A range of a payload copied out by ReadRanges.
struct PayloadRange {
  uint64_t offset = 0;
  std::span<uint8_t> out;
};

struct ReceiveOptions {
  double timeout_s = 600;  // DeadlineExceeded after this
  // A payload sent in_memory is removed from the member's memory once copied; false keeps it
  // for other readers on that host (then RemovePayload).
  bool remove_in_memory = true;
};

struct Progress {
  uint64_t chunks_done = 0;   // summed over members
  uint64_t chunks_total = 0;
  int members_done = 0;
  int members = 0;
  double elapsed_s = 0;
};

// What Broadcast::PollDetail reports: Poll's counters and the member furthest behind.
struct ProgressDetail {
  Progress progress;
  std::string slowest_member;  // among those still receiving: the one with the fewest chunks
  uint64_t slowest_chunks = 0;
};

// Where a member of a broadcast stands.
enum class MemberState {
  kUnknown = 0,
  kPrepared = 1,     // has the plan, not started
  kRunning = 2,      // receiving (and forwarding)
  kDone = 3,         // holds every chunk
  kFailed = 4,       // Member::error says why
  kStopped = 5,      // cancelled; Member::error says why
  kUnreachable = 6,  // did not answer this round
  kResuming = 7,     // restarted and lost the plan: being prepared again
  kLost = 8,         // given up on (pull, hybrid): the others finish without it
};
// What `gridcast send` prints for a member: "done", "failed: <error>", "lost", ...
std::string MemberStateText(MemberState state, const std::string& error = "");

// How one broadcast ended (what `gridcast send --json` prints, as plain values).
struct BroadcastResult {
  struct Member {
    std::string name;
    MemberState state = MemberState::kUnknown;
    std::string error;        // why, when it failed or was stopped
    bool digest_ok = false;   // the digests of the chunks it stored are the source's
    double finished_s = 0;
  };
  std::string plan_id;        // hex
  std::string algorithm;
  Mode mode = Mode::kPush;
  uint64_t size_bytes = 0;
  uint64_t chunk_bytes = 0;
  double completion_s = 0;    // until the last member held a verified copy
  std::optional<double> bound_s;  // the physical lower bound, when the topology is known
  std::string sha256;         // the source's, hex
  std::string digest;         // the chunk digest: sha256 or xxh3
  // Payload bytes that crossed the network (every edge summed), and that receivers took from
  // earlier copies they held instead (summed over them).
  uint64_t moved_bytes = 0;
  uint64_t reused_bytes = 0;
  std::vector<Member> members;
  bool verified = false;      // every member's copy verified
  // An allgather's parts, in the order asked, and where each lies in what members hold.
  struct Part {
    std::string member;
    std::string name;
    uint64_t size_bytes = 0;
    uint64_t offset = 0;
  };
  std::vector<Part> parts;
};

class Broadcast {
 public:
  virtual ~Broadcast() = default;
  // Non-blocking. True once the broadcast has ended (successfully or not).
  virtual bool Poll(Progress* progress) = 0;
  // Blocks until the end. OK with the summary when every member verified its copy.
  virtual Result<BroadcastResult> Wait() = 0;
  // The calls below come after the first ones: a program built before them keeps the first
  // ones' places.
  // Asks the source daemon to stop the broadcast at every member (from any thread); returns
  // once the source was asked, within 5 s. Before the source has made its plan, it is asked as
  // soon as the plan exists. The broadcast then ends (Poll) and Wait() fails; members report
  // "stopped". A broadcast other callers joined (the same payload asked for again while it
  // ran) stops for them too.
  virtual void Cancel() = 0;
  // Poll, with the member furthest behind.
  virtual bool PollDetail(ProgressDetail* detail) = 0;
  // Once ended (Poll returned true): the document `gridcast send --json` prints for it, also
  // when it failed (with "error"); empty before.
  virtual std::string SummaryJson() = 0;
};

// Copies a payload out of its member while the member still receives it (on this host).
class PayloadCopier {
 public:
  virtual ~PayloadCopier() = default;
  // Copies into the buffer every chunk the member verified since the last call: the buffer
  // holds the source's bytes where it was written, never others. True once all of it is
  // there; InvalidArgument when the payload's size is not the buffer's.
  virtual Result<bool> CopyVerified() = 0;
};

class Client {
 public:
  static Result<std::unique_ptr<Client>> Open(const ClientOptions& options);
  virtual ~Client() = default;

  // Broadcasts a file inside the source daemon's data directory or send roots.
  virtual Result<std::unique_ptr<Broadcast>> StartSendFile(const std::string& path,
                                                           const SendOptions& options) = 0;
  // Broadcasts `data` as payload `name` (a relative name; the source keeps a copy, in its
  // memory directory when options.in_memory).
  virtual Result<std::unique_ptr<Broadcast>> StartSendBuffer(std::span<const uint8_t> data,
                                                             const std::string& name,
                                                             const SendOptions& options) = 0;
  // Waits until `member` holds payload `name` complete and verified, then copies it into
  // `out`, which must have exactly its size.
  virtual Status Receive(const std::string& member, const std::string& name, std::span<uint8_t> out,
                         const ReceiveOptions& options) = 0;
  Status ReceiveIntoBuffer(const std::string& member, const std::string& name, std::span<uint8_t> out,
                           double timeout_s) {
    return Receive(member, name, out, ReceiveOptions{timeout_s, true});
  }
  // A copier of payload `name` into `out` (which must outlive it), chunk by chunk as `member`
  // verifies them; `member` need not have begun to receive it yet.
  virtual Result<std::unique_ptr<PayloadCopier>> CopyAsVerified(const std::string& member, const std::string& name,
                                                                bool in_memory, std::span<uint8_t> out) = 0;
  // Every member's part gathered at every member, coordinated by this client's source member
  // (which must hold one of the parts). The handle reports as a broadcast's does.
  virtual Result<std::unique_ptr<Broadcast>> StartAllgather(const std::string& name,
                                                            const std::vector<AllgatherPart>& parts,
                                                            const AllgatherOptions& options) = 0;
  // Writes `data` at `offset` into the file `name` of `member`'s memory directory (creating
  // it; the daemon runs on this host): how ranks of one node put their parts side by side.
  virtual Status WriteInMemory(const std::string& member, const std::string& name, uint64_t offset,
                               std::span<const uint8_t> data) = 0;
  // Copies ranges of the complete payload `name` that `member` holds (on this host), at once:
  // NotFound when it holds no complete payload of that name, OutOfRange past its end.
  virtual Status ReadRanges(const std::string& member, const std::string& name, bool in_memory,
                            std::span<const PayloadRange> ranges) = 0;
  // Removes payload `name` from `member` (from its memory directory when in_memory); a
  // payload it does not hold is not an error.
  virtual Status RemovePayload(const std::string& member, const std::string& name, bool in_memory) = 0;
  // OK when `member`'s daemon answers (and accepts the cluster's secret).
  virtual Status CheckMember(const std::string& member) = 0;
  // Broadcasts the payload at an http:// or https:// URL: the source daemon fetches it and
  // sends it on as it arrives, and keeps it too (options.name empty = the URL's last path
  // component). Last in the class: a library built before it keeps its other calls' places.
  virtual Result<std::unique_ptr<Broadcast>> StartSendUrl(const std::string& url, const SendOptions& options,
                                                          const OriginOptions& origin) = 0;
  // The documents `gridcast status --json` and `gridcast list --json` print: {"members": [...]},
  // every member's entry (only `member`'s when not empty), an unreachable one's with "error".
  virtual Result<std::string> StatusJson(const std::string& member) = 0;
  virtual Result<std::string> ListJson(const std::string& member, bool verify) = 0;
  // The member of the host this process runs on, as the MPI shim finds it: GRIDCAST_MEMBER when
  // set, else the one member with an address of this host; NotFound or InvalidArgument (several)
  // with what to set otherwise.
  virtual Result<std::string> LocalMember() = 0;
};

// A plan or a simulation on a topology file (gridcast plan, gridcast simulate).
struct PlanQuery {
  std::string topology_file;
  uint64_t size_bytes = 0;
  std::string algorithm = "auto";  // a planner; for SimulateJson also "all"
  uint64_t chunk_bytes = 0;        // 0 = the planner's choice
  std::string source;              // a node; empty = the topology's source
  double goodput = 1.0;            // SimulateJson: the fraction of every rate TCP carries as payload
};
// The document `gridcast plan --json` prints.
Result<std::string> PlanJson(const PlanQuery& query);
// The document `gridcast simulate --json` prints.
Result<std::string> SimulateJson(const PlanQuery& query);
// A size as the command line reads it: "4096", "256KiB", "1.5GiB" (B, KiB, MiB, GiB, TiB).
Result<uint64_t> ParseSize(const std::string& text);

}  // namespace gridcast
