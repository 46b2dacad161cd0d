// SNAC in the compiler: inference of plans from a collective, the checker
// that proves them, and their lowering to a target's C++ (the plain plan
// itself and its vocabulary are the spec's: purlin/spec/Plan.h). MLIR-free.
#pragma once

#include "purlin/spec/Plan.h"

#include <cstdint>
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
///              the flag travels with the data, no data barrier): LL
///              lines, 8 data bytes and the flag in each 16;
///  staged_ll128  the same in LL128 lines: 120 data bytes and a flag word
///              in each 128, the flag released after the line's data;
///  direct_unfused, direct_copy_unfused, two_shot_unfused
///              for a clause with an epilogue: the combine of direct,
///              direct_copy or two_shot keeps the received rows (f32) in
///              received areas, and a second consume runs the epilogue
///              over each rank's own rows (the fused forms' arithmetic);
///              direct_unfused applies after a `done` of every launch
///              model, so it is in-place safe without copies (the default
///              set's in-place one-shot for a collective with an epilogue);
///  two_shot_gather
///              the same for a clause with an epilogue, the owners keeping
///              their rows as two_shot_unfused does, and every rank
///              applying its own rows, each read from its owner's area (an
///              all-reduce then a row kernel: every rank busy however few
///              rows an owner has); right with outputs anywhere on inputs.
/// "auto" asks the default chooser for a set of plans with size bands.
struct InferOptions {
  std::string strategy = "auto";
  int lanes = 0;  // 0: the chooser's default for the strategy
  int chunks = 0; // 0: the chooser's default
  int64_t smallBytes = kDefaultSmallBytes; // auto: below this, one-shot
  // auto, a collective with an epilogue: below this, one-shot; from it
  // on, two-shot with row-aligned owners (spec/Plan.h says why 1 MiB)
  int64_t epilogueSmallBytes = kDefaultEpilogueSmallBytes;
  // auto, a collective with an epilogue, out of place: the fused
  // one-shot below this (its in-place plan keeps epilogueSmallBytes);
  // kAutoEpilogueDirectBytes (-1): kDefaultEpilogueDirectBytes with the
  // default epilogueSmallBytes, else epilogueSmallBytes
  int64_t epilogueDirectBytes = kAutoEpilogueDirectBytes;
  // auto: below this, a staged_ll plan first, for calls whose ranks run in
  // several launches only (Plan::severalLaunches); 0: none; kAutoLLBytes
  // (-1, the default): kDefaultLLBytes for a collective whose clauses all
  // take the register steps (spec/Plan.h), else none
  int64_t llBytes = kAutoLLBytes;
  // auto, a collective with an epilogue: from this many bytes on, the
  // unfused plans (the epilogue apart from the combine; spec/Plan.h says
  // why 4 MiB); 0: none
  int64_t epilogueUnfusedBytes = kDefaultEpilogueUnfusedBytes;
  // auto: from llBytes up to this, a staged_ll128 plan next, for such
  // calls only; 0: none (else it must exceed llBytes)
  int64_t ll128Bytes = 0;
  // auto, a collective with an epilogue, out of place: rows wider than
  // kEpilogueWideElems one-shot through this many rows (one row: the
  // unfused one-shot), whatever their bytes; 0: none (spec/Plan.h)
  int64_t epilogueWideRows = kDefaultEpilogueWideRows;
  // auto, a collective with an epilogue: from this many rows of
  // kEpilogueUnfusedRowElems to kEpilogueWideElems elements, the unfused
  // two-shot; 0: none
  int64_t epilogueUnfusedRows = kDefaultEpilogueUnfusedRows;
};

/// The plan's steps in runs: a maximal run of `chunked` steps is one chunk
/// loop (each chunk runs the run's steps in order), others run once.
/// Codegen emits a loop per chunked run; the checker unrolls the same runs.
struct StepRun {
  size_t begin = 0, end = 0;
  bool chunked = false;
};
std::vector<StepRun> stepRuns(const Plan &p);

/// The arguments of the exec.h call a step becomes (exec::Peers, Select,
/// Source, Dest and the SyncFlags / MoveFlags bits), for Codegen, which
/// prints the call, and the checker, which makes it.
struct ExecArgs {
  int peers = 0, sel = 0, src = 0, dst = 0, flags = 0;
  int lo = 0, hi = 0; // consume's contributor range (hi: exec::kMaxRanks for R)
};
ExecArgs execArgs(const Step &st);

