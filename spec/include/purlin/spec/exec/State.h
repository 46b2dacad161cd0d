// The executor's state: vocabulary ints, parameters, shared launch state,
// signal words, boxes and slicing.
#pragma once

#include <stdint.h>

#include "purlin/spec/Numbering.h"
#include "purlin/spec/Vocabulary.h"

#if defined(__CUDACC__)
#define PURLIN_HD __host__ __device__ __forceinline__
// A function called (not inlined) on the GPU: the general clauses' group
// enumeration (exec/Groups.h), once per clause rather than once per
// element type, step and call site.
#define PURLIN_HD_CALL __host__ __device__ __noinline__
// A loop the GPU compiler unrolls fully (a constant trip count): arrays
// indexed by its variable stay in registers.
#define PURLIN_UNROLL _Pragma("unroll")
#else
#define PURLIN_HD inline
#define PURLIN_HD_CALL inline
#define PURLIN_UNROLL
#endif

namespace purlin {
namespace exec {

// Limits and capacities: Vocabulary.h's.
using namespace purlin::limits;

// The vocabulary (Vocabulary.h) as the ints that generated code passes.
// How a clause picks contributor or destination ranks.
enum Role : int {
  kEvery = (int)RoleKind::Every,
  kCoord = (int)RoleKind::Coord,
  kFixed = (int)RoleKind::Fixed,
  kMap = (int)RoleKind::Map, // an expression of the rank coordinates
  kSet = (int)RoleKind::Set, // a set: a map and a bound variable
};
// Which peers a notify or a wait addresses, relative to this rank r.
enum Peers : int {
  kPeersAll = (int)PeerSet::All,   // every rank
  kPeersSrcs = (int)PeerSet::Srcs, // ranks that contribute names that r receives
  kPeersDsts = (int)PeerSet::Dsts, // ranks that receive names that r contributes
  kPeersGroup = (int)PeerSet::Group, // ranks that share a group of names with r
  kPeersSelf = (int)PeerSet::Self, // r alone
};
enum Select : int {
  kSelMine = (int)Selection::Mine,
  kSelOwned = (int)Selection::Owned,
};
// Where a consume reads: the contributors' inputs, their scratch copies,
// this rank's staging slots; kSrcPartial: this rank's partial result of the
// clause first (a fold continued), then the contributors' inputs;
// kSrcOutput: each part of the names this rank receives from the output of
// the part's owner (which kept it there: owned ... kDstSelf); kSrcReceived:
// this rank's received area; kSrcOwners: each row's owner's received area
// (which kept it there: owned ... kDstReceived).
enum Source : int {
  kSrcInput = (int)SourceKind::Input,
  kSrcScratch = (int)SourceKind::Scratch,
  kSrcStaging = (int)SourceKind::Staging,
  kSrcPartial = (int)SourceKind::Partial,
  kSrcOutput = (int)SourceKind::Output,
  kSrcReceived = (int)SourceKind::Received,
  kSrcOwners = (int)SourceKind::Owners,
};
// Where it writes: this rank's output (for owned parts: the owner keeps its
// part in its own output), every destination, this rank's partial result
// (scratch at the names' source offsets), or the destinations' received
// areas (kDstReceived; kSrcReceived reads this rank's).
enum Dest : int {
  kDstSelf = (int)DestKind::Self,
  kDstAll = (int)DestKind::All,
  kDstPartial = (int)DestKind::Partial,
  kDstReceived = (int)DestKind::Received,
};
// Step flags: purlin::kAllLanes, kBoundary, kFlagged, kFlagged128, kParity
// (Vocabulary.h).
using purlin::kAllLanes;
using purlin::kBoundary;
using purlin::kFlagged;
using purlin::kFlagged128;
using purlin::kLineFlags;
using purlin::kParity;
// Move::ll: which side is in flagged lines (Move::fmt says their format,
// exec/Lines.h), addressed flat like a staging slot.
enum LineSide : int { kLinesNone = 0, kLinesDst = 1, kLinesSrc = 2 };
// Move::fmt: the line format of a flagged side (Vocabulary.h LineFormat).
enum LineFmt : int {
  kFmtNone = (int)LineFormat::None,
  kFmtLL = (int)LineFormat::LL,
  kFmtLL128 = (int)LineFormat::LL128,
};
// Reduction ops, in Numbering.h's order (kCopy, kSum, ...). kOpParam: the
// launch's op.
enum Op : int {
#define PURLIN_X(E, Camel, name) k##Camel,
  PURLIN_REDOPS(PURLIN_X)
#undef PURLIN_X
  kOpParam = -1
};

// Element types, in Numbering.h's order (kElemF32, kElemBF16, ...): what
// Tgt::loadFAs and Tgt::storeFAs take.
enum ElemType : int {
#define PURLIN_X(E, name, bytes) kElem##E,
  PURLIN_DTYPES(PURLIN_X)
#undef PURLIN_X
};

/// Parameter values of a launch, by slot: scalars (ranks, counts, roots) in
/// the order the collective declares them, then tables.
struct Params {
  int64_t s[kMaxScalars];
  int64_t tabOff[kMaxTables];
  int64_t tabExt[kMaxTables][3];
  int64_t tab[kMaxTableWords];
  PURLIN_HD int64_t lookup(int t, int64_t i) const { return tab[tabOff[t] + i]; }
  PURLIN_HD int64_t lookup(int t, int64_t i, int64_t j) const {
    return tab[tabOff[t] + i * tabExt[t][1] + j];
  }
  PURLIN_HD int64_t lookup(int t, int64_t i, int64_t j, int64_t k) const {
    return tab[tabOff[t] + (i * tabExt[t][1] + j) * tabExt[t][2] + k];
  }
};

PURLIN_HD int64_t purlin_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
PURLIN_HD int64_t purlin_floormod(int64_t a, int64_t b) {
  return a - purlin_floordiv(a, b) * b;
}

/// What every lane of every rank sees: the addresses of all ranks' buffers,
/// scratch and signals (peer-visible), and the launch's parameters.
/// Plain data, passed by value to kernels.
struct Shared {
  int R = 0, L = 1, K = 1; // ranks, lanes, chunks
  int op = kSum;           // the launch's op, for clauses with kOpParam
  int elemSize = 4;
  int nsignals = 0;
  // 1 when every rank of the communicator runs in this one launch (one GPU,
  // one process): the launch's start and end order all ranks, so `boundary`
  // notifies and waits (which only order against the launch boundary) are
  // skipped.
  int oneLaunch = 0;
  // Staging by launch parity (kParity): half 1 of every parity area lies
  // this many bytes after its half 0 (stagingSlot). The halves must not
  // overlap whatever the sizes of consecutive calls (no barrier orders
  // them), so a runtime that keeps one scratch for calls of every size
  // sets it to the layout's single-half end at its maximum values (what
  // layoutEnd left here at those values); 0: layoutEnd sets it from this
  // call's sizes (a scratch laid out for this call only: the host runner,
  // the checker). layoutReset keeps it; parityAreas is layoutSlots' count.
  int64_t parityStride = 0;
  int parityAreas = 0;
  uint32_t parityClauses = 0; // bit k: clause k staged by launch parity
  // Nonzero in a multi-process launch: a hash of the call's arguments
  // (element type, op, scalars, tables) that every rank computes alike.
  // A target may carry it in its signals so that a rank whose peer called
  // with other arguments stops with an error instead of moving data
  // (atom-kernels/common/sm: the high bits of the signal words).
  uint32_t fingerprint = 0;
  // Threads a lane the runtime asks for this launch (a multiple of 32), or
  // 0: the target's own. Small messages run faster in smaller lanes (fewer
  // warps meet at each barrier); a target takes at most its own.
  int laneThreads = 0;
  // Lanes this launch runs, fewer than L, or 0: all L. Set by a runtime for
  // a plan whose lanes share only its epilogue's rows (purlin_plan_info's
  // `rows`: one-shot with an epilogue, boundary syncs only), so that a
  // call of few rows launches no lanes without one (liveLanesOf). The
  // signal and aux layouts keep L: lanes that do not run keep their words.
  int liveLanes = 0;
  // Per buffer, its element type (Numbering.h's number) where it is not
  // the launch's: an epilogue's own input or output declared with another
  // floating type (a quantized output, an f32 scale); -1 for the launch's.
  // Only epilogue statements read such a buffer (EpiRank).
  static_assert(kMaxBuffers == 8, "bufDType's initializer lists kMaxBuffers -1s");
  int8_t bufDType[kMaxBuffers] = {-1, -1, -1, -1, -1, -1, -1, -1};
  void *buf[kMaxRanks][kMaxBuffers]; // every rank's buffers
  // Peer-visible scratch of every rank: copies of the inputs (for
  // kSrcScratch) at scratchOff[buffer], then per clause R staging slots of
  // slotElems[clause] elements at stagingOff[clause]; offsets in bytes.
  char *scratch[kMaxRanks];
  int64_t scratchOff[kMaxBuffers];
  int64_t stagingOff[kMaxClauses];
  int64_t slotElems[kMaxClauses];
  int64_t slotBytes[kMaxClauses]; // bytes of one slot (flagged: lines, exec/Lines.h)
  // Per clause, this rank's partial results (kDstPartial, kSrcPartial): an
  // area of the clause's input buffer's size, at partialOff[clause].
  int64_t partialOff[kMaxClauses];
  // Per clause with an epilogue run apart (the unfused plans), each rank's
  // received area at receivedOff[clause]: the combined values of the names
  // it receives, at their destination offsets, as f32 on the targets (the
  // checker's model: the element type), which a later consume `from
  // received` takes through the epilogue.
  int64_t receivedOff[kMaxClauses];
  // Signal words of every rank: [signal][from rank][lane][chunk], then the
  // epochs of its lanes.
  uint64_t *signals[kMaxRanks];
  Params P;
};

/// The lanes a launch of S runs (Shared::liveLanes): lanes 0 .. this - 1.
PURLIN_HD int liveLanesOf(const Shared &S) {
  return S.liveLanes > 0 && S.liveLanes < S.L ? S.liveLanes : S.L;
}

PURLIN_HD uint64_t *signalWord(const Shared &S, int to, int sig, int from,
                               int lane, int chunk) {
  return S.signals[to] +
         (((int64_t)sig * S.R + from) * S.L + lane) * S.K + chunk;
}
PURLIN_HD uint64_t *epochWord(const Shared &S, int rank, int lane) {
  return S.signals[rank] + (int64_t)S.nsignals * S.R * S.L * S.K + lane;
}
/// Signal words of one rank, epochs included.
inline int64_t signalWords(int nsignals, int R, int L, int K) {
  return (int64_t)nsignals * R * L * K + L;
}

/// A box of names: the rank coordinates fixed, the others free. Offsets of
/// a name are base + sum_j c_j * stride_j on each side (maps are affine).
struct Box {
  int nfree = 0;
  int64_t n = 0; // names in the box
  int64_t ext[kMaxDims];
  int64_t sstr[kMaxDims], dstr[kMaxDims];
  int64_t sbase = 0, dbase = 0;
};

/// The exponent of a power of two (its trailing zeros).
PURLIN_HD int log2Pow2(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __ffs((int)v) - 1;
#else
  return __builtin_ctz(v);
#endif
}

/// Cuts [0, n) into `parts` ranges and returns range i, cut points rounded
/// down to multiples of `g` so that vector accesses stay whole.
PURLIN_HD void splitRange(int64_t n, int64_t parts, int64_t i, int64_t g,
                          int64_t &a, int64_t &b) {
  if (n >= 0 && parts > 0 && g > 0 && (uint64_t)n * (uint64_t)parts < (1ull << 32)) {
    // 32-bit division: a 64-bit one is a long software routine on a GPU,
    // and this runs on a lane's critical path.
    const uint32_t n32 = (uint32_t)n, p32 = (uint32_t)parts, g32 = (uint32_t)g;
    if (((p32 & (p32 - 1)) | (g32 & (g32 - 1))) == 0) {
      // Parts and granule powers of two (lanes x chunks, elements a line
      // or vector: the usual case): shifts, the same quotients, where each
      // division is ~20 instructions around a reciprocal on a GPU.
      const int ps = log2Pow2(p32), gs = log2Pow2(g32);
      a = (int64_t)(((n32 * (uint32_t)i) >> ps) >> gs << gs);
      b = (i + 1 == parts) ? n : (int64_t)(((n32 * (uint32_t)(i + 1)) >> ps) >> gs << gs);
    } else {
      a = (int64_t)((n32 * (uint32_t)i / p32) / g32 * g32);
      b = (i + 1 == parts) ? n : (int64_t)((n32 * (uint32_t)(i + 1) / p32) / g32 * g32);
    }
  } else {
    a = (n * i / parts) / g * g;
    b = (i + 1 == parts) ? n : (n * (i + 1) / parts) / g * g;
  }
  if (a > n)
    a = n;
  if (b < a)
    b = a;
}

/// The names [lo, hi) of a box of n that piece `piece` of `pieces` takes:
/// of the whole box, or (owned) of rank r's part of R, each cut on
/// multiples of g (the register consume and the unfused plans' stash cut
/// alike, so that the checker's model of one is the other's).
PURLIN_HD void pieceRange(int64_t n, bool owned, int64_t R, int64_t r,
                          int64_t pieces, int64_t piece, int64_t g,
                          int64_t &lo, int64_t &hi) {
  if (!owned) {
    splitRange(n, pieces, piece, g, lo, hi);
    return;
  }
  int64_t pa, pb, a, c;
  splitRange(n, R, r, g, pa, pb);
  splitRange(pb - pa, pieces, piece, g, a, c);
  lo = pa + a;
  hi = pa + c;
}

} // namespace exec
} // namespace purlin
