// The host target's runtime: runs a generated collective (compiled with
// --target=host) with ranks and lanes as host threads, and checks every
// rank's outputs bit for bit against the reference evaluator.
#pragma once

#include "purlin/runtime/Target.h"
#include "purlin/spec/Collective.h"
#include "purlin/spec/Entry.h"

#include <functional>
#include <string>
#include <vector>

namespace purlin {
namespace host {

struct RunOptions {
  std::string strategy; // empty: the plan the chooser picks for the call
  bool inplace = false; // each rank's first input aliases its first output
  // With inplace: at the same address (else where NCCL puts it: the smaller
  // buffer at rank * its size when R of them fit in the larger, else at 0).
  bool sameStart = false;
  // With inplace: the input and output (buffer names) that share an arena,
  // instead of the first input and the first output.
  std::string aliasIn, aliasOut;
  int launches = 2;     // back-to-back launches, fresh inputs each time
  uint64_t jitterSeed = 1; // 0: no random pauses
  int maxDelayUs = 20;
  int64_t timeoutMs = 20000;
  // Every rank in one launch (threads started and joined together), so the
  // plan's boundary syncs are skipped, as on one GPU.
  bool oneLaunch = false;
  // With oneLaunch: an unfused plan's epilogue in the plan's launch, not a
  // launch of its own (as the SM datapath runs kernels compiled at first
  // use), so its syncs after the first consume are run, not skipped.
  bool applyInLaunch = false;
  // Several launches only: each rank runs its launches one after the other
  // and the ranks run unordered, as GPUs' streams run them: rank r starts
  // launch e + 1 once its own lanes ended launch e, whatever its peers do
  // (default: every launch ends on every rank before the next starts, so
  // that no launch ever overlaps another).
  bool rankStreams = false;
  // runLaunches only, a negative check: each launch takes its own parity
  // stride (its layout's end, the rule of a scratch laid out for one call)
  // instead of the maximum binding's, so that the parity halves of
  // launches of other sizes may overlap.
  bool strideOfCall = false;
  // runLaunches only, with --launch-counts: each launch's areas (staging
  // slots, input copies, partial and received areas) at their places in
  // the maximum binding's layout (1), or where the launch's own sizes put
  // them (0, a negative check); -1: as purlinLaunch does, at the maxima
  // unless every rank runs in one launch (areasAtMaxima, runtime/core).
  int areasAtMaxima = -1;
};

struct RunResult {
  bool ok = false;
  // Not run, as the runtime refuses it (no plan proved right for the
  // call's overlap, tables beyond the executor's capacity): not a failure.
  bool refused = false;
  std::string plan;  // the strategy that ran
  std::string error; // why not ok
  int64_t mismatches = 0;
};

/// Runs the collective under binding `b` (R, counts, roots, tables, dtype,
/// op) and compares every output with referenceEvaluate. A binding that
/// differs from a value the collective was compiled with (BoundValues.h) is
/// an error naming that value; values bound at compile time that `b`
/// leaves out are taken as bound.
RunResult runAndCheck(const purlin_collective_info *info, const Binding &b,
                      const RunOptions &o);

/// Runs launches.size() launches back to back, launch k under launches[k]
/// (one rank count, type and op; the sizes their own), each checked as
/// runAndCheck checks it (random inputs each, poisoned outputs, inputs
/// intact). As the CUDA runtime runs calls of different sizes on one
/// instance: one plan runs them all (o.strategy, or the chooser's, which
/// must then pick the same plan for every launch: else an error names
/// the launches), on one scratch area (poisoned once, before the first
/// launch) and one signal array, the scratch laid out once at the
/// launches' maximum binding (each count its largest value, roots R - 1,
/// group sizes R, tables at their declared bound: purlinCollCreate's
/// maxima) by layoutAtMaxima, whose parity stride every launch takes. A
/// launch whose layout needs more than that is an error (purlinLaunch
/// refuses it). o.launches is not used.
RunResult runLaunches(const purlin_collective_info *info,
                      const std::vector<Binding> &launches,
                      const RunOptions &o);

/// The host datapath (registered by runAndCheck): plans compiled for the
/// host target, ranks and lanes as threads.
const rt::RuntimeTarget &datapath();

/// Runs jobs[0..n) at once, each on its own thread (they may wait on each
/// other), and returns when all have finished. The threads are kept for the
/// next launch (ThreadPool.cpp).
void runConcurrently(std::vector<std::function<void()>> &jobs);

/// The host model of the copy-engine datapath (registered by runAndCheck):
/// plans compiled for the "ce" target, their schedules played by one
/// thread per rank with memcpy and atomic flags (CeModel.cpp).
const rt::RuntimeTarget &ceModel();

/// The collective's description, parsed.
bool readInfo(const purlin_collective_info *info, Collective &c,
              std::string &error);

} // namespace host
} // namespace purlin
