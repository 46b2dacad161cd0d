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
  int launches = 2;     // back-to-back launches, fresh inputs each time
  uint64_t jitterSeed = 1; // 0: no random pauses
  int maxDelayUs = 20;
  int64_t timeoutMs = 20000;
  // Every rank in one launch (threads started and joined together), so the
  // plan's boundary syncs are skipped, as on one GPU.
  bool oneLaunch = false;
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
