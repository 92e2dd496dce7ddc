// libgridcast-mpi.so: a PMPI shim that hands large MPI_Bcast, MPI_Ibcast and MPI_Allgather
// calls to the local gridcastd.
//
// Loaded with LD_PRELOAD (or linked before libmpi) into an unmodified MPI program. A call of at
// least GRIDCAST_MPI_THRESHOLD bytes goes through gridcast when every rank of the communicator
// agrees it can (client/mpi/bcast_agreement.h): for a broadcast the root's daemon broadcasts
// the buffer, in memory, to the daemons of the other ranks' nodes, each rank copies its node's
// copy into its buffer, and one rank per node removes that copy; for an allgather each node's
// ranks write their blocks into one part in their daemon's memory, the daemons gather the parts
// (gridcast allgather), and each rank copies every block out of its node's bundle. Everything
// else calls PMPI_* unchanged. docs/mpi.md describes the variables and the guarantees.
//
// One call is a BcastCall: a few steps, each waiting for one thing (a small collective of the
// shim's own, or the daemons). MPI_Bcast runs its call to the end at once; MPI_Ibcast returns
// a generalized request, and the program's MPI_Wait/MPI_Test (and their -all, -any, -some
// forms), intercepted here, advance it. MPI_Init and MPI_Init_thread, intercepted too, get the
// shim ready (settings, daemon, MPI_COMM_WORLD's duplicate) outside any timed broadcast.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "client/mpi/bcast_agreement.h"
#include "cluster/local_member.h"
#include "client/mpi/rank_memory_lease.h"
#include "cluster/rank_memory_protocol.h"
#include "cluster/cluster_file.h"
#include "common/crypto.h"
#include "common/units.h"
#include "include/gridcast/gridcast.hpp"

namespace gridcast {
namespace {

// The shim's broadcasts run between the daemons of one cluster, on data connections that prove
// the cluster secret, for programs whose MPI_Bcast checks nothing: XXH3-128 catches corruption
// at a fraction of SHA-256's CPU (flat8-10g, 1 GiB: 13.6-14.4 s and 3.3-3.7 CPU-s per GiB
// against 20.7-20.9 s and 5.2-5.3 with SHA-256, docs/mpi.md).
constexpr ChunkDigest kShimDefaultDigest = ChunkDigest::kXxh3;

// Below this many bytes a broadcast stays with MPI: gridcast's fixed cost (agreement, plan,
// Prepare, the copies in and out) is about 0.4 s. On two-sites the shim took 0.48 s for
// 256 KiB against tuned MPI_Bcast's 0.20 s, and 0.53 s for 1 MiB against 1.25 s
// (docs/mpi.md, "Threshold").
constexpr uint64_t kDefaultThresholdBytes = 1ull << 20;

// The root's outcome, sent to every rank with one small broadcast.
struct Outcome {
  int32_t failed = 0;
  uint32_t unused = 0;
  uint64_t chunk_bytes = 0;  // an allgather's: where each block lies in the bundle
  char message[240] = {};
};
static_assert(sizeof(Outcome) == 256);

class BcastCall;

// The shim's side of one communicator, kept as an attribute of it. The shim's own collectives
// run on a duplicate (MPI_Comm_idup at the first call), so they never interleave with the
// program's collectives on the communicator; and the calls in flight on it advance oldest
// first, so every rank posts the shim's collectives in the same order.
struct CommState {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request dup_request = MPI_REQUEST_NULL;  // until the duplicate is ready
  std::deque<BcastCall*> in_flight;            // oldest first
  ~CommState() {
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (!finalized && dup != MPI_COMM_NULL) PMPI_Comm_free(&dup);
  }
};

class Shim {
 public:
  static Shim& Get() {
    static Shim* shim = new Shim();  // never destroyed: MPI calls may come during exit
    return *shim;
  }

  // At MPI_Init: the ranks agree whether all can use gridcast, and MPI_COMM_WORLD gets its
  // duplicate now (collectives every rank makes there), as the settings were read and the
  // daemon found in Get(): a program's first large broadcast pays for none of it.
  void Ready();

  int Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
  int Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, MPI_Comm comm);
  int Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request);

  // The call behind a request the shim made, or nullptr.
  BcastCall* Find(MPI_Request request);
  // Advances the shim's calls among `requests` (block: each to its end), and completes the
  // requests of those that ended. True when any of them is the shim's.
  bool Advance(int count, MPI_Request* requests, bool block);

  // Once per distinct text, with GRIDCAST_MPI_VERBOSE=1.
  void SayOnce(const std::string& text);
  static void Say(int rank, const std::string& text);
  int verbose() const { return verbose_; }
  const std::string& algorithm() const { return algorithm_; }
  const std::string& allgather_algorithm() const { return allgather_algorithm_; }
  const std::string& digest() const { return digest_; }
  double timeout_s() const { return timeout_s_; }
  Client& client() { return *client_; }
  const std::string& member() const { return member_; }
  // Where this rank's daemon takes lent memory (cluster/rank_memory_protocol.h).
  const std::string& lent_memory_socket() const { return lent_memory_socket_; }
  const std::string& member_name(int index) const { return members_[static_cast<size_t>(index)]; }
  // This rank's daemon, -1 when none answers.
  int AnsweringMember() const;

 private:
  friend int FreeCall(void* extra);
  Shim();
  // NOT NULL unless the call stays with MPI: the shim is off, the call moves fewer than the
  // threshold's bytes (negative: unknown), or the communicator is an intercommunicator.
  std::shared_ptr<CommState> StateFor(int64_t bytes, MPI_Comm comm);
  // The communicator's state, made at its first call (`blocking`: the duplicate is made at once).
  std::shared_ptr<CommState> StateOf(MPI_Comm comm, bool blocking);

