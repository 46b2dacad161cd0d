// A binding as the executor's launch parameters: what every runtime and
// the checker hand to the executor (Exec.h Params).
#pragma once

#include "purlin/spec/Collective.h"
#include "purlin/spec/Exec.h"

#include <string>

namespace purlin {

/// Fills `P` (scalars in declaration order, tables concatenated) from `b`.
/// Fails when a value is missing or does not fit the executor's limits.
bool fillParams(const Collective &c, const Binding &b, exec::Params &P,
                std::string &error);

} // namespace purlin
