// A SNAC plan in plain form: the per-rank, per-lane program of Stage,
// Notify And Consume steps that purlin infers for a collective. The snac
// dialect is its MLIR form (dialects/Snac); this plain form is what
// inference builds, what the checker simulates and what the targets lower.
//
// A plan is SPMD: every rank r runs the same steps on each of its L lanes,
// each lane on its slice of every step's names (Exec.h gives the exact
// semantics). Steps marked `chunked` form the chunk loop: they run once per
// chunk c = 0..K-1, in order.
#pragma once

#include "purlin/spec/Collective.h"
#include "purlin/spec/Vocabulary.h"

#include <string>
#include <vector>

namespace purlin {

/// Names of the vocabulary in the text forms (--emit=plan, the snac
/// dialect's keywords) and their parsers.
const char *stepKindName(StepKind k);
const char *stageModeName(StageMode m);
const char *peerSetName(PeerSet p);
const char *selectionName(Selection s);
const char *sourceKindName(SourceKind s);
const char *destKindName(DestKind d);
/// "none", "ll", "ll128".
const char *lineFormatName(LineFormat f);
/// A flagged step's words in the text forms: "" (not flagged), "flagged"
/// (LL lines, the format `flagged` has always meant), "flagged ll128".
/// With `parity`: "flagged parity", "flagged ll128 parity".
std::string flaggedWords(LineFormat f);
std::string flaggedWords(LineFormat f, bool parity);
bool parseStageMode(const std::string &s, StageMode &out);
bool parsePeerSet(const std::string &s, PeerSet &out);
bool parseSelection(const std::string &s, Selection &out);
bool parseSourceKind(const std::string &s, SourceKind &out);
bool parseDestKind(const std::string &s, DestKind &out);
bool parseLineFormat(const std::string &s, LineFormat &out);

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
  // stage push / consume from staging: the low-latency protocol, in lines
  // of this format (Vocabulary.h). Each staged line carries its flag (the
  // epoch) with the data, so the consume polls the lines themselves: no
  // separate notify and wait.
  LineFormat lines = LineFormat::None;
  bool flagged() const { return lines != LineFormat::None; }
  // flagged push / consume from staging: staging by launch parity. The
  // clause's slots are doubled and launch e uses half e & 1; a line of
  // launch e carries e's flag, so a stale line of launch e - 2 in the same
  // half never matches. Lets a symmetric clause drop its `free` round
  // (docs/snac.md, `parity`). A clause's push and consume agree on it.
  bool parity = false;
  // consume
  Selection sel = Selection::Mine;
  SourceKind src = SourceKind::Input;
  DestKind dst = DestKind::Self;
  // consume: the contributors combined, ranks [ranksLo, ranksHi) (-1: R);
  // from output, the owners whose parts are read.
  int ranksLo = 0, ranksHi = -1;
  // consume: through the clause's epilogue (Collective.h): one-shot only,
  // `mine` from inputs or scratch copies `to self`, every contributor.
  bool epilogue = false;
  SrcLoc loc; // tag: the snac op this step came from, when it did
};

struct Plan {
  std::string strategy;
  int lanes = 1, chunks = 1;
  std::vector<std::string> signals;
  std::vector<Step> steps;
  // In place: right with each rank's outputs overlapping its inputs
  // anyhow (inplaceSafe), or with each output at the address of an input
  // of its element type (inplaceSame; implied by inplaceSafe). Proved for
  // rank counts up to inplaceMaxRanks only (the checker's reach): a runtime
  // runs the plan in place for no more ranks than that.
  bool inplaceSafe = false;
  bool inplaceSame = false;
  int inplaceMaxRanks = 0;
  // The size band the chooser picked this plan for: bytes of the largest
  // buffer of one rank, [minBytes, maxBytes), maxBytes < 0: no limit.
  int64_t minBytes = 0, maxBytes = -1;
  // The rows band (a collective with an epilogue; maxRows 0: none): a call
  // whose epilogue rows (its widest clause's: exec::rowShape) number in
  // [minRows, maxRows) and are [minRowElems, maxRowElems) elements wide
  // (a maximum < 0: no limit) takes this plan before a plan whose byte
  // band holds it (the runtime's choosePlan). Where a kernel's shape
  // follows the rows (a lane a row, the SM target's wide kernels), bytes
  // alone misplace the edge.
  int64_t minRows = 0, maxRows = 0, minRowElems = 0, maxRowElems = -1;
  // In place (an output overlapping an input), the band's end: rows in
  // [minRows, maxRowsInPlace) (0: maxRows; else above it, or -1).
  int64_t maxRowsInPlace = 0;
  // Chosen only for a call whose ranks run in several launches (the
  // several-GPU launch model, PURLIN_ONE_LAUNCH=0), where the launch
  // boundary's barriers cost more than a low-latency protocol's flags
  // (purlinc --ll-bytes: staged_ll below that size; --ll128-bytes:
  // staged_ll128 from there up to that size); a call whose ranks all run
  // in one launch skips it.
  bool severalLaunches = false;
};

