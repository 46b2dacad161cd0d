// The TMA bulk datapath (TmaDatapath.h). Its kernels are the SM atoms'
// (atom-kernels/tma/target.cuh derives its lane from them): the same aux
// words, error word, first-use compiles and slot launches, so all of that
// is the SM datapath's; what differs is the name the target table's rows
// give, and that every launch asks the lane's bulk stages as dynamic
// shared memory (atom-kernels/tma/launch.h: PURLIN_TMA_SMEM), the
// generated entries' as much as the kernels compiled at first use.
#include "TmaDatapath.h"

#include "sm/Jit.h"
#include "sm/SmDatapath.h"
#include "tma/launch.h"

#include <cuda_runtime.h>

#include <atomic>

namespace purlin {
namespace rt {
namespace tma {
namespace {
namespace atoms = ::purlin::tma;

/// A kernel compiled at first use, with its stages.
int tmaLaunch(const void *kernel, const exec::Shared *S, int first, int n,
              void *stream, int threads, const void *slot, bool independent) {
  return atoms::launchPlan(kernel, S, first, n, stream, threads, slot,
                           independent);
}

/// The bulk copies and mbarriers of the atoms are sm_90's: on an older GPU
/// the kernels built ahead of time have no image and a first-use compile
/// fails in NVRTC, so a launch (or a prepare) says why first. The
/// architecture is asked once per device (a launch's host time counts).
purlinStatus checkArch(const purlin_collective_info &info, std::string &msg) {
  static std::atomic<int> known[64]; // sm_XY's number, 0: not asked yet
  int dev = 0, arch = 0;
  const bool haveDev = cudaGetDevice(&dev) == cudaSuccess && dev >= 0 && dev < 64;
  if (haveDev && known[dev].load(std::memory_order_relaxed) >= 90)
    return PURLIN_SUCCESS;
  if (!sm::deviceArch(arch, msg))
    return PURLIN_ERR_CUDA;
  if (haveDev)
    known[dev].store(arch, std::memory_order_relaxed);
  if (arch >= 90)
    return PURLIN_SUCCESS;
  msg = std::string("collective '") + info.name + "' is compiled for " +
        (info.target ? info.target : "?") +
        ", the TMA bulk datapath (cp.async.bulk: sm_90 and later); this GPU "
        "is sm_" +
        std::to_string(arch) +
        ": compile it for an SM target of this GPU (purlinc --target=sm_" +
        std::to_string(arch) + ")";
  return PURLIN_ERR_BAD_COLLECTIVE;
}

class TmaDatapath final : public RuntimeTarget {
public:
  const char *name() const override { return "tma"; }

  bool hasEntry(const purlin_plan_info &p) const override {
    return sm().hasEntry(p);
  }
  int auxWordCount() const override { return sm().auxWordCount(); }
  std::vector<uint64_t> auxWords(const CommInfo &comm) const override {
    return sm().auxWords(comm);
  }
  purlinStatus deviceError(uint32_t v, std::string &msg) const override {
    return sm().deviceError(v, msg);
  }
  bool ready(const purlin_collective_info &info, int dtype,
             int op) const override {
    return sm().ready(info, dtype, op);
  }
  purlinStatus prepare(const purlin_collective_info &info, int dtype, int op,
                       std::string &msg) const override {
    if (purlinStatus st = checkArch(info, msg))
      return st;
    return sm().prepare(info, dtype, op, msg);
  }

  purlinStatus launch(const purlin_collective_info &info, int plan,
                      const exec::Shared &S, int first, int n, int dtype,
                      int op, void *stream, std::string &msg) const override {
    if (purlinStatus st = checkArch(info, msg))
      return st;
    return sm::runPlan(info, plan, S, nullptr, first, n, dtype, op, stream, msg,
                       tmaLaunch);
  }

  size_t slotBytes() const override { return sm().slotBytes(); }
  void slotImage(const exec::Shared &S, bool ready,
                 void *out) const override {
    sm().slotImage(S, ready, out);
  }
  purlinStatus launchSlot(const purlin_collective_info &info, int plan,
                          const exec::Shared &S, const void *slot, int first,
                          int n, int dtype, int op, void *stream,
                          std::string &msg) const override {
    if (purlinStatus st = checkArch(info, msg))
      return st;
    return sm::runPlan(info, plan, S, slot, first, n, dtype, op, stream, msg,
                       tmaLaunch);
  }

private:
  static const RuntimeTarget &sm() { return ::purlin::rt::sm::datapath(); }
};
} // namespace

const RuntimeTarget &datapath() {
  static const TmaDatapath kTma;
  return kTma;
}

} // namespace tma
} // namespace rt
} // namespace purlin
