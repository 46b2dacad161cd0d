// The per-call work of the eager standard calls in C++ (issue 15): the
// checks of every rank's tensor, their addresses in the C API's order, the
// stream, and the call of purlinLaunch, in one C call from Python, where
// the Python path (cuda.py: run_standard, _addresses) spent ~7 us on eight
// tensors before the launch. _fastpath.py builds this file at first use
// with torch.utils.cpp_extension into purlin's cache.
//
// It knows nothing of the runtime: no purlin header, no link to
// libpurlin_cuda.so. Python hands over, once per call's constants, the
// address of purlinLaunch (ctypes), of the collective instance, of the
// purlinArgs the launcher built, and of the buffer and stream arrays that
// purlinArgs points at; a call writes those arrays and calls the function.
// No CUDA header either: the current stream comes through c10's device
// guard interface (what at::cuda::getCurrentCUDAStream does underneath),
// so a C++ compiler and torch's headers are all a build needs.
//
// A call never raises for a bad argument: at the first doubt it returns
// kDoubt and Python reruns its own checks, which raise the exact error
// (cuda.py: _check_tensors) or launch what C++ would not take (a subclass
// of torch.Tensor).
#include <Python.h>

#include <c10/core/Device.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <exception>
#include <string>
#include <vector>

namespace {

using LaunchFn = int (*)(void* coll, void* args);
constexpr int kDoubt = -1;
constexpr const char* kCapsule = "purlin._fastpath.Call";

// One standard call's constants (cuda.py's _StdCall with its launcher).
struct Call {
  LaunchFn launch;
  void* coll;
  void* args;      // the launcher's purlinArgs (its buffers, streams: below)
  void** ptrs;     // purlinArgs.buffers: [rank * 2 + buffer]
  void** stream;   // purlinArgs.streams[0]
  at::ScalarType dtype;
  c10::DeviceType devType;
  c10::DeviceIndex devIndex;
  Py_ssize_t nranks;
  int64_t nx, ny;  // elements of each input, of each output
  // Indices into the addresses gathered (the inputs', then the outputs'
  // unless in place), in the C API's order; [inplace].
  std::vector<int> order[2];
  // The device's current stream, read at each call; null: fixedStream
  // (a device type without streams, as the CPU tests use).
  const c10::impl::DeviceGuardImplInterface* guard = nullptr;
  void* fixedStream = nullptr;
  // Scratch, reused: a call runs with the GIL held from start to end.
  std::vector<void*> gathered;
  std::vector<c10::TensorImpl*> impls;
};

// Appends the address and TensorImpl of each tensor of seq while it is a
// list or tuple of nranks objects each exactly a torch.Tensor, strided, of
// the call's dtype, on its device, contiguous, of n elements:
// run_standard's quick pass (_addresses) with the list checks before it.
// (A torch.Tensor object always holds a defined tensor: Python's undefined
// tensor is None, which the class check refuses.)
bool gather(Call& c, PyObject* seq, int64_t n) {
  if (!PyList_Check(seq) && !PyTuple_Check(seq))
    return false;
  if (PySequence_Fast_GET_SIZE(seq) != c.nranks)
    return false;
  PyObject** items = PySequence_Fast_ITEMS(seq);
  auto* tensorType = reinterpret_cast<PyTypeObject*>(THPVariableClass);
  for (Py_ssize_t i = 0; i < c.nranks; ++i) {
    PyObject* o = items[i];
    // Exactly torch.Tensor: a subclass may override what Python reads.
    if (Py_TYPE(o) != tensorType)
      return false;
    const at::Tensor& t = THPVariable_Unpack(o);
    if (t.layout() != c10::kStrided || t.scalar_type() != c.dtype)
      return false;
    c10::Device d = t.device();
    if (d.type() != c.devType || d.index() != c.devIndex)
      return false;
    if (!t.is_contiguous() || t.numel() != n)
      return false;
    c.gathered.push_back(t.data_ptr());
    c.impls.push_back(t.unsafeGetTensorImpl());
  }
  return true;
}

int runCall(Call& c, PyObject* xs, PyObject* ys, bool bump) {
  c.gathered.clear();
  c.impls.clear();
  const bool inplace = xs == ys;
  if (!gather(c, xs, c.nx) || (!inplace && !gather(c, ys, c.ny)))
    return kDoubt;
  void* stream = c.fixedStream;
  if (c.guard)
    stream = c.guard->getStreamNativeHandle(
        c.guard->getStream(c10::Device(c.devType, c.devIndex)));
  const std::vector<int>& order = c.order[inplace];
  for (size_t i = 0; i < order.size(); ++i)
    c.ptrs[i] = c.gathered[order[i]];
  *c.stream = stream;
  // What the torch op kernels did first (torch._C._increment_version): the
  // version counters of the tensors written (the outputs; in place, the
  // inputs) bumped, as an in-place op does, so that autograd sees them
  // written. Inference tensors have none and are left alone, as there.
  if (bump)
    for (size_t i = inplace ? 0 : c.nranks; i < c.impls.size(); ++i)
      if (c.impls[i]->version_counter().enabled())
        c.impls[i]->bump_version();
  // With the GIL held: the buffers written above are the launcher's, shared
  // by every thread's call, and purlinLaunch only enqueues (microseconds).
  return c.launch(c.coll, c.args);
}

// run(call, xs, ys, bump) -> the status of purlinLaunch (0: launched), or
// -1: not launched, the Python path is to check (and raise) or launch.
PyObject* run(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_SetString(PyExc_TypeError, "run(call, xs, ys, bump)");
    return nullptr;
  }
  auto* c = static_cast<Call*>(PyCapsule_GetPointer(args[0], kCapsule));
  if (!c)
    return nullptr;
  int st = kDoubt;
  try {
    st = runCall(*c, args[1], args[2], args[3] == Py_True);
  } catch (const std::exception&) {
    // data_ptr() of a tensor without storage, a stream getter that fails:
    // the Python path raises torch's error itself.
    st = kDoubt;
  }
  return PyLong_FromLong(st);
}

