// gridcast._gridcast: libgridcast's C++ API (include/gridcast/gridcast.hpp) for Python. Only
// that public API: this module links libgridcast.so and nothing else of gridcast, so one
// process holds one copy of its state (protobuf's descriptors among it).
//
// The Python package (gridcast/__init__.py) is the interface people use; this module is its
// floor: it converts, checks buffers and releases the GIL around everything that waits, and
// reports every failure as StatusError(code, code_name, message) for the package to map onto
// its exception classes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gridcast/gridcast.hpp>

namespace py = pybind11;

namespace gridcast::python {
namespace {

// A non-OK Status on its way to Python, as StatusError.
struct StatusException : std::exception {
  explicit StatusException(Status s) : status(std::move(s)) {}
  const char* what() const noexcept override { return status.message().c_str(); }
  Status status;
};

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw StatusException(status);
}

template <typename T>
T ValueOrThrow(Result<T> result) {
  ThrowIfError(result.status());
  return std::move(result).value();
}

// A buffer of a Python object (bytes, bytearray, memoryview, a NumPy array) held for as long as
// this lives. Taken with the GIL held; the bytes may then be read or written without it.
class HeldBuffer {
 public:
  HeldBuffer(const py::handle& object, bool writable) {
    const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) throw py::error_already_set();
  }
  ~HeldBuffer() { PyBuffer_Release(&view_); }
  HeldBuffer(const HeldBuffer&) = delete;
  HeldBuffer& operator=(const HeldBuffer&) = delete;

  std::span<uint8_t> bytes() { return {static_cast<uint8_t*>(view_.buf), static_cast<size_t>(view_.len)}; }

 private:
  Py_buffer view_{};
};

// The send options the package passes as a dict of its keyword arguments.
SendOptions SendOptionsFrom(const py::dict& given) {
  SendOptions options;
  options.algorithm = given["algorithm"].cast<std::string>();
  options.chunk_bytes = given["chunk_bytes"].cast<uint64_t>();
  options.timeout_s = given["timeout_s"].cast<double>();
  options.name = given["name"].cast<std::string>();
  options.in_memory = given["in_memory"].cast<bool>();
  options.members = given["members"].cast<std::vector<std::string>>();
  options.digest = given["digest"].cast<std::string>();
  options.no_reuse = given["no_reuse"].cast<bool>();
  const int mode = given["mode"].cast<int>();  // 0: the source daemon decides
  if (mode != 0) options.mode = static_cast<Mode>(mode);
  return options;
}

class PyBroadcast {
 public:
  explicit PyBroadcast(std::unique_ptr<Broadcast> broadcast) : broadcast_(std::move(broadcast)) {}
  // A handle dropped before the end cancels its broadcast: nobody can wait for it any more,
  // and libgridcast's handle waits for the end when destroyed (not holding the GIL meanwhile).
  ~PyBroadcast() {
    py::gil_scoped_release released;
    try {
      if (!broadcast_->Poll(nullptr)) broadcast_->Cancel();
    } catch (...) {  // not out of a destructor; the broadcast then ends by its own timeouts
    }
    broadcast_.reset();
  }

  py::dict Poll() {
    ProgressDetail detail;
    const bool ended = broadcast_->PollDetail(&detail);
    py::dict out;
    out["ended"] = ended;
    out["chunks_done"] = detail.progress.chunks_done;
    out["chunks_total"] = detail.progress.chunks_total;
    out["members_done"] = detail.progress.members_done;
    out["members"] = detail.progress.members;
    out["elapsed_s"] = detail.progress.elapsed_s;
    out["slowest_member"] = detail.slowest_member;
    out["slowest_chunks"] = detail.slowest_chunks;
    return out;
  }

