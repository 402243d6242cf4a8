//===- Devices.cpp - ShardedEngine's primitives for Python ----------------===//

#include "Devices.h"
#include "Arrays.h"
#include "Errors.h"
#include "MpiJob.h"

#include "shardc/Runtime/MpiCommunicator.h"
#include "shardc/Runtime/ThreadsBackend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <pybind11/stl.h>

#include <atomic>
#include <cstring>

namespace py = pybind11;
using namespace shardc;
using namespace shardc::python;

namespace {

/// One device of a running launch. `communicator` is valid while `alive`;
/// the launch clears it when fn returns on that device, so that an engine
/// kept past its launch gets an error rather than a dangling pointer.
struct DeviceState {
  Communicator *communicator;
  bool alive = true;
};

thread_local std::shared_ptr<DeviceState> currentDevice;

/// Makes `state` the calling thread's device for its lifetime.
class CurrentDeviceScope {
public:
  explicit CurrentDeviceScope(std::shared_ptr<DeviceState> state)
      : previous(std::move(currentDevice)) {
    currentDevice = std::move(state);
  }
  ~CurrentDeviceScope() {
    currentDevice->alive = false;
    currentDevice = std::move(previous);
  }

private:
  std::shared_ptr<DeviceState> previous;
};

std::optional<Reduction> parseReduction(const std::string &op) {
  if (op == "sum")
    return Reduction::Sum;
  if (op == "max")
    return Reduction::Max;
  return std::nullopt;
}

/// A send_async in flight.
class Future {
public:
  Future(std::shared_ptr<DeviceState> state,
         std::future<mlir::LogicalResult> future)
      : state(std::move(state)), future(std::move(future)) {}

  /// Waits until the tensor has been handed over; raises if that failed.
  void result(std::optional<double> timeout) {
    if (!future.valid())
      return;
    bool ready = true;
    mlir::LogicalResult status = mlir::success();
    {
      py::gil_scoped_release release;
      // The mpi backend's future is deferred: it completes (within the
      // communicator's own timeout) in the get() of the thread that waits.
      if (timeout)
        ready = future.wait_for(std::chrono::duration<double>(*timeout)) !=
                std::future_status::timeout;
      if (ready)
        status = future.get();
    }
    if (!ready)
      throw py::value_error("send_async: not handed over within the timeout");
    if (mlir::failed(status))
      raiseError("send_async failed (the launch reports why)");
  }
  bool done() const {
    return !future.valid() || future.wait_for(std::chrono::seconds(0)) ==
                                  std::future_status::ready;
  }

private:
  std::shared_ptr<DeviceState> state; // keeps the device's state alive
  std::future<mlir::LogicalResult> future;
};

using Group = std::optional<std::vector<int64_t>>;

/// ShardedEngine's primitives on one device.
class Device {
public:
  explicit Device(std::shared_ptr<DeviceState> state)
      : state(std::move(state)) {}

  int64_t deviceId() { return communicator().deviceId(); }
  int64_t numDevices() { return communicator().numDevices(); }

  void barrier() {
    check(call([&] { return communicator().barrier(); }), "barrier");
  }
  void send(int64_t dest, const py::handle &array) {
    Tensor tensor = toTensor(array, "send");
    checkPeer(dest, "send");
    check(call([&] { return communicator().send(dest, tensor); }), "send");
  }
  py::array receive(int64_t src, const py::object &out) {
    checkPeer(src, "receive");
    mlir::FailureOr<Tensor> tensor =
        call([&] { return communicator().receive(src); });
    check(tensor, "receive");
    py::array result = toArray(std::move(*tensor));
    if (out.is_none())
      return result;
    // In place, as ShardedEngine's send_async into a destination buffer: the
    // shapes must agree, the dtype converts as NumPy's copyto does.
    py::module_::import("numpy").attr("copyto")(out, result);
    return out;
  }
  Future sendAsync(const py::handle &src, const py::object &dst,
                   int64_t target) {
    Tensor tensor = toTensor(src, "send_async");
    if (!dst.is_none()) {
      py::array buffer = py::module_::import("numpy").attr("asarray")(dst);
      std::vector<int64_t> shape(buffer.shape(),
                                 buffer.shape() + buffer.ndim());
      if (llvm::ArrayRef<int64_t>(shape) != tensor.shape())
        throw py::value_error("send_async: dst has shape " +
                              formatShape(shape) + " but src has shape " +
                              formatShape(tensor.shape()) +
                              "; the target receives src whole");
    }
    checkPeer(target, "send_async");
    std::future<mlir::LogicalResult> future;
    {
      py::gil_scoped_release release;
      future = communicator().sendAsync(target, std::move(tensor));
    }
    return Future(state, std::move(future));
  }

