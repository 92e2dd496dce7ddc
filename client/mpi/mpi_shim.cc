// libgridcast-mpi.so: a PMPI shim that hands large MPI_Bcast calls to the local gridcastd.
//
// Loaded with LD_PRELOAD (or linked before libmpi) into an unmodified MPI program. A call of at
// least GRIDCAST_MPI_THRESHOLD bytes goes through gridcast when every rank of the communicator
// agrees it can (client/mpi/bcast_agreement.h): the root's daemon broadcasts the buffer, in
// memory, to the daemons of the other ranks' nodes, each rank copies its node's copy into its
// buffer, and one rank per node removes that copy. Everything else calls PMPI_Bcast unchanged.
// docs/mpi.md describes the variables and the guarantees.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "client/mpi/bcast_agreement.h"
#include "client/mpi/local_member.h"
#include "cluster/cluster_file.h"
#include "common/crypto.h"
#include "common/units.h"
#include "include/gridcast/gridcast.hpp"

namespace gridcast {
namespace {

// Below this many bytes a broadcast stays with MPI: gridcast's fixed cost (a plan, the
// members' Prepare, hashing) is tenths of a second (docs/mpi.md, "Threshold").
constexpr uint64_t kDefaultThresholdBytes = 16ull << 20;

// The root's outcome, sent to every rank with one PMPI_Bcast.
struct Outcome {
  int32_t failed = 0;
  char message[252] = {};
};
static_assert(sizeof(Outcome) == 256);

class Shim {
 public:
  static Shim& Get() {
    static Shim* shim = new Shim();  // never destroyed: MPI calls may come during exit
    return *shim;
  }

  int Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);

 private:
  Shim();

  // Once per distinct text, with GRIDCAST_MPI_VERBOSE=1.
  void SayOnce(const std::string& text);
  void SayError(int rank, const std::string& text) const;
  // This rank's daemon, -1 when none answers (or the shim is off).
  int AnsweringMember() const;
  bool Contiguous(MPI_Datatype datatype) const;
  int Fail(MPI_Comm comm, int error_class) const;

  uint64_t threshold_ = kDefaultThresholdBytes;
  int verbose_ = 0;
  std::string algorithm_ = "auto";
  double timeout_s_ = 0;
  std::string off_because_;  // not empty: the shim passes every call on, and why
  std::string member_;              // this host's member
  std::vector<std::string> members_;  // the cluster file's, in its order
  std::unique_ptr<Client> client_;  // with member_ as the source; thread-safe

  std::mutex mutex_;
  std::set<std::string> said_;  // guarded by mutex_
};

Shim::Shim() {
  if (const char* v = std::getenv("GRIDCAST_MPI_VERBOSE")) verbose_ = std::atoi(v);
  if (const char* v = std::getenv("GRIDCAST_MPI_ALGO"); v != nullptr && *v != '\0') algorithm_ = v;
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
  const char* named = std::getenv("GRIDCAST_MEMBER");
  Result<std::string> member = LocalMember(*parsed, named == nullptr ? "" : named, HostAddresses());
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
  for (const ClusterMember& m : parsed->members) members_.push_back(m.name);
}

void Shim::SayOnce(const std::string& text) {
  if (verbose_ <= 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!said_.insert(text).second) return;
  }
  std::fprintf(stderr, "gridcast-mpi: %s\n", text.c_str());
}

void Shim::SayError(int rank, const std::string& text) const {
  std::fprintf(stderr, "gridcast-mpi: rank %d: %s\n", rank, text.c_str());
}

int Shim::AnsweringMember() const {
  if (!off_because_.empty() || !client_->CheckMember(member_).ok()) return -1;
  return static_cast<int>(std::find(members_.begin(), members_.end(), member_) - members_.begin());
}

// A buffer of `count` elements is one run of bytes when the type has no holes and no offset.
bool Shim::Contiguous(MPI_Datatype datatype) const {
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_size(datatype, &size) != MPI_SUCCESS || PMPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(datatype, &true_lb, &true_extent) != MPI_SUCCESS) {
    return false;
  }
  return lb == 0 && true_lb == 0 && extent == size && true_extent == size;
}

int Shim::Fail(MPI_Comm comm, int error_class) const {
  PMPI_Comm_call_errhandler(comm, error_class);
  return error_class;
}