  uint64_t threshold_ = kDefaultThresholdBytes;
  int verbose_ = 0;
  std::string algorithm_ = "auto";
  std::string allgather_algorithm_ = "auto";
  // GRIDCAST_MPI_DIGEST, else the cluster file's digest:, else xxh3 (docs/mpi.md says why).
  std::string digest_;
  double timeout_s_ = 0;
  std::string off_because_;  // not empty: the shim passes every call on, and why
  std::string member_;                // this host's member
  std::string lent_memory_socket_;
  std::vector<std::string> members_;  // the cluster file's, in its order
  std::unique_ptr<Client> client_;    // with member_ as the source; thread-safe
  int keyval_ = MPI_KEYVAL_INVALID;   // the CommState attribute

  std::mutex mutex_;  // the shim's calls on one communicator may come from several threads
  std::set<std::string> said_;                 // guarded by mutex_
  std::map<MPI_Request, BcastCall*> requests_;  // MPI_Ibcast's; guarded by mutex_
  // requests_.size(): every MPI_Wait and MPI_Test of the program passes here, and most find
  // no request of the shim's without taking the lock.
  std::atomic<size_t> outstanding_{0};
};

// True when `request` has completed (block: waits for it). `meanwhile`, when given, runs after
// each test that finds it still pending.
bool RequestDone(MPI_Request* request, bool block, const std::function<void()>& meanwhile = {}) {
  int flag = 0;
  // Waiting sleeps between tests instead of PMPI_Wait's busy poll: the ranks wait here for the
  // whole broadcast, while their node's daemon carries it on the same cores.
  for (auto pause = std::chrono::microseconds(50);; pause = std::min(2 * pause, std::chrono::microseconds(2000))) {
    if (*request == MPI_REQUEST_NULL || PMPI_Test(request, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || flag != 0) {
      return true;
    }
    if (meanwhile) meanwhile();
    if (!block) return false;
    std::this_thread::sleep_for(pause);
  }
}

class BcastCall {
 public:
  BcastCall(Shim& shim, std::shared_ptr<CommState> state, void* buffer, int count, MPI_Datatype datatype, int root,
            MPI_Comm comm, bool blocking);
  ~BcastCall();

  // Takes the call as far as it goes without waiting (block = false) or to its end. True once
  // it has ended; error() then says how.
  bool Advance(bool block);
  int error() const { return error_; }
  // A generalized request is completed once: the shim's MPI_Wait and MPI_Test share this.
  bool TakeCompletion() { return !completed_ && (completed_ = true); }

 private:
  enum class Step { kDuplicating, kAgreeing, kByMpi, kLending, kBroadcasting, kAwaitingOutcome, kConfirming, kDone };

  void PostOffer();
  void Decide();
  // After the ranks learned whether every receiving rank lent its buffer to its daemon: the
  // root starts the broadcast, the others wait for its outcome.
  void Start();
  // A receiving rank on another node than the root's: this rank's daemon writes into it.
  bool OnReceivingNode() const {
    return offers_[static_cast<size_t>(rank_)].member != offers_[static_cast<size_t>(root_)].member;
  }
  void FinishBroadcast();
  void ReadCopy();
  void CopyVerified();
  void RemoveCopy();
  void End(int error);
  // A collective of the shim's own was posted (rc from PMPI_I*), else the call ends with rc:
  // waiting on a request that was never made would read offers or an outcome never sent.
  bool Posted(int rc) {
    if (rc != MPI_SUCCESS) End(rc);
    return rc == MPI_SUCCESS;
  }
  std::span<uint8_t> Buffer() const {
    return {static_cast<uint8_t*>(buffer_), static_cast<size_t>(offers_[static_cast<size_t>(root_)].bytes)};
  }
  // GRIDCAST_MPI_VERBOSE=3: the time each step took, said when the call ends.
  void Mark(const char* step) {
    if (shim_.verbose() > 2) marks_.emplace_back(step, PMPI_Wtime());
  }

  Shim& shim_;
  const std::shared_ptr<CommState> state_;
  void* const buffer_;
  const int count_;
  const MPI_Datatype datatype_;
  const int root_;
  const bool blocking_;
  int rank_ = 0;
  int size_ = 0;
  Step step_ = Step::kDuplicating;
  MPI_Request request_ = MPI_REQUEST_NULL;  // the shim's collective this step waits for
  RankOffer offer_;
  std::vector<RankOffer> offers_;
  BcastAgreement agreement_;
  std::unique_ptr<Broadcast> broadcast_;  // at the root, while the daemons broadcast
  // At the other ranks: their node's copy into the buffer, chunk by chunk as the daemon
  // verifies them, while the broadcast runs.
  std::unique_ptr<PayloadCopier> copier_;
  // Or the buffer lent to the daemon (docs/mpi.md, "Into the rank's memory"), when every
  // receiving rank could lend its own (lent_everywhere_, agreed by all ranks).
  std::unique_ptr<RankMemoryLease> lease_;
  int lent_everywhere_ = 0;
  bool lease_bound_ = false;  // a broadcast took this rank's lent buffer
  Status copy_status_;
  std::chrono::steady_clock::time_point last_copy_{};
  Outcome outcome_;
  int failed_ = 0;
  int error_ = MPI_SUCCESS;
  bool completed_ = false;
  std::vector<std::pair<const char*, double>> marks_;
};

Shim::Shim() {
  if (const char* v = std::getenv("GRIDCAST_MPI_VERBOSE")) verbose_ = std::atoi(v);
  if (const char* v = std::getenv("GRIDCAST_MPI_ALGO"); v != nullptr && *v != '\0') algorithm_ = v;
  if (const char* v = std::getenv("GRIDCAST_MPI_ALLGATHER_ALGO"); v != nullptr && *v != '\0') allgather_algorithm_ = v;
  if (const char* v = std::getenv("GRIDCAST_MPI_DIGEST"); v != nullptr && *v != '\0') {
    if (Status known = ParseChunkDigest(v).status(); !known.ok()) {
      off_because_ = "GRIDCAST_MPI_DIGEST: " + known.message();
      return;
    }
    digest_ = v;
  }
  if (const char* v = std::getenv("GRIDCAST_MPI_THRESHOLD"); v != nullptr && *v != '\0') {
    Result<uint64_t> bytes = ParseSizeBytes(v);
    if (!bytes.ok()) {
      off_because_ = "GRIDCAST_MPI_THRESHOLD: " + bytes.status().message();
      return;
    }
    threshold_ = *bytes;
  }
  if (const char* v = std::getenv("GRIDCAST_MPI_TIMEOUT"); v != nullptr && *v != '\0') {
    // Seconds, or a duration with its unit ("90s", "1500ms").
    char* end = nullptr;
    const double plain = std::strtod(v, &end);
    Result<double> seconds = *end == '\0' && plain >= 0 ? Result<double>(plain) : ParseDurationSeconds(v);
    if (!seconds.ok()) {
      off_because_ = "GRIDCAST_MPI_TIMEOUT: " + seconds.status().message();
      return;
    }
    timeout_s_ = *seconds;
  }
  const char* cluster = std::getenv("GRIDCAST_CLUSTER");
  if (cluster == nullptr || *cluster == '\0') {
    off_because_ = "GRIDCAST_CLUSTER is not set";
    return;
  }
  Result<ClusterConfig> parsed = LoadClusterFile(cluster);
  if (!parsed.ok()) {
    off_because_ = parsed.status().message();
    return;
  }
  if (digest_.empty()) digest_ = DigestName(parsed->digest.value_or(kShimDefaultDigest));
  const char* named = std::getenv("GRIDCAST_MEMBER");
  Result<std::string> member = LocalMember(*parsed, named == nullptr ? "" : named, CurrentHost(), "GRIDCAST_MEMBER");
  if (!member.ok()) {
    off_because_ = member.status().message();
    return;
  }
  ClientOptions options;
  options.cluster_file = cluster;
  options.source = *member;
  Result<std::unique_ptr<Client>> client = Client::Open(options);
  if (!client.ok()) {
    off_because_ = client.status().message();
    return;
  }
  client_ = std::move(*client);
  member_ = *member;
  for (const ClusterMember& m : parsed->members) {
    members_.push_back(m.name);
    if (m.name == member_) lent_memory_socket_ = RankMemorySocketName(m.name, m.data_address);
  }
  auto delete_state = [](MPI_Comm, int, void* attribute, void*) {
    delete static_cast<std::shared_ptr<CommState>*>(attribute);
    return MPI_SUCCESS;
  };
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &keyval_, nullptr) != MPI_SUCCESS) {
    off_because_ = "MPI_Comm_create_keyval failed";
  }
}