  // True once ended; false when `timeout_s` passed first. Short waits keep the caller's
  // thread responsive: Python runs its signal handlers (Ctrl-C) between two calls.
  bool WaitFor(double timeout_s) {
    py::gil_scoped_release released;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::max(timeout_s, 0.0));
    for (;;) {
      if (broadcast_->Poll(nullptr)) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  void Cancel() {
    py::gil_scoped_release released;
    broadcast_->Cancel();
  }

  // Once ended: (code, code name, message, the summary document): code 0 when every member
  // verified its copy. Several threads may ask: the first one takes it (libgridcast's Wait is
  // for one thread).
  py::tuple Outcome() {
    std::optional<std::pair<Status, std::string>> outcome;
    {
      py::gil_scoped_release released;
      std::lock_guard<std::mutex> lock(outcome_mutex_);
      if (!outcome_ && broadcast_->Poll(nullptr)) {
        const Result<BroadcastResult> result = broadcast_->Wait();
        outcome_ = std::make_pair(result.status(), broadcast_->SummaryJson());
      }
      outcome = outcome_;
    }
    if (!outcome) throw StatusException(Status::FailedPrecondition("the broadcast has not ended"));
    const Status& status = outcome->first;
    return py::make_tuple(static_cast<int>(status.code()), std::string(StatusCodeName(status.code())),
                          status.message(), outcome->second);
  }

 private:
  std::unique_ptr<Broadcast> broadcast_;
  std::mutex outcome_mutex_;
  std::optional<std::pair<Status, std::string>> outcome_;  // guarded by outcome_mutex_
};

// The handle of a broadcast just started. A Ctrl-C that came while it started (copying a large
// buffer to the source daemon takes seconds, without the GIL) cancels it and raises
// KeyboardInterrupt here, before the caller holds a handle to cancel.
std::unique_ptr<PyBroadcast> Started(std::unique_ptr<Broadcast> broadcast) {
  auto started = std::make_unique<PyBroadcast>(std::move(broadcast));
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // `started` cancels on its way out
  return started;
}

class PyClient {
 public:
  PyClient(const std::string& cluster_file, const std::string& source, const std::string& tls_ca) {
    py::gil_scoped_release released;
    client_ = ValueOrThrow(Client::Open(ClientOptions{cluster_file, source, tls_ca}));
  }

  std::unique_ptr<PyBroadcast> StartSendFile(const std::string& path, const py::dict& options) {
    const SendOptions send = SendOptionsFrom(options);
    std::unique_ptr<Broadcast> broadcast;
    {
      py::gil_scoped_release released;
      broadcast = ValueOrThrow(client_->StartSendFile(path, send));
    }
    return Started(std::move(broadcast));
  }

  // The source daemon gets a copy of the buffer (libgridcast StartSendBuffer): it is read
  // while this runs, not after.
  std::unique_ptr<PyBroadcast> StartSendBuffer(const py::handle& data, const std::string& name,
                                               const py::dict& options) {
    const SendOptions send = SendOptionsFrom(options);
    HeldBuffer buffer(data, /*writable=*/false);
    std::unique_ptr<Broadcast> broadcast;
    {
      py::gil_scoped_release released;
      broadcast = ValueOrThrow(client_->StartSendBuffer(buffer.bytes(), name, send));
    }
    return Started(std::move(broadcast));
  }

  std::unique_ptr<PyBroadcast> StartSendUrl(const std::string& url, const py::dict& options,
                                            const std::vector<std::string>& headers, const std::string& ca_pem,
                                            const std::string& sha256) {
    const SendOptions send = SendOptionsFrom(options);
    OriginOptions origin;
    origin.headers = headers;
    origin.ca_pem = ca_pem;
    origin.sha256 = sha256;
    std::unique_ptr<Broadcast> broadcast;
    {
      py::gil_scoped_release released;
      broadcast = ValueOrThrow(client_->StartSendUrl(url, send, origin));
    }
    return Started(std::move(broadcast));
  }

  void ReceiveInto(const std::string& member, const std::string& name, const py::handle& into, double timeout_s,
                   bool remove_in_memory) {
    HeldBuffer buffer(into, /*writable=*/true);
    py::gil_scoped_release released;
    ThrowIfError(client_->Receive(member, name, buffer.bytes(), ReceiveOptions{timeout_s, remove_in_memory}));
  }

  // A new bytes object of `size` filled with the member's copy: no second copy of it.
  py::bytes ReceiveBytes(const std::string& member, const std::string& name, uint64_t size, double timeout_s,
                         bool remove_in_memory) {
    // MemoryError, not a RuntimeError, when there is no room for it.
    PyObject* raw = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size));
    if (raw == nullptr) throw py::error_already_set();
    py::bytes out = py::reinterpret_steal<py::bytes>(raw);
    char* data = PyBytes_AS_STRING(raw);
    py::gil_scoped_release released;
    ThrowIfError(client_->Receive(member, name, {reinterpret_cast<uint8_t*>(data), static_cast<size_t>(size)},
                                  ReceiveOptions{timeout_s, remove_in_memory}));
    return out;
  }

  std::string StatusJson(const std::string& member) {
    py::gil_scoped_release released;
    return ValueOrThrow(client_->StatusJson(member));
  }

  std::string ListJson(const std::string& member, bool verify) {
    py::gil_scoped_release released;
    return ValueOrThrow(client_->ListJson(member, verify));
  }

  // May resolve host names.
  std::string LocalMember() {
    py::gil_scoped_release released;
    return ValueOrThrow(client_->LocalMember());
  }

 private:
  std::unique_ptr<Client> client_;
};

