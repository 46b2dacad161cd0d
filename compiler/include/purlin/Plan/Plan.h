// A SNAC plan: the per-rank, per-lane program of Stage, Notify And Consume
// steps that purlin infers for a collective. The snac dialect is its MLIR
// form (dialects/Snac); this plain form is what inference builds, what the
// checker simulates and what the targets lower. MLIR-free.
//
// A plan is SPMD: every rank r runs the same steps on each of its L lanes,
// each lane on its slice of every step's names (atom-kernels/common/exec.h
// gives the exact semantics). Steps marked `chunked` form the chunk loop:
// they run once per chunk c = 0..K-1, in order.
#pragma once

#include "purlin/core/Collective.h"

#include <string>
#include <vector>

namespace purlin {

enum class StepKind { Stage, Notify, Wait, Consume };
/// stage: expose (inputs are read in place by peers: no data moves), copy
/// (this rank copies its input into its own peer-visible scratch), push
/// (this rank writes its contributions into each destination's staging).
enum class StageMode { Expose, Copy, Push };
/// Peers of rank r (exec::Peers): every rank, the ranks whose names r
/// receives (srcs), the ranks that receive r's names (dsts).
enum class PeerSet { All, Srcs, Dsts };
/// consume: the names r receives (mine), or part r of all names (owned).
enum class Selection { Mine, Owned };
enum class SourceKind { Input, Scratch, Staging };
enum class DestKind { Self, All };

const char *stepKindName(StepKind k);
const char *stageModeName(StageMode m);
const char *peerSetName(PeerSet p);
const char *selectionName(Selection s);
const char *sourceKindName(SourceKind s);
const char *destKindName(DestKind d);
bool parseStageMode(const std::string &s, StageMode &out);
bool parsePeerSet(const std::string &s, PeerSet &out);
bool parseSelection(const std::string &s, Selection &out);
bool parseSourceKind(const std::string &s, SourceKind &out);
bool parseDestKind(const std::string &s, DestKind &out);

struct Step {
  StepKind kind = StepKind::Stage;
  int clause = 0;
  bool chunked = false;
  // stage
  StageMode stage = StageMode::Expose;
  // notify / wait
  int signal = -1;
  PeerSet peers = PeerSet::All;
  bool allLanes = false; // wait: for every lane of each peer, not just lane l
  // notify / wait that only order against the launch boundary (inputs
  // written before the launch; peers done before the caller or the next
  // launch reuses a buffer). A target skips them when every rank of the
  // communicator runs in one launch, whose start and end order all ranks.
  bool boundary = false;
  // stage push / consume from staging: the low-latency protocol. Each
  // staged line carries its flag (the epoch) with the data, so the consume
  // polls the lines themselves: no separate notify and wait.
  bool flagged = false;
  // consume
  Selection sel = Selection::Mine;
  SourceKind src = SourceKind::Input;
  DestKind dst = DestKind::Self;
  SrcLoc loc; // tag: the snac op this step came from, when it did
};

struct Plan {
  std::string strategy;
  int lanes = 1, chunks = 1;
  std::vector<std::string> signals;
  std::vector<Step> steps;
  // In place: right with each rank's outputs overlapping its inputs
  // anyhow (inplaceSafe), or with each output at the address of an input
  // of its element type (inplaceSame; implied by inplaceSafe).
  bool inplaceSafe = false;
  bool inplaceSame = false;
  // The size band the chooser picked this plan for: bytes of the largest
  // buffer of one rank, [minBytes, maxBytes), maxBytes < 0: no limit.
  int64_t minBytes = 0, maxBytes = -1;
};

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
  int64_t smallBytes = 256 * 1024; // auto: below this, one-shot
};

const std::vector<std::string> &strategyNames();

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
/// entry. `target`: "host", "sm_80", "sm_90", "sm_100". Also returns the C
/// header an application includes.
bool emitCode(const Collective &c, const std::vector<Plan> &plans,
              const std::string &target, std::string &source,
              std::string &header, std::string &error);

/// Text form of a plan, for --emit=plan and the tests.
std::string writePlan(const Plan &p);

} // namespace purlin
