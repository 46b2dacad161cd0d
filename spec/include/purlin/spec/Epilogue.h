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

/// Whether input `in` and output `out` (buffer indices) may share their
/// start on a rank whatever the plan: one clause's epilogue alone reads
/// `in` and stores `out`, neither is a clause's source or destination, the
/// epilogue stores `out` once, at the clause's destination index, and reads
/// `in` only at that index and never in a statement after that store. Each
/// element of `in` is then read only by the statements that store the same
/// element of `out`: by one thread (the rank that applies the epilogue for
/// that rank, its own in one-shot, the row's owner in the owned form),
/// stores in the last pass only (exec/Epilogue.h), after the element's
/// reads. all_reduce_rmsnorm's `res_out` over `res` (the residual updated
/// in place, as vLLM's fused_add_rms_norm does) is one. The runtime leaves
/// such pairs out of a call's overlap (classifyOverlap), so the call takes
/// the plans of a call out of place.
bool epilogueLocalPair(const Collective &c, int in, int out);
/// Every such pair of the first 8 buffers: bit in * 8 + out.
uint64_t epilogueLocalPairs(const Collective &c);
/// Clause `ci` through its epilogue, for every rank: reads `in` (the
/// inputs as given), stores into `out`. `unfused`: the chain of separate
/// kernels instead, each storing its result in the element type: the
/// received value and every `let` rounded to T (the comparison the tests
/// state a tolerance for).
bool evaluateEpilogue(const Collective &c, BoundCollective &bc, int ci,
                      const RankBuffers &in, RankBuffers &out, bool unfused,
                      std::string &error);

} // namespace purlin
