// First-use compilation on the SM datapath. A generated collective links in
// the kernels of the element types and ops purlinc built ahead of time
// (purlin_collective_info::aot_dtypes, aot_ops); for another pair the
// runtime compiles the plans' code (info.source) with NVRTC against the
// atoms of the collective's target row, for the current GPU's
// architecture, and loads the cubin (cudaLibraryLoadData). Cubins are
// cached on disk, keyed by a hash of everything that went into them
// (DiskCache.h), and in memory for the process.
#pragma once

#include "purlin/spec/Entry.h"

#include <string>
#include <vector>

namespace purlin {
namespace rt {
namespace sm {

/// One plan's kernel of a collective for one element type and op. A first
/// use compiles the plan it launches alone (PURLIN_JIT_PLAN: the others'
/// plan functions are not instantiated), so its wait is one plan's compile,
/// not the collective's; purlinCollPrepare compiles every plan at once, a
/// thread each.
struct JitKernel {
  const void *fn = nullptr; // a cudaKernel_t, as launchPlan takes it
  const void *slotFn = nullptr; // its slot kernel (common/sm/aux.h's
                                // SharedSlot), the same way
  int threads = 0;          // per lane: the kernel's launch bound
  bool innerSyncs = true;   // the plan waits inside a launch (target.cuh's
                            // purlin_jit_inner_syncs_NAME): its blocks must
                            // be resident at once even in one launch
};

/// Plan `plan`'s kernel of (info, dtype, op) when this process has it
/// already, else null; never compiles.
const JitKernel *findJit(const purlin_collective_info &info, int dtype, int op,
                         int plan);

/// Plan `plan`'s kernel of (info, dtype, op): from memory, else from the
/// disk cache, else compiled now (seconds). Once per process, pair and plan;
/// thread-safe, others compile in parallel. False with `error` (NVRTC's log,
/// or the CUDA error of loading) when it cannot be had.
bool getJit(const purlin_collective_info &info, int dtype, int op, int plan,
            const JitKernel *&out, std::string &error);

/// Every plan's kernel of (info, dtype, op), those not had yet compiled at
/// once (a thread each). False with the first plan's error.
bool getJitAll(const purlin_collective_info &info, int dtype, int op,
               std::string &error);

/// The compute capability of the current device as sm_XY's number; false
/// with `error` (CUDA's) when it cannot be asked.
bool deviceArch(int &arch, std::string &error);

/// The NVRTC program of (info, dtype, op) compiled for sm_`arch` into PTX
/// (cubin false) or a cubin; no GPU needed. `plan` >= 0: that plan's kernel
/// alone (the others empty). For tests and tools.
bool compileProgram(const purlin_collective_info &info, int dtype, int op,
                    int arch, bool cubin, std::string &code,
                    std::string &error, int plan = -1);

/// The program's text: the prelude (the pair, the plan when `plan` >= 0,
/// the target's atoms) and the plans' code. "" with `error` when the
/// collective cannot be compiled here.
std::string programText(const purlin_collective_info &info, int dtype, int op,
                        std::string &error, int plan = -1);

} // namespace sm
} // namespace rt
} // namespace purlin