void freeCall(PyObject* capsule) {
  delete static_cast<Call*>(PyCapsule_GetPointer(capsule, kCapsule));
}

bool readOrder(PyObject* seq, Py_ssize_t bound, std::vector<int>& out) {
  PyObject* fast = PySequence_Fast(seq, "an order is a sequence of ints");
  if (!fast)
    return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  for (Py_ssize_t i = 0; i < n; ++i) {
    long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
    if (v == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
    if (v < 0 || v >= bound) {
      Py_DECREF(fast);
      PyErr_Format(PyExc_ValueError, "order index %ld outside [0, %zd)", v, bound);
      return false;
    }
    out.push_back(static_cast<int>(v));
  }
  Py_DECREF(fast);
  return true;
}

// make(launch, coll, args, ptrs, stream, dtype, device_type, device_index,
//      nranks, nx, ny, order_inplace, order_out_of_place, fixed_stream)
//   -> a capsule for run(). Addresses as ints; fixed_stream None: the
// device's current stream at each call.
PyObject* make(PyObject*, PyObject* a) {
  unsigned long long launch, coll, args, ptrs, stream;
  PyObject *dtype, *orderIn, *orderOut, *fixed;
  const char* devType;
  int devIndex;
  Py_ssize_t nranks;
  long long nx, ny;
  if (!PyArg_ParseTuple(a, "KKKKKOsinLLOOO", &launch, &coll, &args, &ptrs, &stream,
                        &dtype, &devType, &devIndex, &nranks, &nx, &ny, &orderIn,
                        &orderOut, &fixed))
    return nullptr;
  if (!THPDtype_Check(dtype)) {
    PyErr_SetString(PyExc_TypeError, "dtype: a torch.dtype");
    return nullptr;
  }
  if (!launch || !args || !ptrs || !stream || nranks < 1) {
    PyErr_SetString(PyExc_ValueError, "a null address or no rank");
    return nullptr;
  }
  auto* c = new Call();
  c->launch = reinterpret_cast<LaunchFn>(static_cast<uintptr_t>(launch));
  c->coll = reinterpret_cast<void*>(static_cast<uintptr_t>(coll));
  c->args = reinterpret_cast<void*>(static_cast<uintptr_t>(args));
  c->ptrs = reinterpret_cast<void**>(static_cast<uintptr_t>(ptrs));
  c->stream = reinterpret_cast<void**>(static_cast<uintptr_t>(stream));
  c->dtype = reinterpret_cast<THPDtype*>(dtype)->scalar_type;
  c->devIndex = static_cast<c10::DeviceIndex>(devIndex);
  c->nranks = nranks;
  c->nx = nx;
  c->ny = ny;
  try {
    c->devType = c10::Device(std::string(devType)).type();
    if (fixed == Py_None)
      c->guard = c10::impl::getDeviceGuardImpl(c->devType);
  } catch (const std::exception& e) {
    delete c;
    PyErr_SetString(PyExc_ValueError, e.what());
    return nullptr;
  }
  if (fixed != Py_None) {
    c->fixedStream = PyLong_AsVoidPtr(fixed);
    if (PyErr_Occurred()) {
      delete c;
      return nullptr;
    }
  }
  if (!readOrder(orderIn, nranks, c->order[1]) ||
      !readOrder(orderOut, 2 * nranks, c->order[0])) {
    delete c;
    return nullptr;
  }
  if (c->order[0].size() != c->order[1].size()) {
    delete c;
    PyErr_SetString(PyExc_ValueError, "the two orders differ in length");
    return nullptr;
  }
  c->gathered.reserve(2 * nranks);
  c->impls.reserve(2 * nranks);
  PyObject* capsule = PyCapsule_New(c, kCapsule, freeCall);
  if (!capsule)
    delete c;
  return capsule;
}

PyMethodDef methods[] = {
    {"run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(run)),
     METH_FASTCALL, "run(call, xs, ys, bump) -> status, or -1: to the Python path"},
    {"make", make, METH_VARARGS, "make(...) -> a call's constants, for run()"},
    {nullptr, nullptr, 0, nullptr}};

#define PURLIN_STR2(x) #x
#define PURLIN_STR(x) PURLIN_STR2(x)

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT, PURLIN_STR(TORCH_EXTENSION_NAME),
                         "purlin's eager fast path (python/purlin/_fastpath.cpp)", -1,
                         methods};

} // namespace

#define PURLIN_CAT2(a, b) a##b
#define PURLIN_CAT(a, b) PURLIN_CAT2(a, b)

// torch.utils.cpp_extension.load names the module (TORCH_EXTENSION_NAME).
PyMODINIT_FUNC PURLIN_CAT(PyInit_, TORCH_EXTENSION_NAME)(void) {
  return PyModule_Create(&moduleDef);
}
