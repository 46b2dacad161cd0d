// Test hooks of the CUDA runtime (not part of the public API).
#pragma once

#include "purlin/purlin.h"

namespace purlin {
namespace rt {
/// Advances rank `rank`'s lane epochs of plan `plan` by `by`, so that its
/// waits expect notifications its peers never send: a stuck peer, for the
/// timeout test.
purlinStatus testAdvanceEpoch(purlinColl_t coll, int plan, int rank,
                              uint64_t by);
} // namespace rt
} // namespace purlin
