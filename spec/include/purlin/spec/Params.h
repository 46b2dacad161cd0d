// A binding as the executor's launch parameters: what every runtime and
// the checker hand to the executor (Exec.h Params).
#pragma once

#include "purlin/spec/Collective.h"
#include "purlin/spec/Entry.h"
#include "purlin/spec/Exec.h"

#include <string>

namespace purlin {

/// The launch state of plan `plan` for a binding `b` of `c` on R ranks of
/// `elemSize`-byte elements: lanes, chunks, op, signals and parameters
/// (fillParams); buffers, scratch, signal memory and oneLaunch are the
/// caller's. False with `error` as fillParams.
bool planShared(const Collective &c, const Binding &b,
                const purlin_plan_info &plan, int R, int elemSize,
                exec::Shared &S, std::string &error);

/// Shared::liveLanes for a launch of `plan` with S's parameters, lanes and
/// chunks: min(L, ceil(rows / K)), at least 1, where the plan's lanes share
/// only its epilogue's rows (purlin_plan_info::rows); 0 (all L) otherwise.
int liveLanes(const purlin_plan_info &plan, const exec::Shared &S);

/// Fills `P` (scalars in declaration order, tables concatenated) from `b`.
/// Fails when a value is missing or does not fit the executor's limits.
bool fillParams(const Collective &c, const Binding &b, exec::Params &P,
                std::string &error);

/// The entries of every table under the scalars of `b`; -1 with `error`
/// when an extent does not evaluate.
int64_t tableEntries(const Collective &c, const Binding &b,
                     std::string &error);

/// The largest rank count, up to exec::kMaxRanks, at which the tables fit
/// the executor's exec::kMaxTableWords entries when their extents depend on
/// the rank count alone (all_to_all_v's cnt[R][R]: 9); kMaxRanks when they
/// always fit or their size depends on other parameters too. `why` says
/// what limits it ("table cnt[R][R] has R*R entries").
int maxRanksForTables(const Collective &c, std::string &why);

} // namespace purlin
