// The line formats of the low-latency protocol (Vocabulary.h LineFormat):
// where a staging slot of flagged lines keeps its data and its flags. The
// one description of the geometry: the executor lays slots out with it, and
// the targets (atom-kernels: common/sm/lines.cuh, host/target.h) and the
// checker (compiler/lib/Plan/CheckAccess.cpp) address lines with it.
// Part of the executor (purlin/spec/Exec.h explains the model).
//
//   format  line  data  flag (value)                    data byte k of a line
//   LL        16     8  u32 at 4 and at 12 (the host:   k < 4 ? k : k + 4
//                       the epoch's low 32 bits; SM:
//                       its low 24 under 7 folded bits
//                       of the fingerprint and a set
//                       top bit, aux.h llFlag)
//   LL128    128   120  u64 at 120 (the lane's signal   k
//                       value: epoch and fingerprint)
//
// A slot's data byte d lies in line d / data, lines one after another from
// the slot's start (or a general clause's part of it: parts start on whole
// lines). Why the formats differ in how they order data and flag: LL
// writes a line with one 16-byte store and a reader takes both flags and
// the data from one 16-byte load; LL128 writes a line's data, then (after
// the writing threads' warp barrier) a fence and the flag, and a reader
// polls the flag, fences, and only then loads the data (the PTX memory
// model's release and acquire patterns; atom-kernels/common/sm/lines.cuh).
#pragma once

#include "purlin/spec/exec/State.h"

namespace purlin {
namespace exec {

/// A plan's line formats as a mask (PURLIN_PLAN_ENTRY's LINES: a target
/// builds the flagged moves of those formats only): bit fmt - 1 for each
/// format, so that 1, once "the plan has flagged lines", is LL.
enum LineFmtBits : int { kLinesLLBit = 1, kLinesLL128Bit = 2, kLinesAll = 3 };
PURLIN_HD int lineFmtBit(int fmt) { return fmt == kFmtNone ? 0 : 1 << (fmt - 1); }

/// Staging by launch parity (kParity): the half of a clause's doubled
/// staging slots that a step of these flags uses in the launch of epoch
/// `epoch`, e & 1 (0 without kParity). Writer and reader take it from their
/// own epochs, which agree in a launch (every lane bumps its own once a
/// launch); a line of launch e carries e's flag, so a stale line of launch
/// e - 2 in the same half never matches. On the SM target the epoch is the
/// signal value, whose low bits are the epoch's (aux.h signalValue).
PURLIN_HD int stagingHalf(int flags, uint64_t epoch) {
  return (flags & kParity) ? (int)(epoch & 1) : 0;
}
/// stagingHalf with the target's own epoch.
template <class Tgt> PURLIN_HD int stagingHalfOf(const Tgt &t, int flags) {
  return stagingHalf(flags, t.epoch());
}
/// Copies of a clause's R staging slots that steps of these flags lay out:
/// two halves with kParity, else one.
PURLIN_HD int stagingHalves(int flags) { return (flags & kParity) ? 2 : 1; }

/// The line format of step flags (kFmtNone: not flagged).
PURLIN_HD int lineFmtOf(int flags) { return (flags & kLineFlags) >> 2; }
static_assert(kFlagged >> 2 == kFmtLL && kFlagged128 >> 2 == kFmtLL128,
              "step flags carry the line format in bits 2-3");
/// Bytes of a line, and of the data it holds.
PURLIN_HD int lineBytes(int fmt) { return fmt == kFmtLL128 ? 128 : 16; }
PURLIN_HD int lineData(int fmt) { return fmt == kFmtLL128 ? 120 : 8; }
/// Offset, in its line, of a line's flag (LL: the first of its two).
PURLIN_HD int lineFlagAt(int fmt) { return fmt == kFmtLL128 ? 120 : 4; }
/// The slot byte of data byte d.
PURLIN_HD int64_t lineByteOf(int fmt, int64_t d) {
  const int64_t n = lineData(fmt), k = d % n;
  return d / n * lineBytes(fmt) + (fmt == kFmtLL128 || k < 4 ? k : k + 4);
}
/// The slot byte of line j's flag.
PURLIN_HD int64_t lineFlagOf(int fmt, int64_t j) {
  return j * lineBytes(fmt) + lineFlagAt(fmt);
}
/// Bytes of a slot of `bytes` data bytes (fmt kFmtNone: plain): whole lines
/// (LL: whole 16-byte vectors of data, two lines each), a multiple of 16.
PURLIN_HD int64_t slotBytesOf(int fmt, int64_t bytes) {
  if (fmt == kFmtLL128)
    return (bytes + 119) / 120 * 128;
  return (bytes + 15) / 16 * (fmt == kFmtLL ? 32 : 16);
}
/// Elements that the pieces of a step with these flags start on (the
/// executor's splitRange granule), and that a general clause's slot parts
/// are rounded up to: a 16-byte vector (vecElems: LL's two lines), or for
/// LL128 a whole line, so that each line, and its one flag, has one writer.
PURLIN_HD int64_t pieceElems(int flags, int64_t elemSize) {
  return (lineFmtOf(flags) == kFmtLL128 ? 120 : 16) / elemSize;
}
/// The same from a step's target (its vecElems, 16 / elemSize on every
/// target, is a constant of the SM kernels: the default plans' steps keep
/// their divisions by constants).
template <class Tgt> PURLIN_HD int64_t pieceElemsOf(const Tgt &t, int flags) {
  return lineFmtOf(flags) == kFmtLL128 ? t.vecElems() * 120 / 16 : t.vecElems();
}

} // namespace exec
} // namespace purlin