void Shim::SayOnce(const std::string& text) {
  if (verbose_ <= 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!said_.insert(text).second) return;
  }
  std::fprintf(stderr, "gridcast-mpi: %s\n", text.c_str());
}

void Shim::Say(int rank, const std::string& text) { std::fprintf(stderr, "gridcast-mpi: rank %d: %s\n", rank, text.c_str()); }

int Shim::AnsweringMember() const {
  if (!client_->CheckMember(member_).ok()) return -1;
  return static_cast<int>(std::find(members_.begin(), members_.end(), member_) - members_.begin());
}

// count elements of `datatype`, in bytes; -1 when MPI cannot say.
int64_t BytesOf(int64_t count, MPI_Datatype datatype) {
  int type_size = 0;
  if (count < 0 || PMPI_Type_size(datatype, &type_size) != MPI_SUCCESS) return -1;
  return count * type_size;
}

std::shared_ptr<CommState> Shim::StateFor(int64_t bytes, MPI_Comm comm) {
  if (!off_because_.empty()) {
    SayOnce("every call goes to MPI: " + off_because_);
    return nullptr;
  }
  int inter = 0;
  if (bytes <= 0 || static_cast<uint64_t>(bytes) < threshold_ || comm == MPI_COMM_NULL ||
      PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter != 0) {
    return nullptr;
  }
  return StateOf(comm, /*blocking=*/false);
}

void Shim::Ready() {
  // The duplicate is a collective, and so is every call the shim carries: the ranks agree
  // first, and one rank that cannot use gridcast (no cluster file, no member of its own)
  // leaves every call of every rank to MPI, instead of a mismatch that would hang them.
  int usable = off_because_.empty() ? 1 : 0;
  if (PMPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) usable = 0;
  if (usable == 0) {
    if (off_because_.empty()) {
      off_because_ = "another rank cannot use gridcast (it says why with GRIDCAST_MPI_VERBOSE=1)";
    }
    return;
  }
  StateOf(MPI_COMM_WORLD, /*blocking=*/true);
}