/// The default chooser's band edge: below this many bytes per rank (of the
/// largest buffer), one-shot plans.
constexpr int64_t kDefaultSmallBytes = 256 * 1024;

/// The same edge for a collective with an epilogue (issue 16): below it,
/// one-shot (every rank combines every row it needs: R reads of each
/// contribution in all, but every rank busy from the first row); from it
/// on, the owned form of two-shot, whose owners are cut on row boundaries
/// (each contribution read once; a rank works only if it owns rows, and
/// with few rows most lanes idle). Measured (tools/gpu-epilogue.sh, H200, 8
/// ranks, bf16, four runs of 2026-12-04): at 256 KiB a rank one-shot wins
/// at hidden 4096 and 8192; at 512 KiB two-shot wins at hidden 4096 by
/// 1.7-2.1x (64 tokens: 18-32 us against 31-44) while at 8192 (32 tokens)
/// either wins by 10-30% from run to run. Was 1 MiB, which left 4096 x 64
/// on one-shot. purlinc --epilogue-small-bytes sets it per build.
constexpr int64_t kDefaultEpilogueSmallBytes = 512 * 1024;
/// Out of place, the fused one-shot's own edge (the in-place one-shot
/// plan, direct_unfused since the twenty-fourth session, direct_copy
/// before, keeps kDefaultEpilogueSmallBytes): one-shot through 256 KiB a
/// rank, the first size above it two-shot. Measured with its 16 live lanes
/// against the two-shot whose owners split few rows by ranks
/// (exec/Epilogue.h, epiOwnedSplit; H100, thirty-sixth session, 8 ranks,
/// bf16): at 256 KiB one-shot 7.03 us against 8.33 at hidden 8192 (16
/// tokens) and 8.29 against 7.85 at 4096 (32 tokens); at 512 KiB two-shot
/// wins, 10.97 against 14.21 at 4096 (64 tokens) and 10.69 against 12.26
/// at 8192 (32 tokens). Was 512 KiB while the two-shot's owners walked
/// their few rows for all R ranks on one lane (twenty-third session: at
/// 512 KiB one-shot 14.77 against 16.31 at 4096). In place the edge
/// stays: the in-place plans were not timed around it (docs/performance.md,
/// twenty-fourth session: the crossover may lie nearer 256 KiB).
/// purlinc --epilogue-direct-bytes sets it per build (-1, the default:
/// this with the default --epilogue-small-bytes, else that edge).
constexpr int64_t kDefaultEpilogueDirectBytes = 256 * 1024 + 1;
/// InferOptions::epilogueDirectBytes's "as the epilogue band's edge".
constexpr int64_t kAutoEpilogueDirectBytes = -1;
/// The lanes of the one-shot band's plan with an epilogue (`direct`; its
/// in-place plan, direct_unfused or direct_copy, keeps the small band's 8). Its lanes share only the
/// rows (purlin_plan_info::rows), so a launch runs min(lanes, rows) of
/// them (Shared::liveLanes): 1 at one token. 16: at 8 ranks a GPU, 128
/// blocks of 512 threads, one a SM (128 registers a thread), fit an H100's
/// or H200's 132 SMs in one wave (the measured why: 32 lanes, `d_wide`,
/// took 10.4 us at 32 tokens x 4096 against 15.2 for 8 lanes walking 4 rows
/// each, but 6.4 against 5.4 at 8 tokens, its 256 blocks two waves;
/// docs/performance.md, twentieth and twenty-first sessions). With it
/// (H100, twenty-third session, hidden 4096): 16 tokens 8.77 -> 5.43 us, 32
/// tokens 15.24 -> 8.50, 1 token 5.17 -> 4.47 (with the held inputs).
constexpr int kDefaultEpilogueDirectLanes = 16;

