// The SM datapath (SmDatapath.h): the aux words its kernels read after the
// executor's signal words (common/sm/aux.h: the error word's address, the
// wait timeout, one device), the error word they write, and the launch:
// through the plan's CUDA entry for the element types and ops built ahead
// of time, else of the kernels compiled at first use (Jit.h).
#include "SmDatapath.h"

#include "Jit.h"
#include "common/sm/aux.h"
#include "common/sm/launch.h"
#include "purlin/spec/DType.h"

#include <cuda_runtime.h>

#include <string>
#include <thread>

namespace purlin {
namespace rt {
namespace sm {
namespace {
namespace atoms = ::purlin::sm;

/// Whether (dtype, op)'s kernels are linked in: built ahead of time, or
/// every pair when the collective carries no source.
bool linkedIn(const purlin_collective_info &info, int dtype, int op) {
  return !info.source ||
         (((info.aot_dtypes >> dtype) & 1u) && ((info.aot_ops >> op) & 1u));
}

std::string pairText(int dtype, int op) {
  return std::string("the kernels for ") + dtypeName((DType)dtype) +
         (op == exec::kCopy ? ""
                            : std::string(" with ") + redOpName((RedOp)op));
}

/// The SM atoms' kernels compiled at first use: no dynamic shared memory.
int smLaunch(const void *kernel, const exec::Shared *S, int first, int n,
             void *stream, int threads, const void *slot, bool independent) {
  return atoms::launchPlan(kernel, S, first, n, stream, threads, slot, 0,
                           independent);
}

class SmDatapath final : public RuntimeTarget {
public:
  const char *name() const override { return "sm"; }

  bool hasEntry(const purlin_plan_info &p) const override {
    return p.cuda_entry != nullptr;
  }

  int auxWordCount() const override { return atoms::kAuxWords; }

  std::vector<uint64_t> auxWords(const CommInfo &comm) const override {
    static_assert(atoms::kAuxWords == 3, "aux.h's words, in order");
    return {comm.errorWord,
            comm.timeoutNs ? comm.timeoutNs : atoms::kDefaultTimeoutNs,
            comm.oneDevice ? 1ull : 0ull};
  }

  purlinStatus deviceError(uint32_t v, std::string &msg) const override {
    const uint32_t code = v & 0xff;
    if (code != atoms::kErrTimeout && code != atoms::kErrMismatch &&
        code != atoms::kErrNotRegistered)
      return PURLIN_SUCCESS;
    const std::string where = "(rank " + std::to_string((v >> 8) & 0xfff) +
                              ", lane " + std::to_string(v >> 20) + ")";
    if (code == atoms::kErrNotRegistered) {
      msg = "a CUDA graph ran a launch captured with buffers that were not "
            "registered yet " +
            where +
            ": it did nothing (its outputs are untouched); call "
            "purlinCommRegisterGraphBuffers on every rank after the capture, "
            "then replay";
      return PURLIN_ERR_NOT_REGISTERED;
    }
    if (code == atoms::kErrMismatch) {
      msg = "a peer called with other arguments than this rank " + where +
            " (count, element type, op, root, table entries, or staged "
            "buffers beside registered ones differ); the launch stopped "
            "before moving data between them; the communicator's "
            "collectives are unusable";
      return PURLIN_ERR_MISMATCH;
    }
    msg = "a wait timed out on the device " + where +
          ": a peer never arrived; the communicator's collectives are "
          "unusable";
    return PURLIN_ERR_TIMEOUT;
  }

  bool ready(const purlin_collective_info &info, int dtype,
             int op) const override {
    if (linkedIn(info, dtype, op))
      return true;
    for (int p = 0; p < info.nplans; ++p)
      if (!findJit(info, dtype, op, p) || !findJit(info, dtype, op, p, true))
        return false;
    return true;
  }

  purlinStatus prepare(const purlin_collective_info &info, int dtype, int op,
                       std::string &msg) const override {
    if (linkedIn(info, dtype, op) || getJitAll(info, dtype, op, msg))
      return PURLIN_SUCCESS;
    msg = pairText(dtype, op) + " of '" + info.name +
          "' were not built ahead of time, and compiling them failed: " + msg;
    return PURLIN_ERR_COMPILE;
  }

  purlinStatus launch(const purlin_collective_info &info, int plan,
                      const exec::Shared &S, int first, int n, int dtype,
                      int op, void *stream, std::string &msg) const override {
    return runPlan(info, plan, S, nullptr, first, n, dtype, op, stream, msg,
                   smLaunch);
  }