std::shared_ptr<CommState> Shim::StateOf(MPI_Comm comm, bool blocking) {
  std::lock_guard<std::mutex> lock(mutex_);
  void* attribute = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, keyval_, &attribute, &found) == MPI_SUCCESS && found != 0) {
    return *static_cast<std::shared_ptr<CommState>*>(attribute);
  }
  // The first call on this communicator, the same one on every rank: the duplicate is made in
  // the collective order of the program's call.
  auto state = std::make_shared<CommState>();
  if ((blocking ? PMPI_Comm_dup(comm, &state->dup) : PMPI_Comm_idup(comm, &state->dup, &state->dup_request)) !=
      MPI_SUCCESS) {
    return nullptr;
  }
  PMPI_Comm_set_attr(comm, keyval_, new std::shared_ptr<CommState>(state));
  return state;
}

int Shim::Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  std::shared_ptr<CommState> state = StateFor(BytesOf(count, datatype), comm);
  if (state == nullptr) return PMPI_Bcast(buffer, count, datatype, root, comm);
  auto call = std::make_unique<BcastCall>(*this, std::move(state), buffer, count, datatype, root, comm,
                                          /*blocking=*/true);
  call->Advance(/*block=*/true);
  if (call->error() != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, call->error());
  return call->error();
}

int QueryCall(void* extra, MPI_Status* status) {
  const int error = static_cast<BcastCall*>(extra)->error();
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  status->MPI_ERROR = error;
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  return error;
}

int FreeCall(void* extra) {
  auto* call = static_cast<BcastCall*>(extra);
  Shim& shim = Shim::Get();
  {
    std::lock_guard<std::mutex> lock(shim.mutex_);
    for (auto it = shim.requests_.begin(); it != shim.requests_.end(); ++it) {
      if (it->second == call) {
        shim.requests_.erase(it);
        shim.outstanding_ = shim.requests_.size();
        break;
      }
    }
  }
  delete call;
  return MPI_SUCCESS;
}

// A collective cannot be cancelled (MPI 3.1 §5.12): the call runs to its end.
int CancelCall(void*, int) { return MPI_SUCCESS; }

int Shim::Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  std::shared_ptr<CommState> state = StateFor(BytesOf(count, datatype), comm);
  if (state == nullptr) return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
  auto call = std::make_unique<BcastCall>(*this, std::move(state), buffer, count, datatype, root, comm,
                                          /*blocking=*/false);
  const int rc = PMPI_Grequest_start(QueryCall, FreeCall, CancelCall, call.get(), request);
  if (rc != MPI_SUCCESS) return rc;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_[*request] = call.release();
    outstanding_ = requests_.size();
  }
  Find(*request)->Advance(/*block=*/false);
  return MPI_SUCCESS;
}

BcastCall* Shim::Find(MPI_Request request) {
  if (request == MPI_REQUEST_NULL || outstanding_ == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = requests_.find(request);
  return it == requests_.end() ? nullptr : it->second;
}

bool Shim::Advance(int count, MPI_Request* requests, bool block) {
  bool any = false;
  for (int i = 0; i < count; ++i) {
    BcastCall* call = Find(requests[i]);
    if (call == nullptr) continue;
    any = true;
    if (call->Advance(block) && call->TakeCompletion()) PMPI_Grequest_complete(requests[i]);
  }
  return any;
}

BcastCall::BcastCall(Shim& shim, std::shared_ptr<CommState> state, void* buffer, int count, MPI_Datatype datatype,
                     int root, MPI_Comm comm, bool blocking)
    : shim_(shim), state_(std::move(state)), buffer_(buffer), count_(count), datatype_(datatype), root_(root),
      blocking_(blocking) {
  Mark("start");
  PMPI_Comm_rank(comm, &rank_);
  PMPI_Comm_size(comm, &size_);
  state_->in_flight.push_back(this);
}

BcastCall::~BcastCall() {
  auto& in_flight = state_->in_flight;
  in_flight.erase(std::remove(in_flight.begin(), in_flight.end(), this), in_flight.end());
}

bool BcastCall::Advance(bool block) {
  // Earlier calls on this communicator first: they post their collectives before this one.
  for (BcastCall* earlier : std::deque<BcastCall*>(state_->in_flight)) {
    if (earlier == this) break;
    if (!earlier->Advance(block)) return false;
  }
  while (step_ != Step::kDone) {
    switch (step_) {
      case Step::kDuplicating:
        if (!RequestDone(&state_->dup_request, block)) return false;
        PostOffer();
        break;
      case Step::kAgreeing:
        if (!RequestDone(&request_, block)) return false;
        Decide();
        break;
      case Step::kByMpi:
        if (!RequestDone(&request_, block)) return false;
        End(MPI_SUCCESS);
        break;
      case Step::kLending:
        if (!RequestDone(&request_, block)) return false;
        Start();
        break;
      case Step::kBroadcasting:
        if (!block && !broadcast_->Poll(nullptr)) return false;
        FinishBroadcast();
        break;
      case Step::kAwaitingOutcome:
        if (!RequestDone(&request_, block, copier_ ? [this] { CopyVerified(); } : std::function<void()>{})) {
          return false;
        }
        ReadCopy();
        break;
      case Step::kConfirming:
        if (!RequestDone(&request_, block)) return false;
        RemoveCopy();
        End(failed_ != 0 ? MPI_ERR_OTHER : MPI_SUCCESS);
        break;
      case Step::kDone:
        break;
    }
  }
  return true;
}

// A buffer of `count` elements is one run of bytes when the type has no holes and no offset.
bool Contiguous(MPI_Datatype datatype) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS || PMPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(datatype, &true_lb, &true_extent) != MPI_SUCCESS) {
    return false;
  }
  return lb == 0 && true_lb == 0 && extent == size && true_extent == size;
}