/// The edge from which a collective with an epilogue takes the unfused
/// plans (the epilogue a second consume, or a launch of its own, over rows
/// the combine kept as f32): two_shot_unfused from here, the fused two-shot
/// below. Measured (purlin-epilogue-bench, 8 ranks, bf16, all_reduce +
/// residual + RMSNorm), two_shot_unfused against the fused two_shot:
///   H200, eighteenth session: 1.08-1.16x at 4 MiB a rank, 1.17-1.18x at
///     8 MiB, up to 1.26-1.35x at 32-64 MiB;
///   H100, twentieth session: 1.01-1.10x at 4 MiB, 1.07-1.16x at 8 MiB,
///     1.12-1.16x at 32-64 MiB.
/// At 2 MiB the fused one still wins at hidden 8192 (1.2x on both GPUs).
/// In place, a smaller call still takes its band's copy plan
/// (choosePlan's bandFirst), not two_shot_unfused, which is right in place
/// at the same address but slow at a few rows. purlinc
/// --epilogue-unfused-bytes sets it per build (0: none).
constexpr int64_t kDefaultEpilogueUnfusedBytes = 4 * 1024 * 1024;

/// Rows wider than this many elements run in the SM target's wide kernels
/// (its register row holds 512 threads x 2 vectors of 8: atom-kernels/
/// common/sm/target.cuh, wideRowsFor); the default chooser gives them a
/// band of their own in rows (kDefaultEpilogueWideRows).
constexpr int64_t kEpilogueWideElems = 8192;
/// The default chooser, a collective with an epilogue, out of place: rows
/// wider than kEpilogueWideElems run one-shot through this many rows,
/// whatever their bytes; a single such row the unfused one-shot
/// (direct_unfused: its first launch cuts the row's names over its lanes,
/// where the fused one-shot has one lane a row). The fused one-shot has 16
/// lanes, a lane a row: from 17 rows one lane takes two and the two-shot
/// wins. Measured (H100, forty-first session, 8 ranks, bf16, us), the
/// one-shot against the two-shot the byte edge gave: 12288 x 8 8.40
/// against 10.39, x 16 9.62 against 10.82; 16384 x 8 10.30 against
/// 12.31, x 16 11.60 against 13.35; at 20-40 rows the two-shot wins
/// (12288 x 24 13.97 against 16.34, 16384 x 32 23.70 against 26.01).
/// (At 48-64 rows the one-shot won again, 16384 x 48 41.48 against 51.05,
/// where the two-shot's owners split their rows unevenly: not taken, as
/// one band cannot hold both.) At 1 row the unfused one-shot 7.81 against
/// 8.07 (12288) and 9.00 against 9.88 (16384), fortieth session; at 16 rows
/// it lost (14.07 against 9.40). Rows of 8192 or fewer keep the byte edge
/// (kDefaultEpilogueDirectBytes). purlinc --epilogue-wide-rows sets it per
/// build (0: no such band).
///
/// From this many rows + 1 on, wider rows take two_shot_gather, and in
/// place from 2 rows (the owners keep their rows' sums, every rank applies
/// its own rows: the shape of an all-reduce followed by a row kernel; the
/// fused one-shot is not proved right in place). Measured (H100,
/// forty-second session, 8 ranks, bf16, us, best of 2), against the plan
/// the chooser took before: 12288 x 17 13.19 against 13.52, x 32 16.37
/// against 15.36 (0.94), x 64 33.77 against 44.28, x 65 34.47 against
/// 45.27, x 128 64.60 against 56.61 (0.88: the fused two-shot's lanes
/// each hold one row at 128), x 129 66.04 against 91.33, x 160 79.21
/// against 95.15, x 255 126.94 against 125.49; 16384 x 17 15.76 against
/// 16.13, x 32 20.90 against 21.33, x 64 41.23 against 57.36, x 128 80.78
/// against 86.63, x 160 99.18 against 127.49, x 255 171.48 against
/// 167.52. In place (y at x, one run): 12288 x 32 16.13 against 25.74, x
/// 48 23.47 against 33.23, x 129 62.89 against 89.22; 16384 x 32 19.83
/// against 33.89, 12288 x 16 10.12 against the unfused one-shot's 14.50.
/// The unfused one-shot (the in-place plan until then, through 32 rows)
/// against it, out of place (the same kernels as in place): 12288 x 1
/// 7.80 against 8.01, x 2 8.20 against 8.58, x 16 14.19 against 9.93;
/// 16384 x 2 9.53 against 9.65, x 16 17.12 against 11.69: it keeps the
/// single row, and loses 1-5% at 2 rows in place. It runs within 0.91-0.99
/// of purlin's all_reduce + a norm kernel from 32 rows (the fused plans
/// 0.71-0.74 at 64 rows).
constexpr int64_t kDefaultEpilogueWideRows = 16;
/// The default chooser, a collective with an epilogue: from this many rows
/// of kEpilogueUnfusedRowElems to kEpilogueWideElems elements, the unfused
/// two-shot, whatever their bytes (below kDefaultEpilogueUnfusedBytes too).
/// The fused two-shot's owners take a row a lane: at 8 ranks x 16 lanes,
/// from 129 rows some lane takes two, and its time nearly doubles (4096 x
/// 128 17.6 us, x 129 30.1), while the unfused one's apply launch, a block
/// a row, grows with the rows. Measured (H100, forty-first session, 8
/// ranks, bf16, us), two_shot_unfused against the fused two_shot: 4096 x
/// 129 26.78 against 30.11, x 160 30.56 against 35.56, x 224 36.71 against
/// 41.07, x 255 39.75 against 42.54; 6144 x 160 44.16 against 57.74;
/// 8192 x 129 47.63 against 61.64, x 192 60.56 against 68.01, x 224 69.08
/// against 71.40, but x 255 78.18 against 74.87 (the one loss). At 128 rows
/// the fused one wins (4096: 17.63 against 22.81; 6144: 34.24 against
/// 36.68; 8192: 39.15 against 44.24). Wider rows keep the byte edge: at
/// 12288 the unfused one won at 129 rows only (66.29 against 91.06; 144
/// rows 96.38 against 93.46). Narrower ones too: the unfused two-shot's
/// fixed cost (16.7 us at 4096 x 1) was not measured against them.
/// purlinc --epilogue-unfused-rows sets it per build (0: no such band).
constexpr int64_t kDefaultEpilogueUnfusedRows = 129;
constexpr int64_t kEpilogueUnfusedRowElems = 4096;

