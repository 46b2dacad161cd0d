// The copy-engine datapath ("ce" in the target table): a plan's schedule
// (atom-kernels/ce: copies, token notifies and waits) played as DMA copies
// and stream memory operations on one stream per rank, with no kernel.
#pragma once

#include "purlin/runtime/Target.h"

namespace purlin {
namespace rt {
namespace ce {
const RuntimeTarget &datapath();
} // namespace ce
} // namespace rt
} // namespace purlin
