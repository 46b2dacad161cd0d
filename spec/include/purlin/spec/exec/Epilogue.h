// Epilogues: the row-wise f32 work a rank applies to the names it receives
// before they are stored (docs/language.md, "Epilogues"). Part of the
// executor (purlin/spec/Exec.h explains the model); the reference
// evaluator (spec/lib/Epilogue.cpp) uses the same functions, so the host
// target matches it bit for bit.
//
// Generated code gives each epilogue as a struct (purlinc's Codegen):
//   kRowDims     the clause's leading coordinates that name a row;
//   kReductions  the row reductions, numbered in evaluation order (a
//                reduction's argument uses only lower-numbered ones);
//   reduceOp(k)  kEpiRowSum or kEpiRowMax;
//   element(x, pass, c, P, acc, red): one name's statements in pass `pass`:
//                pass k < kReductions folds reduction k's argument into
//                `acc` and returns; pass kReductions stores. `red[k]` is
//                reduction k's value for the row; `x` reads and stores
//                (EpiElem below).
// The step (consumeRows) gives each lane whole rows: the row reductions
// need every element of the row, and a lane's threads reduce them
// together (Tgt::rowReduce). Each pass reads the contributions again (from
// L2 on a GPU) rather than keep a row in registers: correct for any row
// length; the cost is one more read of the received names per reduction.
#pragma once

#include "purlin/spec/exec/GroupSteps.h"

#if !defined(__CUDACC_RTC__)
#include <math.h>
#endif

namespace purlin {
namespace exec {

enum EpiRowOp : int { kEpiRowSum = 0, kEpiRowMax = 1 };

} // namespace exec
} // namespace purlin

// The functions of an epilogue's values, as generated code calls them
// (Expr::cxx prints a call f(a) as purlin_epi_f(a)). IEEE f32: sqrtf is
// correctly rounded on the host and (without fast math) on the GPU.
PURLIN_HD float purlin_epi_sqrt(float x) { return sqrtf(x); }
PURLIN_HD float purlin_epi_abs(float x) { return fabsf(x); }
PURLIN_HD float purlin_epi_min(float a, float b) { return b < a ? b : a; }
PURLIN_HD float purlin_epi_max(float a, float b) { return a < b ? b : a; }
/// One step of a row reduction (and of the reference's, in element order).
PURLIN_HD float purlin_epi_fold(int op, float acc, float v) {
  return op == purlin::exec::kEpiRowMax ? purlin_epi_max(acc, v) : acc + v;
}
PURLIN_HD float purlin_epi_identity(int op) {
  union { // -infinity, without math.h (NVRTC) or a compiler builtin
    uint32_t u;
    float f;
  } minusInf = {0xff800000u};
  return op == purlin::exec::kEpiRowMax ? minusInf.f : 0.0f;
}
/// The received value: contributions combined in f32 in ascending rank
/// (DType.h's contract for narrow floats and f32, without the final
/// rounding); `op` a reduction op (exec::Op).
PURLIN_HD float purlin_epi_combine(int op, float acc, float v) {
  switch (op) {
  case purlin::exec::kProd:
    return acc * v;
  case purlin::exec::kMin:
    return purlin_epi_min(acc, v);
  case purlin::exec::kMax:
    return purlin_epi_max(acc, v);
  default: // sum, avg (divided at the end)
    return acc + v;
  }
}

namespace purlin {
namespace exec {

/// What an epilogue's statements see of one name: its received value, this
/// rank's inputs, this rank's outputs. Elements widen to f32 and narrow
/// with one rounding through the target (loadF, storeF).
template <class C, class Tgt> struct EpiElem {
  Tgt &t;
  const Shared &S;
  int r, src, op;
  const int64_t *c;
  PURLIN_HD float recv() const {
    const int64_t i = C::fromIndex(c, S.P);
    float acc = t.loadF(detail::mappedSource<C>(S, src, 0), i);
    for (int p = 1; p < S.R; ++p)
      acc = purlin_epi_combine(op, acc, t.loadF(detail::mappedSource<C>(S, src, p), i));
    return op == kAvg ? acc / (float)S.R : acc;
  }
  PURLIN_HD float load(int buf, int64_t i) const {
    return t.loadF((const char *)S.buf[r][buf], i);
  }
  PURLIN_HD void store(int buf, int64_t i, float v) const {
    t.storeF((char *)S.buf[r][buf], i, v);
  }
};

/// consume with an epilogue: the one-shot consume (`mine` from every
/// rank's input or scratch copy, `to self`) of clause C, whose names are
/// rows x elements, through epilogue E. Lane l of chunk k takes rows piece
/// (k, l); the lane's threads share each row.
template <class C, class E, class Tgt>
PURLIN_HD void consumeRows(Tgt &t, int src, int chunk) {
  if (t.aborted())
    return;
  static_assert(C::kFromRole == kEvery && C::kToRole == kEvery,
                "an epilogue's clause reads every rank and writes every rank");
  const Shared &S = t.shared();
  const Params &P = S.P;
  int64_t c[kMaxDims] = {0};
  int64_t nrows = 1, ninner = 1;
  for (int d = 0; d < C::kDims; ++d)
    (d < E::kRowDims ? nrows : ninner) *= C::extent(d, c, P);
  int64_t lo, hi;
  splitRange(nrows, (int64_t)S.K * S.L, (int64_t)chunk * S.L + t.lane(), 1, lo, hi);
  EpiElem<C, Tgt> x{t, S, t.rank(), src, detail::clauseOp<C>(S), c};
  for (int64_t row = lo; row < hi; ++row) {
    int64_t rem = row;
    for (int d = E::kRowDims - 1; d >= 0; --d) {
      const int64_t e = C::extent(d, c, P);
      c[d] = rem % e;
      rem /= e;
    }
    float red[E::kReductions + 1];
    for (int pass = 0; pass <= E::kReductions; ++pass) {
      const int rop = pass < E::kReductions ? E::reduceOp(pass) : kEpiRowSum;
      float acc = purlin_epi_identity(rop);
      for (int64_t e = t.thread(); e < ninner; e += t.threads()) {
        int64_t rest = e;
        for (int d = C::kDims - 1; d >= E::kRowDims; --d) {
          const int64_t ext = C::extent(d, c, P);
          c[d] = rest % ext;
          rest /= ext;
        }
        E::element(x, pass, c, P, acc, red);
      }
      if (pass < E::kReductions)
        red[pass] = t.rowReduce(acc, rop);
    }
  }
  t.barrier(); // the lane's step is whole, as after laneMoves
}

} // namespace exec
} // namespace purlin
