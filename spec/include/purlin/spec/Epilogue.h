// Epilogues of reduce clauses (Collective.h, Epilogue): their rules and
// their meaning for the reference evaluator (docs/language.md,
// "Epilogues").
#pragma once

#include "purlin/spec/Collective.h"
#include "purlin/spec/Reference.h"

namespace purlin {

/// The rules of clause `cl`'s epilogue (none: true). Part of
/// checkStructure; appends a Diag per violation.
bool checkEpilogue(const Collective &c, const Clause &cl,
                   std::vector<Diag> &diags);
/// Whether the epilogue of `cl` reads, or stores, buffer `buffer`.
bool epilogueReads(const Clause &cl, const std::string &buffer);
bool epilogueStores(const Clause &cl, const std::string &buffer);

/// Clause `ci` through its epilogue, for every rank: reads `in` (the
/// inputs as given), stores into `out`. `unfused`: the chain of separate
/// kernels instead, each storing its result in the element type: the
/// received value and every `let` rounded to T (the comparison the tests
/// state a tolerance for).
bool evaluateEpilogue(const Collective &c, BoundCollective &bc, int ci,
                      const RankBuffers &in, RankBuffers &out, bool unfused,
                      std::string &error);

} // namespace purlin
