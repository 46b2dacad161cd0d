// The SM datapath (SmDatapath.h): the aux words its kernels read after the
// executor's signal words (common/sm/aux.h: the error word's address, the
// wait timeout, one device), the error word they write, and the launch
// through the plan's CUDA entry.
#include "SmDatapath.h"

#include "common/sm/aux.h"

#include <cuda_runtime.h>

namespace purlin {
namespace rt {
namespace sm {
namespace {
namespace atoms = ::purlin::sm;

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
    if (!(v & atoms::kErrTimeout))
      return PURLIN_SUCCESS;
    msg = "a wait timed out on the device (rank " +
          std::to_string((v >> 8) & 0xfff) + ", lane " +
          std::to_string(v >> 20) +
          "): a peer never arrived; the communicator's collectives are "
          "unusable";
    return PURLIN_ERR_TIMEOUT;
  }

  purlinStatus launch(const purlin_collective_info &info, int plan,
                      const exec::Shared &S, int first, int n, int dtype,
                      int op, void *stream, std::string &msg) const override {
    const cudaError_t e = (cudaError_t)info.plans[plan].cuda_entry(
        &S, first, n, dtype, op, stream);
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
};
} // namespace

const RuntimeTarget &datapath() {
  static const SmDatapath kSm;
  return kSm;
}

} // namespace sm
} // namespace rt
} // namespace purlin
