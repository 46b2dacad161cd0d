// SNAC in the compiler: inference of plans from a collective, the checker
// that proves them, and their lowering to a target's C++ (the plain plan
// itself and its vocabulary are the spec's: purlin/spec/Plan.h). MLIR-free.
#pragma once

#include "purlin/spec/Plan.h"

#include <string>
#include <vector>

namespace purlin {

/// Strategies SNAC inference knows:
///  direct      one-shot: inputs exposed, each destination reads and
///              combines all contributions of its names;
///  direct_copy one-shot reading scratch copies of the inputs (in-place safe);
///  two_shot    reductions: rank r reduces part r of every name from all
///              contributors and writes it to every destination;
///  two_shot_copy  the same from scratch copies (in-place safe);
///  staged      contributors push their names into the destinations'
///              staging slots chunk by chunk (pipelined), destinations
///              combine from staging (in-place safe);
///  staged_ll   the same with flagged lines (the low-latency protocol:
///              the flag travels with the data, no data barrier).
/// "auto" asks the default chooser for a set of plans with size bands.
struct InferOptions {
  std::string strategy = "auto";
  int lanes = 0;  // 0: the chooser's default for the strategy
  int chunks = 0; // 0: the chooser's default
  int64_t smallBytes = kDefaultSmallBytes; // auto: below this, one-shot
};

/// Infers the plans of `c` (which must pass checkStructure). With strategy
/// "auto", the chooser's plans, each with its size band; otherwise one plan.
bool inferPlans(const Collective &c, const InferOptions &opts,
                std::vector<Plan> &plans, std::string &error);

/// A problem the checker found, at a step (or -1 for the whole plan).
struct PlanDiag {
  int step = -1;
  std::string message;
};

/// Checks a plan by simulating it for R ranks and two launches in a row,
/// in each of two launch models: every rank in its own launch (all syncs
/// kept), and `oneLaunch`, every rank in one launch (boundary syncs
/// skipped, launches ordered as wholes);
/// lanes running freely: every consume reads data staged and notified
/// before (happens-before through the waits), no buffer is written while a
/// peer may still read it or read while it may still be written, no wait is
/// left without its notify (deadlock), and the steps cover the collective
/// (a consume per clause, the stage its source needs). In place (`alias`):
/// every rank's inputs and outputs taken to overlap anyhow (Any), or each
/// output to start at the address of an input of its element type
/// (SameStart). Count parameters are bound to `count`.
enum class Alias { None, Any, SameStart };
bool checkPlan(const Collective &c, const Plan &p, int R, Alias alias,
               std::vector<PlanDiag> &diags, bool oneLaunch = false,
               int64_t count = 2);

/// Runs checkPlan for R = 1..maxRanks, out of place, and in place to set
/// p.inplaceSafe and p.inplaceSame. Returns false with diags for the first
/// failing R.
bool verifyPlan(const Collective &c, Plan &p, std::vector<PlanDiag> &diags,
                int maxRanks = 5);

/// Target-independent C++ for the plans (exec.h calls), then the target's
/// entry. `target`: a row of the target table (purlin/spec/Targets.def).
/// Also returns the C header an application includes.
bool emitCode(const Collective &c, const std::vector<Plan> &plans,
              const std::string &target, std::string &source,
              std::string &header, std::string &error);

} // namespace purlin
