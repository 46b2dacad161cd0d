// The TMA bulk datapath ("tma" in the target table: sm_90_tma): kernels of
// the SM atoms whose large contiguous moves go by cp.async.bulk through
// shared memory (atom-kernels/tma), launched with that shared memory.
#pragma once

#include "purlin/runtime/Target.h"

namespace purlin {
namespace rt {
namespace tma {
const RuntimeTarget &datapath();
} // namespace tma
} // namespace rt
} // namespace purlin