  size_t slotBytes() const override { return sizeof(atoms::SharedSlot); }

  void slotImage(const exec::Shared &S, bool ready,
                 void *out) const override {
    atoms::SharedSlot *slot = static_cast<atoms::SharedSlot *>(out);
    slot->ready = ready ? 1 : 0;
    slot->reserved = 0;
    slot->S = S;
  }

  purlinStatus launchSlot(const purlin_collective_info &info, int plan,
                          const exec::Shared &S, const void *slot, int first,
                          int n, int dtype, int op, void *stream,
                          std::string &msg) const override {
    return runPlan(info, plan, S, slot, first, n, dtype, op, stream, msg,
                   smLaunch);
  }
};
} // namespace

// The launch of the SM atoms' kernels (SmDatapath.h), shared with the
// datapaths built on them.
purlinStatus runPlan(const purlin_collective_info &info, int plan,
                   const exec::Shared &S, const void *slot, int first, int n,
                   int dtype, int op, void *stream, std::string &msg,
                   KernelLaunch jitLaunch) {
  cudaError_t e;
  if (linkedIn(info, dtype, op)) {
    e = (cudaError_t)info.plans[plan].cuda_entry(&S, first, n, dtype, op,
                                                 stream, slot);
  } else {
    const bool slotKind = slot != nullptr;
    const JitKernel *k = findJit(info, dtype, op, plan, slotKind);
    if (!k) {
      // Compiling and loading inside a graph capture would break it:
      // the application prepares the pair first (purlinCollPrepare).
      cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing((cudaStream_t)stream, &cs) != cudaSuccess ||
          cs != cudaStreamCaptureStatusNone) {
        cudaGetLastError();
        msg = pairText(dtype, op) + " of '" + info.name +
              "' were not built ahead of time nor compiled yet, and the "
              "stream is being captured: call purlinCollPrepare before the "
              "capture (or build them ahead of time: purlinc --aot)";
        return PURLIN_ERR_NOT_READY;
      }
      // The plan this launch runs, alone, and its kind alone: a first use
      // waits for one kernel's compile (purlinCollPrepare builds them all).
      // Where the ranks are not all in this launch (several processes or
      // GPUs), a graph captured later may launch the plan's slot kernel,
      // which cannot be compiled inside the capture: it is compiled now too,
      // beside the other (the wait is the longer of the two).
      std::thread other;
      if (!slotKind && !S.oneLaunch && !findJit(info, dtype, op, plan, true)) {
        int dev = 0;
        cudaGetDevice(&dev);
        other = std::thread([&info, dtype, op, plan, dev] {
          cudaSetDevice(dev);
          const JitKernel *sk = nullptr;
          std::string ignored; // a slot launch reports its own error
          getJit(info, dtype, op, plan, sk, ignored, true);
        });
      }
      const bool got = getJit(info, dtype, op, plan, k, msg, slotKind);
      if (other.joinable())
        other.join();
      if (!got) {
        msg = pairText(dtype, op) + " of '" + info.name +
              "' were not built ahead of time, and compiling plan '" +
              info.plans[plan].strategy + "' failed: " + msg;
        return PURLIN_ERR_COMPILE;
      }
    }
    const void *fn = slotKind ? k->slotFn : k->fn;
    if (!fn) { // an entry of the other kind: never launched empty
      msg = "internal: plan '" + std::string(info.plans[plan].strategy) +
            "' has no compiled " + (slotKind ? "slot " : "") + "kernel";
      return PURLIN_ERR_COMPILE;
    }
    e = (cudaError_t)jitLaunch(fn, &S, first, n,
                               stream,
                               atoms::laneThreads(k->threads, S.laneThreads),
                               slot, !k->innerSyncs && S.oneLaunch != 0);
  }
  if (e == cudaSuccess)
    return PURLIN_SUCCESS;
  cudaGetLastError(); // clear a non-sticky error
  msg = std::string(e == cudaErrorCooperativeLaunchTooLarge
                        ? "the ranks of one GPU do not fit on it at once "
                          "(fewer ranks or lanes): "
                        : "") +
        cudaGetErrorString(e);
  return PURLIN_ERR_CUDA;
}

const RuntimeTarget &datapath() {
  static const SmDatapath kSm;
  return kSm;
}

} // namespace sm
} // namespace rt
} // namespace purlin
