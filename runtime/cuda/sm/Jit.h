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

/// One plan's kernel of a collective for one element type and op, of one
/// kind: the shared state as a parameter (`fn`), or read from a slot in
/// device memory (`slotFn`: common/sm/aux.h's SharedSlot, for CUDA graphs
/// whose buffers are registered after the capture). A first use compiles
/// the plan it launches alone (PURLIN_JIT_PLAN: the others' plan functions
/// are not instantiated) and the kind it launches alone (PURLIN_JIT_KERNELS:
/// each kind is half the compile; 5.5 s against 10.4 for a staged_ll
/// all_reduce on the 2-core CI machine), so its wait is one kernel's
/// compile, not the collective's; purlinCollPrepare compiles every plan of
/// both kinds at once, a thread each.
struct JitKernel {
  const void *fn = nullptr; // a cudaKernel_t, as launchPlan takes it (null
                            // in a slot kernel's entry)
  const void *slotFn = nullptr; // the slot kernel, the same way (null in a
                                // plain kernel's entry)
  int threads = 0;          // per lane: the kernel's launch bound
  bool innerSyncs = true;   // the plan waits inside a launch (target.cuh's
                            // purlin_jit_inner_syncs_NAME): its blocks must
                            // be resident at once even in one launch
};

/// Plan `plan`'s kernel of (info, dtype, op), the slot kind when `slot`,
/// when this process has it already, else null; never compiles.
const JitKernel *findJit(const purlin_collective_info &info, int dtype, int op,
                         int plan, bool slot = false);

/// Plan `plan`'s kernel of (info, dtype, op), the slot kind when `slot`:
/// from memory, else from the disk cache, else compiled now (seconds).
/// Once per process, pair, plan and kind; thread-safe, others compile in
/// parallel. False with `error` (NVRTC's log, or the CUDA error of
/// loading) when it cannot be had.
bool getJit(const purlin_collective_info &info, int dtype, int op, int plan,
            const JitKernel *&out, std::string &error, bool slot = false);

/// Every plan's kernels of (info, dtype, op), both kinds, those not had yet
/// compiled at once (a thread each). False with the first plan's error.
bool getJitAll(const purlin_collective_info &info, int dtype, int op,
               std::string &error);

/// The compute capability of the current device as sm_XY's number; false
/// with `error` (CUDA's) when it cannot be asked.
bool deviceArch(int &arch, std::string &error);

/// The NVRTC program of (info, dtype, op) compiled for sm_`arch` into PTX
/// (cubin false) or a cubin; no GPU needed. `plan` >= 0: that plan's kernel
/// alone (the others empty); `kernels` 1 or 2: the plain or the slot kernels
/// alone (3: both). For tests and tools.
bool compileProgram(const purlin_collective_info &info, int dtype, int op,
                    int arch, bool cubin, std::string &code,
                    std::string &error, int plan = -1, int kernels = 3);

/// The program's text: the prelude (the pair, the plan when `plan` >= 0,
/// the kinds of kernels unless `kernels` is 3, the target's atoms) and the
/// plans' code. "" with `error` when the collective cannot be compiled here.
std::string programText(const purlin_collective_info &info, int dtype, int op,
                        std::string &error, int plan = -1, int kernels = 3);

} // namespace sm
} // namespace rt
} // namespace purlin