/// The scratch areas a plan needs, in the order its stages first need
/// them: the copy of an input buffer (copy stages), the staging slots of a
/// clause (push stages, `lines`: slots of flagged lines, their format), the
/// partial results of a clause (consumes to partial), the received area of
/// a clause (consumes to received: the unfused plans). The generated layout function
/// and the checker lay them out in this order through exec.h's layoutCopy,
/// layoutSlots, layoutPartial and layoutReceived.
struct ScratchArea {
  enum Kind { Copy, Slots, Partial, Received } kind = Copy;
  int index = 0; // the buffer (Copy) or the clause (Slots, Partial, Received)
  LineFormat lines = LineFormat::None;
  bool parity = false; // Slots: doubled, by launch parity (Step::parity)
  /// exec.h's layoutSlots flags of a Slots area.
  int slotFlags() const { return lineFlags(lines) | (parity ? kParity : 0); }
};
std::vector<ScratchArea> scratchAreas(const Collective &c, const Plan &p);

/// Infers the plans of `c` (which must pass checkStructure). With strategy
/// "auto", the chooser's plans, each with its size band; otherwise one plan.
bool inferPlans(const Collective &c, const InferOptions &opts,
                std::vector<Plan> &plans, std::string &error);

/// A problem the checker found, at a step (or -1 for the whole plan).
struct PlanDiag {
  int step = -1;
  std::string message;
};

/// How a checked run lays out outputs against inputs: apart (None), each
/// rank's outputs overlapping its inputs anyhow (Any), or each output at
/// the address of an input of its element type (SameStart).
enum class Alias { None, Any, SameStart };

/// Proves a plan by running the executor's own step functions (exec.h) on a
/// symbolic target, for R = 1..maxRanks (or the bound R), the plan's lanes
/// and chunks, each element size it may run with, counts that put lane,
/// chunk and vector boundaries inside boxes, both launch models and two
/// launches (Checker.cpp lists the exploration). Every run checks, per
/// element: no race (accesses not ordered by happens-before, a lane's
/// concurrent names included), no deadlock, and the postcondition (every
/// output element holds its name's contributions combined in ascending
/// rank order, nothing else is written, inputs stay intact); plus static
/// rules (the steps cover the collective). Returns false with diags at the
/// first problem. Then the in-place proofs: sets p.inplaceSafe (right with
/// outputs overlapping inputs anyhow: every read of a rank's inputs
/// happens before every write of its outputs), p.inplaceSame (right with
/// each output at its input's address: every read of an input element
/// happens before any write to its address) and p.inplaceMaxRanks.
bool verifyPlan(const Collective &c, Plan &p, std::vector<PlanDiag> &diags,
                int maxRanks = 8);

/// The element types and ops whose GPU kernels are built ahead of time
/// (bit t: element type t, bit o: op o; Numbering.h); a runtime compiles
/// the other pairs at first use.
struct AotSet {
  uint32_t dtypes = 0, ops = 0;
};

/// The pairs to build ahead of time for `c`, from `spec` (purlinc --aot):
///   ""            what the source binds (a concrete or bound element type,
///                 a bound op), else bf16, f16 and f32 with sum;
///   "all"         every type and op;
///   "TYPES[:OPS]" comma lists (OPS default: sum), e.g. "f32,i32:sum,max".
/// Types the collective cannot take (another than its concrete or bound
/// one) are dropped, an error when none is left; ops likewise. The ops its
/// clauses fix are always built; a copy-only collective's kernels serve
/// every type of their element size, so its mask names all of those.
bool aotSet(const Collective &c, const std::string &spec, AotSet &out,
            std::string &error);
/// "bf16, f16, f32 with sum": the pairs, for comments and messages.
std::string aotText(const Collective &c, const AotSet &aot);
/// The ops the collective's clauses fix (bits of RedOp), copy included:
/// every kernel needs them.
uint32_t clauseOps(const Collective &c);
/// A mask as the generated code spells it ("0x7u").
std::string hexMask(uint32_t m);

/// Target-independent C++ for the plans (exec.h calls), then the target's
/// entry. `target`: a row of the target table (purlin/spec/Targets.def).
/// For a GPU target, the kernels of `aot` are built ahead of time and the
/// plans' code is kept as text for the runtime's first-use compiler.
/// Also returns the C header an application includes.
bool emitCode(const Collective &c, const std::vector<Plan> &plans,
              const std::string &target, const AotSet &aot,
              std::string &source, std::string &header, std::string &error);
/// The same with the default pairs (aotSet with "").
bool emitCode(const Collective &c, const std::vector<Plan> &plans,
              const std::string &target, std::string &source,
              std::string &header, std::string &error);

} // namespace purlin
