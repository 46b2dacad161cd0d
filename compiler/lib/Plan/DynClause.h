// The clause contract of atom-kernels/common/exec.h, met at run time: the
// checker runs the executor's own step functions on a collective it only
// knows as data. purlinc generates one struct per clause with compile-time
// constants (so that the GPU code folds them); DynClause<K> has the same
// members, read from a table that a DynScope fills from a BoundCollective for
// the duration of one check. exec.h only uses the members as values (never
// as constant expressions), so both kinds of clause compile against it --
// except kGeneral, which picks exec.h's paths at compile time: a general
// clause (maps or sets) runs as DynClause<K, true>, like the generated
// clause that declares kGeneral.
//
// The table is global state while a scope lives: one scope at a time (not
// thread-safe), cleared when the scope ends so that nothing leaks from one
// check into the next.
#pragma once

#include "purlin/spec/Exec.h"
#include "purlin/spec/Collective.h"

#include <cassert>

namespace purlin {
namespace check {

/// What DynClause<K> reads: the bound collective and its clause roles.
struct DynTable {
  const BoundCollective *bc = nullptr;
  bool failed = false; // an expression did not evaluate (a table index out
                       // of range, say): the check reports it
  // Per clause: isGeneralClause, computed once per scope (runStep asks on
  // every step it runs, probes included; it walks the clause's expressions).
  std::vector<bool> general;
};

template <int K, bool G = false> struct DynClause {
  static constexpr bool kGeneral = G;
  static inline unsigned kRankDims = 0;
  static inline int kIndex = K, kDims = 0;
  static inline int kFromRole = exec::kEvery, kFromDim = -1;
  static inline int kToRole = exec::kEvery, kToDim = -1;
  static inline int kFromBuf = 0, kToBuf = 0, kOp = exec::kCopy;
  static inline DynTable *table = nullptr;
  // A fixed rank is a function of the parameters alone: evaluated once per
  // scope (flows() asks for it on every signal word of a wait).
  static inline int64_t fixedFrom = 0, fixedTo = 0;

  static int64_t fromFixed(const exec::Params &) { return fixedFrom; }
  static int64_t toFixed(const exec::Params &) { return fixedTo; }
  static int64_t extent(int d, const int64_t *c, const exec::Params &) {
    return eval(clause().extent[d], c);
  }
  static int64_t fromIndex(const int64_t *c, const exec::Params &) {
    return eval(clause().fromIndex, c);
  }
  static int64_t toIndex(const int64_t *c, const exec::Params &) {
    return eval(clause().toIndex, c);
  }
  static int64_t fromRank(const int64_t *c, int64_t v, const exec::Params &) {
    return kFromRole == exec::kEvery ? v : eval(clause().fromRank, c, 0, v);
  }
  static int64_t toRank(const int64_t *c, int64_t v, const exec::Params &) {
    return kToRole == exec::kEvery ? v : eval(clause().toRank, c, 1, v);
  }
  static int64_t fromCount(const int64_t *c, const exec::Params &) {
    return clause().fromSet ? eval(clause().fromCount, c) : 1;
  }
  static int64_t toCount(const int64_t *c, const exec::Params &) {
    return clause().toSet ? eval(clause().toCount, c) : 1;
  }

private:
  static const BoundCollective::BoundClause &clause() {
    assert(table && table->bc && "DynClause used outside a DynScope");
    return table->bc->clauses[K];
  }
  // Slots: the scalar parameters, then the clause's coordinates, then the
  // set variables (`var` of side `side`: 0 from, 1 to).
  static int64_t eval(const CompiledExpr &e, const int64_t *c, int side = -1,
                      int64_t var = 0) {
    const BoundCollective &bc = *table->bc;
    int64_t slots[32 + exec::kMaxDims + 2];
    const int n = bc.dimSlot0;
    assert(n <= 32 && bc.varSlot + 2 <= 32 + exec::kMaxDims + 2);
    for (int i = 0; i < n; ++i)
      slots[i] = bc.slots[i];
    for (int d = n; d < bc.varSlot + 2; ++d)
      slots[d] = 0;
    for (int d = 0; d < kDims; ++d)
      slots[n + d] = c ? c[d] : 0;
    if (side >= 0)
      slots[bc.varSlot + side] = var;
    int64_t v = 0;
    if (!e.eval(slots, v)) {
      table->failed = true;
      return 0;
    }
    return v;
  }

public:
  /// Sets fixedFrom / fixedTo (DynScope, once the members are set).
  static void bindFixed() {
    fixedFrom = kFromRole == exec::kFixed ? eval(clause().fromRank, nullptr) : 0;
    fixedTo = kToRole == exec::kFixed ? eval(clause().toRank, nullptr) : 0;
  }
};

/// Points DynClause<0..kMaxClauses-1> at `bc` for its lifetime.
class DynScope {
public:
  DynScope(const BoundCollective &bc, DynTable &t);
  ~DynScope();
  DynScope(const DynScope &) = delete;
  DynScope &operator=(const DynScope &) = delete;
};

} // namespace check
} // namespace purlin