  // Each collective spans every device, as ShardedEngine's do, or the devices
  // of `group` (in that order; this device among them): a row or column of a
  // mesh for 2D sharding.
  py::array allGather(const py::handle &array, int64_t axis,
                      const Group &group) {
    Tensor tensor = toTensor(array, "all_gather");
    int64_t dim = normalizeAxis(axis, tensor, "all_gather");
    llvm::SmallVector<int64_t> members = groupOf(group, "all_gather");
    return finish(
        call([&] { return communicator().allGather(tensor, members, dim); }),
        "all_gather");
  }
  py::array allReduce(const py::handle &array, const std::string &op,
                      const Group &group) {
    Tensor tensor = toTensor(array, "all_reduce");
    Reduction kind = reduction(op, "all_reduce");
    llvm::SmallVector<int64_t> members = groupOf(group, "all_reduce");
    return finish(
        call([&] { return communicator().allReduce(tensor, members, kind); }),
        "all_reduce");
  }
  py::array reduceScatter(const py::handle &array, int64_t axis,
                          const std::string &op, const Group &group) {
    Tensor tensor = toTensor(array, "reduce_scatter");
    int64_t dim = normalizeAxis(axis, tensor, "reduce_scatter");
    Reduction kind = reduction(op, "reduce_scatter");
    llvm::SmallVector<int64_t> members = groupOf(group, "reduce_scatter");
    return finish(call([&] {
                    return communicator().reduceScatter(tensor, members, dim,
                                                        kind);
                  }),
                  "reduce_scatter");
  }
  py::array allToAll(const py::handle &array, int64_t axis,
                     const Group &group) {
    Tensor tensor = toTensor(array, "all_to_all");
    int64_t dim = normalizeAxis(axis, tensor, "all_to_all");
    llvm::SmallVector<int64_t> members = groupOf(group, "all_to_all");
    return finish(call([&] {
                    return communicator().allToAll(tensor, members, dim, dim);
                  }),
                  "all_to_all");
  }

private:
  Communicator &communicator() {
    if (!state->alive)
      raiseError("this engine belongs to a device of a shardc.launch that "
                 "has returned; build engines inside the launched function");
    return *state->communicator;
  }
  /// Runs a communicator call without the GIL, so that the other devices'
  /// Python code runs meanwhile.
  template <typename Fn> std::invoke_result_t<Fn> call(Fn &&fn) {
    communicator(); // raises, which needs the GIL, if the launch returned
    py::gil_scoped_release release;
    return fn();
  }
  void check(mlir::LogicalResult status, const char *what) {
    if (mlir::failed(status))
      raiseError("device " + std::to_string(state->communicator->deviceId()) +
                     ": " + what + " failed (the launch reports why)",
                 state->communicator->deviceId());
  }
  template <typename T> void check(const mlir::FailureOr<T> &r, const char *w) {
    check(mlir::LogicalResult(r), w);
  }
  py::array finish(mlir::FailureOr<Tensor> result, const char *what) {
    check(result, what);
    return toArray(std::move(*result));
  }
  void checkPeer(int64_t peer, const char *what) {
    int64_t n = numDevices();
    if (peer < 0 || peer >= n)
      throw py::value_error(std::string(what) + ": device " +
                            std::to_string(peer) + " does not exist (there " +
                            "are " + std::to_string(n) + " devices)");
    if (peer == deviceId())
      throw py::value_error(std::string(what) + ": device " +
                            std::to_string(peer) + " is this device");
  }
  /// Every device, or `group` checked: existing devices, no repeats, this
  /// device among them (the communicator would fail the whole launch).
  llvm::SmallVector<int64_t> groupOf(const Group &group, const char *what) {
    if (!group)
      return communicator().everyDevice();
    int64_t n = numDevices(), self = deviceId();
    std::vector<bool> seen(n);
    bool member = false;
    for (int64_t d : *group) {
      if (d < 0 || d >= n || seen[d])
        throw py::value_error(std::string(what) + ": group " +
                              formatShape(*group) +
                              " must list distinct "
                              "devices of 0.." +
                              std::to_string(n - 1));
      seen[d] = true;
      member |= d == self;
    }
    if (!member)
      throw py::value_error(std::string(what) + ": group " +
                            formatShape(*group) +
                            " does not contain this "
                            "device (" +
                            std::to_string(self) + ")");
    return llvm::SmallVector<int64_t>(group->begin(), group->end());
  }
  static int64_t normalizeAxis(int64_t axis, const Tensor &t,
                               const char *what) {
    int64_t dim = axis < 0 ? axis + t.rank() : axis;
    if (dim < 0 || dim >= t.rank())
      throw py::value_error(std::string(what) + ": axis " +
                            std::to_string(axis) + " is out of range for " +
                            "an array of " + std::to_string(t.rank()) +
                            " dimensions");
    return dim;
  }
  static Reduction reduction(const std::string &op, const char *what) {
    std::optional<Reduction> kind = parseReduction(op);
    if (!kind)
      throw py::value_error(std::string(what) + ": op '" + op +
                            "' is not supported ('sum' and 'max' are)");
    return *kind;
  }

