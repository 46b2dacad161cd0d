// What every runtime (host threads, CUDA) does before it launches a plan of
// a generated collective: read its description, bind parameters into the
// executor's Params, choose the plan for the call. MLIR-free.
#pragma once

#include "common/entry.h"
#include "common/exec.h"
#include "purlin/core/Collective.h"

#include <string>

namespace purlin {

/// Fills `P` (scalars in declaration order, tables concatenated) from `b`.
/// Fails when a value is missing or does not fit the executor's limits.
bool fillParams(const Collective &c, const Binding &b, exec::Params &P,
                std::string &error);

/// Bytes of the largest buffer of one rank under `b`: the size the chooser
/// bands refer to.
int64_t callBytes(const Collective &c, const Binding &b);

/// The plan for a call: `strategy` when given (empty: any), else the first
/// plan whose band holds `bytes`; in place, only plans the checker proved
/// in-place safe (the band's first, or else any). Returns -1 when none fits.
int choosePlan(const purlin_collective_info *info, int64_t bytes, bool inplace,
               const std::string &strategy = "");

} // namespace purlin