void BcastCall::End(int error) {
  error_ = error;
  step_ = Step::kDone;
  Mark("ended");
  if (marks_.size() < 2) return;
  std::string steps;
  for (size_t i = 1; i < marks_.size(); ++i) {
    char step[64];
    std::snprintf(step, sizeof(step), "%s%s +%.3f", i > 1 ? ", " : "", marks_[i].first,
                  marks_[i].second - marks_[0].second);
    steps += step;
  }
  Shim::Say(rank_, "steps (s since the call): " + steps);
}

void BcastCall::PostOffer() {
  int type_size = 0;
  PMPI_Type_size(datatype_, &type_size);
  offer_.bytes = Contiguous(datatype_) ? static_cast<int64_t>(count_) * type_size : -1;
  offer_.member = shim_.AnsweringMember();
  if (rank_ == root_) RandomBytes(std::span(reinterpret_cast<uint8_t*>(&offer_.nonce), sizeof(offer_.nonce)));
  offers_.resize(static_cast<size_t>(size_));
  if (!Posted(PMPI_Iallgather(&offer_, sizeof(RankOffer), MPI_BYTE, offers_.data(), sizeof(RankOffer), MPI_BYTE,
                              state_->dup, &request_))) {
    return;
  }
  step_ = Step::kAgreeing;
}

void BcastCall::Decide() {
  Mark("agreed");
  if (root_ < 0 || root_ >= size_) return End(MPI_ERR_ROOT);
  agreement_ = AgreeOnBcast(offers_, root_);
  const std::string what = std::string(blocking_ ? "MPI_Bcast" : "MPI_Ibcast") + " of " +
                           FormatSize(static_cast<uint64_t>(offers_[static_cast<size_t>(root_)].bytes));
  switch (agreement_.path) {
    case BcastAgreement::Path::kSizeMismatch:
      if (rank_ == root_) Shim::Say(rank_, what + ": " + agreement_.why);
      return End(MPI_ERR_TRUNCATE);
    case BcastAgreement::Path::kMpi:
      shim_.SayOnce(what + " goes to MPI: " + agreement_.why);
      if (blocking_) {
        return End(PMPI_Bcast(buffer_, count_, datatype_, root_, state_->dup));
      }
      if (Posted(PMPI_Ibcast(buffer_, count_, datatype_, root_, state_->dup, &request_))) step_ = Step::kByMpi;
      return;
    case BcastAgreement::Path::kGridcast:
      break;
  }
  // Every receiving rank lends its buffer to its daemon, or none does: a daemon that keeps no
  // copy leaves a rank that could not lend nothing to copy from.
  // The root alone on its node lends its buffer too: its daemon sends from it, without a copy
  // (other ranks there would read that copy). A root that cannot lend copies, as before.
  const auto on_root_node = std::count_if(offers_.begin(), offers_.end(), [this](const RankOffer& offer) {
    return offer.member == offers_[static_cast<size_t>(root_)].member;
  });
  lent_everywhere_ = 1;
  if (rank_ == root_ ? on_root_node == 1 : OnReceivingNode()) {
    Result<std::unique_ptr<RankMemoryLease>> lease =
        RankMemoryLease::Lend(shim_.lent_memory_socket(), agreement_.payload_name, Buffer());
    if (lease.ok()) {
      lease_ = std::move(*lease);
    } else if (rank_ != root_) {
      lent_everywhere_ = 0;
      shim_.SayOnce("the daemon copies into its memory and the rank out of it: " + lease.status().ToString());
    }
  }
  if (Posted(PMPI_Iallreduce(MPI_IN_PLACE, &lent_everywhere_, 1, MPI_INT, MPI_MIN, state_->dup, &request_))) {
    step_ = Step::kLending;
  }
}

void BcastCall::Start() {
  Mark("lent");
  if (rank_ != root_ && lent_everywhere_ == 0 && lease_ != nullptr) {
    (void)lease_->Release();  // never bound: the root does not ask for lent memory
    lease_.reset();
  }
  if (rank_ != root_) {
    if (Posted(PMPI_Ibcast(&outcome_, sizeof(Outcome), MPI_BYTE, root_, state_->dup, &request_))) {
      step_ = Step::kAwaitingOutcome;
      if (lease_ != nullptr) return;
      Result<std::unique_ptr<PayloadCopier>> copier = shim_.client().CopyAsVerified(
          shim_.member(), agreement_.payload_name, /*in_memory=*/true, Buffer());
      if (copier.ok()) copier_ = std::move(*copier);
    }
    return;
  }
  SendOptions options;
  options.algorithm = shim_.algorithm();
  options.digest = shim_.digest();
  options.timeout_s = shim_.timeout_s();
  options.in_memory = true;
  // The ranks wait for the memory and the transfer alike: overlap them (on two-sites, 256 MiB,
  // taking it all at Prepare cost 5 s before the first byte).
  options.take_memory_lazily = true;
  options.into_registered_memory = lent_everywhere_ != 0;
  options.from_registered_memory = lease_ != nullptr;  // the root's own loan
  for (int member : agreement_.receiver_members) options.members.push_back(shim_.member_name(member));
  const std::span<const uint8_t> data(static_cast<const uint8_t*>(buffer_),
                                      static_cast<size_t>(offers_[static_cast<size_t>(root_)].bytes));
  Result<std::unique_ptr<Broadcast>> started = shim_.client().StartSendBuffer(data, agreement_.payload_name, options);
  if (started.ok()) {
    broadcast_ = std::move(*started);
    step_ = Step::kBroadcasting;
    return;
  }
  outcome_.failed = 1;
  std::snprintf(outcome_.message, sizeof(outcome_.message), "%s", started.status().ToString().c_str());
  FinishBroadcast();
}