int Shim::Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  int type_size = 0;
  int inter = 0;
  if (!off_because_.empty() || count <= 0 || PMPI_Type_size(datatype, &type_size) != MPI_SUCCESS ||
      static_cast<uint64_t>(count) * static_cast<uint64_t>(type_size) < threshold_ || comm == MPI_COMM_NULL ||
      PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter != 0) {
    if (!off_because_.empty()) SayOnce("every call goes to MPI: " + off_because_);
    return PMPI_Bcast(buffer, count, datatype, root, comm);
  }
  int rank = 0, size = 0;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  if (root < 0 || root >= size) return PMPI_Bcast(buffer, count, datatype, root, comm);  // MPI's own error

  RankOffer mine;
  const int64_t bytes = static_cast<int64_t>(count) * type_size;
  mine.bytes = Contiguous(datatype) ? bytes : -1;
  mine.member = AnsweringMember();
  if (rank == root) RandomBytes(std::span(reinterpret_cast<uint8_t*>(&mine.nonce), sizeof(mine.nonce)));
  std::vector<RankOffer> offers(static_cast<size_t>(size));
  int rc = PMPI_Allgather(&mine, sizeof(RankOffer), MPI_BYTE, offers.data(), sizeof(RankOffer), MPI_BYTE, comm);
  if (rc != MPI_SUCCESS) return rc;
  const BcastAgreement agreement = AgreeOnBcast(offers, root);
  if (agreement.path == BcastAgreement::Path::kMpi) {
    SayOnce("MPI_Bcast of " + FormatSize(static_cast<uint64_t>(bytes)) + " goes to MPI: " + agreement.why);
    return PMPI_Bcast(buffer, count, datatype, root, comm);
  }
  if (agreement.path == BcastAgreement::Path::kSizeMismatch) {
    if (rank == root) SayError(rank, "MPI_Bcast: " + agreement.why);
    return Fail(comm, MPI_ERR_TRUNCATE);
  }

  const std::span<uint8_t> data(static_cast<uint8_t*>(buffer), static_cast<size_t>(bytes));
  Outcome outcome;
  if (rank == root) {
    auto fail = [&](const Status& status) {
      outcome.failed = 1;
      std::snprintf(outcome.message, sizeof(outcome.message), "%s", status.ToString().c_str());
    };
    SendOptions options;
    options.algorithm = algorithm_;
    options.timeout_s = timeout_s_;
    options.in_memory = true;
    for (int member : agreement.receiver_members) options.members.push_back(members_[member]);
    Result<std::unique_ptr<Broadcast>> started = client_->StartSendBuffer(data, agreement.payload_name, options);
    if (!started.ok()) {
      fail(started.status());
    } else if (Result<BroadcastResult> result = (*started)->Wait(); !result.ok()) {
      fail(result.status());
    } else if (verbose_ > 1) {
      SayError(rank, "MPI_Bcast of " + FormatSize(static_cast<uint64_t>(bytes)) + " by gridcast (" + result->algorithm +
                         ") in " + std::to_string(result->completion_s) + " s");
    }
  }
  rc = PMPI_Bcast(&outcome, sizeof(Outcome), MPI_BYTE, root, comm);
  if (rc != MPI_SUCCESS) return rc;
  int failed = outcome.failed;
  if (failed != 0) {
    SayError(rank, std::string("MPI_Bcast by gridcast failed: ") + outcome.message);
  } else if (rank != root) {
    ReceiveOptions options;
    options.remove_in_memory = false;
    options.timeout_s = 60;  // the root saw every copy verified: it is there
    Status received = client_->Receive(member_, agreement.payload_name, data, options);
    if (!received.ok()) {
      SayError(rank, "MPI_Bcast by gridcast: reading this node's copy: " + received.ToString());
      failed = 1;
    }
  }
  rc = PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (rc != MPI_SUCCESS) return rc;
  if (agreement.removes_copy[static_cast<size_t>(rank)]) {
    // The source keeps its copy registered until it has followed the broadcast to its end.
    Status removed;
    for (int attempt = 0; attempt < 100; ++attempt) {
      removed = client_->RemovePayload(member_, agreement.payload_name, true);
      if (removed.code() != StatusCode::kFailedPrecondition) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!removed.ok()) SayError(rank, "removing this node's copy of " + agreement.payload_name + ": " + removed.ToString());
  }
  return failed != 0 ? Fail(comm, MPI_ERR_OTHER) : MPI_SUCCESS;
}

}  // namespace
}  // namespace gridcast

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return gridcast::Shim::Get().Bcast(buffer, count, datatype, root, comm);
}