PlanQuery PlanQueryFrom(const std::string& topology, uint64_t size_bytes, const std::string& algorithm,
                        uint64_t chunk_bytes, const std::string& source, double goodput) {
  return PlanQuery{topology, size_bytes, algorithm, chunk_bytes, source, goodput};
}

}  // namespace
}  // namespace gridcast::python

PYBIND11_MODULE(_gridcast, m) {
  using namespace gridcast::python;
  m.doc() = "libgridcast for Python: the floor of the gridcast package (use gridcast, not this module)";

  static py::exception<StatusException> status_error(m, "StatusError");
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const StatusException& e) {
      const py::tuple args = py::make_tuple(static_cast<int>(e.status.code()),
                                            std::string(gridcast::StatusCodeName(e.status.code())), e.status.message());
      PyErr_SetObject(status_error.ptr(), args.ptr());
    }
  });

  py::class_<PyBroadcast>(m, "Broadcast")
      .def("poll", &PyBroadcast::Poll, "The progress: a dict of counters, 'ended' among them")
      .def("wait_for", &PyBroadcast::WaitFor, py::arg("timeout_s"),
           "Waits up to timeout_s seconds (without the GIL); True once the broadcast ended")
      .def("cancel", &PyBroadcast::Cancel, "Asks the source to stop the broadcast at every member")
      .def("outcome", &PyBroadcast::Outcome,
           "Once ended: (code, code_name, message, summary_json); code 0 when every member verified its copy");

  // Each handle keeps its client (and so the cluster it names) alive.
  py::class_<PyClient>(m, "Client")
      .def(py::init<const std::string&, const std::string&, const std::string&>(), py::arg("cluster_file"),
           py::arg("source"), py::arg("tls_ca"))
      .def("start_send_file", &PyClient::StartSendFile, py::arg("path"), py::arg("options"), py::keep_alive<0, 1>())
      .def("start_send_buffer", &PyClient::StartSendBuffer, py::arg("data"), py::arg("name"), py::arg("options"),
           py::keep_alive<0, 1>())
      .def("start_send_url", &PyClient::StartSendUrl, py::arg("url"), py::arg("options"), py::arg("headers"),
           py::arg("ca_pem"), py::arg("sha256"), py::keep_alive<0, 1>())
      .def("receive_into", &PyClient::ReceiveInto, py::arg("member"), py::arg("name"), py::arg("into"),
           py::arg("timeout_s"), py::arg("remove_in_memory"))
      .def("receive_bytes", &PyClient::ReceiveBytes, py::arg("member"), py::arg("name"), py::arg("size"),
           py::arg("timeout_s"), py::arg("remove_in_memory"))
      .def("status_json", &PyClient::StatusJson, py::arg("member"))
      .def("list_json", &PyClient::ListJson, py::arg("member"), py::arg("verify"))
      .def("local_member", &PyClient::LocalMember);

  m.def(
      "plan_json",
      [](const std::string& topology, uint64_t size_bytes, const std::string& algorithm, uint64_t chunk_bytes,
         const std::string& source) {
        py::gil_scoped_release released;
        return ValueOrThrow(gridcast::PlanJson(PlanQueryFrom(topology, size_bytes, algorithm, chunk_bytes, source, 1.0)));
      },
      py::arg("topology"), py::arg("size_bytes"), py::arg("algorithm"), py::arg("chunk_bytes"), py::arg("source"));
  m.def(
      "simulate_json",
      [](const std::string& topology, uint64_t size_bytes, const std::string& algorithm, uint64_t chunk_bytes,
         const std::string& source, double goodput) {
        py::gil_scoped_release released;
        return ValueOrThrow(
            gridcast::SimulateJson(PlanQueryFrom(topology, size_bytes, algorithm, chunk_bytes, source, goodput)));
      },
      py::arg("topology"), py::arg("size_bytes"), py::arg("algorithm"), py::arg("chunk_bytes"), py::arg("source"),
      py::arg("goodput"));
  m.def(
      "parse_size", [](const std::string& text) { return ValueOrThrow(gridcast::ParseSize(text)); }, py::arg("text"),
      "A size as the command line reads it ('256MiB', '1.5GiB', '4096') in bytes");
  m.def("mode_value", [](const std::string& name) -> int {
    for (const gridcast::Mode mode : {gridcast::Mode::kPush, gridcast::Mode::kPull, gridcast::Mode::kHybrid}) {
      if (name == gridcast::ModeName(mode)) return static_cast<int>(mode);
    }
    throw StatusException(gridcast::Status::InvalidArgument("mode: '" + name + "' not in {push, pull, hybrid}"));
  }, py::arg("name"));
}