// At the root: the daemons' outcome (every copy verified, or why not) to every rank.
void BcastCall::FinishBroadcast() {
  Mark("broadcast");
  std::optional<BroadcastResult> done;
  if (broadcast_ != nullptr) {
    Result<BroadcastResult> result = broadcast_->Wait();
    Mark("daemons");
    broadcast_.reset();
    if (result.ok()) {
      done = std::move(*result);
    } else {
      outcome_.failed = 1;
      std::snprintf(outcome_.message, sizeof(outcome_.message), "%s", result.status().ToString().c_str());
    }
  }
  // The root's buffer is the program's again only once its daemon reads no more of it.
  if (lease_ != nullptr) {
    Result<RankMemoryLease::Outcome> released = lease_->Release();
    lease_.reset();
    lease_bound_ = released.ok() && released->bound;
    if (!released.ok() && outcome_.failed == 0) {
      outcome_.failed = 1;
      std::snprintf(outcome_.message, sizeof(outcome_.message), "ending the loan of the root's buffer: %s",
                    released.status().ToString().c_str());
    }
  }
  if (done && shim_.verbose() > 1) {
    Shim::Say(rank_, std::string(blocking_ ? "MPI_Bcast" : "MPI_Ibcast") + " of " + FormatSize(done->size_bytes) +
                         " by gridcast (" + done->algorithm + ", " + done->digest + " chunks" +
                         (lease_bound_ ? ", sent from the root's memory" : "") + ") in " +
                         std::to_string(done->completion_s) + " s");
  }
  if (Posted(PMPI_Ibcast(&outcome_, sizeof(Outcome), MPI_BYTE, root_, state_->dup, &request_))) {
    step_ = Step::kAwaitingOutcome;
  }
}

void BcastCall::ReadCopy() {
  Mark("outcome");
  failed_ = outcome_.failed;
  if (failed_ != 0) Shim::Say(rank_, std::string("MPI_Bcast by gridcast failed: ") + outcome_.message);
  // Success or not, the daemon writes no more into a lent buffer once the loan has ended. It
  // received into it unless the plan was not pushed (a hybrid one): then from its copy, below.
  bool copy = failed_ == 0 && rank_ != root_;
  if (lease_ != nullptr) {
    Result<RankMemoryLease::Outcome> released = lease_->Release();
    lease_.reset();
    lease_bound_ = released.ok() && released->bound;
    const bool filled = released.ok() && released->filled;
    copy = copy && released.ok() && !released->bound;
    if (failed_ == 0 && !copy && !filled) {
      Shim::Say(rank_, "MPI_Bcast by gridcast: this rank's buffer: " +
                           (released.ok() ? std::string("its daemon did not fill it") : released.status().ToString()));
      failed_ = 1;
    } else if (filled && shim_.verbose() > 1) {
      Shim::Say(rank_, "received into this rank's memory by its daemon");
    }
  }
  if (copy) {
    // The root saw every copy verified: what is left is there (the daemon may still be
    // renaming the file), so a minute is plenty.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      if (copier_ == nullptr) {
        Result<std::unique_ptr<PayloadCopier>> copier =
            shim_.client().CopyAsVerified(shim_.member(), agreement_.payload_name, /*in_memory=*/true, Buffer());
        if (copier.ok()) copier_ = std::move(*copier);
        copy_status_ = copier.status();
      }
      if (copier_ != nullptr) {
        Result<bool> copied = copier_->CopyVerified();
        if (copied.ok() && *copied) break;
        copy_status_ = copied.ok() ? Status::DeadlineExceeded("this node's copy was not complete in time")
                                   : copied.status();
      }
      if (std::chrono::steady_clock::now() > deadline) {
        Shim::Say(rank_, "MPI_Bcast by gridcast: reading this node's copy: " + copy_status_.ToString());
        failed_ = 1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  copier_.reset();
  Mark("copied");
  if (Posted(PMPI_Iallreduce(MPI_IN_PLACE, &failed_, 1, MPI_INT, MPI_MAX, state_->dup, &request_))) {
    step_ = Step::kConfirming;
  }
}

// While the broadcast runs an error is not final (the daemon may be busy, the outcome may explain
// it): ReadCopy tries again, and says the last one if the copy never completes.
// At most every kCopyEvery, however often a program tests an MPI_Ibcast's request: each time
// is a call to the daemon.
constexpr auto kCopyEvery = std::chrono::milliseconds(100);

void BcastCall::CopyVerified() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_copy_ < kCopyEvery) return;
  last_copy_ = now;
  if (Result<bool> copied = copier_->CopyVerified(); !copied.ok()) copy_status_ = copied.status();
}

// Removes this node's in-memory `name`, said at `rank` when it cannot. The source (or the
// allgather's coordinator) keeps its copy registered until it has followed the transfer to
// its end, so a removal may have to wait for that.
void RemoveFromThisNode(Shim& shim, int rank, const std::string& name) {
  Status removed;
  for (int attempt = 0; attempt < 100; ++attempt) {
    removed = shim.client().RemovePayload(shim.member(), name, true);
    if (removed.code() != StatusCode::kFailedPrecondition) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!removed.ok()) Shim::Say(rank, "removing this node's copy of " + name + ": " + removed.ToString());
}

