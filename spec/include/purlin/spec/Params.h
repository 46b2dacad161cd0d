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
