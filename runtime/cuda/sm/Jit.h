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

/// One collective's kernels for one element type and op.
struct JitKernels {
  std::vector<const void *>
      plans;       // per plan: a cudaKernel_t, as launchPlan takes it
  int threads = 0; // per lane: the kernels' launch bound
};

/// The kernels of (info, dtype, op) when this process has them already,
/// else null; never compiles.
const JitKernels *findJit(const purlin_collective_info &info, int dtype,
                          int op);

/// The kernels of (info, dtype, op): from memory, else from the disk cache,
/// else compiled now (seconds). Once per process and pair; thread-safe,
/// other pairs compile in parallel. False with `error` (NVRTC's log, or the
/// CUDA error of loading) when they cannot be had.
bool getJit(const purlin_collective_info &info, int dtype, int op,
            const JitKernels *&out, std::string &error);

/// The NVRTC program of (info, dtype, op) compiled for sm_`arch` into PTX
/// (cubin false) or a cubin; no GPU needed. For tests and tools.
bool compileProgram(const purlin_collective_info &info, int dtype, int op,
                    int arch, bool cubin, std::string &code,
                    std::string &error);

/// The program's text: the prelude (the pair, the target's atoms) and the
/// plans' code. "" with `error` when the collective cannot be compiled here.
std::string programText(const purlin_collective_info &info, int dtype, int op,
                        std::string &error);

} // namespace sm
} // namespace rt
} // namespace purlin
