// The SM datapath: kernels of the SM atoms (atom-kernels/common/sm), for
// every GPU generation of the target table whose DATAPATH is "sm".
#pragma once

#include "purlin/runtime/Target.h"

namespace purlin {
namespace rt {
namespace sm {
const RuntimeTarget &datapath();
} // namespace sm
} // namespace rt
} // namespace purlin