void BcastCall::RemoveCopy() {
  Mark("confirmed");
  // A node whose daemon took its ranks' buffers (or sent from the root's) holds no copy.
  if (lease_bound_) return;
  if (agreement_.removes_copy[static_cast<size_t>(rank_)]) RemoveFromThisNode(shim_, rank_, agreement_.payload_name);
}

// One MPI_Allgather through gridcast, start to end (it blocks, as MPI_Allgather does). Each
// step ends with a collective of the shim's own on the duplicate communicator, so every rank
// learns whether any failed before the next step: the parts are all written before the
// coordinator describes them, and no rank reads a bundle the daemons did not verify.
class AllgatherCall {
 public:
  AllgatherCall(Shim& shim, std::shared_ptr<CommState> state, const void* sendbuf, int sendcount,
                MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
      : shim_(shim), state_(std::move(state)), sendbuf_(sendbuf), sendcount_(sendcount), sendtype_(sendtype),
        recvbuf_(static_cast<uint8_t*>(recvbuf)), recvcount_(recvcount), recvtype_(recvtype) {
    PMPI_Comm_rank(comm, &rank_);
    PMPI_Comm_size(comm, &size_);
  }

  int Run() {
    RequestDone(&state_->dup_request, /*block=*/true);
    // MPI_Ibcast calls still in flight on this communicator post their remaining collectives
    // first, on every rank, so that all ranks post the shim's collectives in one order.
    for (BcastCall* earlier : std::deque<BcastCall*>(state_->in_flight)) earlier->Advance(/*block=*/true);
    const double started = PMPI_Wtime();
    if (const int rc = Agree(); rc != MPI_SUCCESS || agreement_.path != BcastAgreement::Path::kGridcast) return rc;
    const uint64_t block = static_cast<uint64_t>(offers_[0].bytes);
    const std::span<const uint8_t> mine(sendbuf_ == MPI_IN_PLACE ? recvbuf_ + static_cast<uint64_t>(rank_) * block
                                                                 : static_cast<const uint8_t*>(sendbuf_),
                                        block);
    int failed = 0;
    Status wrote = shim_.client().WriteInMemory(
        shim_.member(), agreement_.part_name,
        static_cast<uint64_t>(agreement_.slot_of_rank[static_cast<size_t>(rank_)]) * block, mine);
    if (!wrote.ok()) {
      Shim::Say(rank_, "MPI_Allgather by gridcast: writing this rank's block: " + wrote.ToString());
      failed = 1;
    }
    if (const int rc = AnyFailed(&failed); rc != MPI_SUCCESS) return rc;
    Outcome outcome;
    if (failed != 0) {
      outcome.failed = 1;
    } else if (rank_ == 0) {
      Gather(&outcome);
    }
    if (const int rc = ShareOutcome(&outcome); rc != MPI_SUCCESS) return rc;
    failed = outcome.failed;
    if (failed == 0) {
      std::vector<PayloadRange> ranges;
      for (int r = 0; r < size_; ++r) {
        ranges.push_back({BundleOffset(agreement_, r, block, outcome.chunk_bytes),
                          std::span(recvbuf_ + static_cast<uint64_t>(r) * block, block)});
      }
      Status read = shim_.client().ReadRanges(shim_.member(), agreement_.bundle_name, /*in_memory=*/true, ranges);
      if (!read.ok()) {
        Shim::Say(rank_, "MPI_Allgather by gridcast: reading this node's bundle: " + read.ToString());
        failed = 1;
      }
    } else if (*outcome.message != '\0') {
      Shim::Say(rank_, std::string("MPI_Allgather by gridcast failed: ") + outcome.message);
    }
    if (const int rc = AnyFailed(&failed); rc != MPI_SUCCESS) return rc;
    if (agreement_.removes_copy[static_cast<size_t>(rank_)]) {
      RemoveFromThisNode(shim_, rank_, agreement_.part_name);
      if (outcome.failed == 0) RemoveFromThisNode(shim_, rank_, agreement_.bundle_name);
    }
    if (shim_.verbose() > 2) Shim::Say(rank_, "MPI_Allgather took " + std::to_string(PMPI_Wtime() - started) + " s");
    return failed != 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
  }

 private:
  // The offers, and MPI's own allgather when the ranks agree to leave it to MPI.
  int Agree() {
    RankOffer offer;
    const int64_t block = BytesOf(recvcount_, recvtype_);
    const bool same_block = sendbuf_ == MPI_IN_PLACE || BytesOf(sendcount_, sendtype_) == block;
    offer.bytes = Contiguous(recvtype_) && (sendbuf_ == MPI_IN_PLACE || Contiguous(sendtype_)) && same_block ? block : -1;
    offer.member = shim_.AnsweringMember();
    if (rank_ == 0) RandomBytes(std::span(reinterpret_cast<uint8_t*>(&offer.nonce), sizeof(offer.nonce)));
    offers_.resize(static_cast<size_t>(size_));
    MPI_Request request = MPI_REQUEST_NULL;
    if (const int rc = PMPI_Iallgather(&offer, sizeof(RankOffer), MPI_BYTE, offers_.data(), sizeof(RankOffer),
                                       MPI_BYTE, state_->dup, &request);
        rc != MPI_SUCCESS) {
      return rc;
    }
    RequestDone(&request, /*block=*/true);
    agreement_ = AgreeOnAllgather(offers_);
    const std::string what = "MPI_Allgather of " + FormatSize(static_cast<uint64_t>(std::max<int64_t>(block, 0))) +
                             " x " + std::to_string(size_);
    switch (agreement_.path) {
      case BcastAgreement::Path::kSizeMismatch:
        if (rank_ == 0) Shim::Say(rank_, what + ": " + agreement_.why);
        return MPI_ERR_TRUNCATE;
      case BcastAgreement::Path::kMpi:
        shim_.SayOnce(what + " goes to MPI: " + agreement_.why);
        return PMPI_Allgather(sendbuf_, sendcount_, sendtype_, recvbuf_, recvcount_, recvtype_, state_->dup);
      case BcastAgreement::Path::kGridcast:
        return MPI_SUCCESS;
    }
    return MPI_ERR_INTERN;
  }

  // At rank 0: the daemons gather every node's part; `outcome` says how it went.
  void Gather(Outcome* outcome) {
    std::vector<AllgatherPart> parts;
    for (int member : agreement_.node_members) {
      parts.push_back({shim_.member_name(member), agreement_.part_name, /*in_memory=*/true, shim_.member_name(member)});
    }
    AllgatherOptions options;
    options.algorithm = shim_.allgather_algorithm();
    options.digest = shim_.digest();
    options.timeout_s = shim_.timeout_s();
    options.in_memory = true;
    Result<BroadcastResult> result = [&]() -> Result<BroadcastResult> {
      GRIDCAST_ASSIGN_OR_RETURN(std::unique_ptr<Broadcast> gathering,
                                shim_.client().StartAllgather(agreement_.bundle_name, parts, options));
      return gathering->Wait();
    }();
    if (!result.ok()) {
      outcome->failed = 1;
      std::snprintf(outcome->message, sizeof(outcome->message), "%s", result.status().ToString().c_str());
      return;
    }
    outcome->chunk_bytes = result->chunk_bytes;
    if (shim_.verbose() > 1) {
      Shim::Say(rank_, "MPI_Allgather of " + FormatSize(result->size_bytes) + " by gridcast (" + result->algorithm +
                           ") in " + std::to_string(result->completion_s) + " s");
    }
  }

  // An allreduce (max) of `failed` over the ranks.
  int AnyFailed(int* failed) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int rc = PMPI_Iallreduce(MPI_IN_PLACE, failed, 1, MPI_INT, MPI_MAX, state_->dup, &request);
    if (rc == MPI_SUCCESS) RequestDone(&request, /*block=*/true);
    return rc;
  }