  std::shared_ptr<DeviceState> state;
};

/// The text Python prints for an exception, traceback included.
std::string formatException(py::error_already_set &error) {
  py::module_ traceback = py::module_::import("traceback");
  py::list lines = traceback.attr("format_exception")(
      error.type(), error.value(), error.trace());
  std::string text;
  for (py::handle line : lines)
    text += line.cast<std::string>();
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

/// "ValueError: message", the last line of formatException.
std::string describeException(py::error_already_set &error) {
  std::string type = error.type().attr("__name__").cast<std::string>();
  std::string message = py::str(error.value()).cast<std::string>();
  return message.empty() ? type : type + ": " + message;
}

py::list launchThreads(py::object fn, int64_t numDevices, double timeout) {
  if (numDevices < 1)
    throw py::value_error("launch: num_devices must be at least 1, got " +
                          std::to_string(numDevices));
  if (timeout < 0)
    throw py::value_error("launch: timeout must be >= 0 seconds");
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  DiagnosticCapture capture(context, sourceMgr);
  std::vector<py::object> results(numDevices);
  std::vector<py::object> errors(numDevices);
  std::vector<std::string> summaries(numDevices);
  std::atomic<int64_t> firstFailure{-1};
  ThreadsOptions options;
  options.timeoutSeconds = timeout;
  mlir::LogicalResult status = mlir::success();
  {
    py::gil_scoped_release release;
    status = runOnThreads(
        context, numDevices,
        [&](Communicator &communicator) -> mlir::LogicalResult {
          int64_t d = communicator.deviceId();
          py::gil_scoped_acquire acquire;
          CurrentDeviceScope scope(
              std::make_shared<DeviceState>(DeviceState{&communicator}));
          std::string failure;
          try {
            results[d] = fn();
            return mlir::success();
          } catch (py::error_already_set &error) {
            failure = formatException(error);
            summaries[d] = describeException(error);
            errors[d] = error.value();
          } catch (const std::exception &error) {
            failure = summaries[d] = error.what();
          } catch (...) {
            // Nothing may unwind into the runtime, built without exceptions.
            failure = summaries[d] = "unknown C++ exception";
          }
          int64_t none = -1;
          firstFailure.compare_exchange_strong(none, d);
          return mlir::emitError(mlir::UnknownLoc::get(&context)) << failure;
        },
        options);
  }
  if (mlir::succeeded(status)) {
    py::list list;
    for (py::object &r : results)
      list.append(std::move(r));
    return list;
  }
  int64_t first = firstFailure.load();
  if (first < 0)
    capture.raise("launch failed");
  std::string message = "device " + std::to_string(first) +
                        " failed: " + summaries[first] + "\n" + capture.text();
  py::module_ errorsModule = py::module_::import("shardc._errors");
  py::object type = errorsModule.attr("DeviceError");
  py::object error = type(message, first);
  if (errors[first])
    PyException_SetCause(error.ptr(), errors[first].release().ptr());
  PyErr_SetObject(type.ptr(), error.ptr());
  throw py::error_already_set();
}

/// Every rank's `value`, pickled and exchanged, in rank order.
py::list gatherFromEveryRank(MpiCommunicator &communicator,
                             const py::object &value) {
  py::module_ pickle = py::module_::import("pickle");
  std::string bytes = pickle.attr("dumps")(value).cast<std::string>();
  // i32 words (pickle.loads ignores what follows its STOP opcode, so the
  // padding is harmless); i1 would squash every byte to 0 or 1.
  int64_t words = (static_cast<int64_t>(bytes.size()) + 3) / 4;
  Tensor packed = llvm::cantFail(Tensor::allocate({words}, DType::I32));
  std::memcpy(packed.rawData(), bytes.data(), bytes.size());
  mlir::FailureOr<std::vector<Tensor>> all = [&] {
    py::gil_scoped_release release;
    return communicator.gatherFromEveryRank(std::move(packed));
  }();
  if (mlir::failed(all))
    raiseError("launch: exchanging the results of the ranks failed");
  py::list list;
  for (Tensor &t : *all)
    list.append(pickle.attr("loads")(
        py::bytes(reinterpret_cast<const char *>(t.rawData()), t.byteSize())));
  return list;
}

py::list launchMpi(py::object fn, int64_t numDevices, double timeout) {
  if (timeout < 0)
    throw py::value_error("launch: timeout must be >= 0 seconds");
  MpiEnvironment &job = joinMpiJob();
  checkMpiJobSize(job, numDevices, "launch(backend='mpi')");
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  DiagnosticCapture capture(context, sourceMgr);
  MpiCommunicatorOptions options;
  options.timeoutSeconds = timeout;
  mlir::FailureOr<std::unique_ptr<MpiCommunicator>> communicator;
  {
    py::gil_scoped_release release;
    communicator = MpiCommunicator::create(&context, options);
  }
  if (mlir::failed(communicator))
    capture.raise("launch: cannot set up the MPI communicator");
  py::object result;
  {
    CurrentDeviceScope scope(
        std::make_shared<DeviceState>(DeviceState{communicator->get()}));
    try {
      result = fn();
    } catch (py::error_already_set &error) {
      // The other ranks may be waiting for this one in a collective it will
      // never join: the mpi backend's policy is to report and end the job.
      std::string text = formatException(error);
      abortMpiJob("device " + std::to_string(job.rank()) +
                  " failed: " + describeException(error) + "\n" + text);
    }
  }
  return gatherFromEveryRank(**communicator, result);
}

} // namespace

void shardc::python::bindDevices(py::module_ &m) {
  py::class_<Future>(m, "Future",
                     "A send_async in flight: result() waits until the "
                     "array has been handed over.")
      .def("result", &Future::result, py::arg("timeout") = py::none())
      .def("done", &Future::done);

  py::class_<Device>(m, "Device", "ShardedEngine's primitives on one device.")
      .def_property_readonly("device_id", &Device::deviceId)
      .def_property_readonly("num_devices", &Device::numDevices)
      .def("barrier", &Device::barrier)
      .def("send", &Device::send, py::arg("dest_id"), py::arg("arr"))
      .def("receive", &Device::receive, py::arg("src_id"),
           py::arg("out") = py::none())
      .def("send_async", &Device::sendAsync, py::arg("src"), py::arg("dst"),
           py::arg("target_device_id"))
      .def("all_gather", &Device::allGather, py::arg("arr"),
           py::arg("axis") = 0, py::kw_only(), py::arg("group") = py::none())
      .def("all_reduce", &Device::allReduce, py::arg("arr"),
           py::arg("op") = "sum", py::kw_only(), py::arg("group") = py::none())
      .def("reduce_scatter", &Device::reduceScatter, py::arg("arr"),
           py::arg("axis") = 0, py::arg("op") = "sum", py::kw_only(),
           py::arg("group") = py::none())
      .def("all_to_all", &Device::allToAll, py::arg("arr"), py::arg("axis") = 0,
           py::kw_only(), py::arg("group") = py::none());

  m.def(
      "current_device",
      []() -> py::object {
        if (!currentDevice)
          return py::none();
        return py::cast(Device(currentDevice));
      },
      "The device of the calling thread inside shardc.launch, else None.");
  m.def("launch_threads", &launchThreads, py::arg("fn"), py::arg("num_devices"),
        py::arg("timeout") = 0.0);
  m.def("launch_mpi", &launchMpi, py::arg("fn"), py::arg("num_devices"),
        py::arg("timeout") = MpiCommunicatorOptions::kDefaultTimeoutSeconds);
  m.def("finalize_mpi", &finalizeMpiJob);
}