/// The default chooser's low-latency band (issue 17): below this many
/// bytes per rank, a staged_ll plan for calls whose ranks run in several
/// launches (the several-GPU launch model), where a launch boundary's
/// barriers cost more than flags carried with the data; only for a
/// collective whose every clause is the register steps' shape (every rank
/// to every rank, no epilogue: exec's pushRegisters and consumeRegisters),
/// as other shapes' flagged moves take the generic line move, not timed to
/// win. Measured (purlin-bench all_reduce_ll against the chooser's barrier
/// plans, PURLIN_ONE_LAUNCH=0, 8 ranks, bf16): H100, twenty-first session:
/// 3.6-3.7 us against 5.9-6.1 at 8 B, 3.9-4.0 against 6.9-7.0 at 8 KiB,
/// 5.7 against 6.9-7.2 at 32 KiB, 13.8-13.9 against 7.7-8.8 at 128 KiB;
/// twentieth session: 8.78 against 8.01 at 64 KiB, so the band ends below
/// it. purlinc --ll-bytes sets it per build (0: none; any value applies to
/// every shape); -1, the default, is this rule, which gives way to an LL128
/// band asked alone (--ll128-bytes without --ll-bytes: from 0, as before).
constexpr int64_t kDefaultLLBytes = 64 * 1024;
/// InferOptions::llBytes's "auto" (kDefaultLLBytes where the shape allows).
constexpr int64_t kAutoLLBytes = -1;

/// The strategies SNAC inference knows, in the order the tools list them
/// (see compiler/include/purlin/Plan/Plan.h for what each does).
const std::vector<std::string> &strategyNames();
/// "direct, direct_copy, ...": for messages and --help.
std::string strategyList();

/// Text form of a plan, for --emit=plan and the tests.
std::string writePlan(const Plan &p);

} // namespace purlin
