// The SM datapath: kernels of the SM atoms (atom-kernels/common/sm), for
// every GPU generation of the target table whose DATAPATH is "sm".
#pragma once

#include "purlin/runtime/Target.h"

namespace purlin {
namespace rt {
namespace sm {
const RuntimeTarget &datapath();

/// How a kernel compiled at first use is launched: common/sm/launch.h's
/// launchPlan, or another datapath's built on the SM atoms (tma/: with
/// dynamic shared memory); `independent`: no block waits for another
/// (launchPlan). Returns a cudaError_t.
using KernelLaunch = int (*)(const void *kernel, const exec::Shared *S,
                             int first, int n, void *stream, int threads,
                             const void *slot, bool independent);

/// Launches plan `plan` as the SM datapath does: its entry for the pairs
/// built ahead of time, else its kernel compiled at first use (Jit.h)
/// through `jitLaunch`; `slot` null: S by value, else the slot kernel.
/// For the datapaths whose kernels are the SM atoms' with other moves.
purlinStatus runPlan(const purlin_collective_info &info, int plan,
                     const exec::Shared &S, const void *slot, int first, int n,
                     int dtype, int op, void *stream, std::string &msg,
                     KernelLaunch jitLaunch);
} // namespace sm
} // namespace rt
} // namespace purlin
