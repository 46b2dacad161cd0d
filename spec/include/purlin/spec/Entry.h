// What a generated collective exports to the runtime: a table of plans
// (one per SNAC strategy that purlinc emitted), each with its resources and
// its entry point on the target it was compiled for. Plain C data.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
namespace purlin {
namespace exec {
struct Shared;
}
} // namespace purlin
typedef purlin::exec::Shared purlin_shared_t;
extern "C" {
#else
typedef struct purlin_shared purlin_shared_t;
#endif

/// Host entry: code that runs on the host CPU. The host target: runs lane
/// `lane` of rank `rank` to completion, `atoms` being its per-lane
/// configuration (host/target.h). The copy-engine target: records rank
/// `rank`'s schedule into `atoms`, a ce::Schedule (ce/target.h).
typedef void (*purlin_host_entry_t)(const purlin_shared_t *S, int rank,
                                    int lane, void *atoms);
/// CUDA target entry: launches ranks [first, first + n) of one device in one
/// kernel (grid: lanes x n blocks) on `stream` for element type `dtype` and
/// op `op` (DType.h / exec::Op numbering). `slot` null: the kernel takes *S
/// as its parameter; else `slot` is device memory holding the shared state
/// (the datapath's format: common/sm/aux.h's SharedSlot), which the kernel
/// reads when it runs (CUDA graphs whose buffers are registered after the
/// capture). Returns a cudaError_t.
typedef int (*purlin_cuda_entry_t)(const purlin_shared_t *S, int first, int n,
                                   int dtype, int op, void *stream,
                                   const void *slot);

typedef struct purlin_plan_info {
  const char *strategy;  // "direct", "two_shot", "staged", ...
  int lanes, chunks;     // the SNAC lane and chunk counts
  int nsignals;          // signal names
  int inplace_safe;      // the checker proved it right when outputs alias inputs
  int uses_scratch;      // reads input copies or staging slots
  // The size band the default chooser picked this plan for: bytes of the
  // largest buffer of one rank, min inclusive, max exclusive (-1: no limit).
  int64_t min_bytes, max_bytes;
  // Fills S->scratchOff / stagingOff / slotElems from S->P, S->R and
  // S->elemSize; returns the scratch bytes each rank needs.
  int64_t (*layout)(purlin_shared_t *S);
  purlin_host_entry_t host_entry; // null unless compiled for host code
  purlin_cuda_entry_t cuda_entry; // null unless compiled for a GPU
  // 1: the plan's scratch must be its own, zeroed at allocation and never
  // written by another plan (flagged lines: data another plan left there
  // could look like a valid flag).
  int exclusive_scratch;
  // 1: right in place when each output starts at the address of an input of
  // its element type (element i of one is element i of the other), though
  // maybe not for other overlaps (inplace_safe); implied by inplace_safe.
  int inplace_same;
  // 1: the plan copies inputs into scratch first (the price of in place
  // under any overlap; choosers prefer a plan without, when one is safe).
  int copies_inputs;
  // The largest rank count for which the checker proved inplace_safe and
  // inplace_same (it simulates R = 1.. this): a runtime runs the plan in
  // place for no more ranks than that (out of place: any).
  int inplace_max_ranks;
  // 1: chosen only for a call whose ranks run in several launches (the
  // several-GPU launch model); a launch that holds every rank skips it
  // (Plan::severalLaunches, purlinc --ll-bytes).
  int several_launches;
  // The host target's entry of the plan's epilogue as a launch of its own
  // (an unfused plan whose consume from received may split off: the plan's
  // entry then returns before it where every rank runs in one launch, and
  // the host datapath runs this over every rank after the plan's lanes
  // end, as the SM datapath launches it); null: none, or another target.
  purlin_host_entry_t host_apply;
  // The rows of the plan's epilogue for S->P, where they are all its lanes
  // share: a plan whose one step is the epilogue's consume between boundary
  // syncs (one-shot: a lane's rows, no scratch, no other signal). A runtime
  // runs such a plan on min(lanes, rows) lanes (at least 1; Shared::
  // liveLanes). Null: every plan else, which runs on all its lanes.
  int64_t (*rows)(const purlin_shared_t *S);
  // The rows band (Plan::minRows): a call whose epilogue rows (the widest
  // clause's) number in [min_rows, max_rows) and are [min_row_elems,
  // max_row_elems) elements wide (a maximum -1: no limit) takes this plan
  // before a plan whose byte band holds it. max_rows 0: none.
  int64_t min_rows, max_rows, min_row_elems, max_row_elems;
  // In place (an output overlapping an input), the rows band's end
  // instead of max_rows (0: max_rows).
  int64_t max_rows_in_place;
} purlin_plan_info;

typedef struct purlin_collective_info {
  const char *name;
  const char *desc;   // the plain description (Collective.h, readDesc)
  const char *target; // PURLIN_TARGET_NAME: a row of Targets.def
  int nplans;
  const purlin_plan_info *plans;
  // The element types and ops whose kernels are linked in (bit t of
  // aot_dtypes: element type t; bit o of aot_ops: op o, copy included;
  // Numbering.h): purlinc --aot. A launch of another pair has its kernels
  // compiled at first use by the target's datapath from `source`, the
  // plans' code (docs/runtime.md); null: every pair is linked in.
  uint32_t aot_dtypes, aot_ops;
  const char *source;
} purlin_collective_info;

#ifdef __cplusplus
}
#endif