  int ShareOutcome(Outcome* outcome) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int rc = PMPI_Ibcast(outcome, sizeof(Outcome), MPI_BYTE, 0, state_->dup, &request);
    if (rc == MPI_SUCCESS) RequestDone(&request, /*block=*/true);
    return rc;
  }

  Shim& shim_;
  const std::shared_ptr<CommState> state_;
  const void* const sendbuf_;
  const int sendcount_;
  const MPI_Datatype sendtype_;
  uint8_t* const recvbuf_;
  const int recvcount_;
  const MPI_Datatype recvtype_;
  int rank_ = 0;
  int size_ = 0;
  std::vector<RankOffer> offers_;
  AllgatherAgreement agreement_;
};

int Shim::Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm) {
  int size = 0;
  const int64_t block = comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS ? -1 : BytesOf(recvcount, recvtype);
  std::shared_ptr<CommState> state = StateFor(block < 0 ? -1 : block * size, comm);
  if (state == nullptr) return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  const int rc = AllgatherCall(*this, std::move(state), sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm).Run();
  if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc);
  return rc;
}

// MPI_Waitany and MPI_Waitsome over the shim's requests: no single MPI call waits for both
// them and MPI's, so poll.
template <typename TestFn>
int PollUntil(int count, MPI_Request* requests, TestFn test) {
  for (;;) {
    Shim::Get().Advance(count, requests, /*block=*/false);
    bool done = false;
    const int rc = test(&done);
    if (rc != MPI_SUCCESS || done) return rc;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

}  // namespace
}  // namespace gridcast

using gridcast::Shim;

extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) Shim::Get().Ready();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) Shim::Get().Ready();
  return rc;
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return Shim::Get().Bcast(buffer, count, datatype, root, comm);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return Shim::Get().Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  return Shim::Get().Ibcast(buffer, count, datatype, root, comm, request);
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  Shim::Get().Advance(1, request, /*block=*/true);
  return PMPI_Wait(request, status);
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  Shim::Get().Advance(1, request, /*block=*/false);
  return PMPI_Test(request, flag, status);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  Shim::Get().Advance(count, requests, /*block=*/true);
  return PMPI_Waitall(count, requests, statuses);
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  Shim::Get().Advance(count, requests, /*block=*/false);
  return PMPI_Testall(count, requests, flag, statuses);
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  Shim::Get().Advance(count, requests, /*block=*/false);
  return PMPI_Testany(count, requests, index, flag, status);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  Shim::Get().Advance(incount, requests, /*block=*/false);
  return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!Shim::Get().Advance(count, requests, /*block=*/false)) return PMPI_Waitany(count, requests, index, status);
  return gridcast::PollUntil(count, requests, [&](bool* done) {
    int flag = 0;
    const int rc = PMPI_Testany(count, requests, index, &flag, status);
    *done = flag != 0;
    return rc;
  });
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  if (!Shim::Get().Advance(incount, requests, /*block=*/false)) {
    return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  }
  return gridcast::PollUntil(incount, requests, [&](bool* done) {
    const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    *done = *outcount != 0;  // MPI_UNDEFINED too: no active request left
    return rc;
  });
}

int MPI_Request_free(MPI_Request* request) {
  // The call must still reach its end on this rank, or the other ranks wait for it.
  Shim::Get().Advance(1, request, /*block=*/true);
  return PMPI_Request_free(request);
}

}  // extern "C"
