// What every runtime (host threads, CUDA) does before it launches a plan of
// a generated collective: read its description, bind parameters into the
// executor's Params, choose the plan for the call. MLIR-free.
#pragma once

#include "purlin/spec/Entry.h"
#include "purlin/spec/Exec.h"
#include "purlin/spec/Collective.h"
#include "purlin/spec/Epilogue.h"
#include "purlin/spec/Params.h"

#include <string>

namespace purlin {

/// Bytes of the largest buffer of one rank under `b` (each in its own
/// element type, bufferDType): the size the chooser bands refer to.
int64_t callBytes(const Collective &c, const Binding &b);

/// How a call's outputs overlap its inputs: not at all, each output at the
/// address of an input of its element type, or otherwise.
enum class InPlace { No, SameStart, Any };

/// The overlap of a call whose rank r has buffer i at bufs[r * nb + i],
/// elems[i] elements of elemSizes[i] bytes each (nb: c.buffers.size()).
/// `localPairs` (epilogueLocalPairs(c), spec/Epilogue.h: bit in * 8 + out):
/// pairs that share their start and size harm no plan, so they are no
/// overlap (all_reduce_rmsnorm's residual updated in place).
InPlace classifyOverlap(const Collective &c, void *const *bufs, int R,
                        const int64_t *elems, const int *elemSizes,
                        uint64_t localPairs = 0);

/// Whether the checker proved plan `p` right for a call of `ranks` ranks
/// with that overlap (inplace_safe, or inplace_same at the same address;
/// in place only up to inplace_max_ranks, the proofs' reach).
bool provedInPlace(const purlin_plan_info &p, InPlace inplace, int ranks);

/// The plan for a call of `ranks` ranks: `strategy` when given (empty:
/// any), else the first plan whose band holds `bytes`. In place, only plans
/// proved right for that overlap and rank count (provedInPlace), those that
/// read the inputs where they are (no copy) first: the band's, then any;
/// then the band's that copy, then any. A plan for several launches only
/// (several_launches) is left out unless `severalLaunches` (the call's
/// ranks run in more than one launch) or `strategy` names it, and outside
/// its band is taken only when nothing else is allowed. -1 when none fits.
///
/// bandFirst (a collective with an epilogue, hasEpilogue): in place, the
/// band's plan that copies its inputs comes before another band's plan
/// that does not. The rule above suits all_reduce, whose two-shot in place
/// beats direct_copy at every size; with an epilogue, a two-shot (fused or
/// unfused) takes 3-4x a one-shot's time at a few rows (its owners cut
/// rows, most lanes idle: docs/performance.md, twentieth session).
///
/// `rows`: the call's epilogue rows (epilogueRows). A plan whose rows band
/// holds them (purlin_plan_info::max_rows != 0) comes first, before the
/// byte bands (still only where it is proved right for the overlap and
/// reads the inputs where they are).
struct EpiRows {
  int64_t rows = -1; // -1: no epilogue (no rows band holds the call)
  int64_t elems = 0; // a row's elements
};
int choosePlan(const purlin_collective_info *info, int64_t bytes,
               InPlace inplace, int ranks, const std::string &strategy = "",
               bool severalLaunches = false, bool bandFirst = false,
               EpiRows rows = EpiRows());

/// The epilogue rows of a call under `b`: of the clause with the widest
/// row (the most rows among equals), its rows and a row's elements, as the
/// generated code cuts them (exec::rowShape: the epilogue's row
/// coordinates against the rest). rows -1 when no clause has an epilogue
/// or an extent cannot be evaluated.
EpiRows epilogueRows(const Collective &c, const Binding &b);

/// Whether plan `p`'s rows band holds a call of those rows (with that
/// overlap: in place, up to max_rows_in_place where it is set).
bool inRowsBand(const purlin_plan_info &p, EpiRows rows, InPlace inplace = InPlace::No);

/// Whether some clause of `c` has an epilogue (choosePlan's bandFirst).
bool hasEpilogue(const Collective &c);

/// What a runtime that keeps one scratch area for calls of every size (the
/// CUDA runtime's purlinCollCreate) lays out for plan `pl` at the maximum
/// values in `S` (S.R and S.P set): the layout at 8-byte elements, the
/// widest, so that every element type fits. Returns the bytes of scratch,
/// rounded up to 16; `parityStride` gets where half 1 of the plan's parity
/// areas lies at those values (exec::Shared::parityStride, 0 without
/// parity areas), the stride every launch of the plan then takes, so that
/// no call's half 1 overlaps another call's half 0 (exec::layoutEnd).
int64_t layoutAtMaxima(const purlin_plan_info &pl, exec::Shared S,
                       int64_t &parityStride);

/// Whether a launch laid out in `S` (after the plan's layout) moves nothing
/// and must not run: a plan staged by launch parity (S.parityAreas) whose
/// staging slots are all empty at this call (every box empty; such a plan
/// has no other area). Run, its lanes would bump their epochs and read no
/// line of any peer, and that breaks the order the parity halves rely on
/// (docs/snac.md): a writer's launch e + 2, which writes the half of launch
/// e again, follows the destination's launch e only through the lines of
/// launch e + 1 that the writer reads from it. After an empty e + 1 it
/// would overwrite lines of launch e that the destination has not read
/// yet (whose wait then never ends). Skipped on every rank alike (the
/// call's arguments are every rank's), the epochs stay in step.
bool emptyParityLaunch(const exec::Shared &S);

/// Whether a launch laid out in `S` (after the plan's layout) would break
/// the same order where the ranks' launches are not ordered (several GPUs
/// or processes): a plan staged by launch parity whose call moves lines of
/// some clause while a clause staged by parity (Shared::parityClauses) that
/// has staging slots at the maximum binding `maxP` moves nothing at this
/// call (a clause whose extent is count C, empty at C = 0, beside one of R
/// names that is not). An idle clause that keeps its `free` round is not
/// counted: that round's barriers guard its own slots. The idle parity
/// clause's next launch writes the half of the launch before this one, and
/// only this launch's lines of that clause (none) would have ordered it
/// after the destination's reads: a rank two launches ahead overwrote lines
/// a slower peer had not read, and both waited for ever (found on the host
/// with --rank-streams under load, nineteenth session). Such a call is
/// refused (PURLIN_ERR_NO_PLAN) on every rank alike, rather than hang.
bool partialParityLaunch(const purlin_plan_info &pl, const exec::Params &maxP,
                         const exec::Shared &S);

/// The binding a plan chosen only below `maxBytes` (the low-latency band,
/// several_launches) is laid out at, instead of the instance's maximum
/// `maxB`: every count of maxB scaled down by one factor, the largest at
/// which a call of the smallest element type (1 byte) has its largest
/// buffer below maxBytes. Every call the band takes (fewer bytes, any
/// type) then fits where all counts grow together, as in collectives of
/// one count; a call of another shape may not (purlinLaunch then runs it
/// on the plans with barriers). The other parameters keep maxB's values.
/// False (out unset): a collective with tables (their entries are not
/// scaled), no count, or one that maxB already keeps below maxBytes.
bool bandBinding(const Collective &c, const Binding &maxB, int64_t maxBytes,
                 Binding &out);

/// What becomes of a call laid out in `S` for plan `pl` where the ranks'
/// launches are not ordered (several GPUs or processes): kRun as chosen;
/// kBarriers where the chooser took pl for its low-latency band
/// (several_launches) and partialParityLaunch flags the call, which the
/// plans with barriers then run instead (choosePlan without several
/// launches: a barrier plan's call orders the ranks, so the parity plan's
/// next launch follows it safely); kRefuse where such a plan is the
/// collective's only kind (built with --strategy=staged_ll, say). Every
/// rank decides alike: the call's arguments are every rank's.
enum class Unordered { kRun, kBarriers, kRefuse };
Unordered unorderedCall(const purlin_plan_info &pl, const exec::Params &maxP,
                        const exec::Shared &S);

/// Moves a launch's areas (S after the plan's layout: input copies, staging
/// slots, partial and received areas) to their places in the plan's layout
/// at the maximum values `maxP` (the same ranks, lanes and element size).
/// Where ranks' launches are not ordered (several GPUs or processes),
/// calls of other sizes must find every area where the call before put
/// it: a plan's `free` rounds order a writer's next call only after the
/// areas of the clauses it pushed to, and at other sizes another clause's
/// area of the call before may lie under them (a destination still
/// reading it got other data, or a lost flag). At one place per area the
/// calls are as calls of one size, which the checker proves. Returns false,
/// S untouched, where one of this launch's staging slots is larger than at
/// the maximum values (the maximum binding is not one).
bool areasAtMaxima(const purlin_plan_info &pl, const exec::Params &maxP,
                   exec::Shared &S);

} // namespace purlin
