// Where the checker calls the executor: DynClause set-up, one step of a plan
// through exec.h's step functions (the calls Codegen emits, with the same
// arguments: execArgs), exec.h's scratch layout, and the symbolic target's
// side of the Target contract.
#include "CheckerSim.h"

namespace purlin {
namespace check {

static_assert(exec::kMaxClauses == 4, "DynScope sets DynClause<0..3>");

namespace {
int roleOf(const RankRole &r) {
  return r.kind == RankRole::Every   ? exec::kEvery
         : r.kind == RankRole::Coord ? exec::kCoord
         : r.kind == RankRole::Fixed ? exec::kFixed
         : r.kind == RankRole::Map   ? exec::kMap
                                     : exec::kSet;
}

template <int K, bool G> void setClause(const BoundCollective *bc, DynTable *t) {
  using D = DynClause<K, G>;
  D::table = t;
  D::kIndex = K;
  if (!bc || K >= (int)bc->clauses.size()) {
    D::kDims = 0;
    D::kRankDims = 0;
    D::kFromRole = D::kToRole = exec::kEvery;
    D::kFromDim = D::kToDim = -1;
    D::kFromBuf = D::kToBuf = 0;
    D::kOp = exec::kCopy;
    return;
  }
  const Clause &cl = bc->coll->clauses[K];
  const RankRole f = rankRole(*bc->coll, cl, cl.from.rank),
                 to = rankRole(*bc->coll, cl, cl.to.rank);
  D::kDims = (int)cl.dims.size();
  D::kRankDims = rankDims(cl);
  D::kFromRole = roleOf(f);
  D::kFromDim = f.dim;
  D::kToRole = roleOf(to);
  D::kToDim = to.dim;
  D::kFromBuf = bc->clauses[K].fromBuf;
  D::kToBuf = bc->clauses[K].toBuf;
  // As Codegen: an op parameter is the launch's op (Shared::op).
  D::kOp = cl.opParam.empty() ? (int)cl.op : exec::kOpParam;
  D::bindFixed();
}

void setAll(const BoundCollective *bc, DynTable *t) {
  setClause<0, false>(bc, t);
  setClause<1, false>(bc, t);
  setClause<2, false>(bc, t);
  setClause<3, false>(bc, t);
  setClause<0, true>(bc, t);
  setClause<1, true>(bc, t);
  setClause<2, true>(bc, t);
  setClause<3, true>(bc, t);
}

bool general(const BoundCollective &bc, int k) {
  const DynTable *t = DynClause<0>::table;
  if (t && t->bc == &bc && (size_t)k < t->general.size())
    return t->general[k];
  return isGeneralClause(*bc.coll, bc.coll->clauses[k]);
}

template <class C>
void runStepT(SymTarget &t, const BoundCollective &bc, const Step &st, int ch) {
  const ExecArgs a = execArgs(st);
  switch (st.kind) {
  case StepKind::Stage:
    if (st.stage == StageMode::Copy)
      exec::stageCopy<C>(t, bc.bufElems[C::kFromBuf], ch);
    else if (st.stage == StageMode::Push)
      exec::stagePush<C>(t, ch, a.flags);
    return;
  case StepKind::Notify:
    exec::notify<C>(t, st.signal, a.peers, ch, a.flags);
    return;
  case StepKind::Wait:
    exec::wait<C>(t, st.signal, a.peers, ch, a.flags);
    return;
  case StepKind::Consume:
    exec::consume<C>(t, a.sel, a.src, a.dst, ch, a.flags, a.lo, a.hi);
    return;
  }
}
template <class C>
int64_t layoutClause(const ScratchArea &a, const BoundCollective &bc,
                     exec::Shared &S, int64_t off) {
  if (a.kind == ScratchArea::Slots)
    return exec::layoutSlots<C>(&S, a.slotFlags(), off);
  if (a.kind == ScratchArea::Received) // the model: elements of the launch's type
    return exec::layoutReceived<C>(&S, bc.bufElems[C::kToBuf], S.elemSize, off);
  return exec::layoutPartial<C>(&S, bc.bufElems[C::kFromBuf], off);
}
} // namespace

DynScope::DynScope(const BoundCollective &bc, DynTable &t) {
  assert(!DynClause<0>::table && "one DynScope at a time");
  t.bc = &bc;
  t.failed = false;
  t.general.clear();
  for (const Clause &cl : bc.coll->clauses)
    t.general.push_back(isGeneralClause(*bc.coll, cl));
  setAll(&bc, &t);
}

DynScope::~DynScope() { setAll(nullptr, nullptr); }

void runStep(SymTarget &t, const Collective &, const BoundCollective &bc,
             const Step &st, int chunk) {
  const bool g = general(bc, st.clause);
  switch (st.clause) {
  case 0:
    return g ? runStepT<DynClause<0, true>>(t, bc, st, chunk)
             : runStepT<DynClause<0>>(t, bc, st, chunk);
  case 1:
    return g ? runStepT<DynClause<1, true>>(t, bc, st, chunk)
             : runStepT<DynClause<1>>(t, bc, st, chunk);
  case 2:
    return g ? runStepT<DynClause<2, true>>(t, bc, st, chunk)
             : runStepT<DynClause<2>>(t, bc, st, chunk);
  case 3:
    return g ? runStepT<DynClause<3, true>>(t, bc, st, chunk)
             : runStepT<DynClause<3>>(t, bc, st, chunk);
  }
}

int64_t layoutScratch(const Collective &c, const Plan &p,
                      const BoundCollective &bc, exec::Shared &S) {
  S.parityStride = 0; // laid out for this configuration only
  exec::layoutReset(&S);
  int64_t off = 0;
  for (const ScratchArea &a : scratchAreas(c, p)) {
    if (a.kind == ScratchArea::Copy) {
      off = exec::layoutCopy(&S, a.index, bc.bufElems[a.index], off);
      continue;
    }
    const bool g = general(bc, a.index);
    switch (a.index) {
    case 0:
      off = g ? layoutClause<DynClause<0, true>>(a, bc, S, off)
              : layoutClause<DynClause<0>>(a, bc, S, off);
      break;
    case 1:
      off = g ? layoutClause<DynClause<1, true>>(a, bc, S, off)
              : layoutClause<DynClause<1>>(a, bc, S, off);
      break;
    case 2:
      off = g ? layoutClause<DynClause<2, true>>(a, bc, S, off)
              : layoutClause<DynClause<2>>(a, bc, S, off);
      break;
    case 3:
      off = g ? layoutClause<DynClause<3, true>>(a, bc, S, off)
              : layoutClause<DynClause<3>>(a, bc, S, off);
      break;
    }
  }
  return exec::layoutEnd(&S, off);
}

//===----------------------------------------------------------------------===//
// SymTarget: the contract's calls, answered from the Sim's state.
//===----------------------------------------------------------------------===//

int SymTarget::rank() const { return sim_.procs_[proc_].rank; }
int SymTarget::lane() const { return sim_.procs_[proc_].lane; }
const exec::Shared &SymTarget::shared() const { return sim_.S_; }
uint64_t SymTarget::epoch() const { return sim_.procs_[proc_].launch + 1; }
int64_t SymTarget::vecElems() const { return 16 / sim_.es_; }
exec::Move *SymTarget::laneMoves() { return sim_.moves_; }

// A barrier ends the lane's phase: what follows is ordered after what the
// lane's threads did before it.
void SymTarget::barrier() {
  if (!sim_.probe_)
    ++sim_.procs_[proc_].clk[proc_];
}

// The acquire of the waits before it: their notifies' clocks join here.
bool SymTarget::barrierOr(bool v) {
  if (!sim_.probe_)
    sim_.flushJoins();
  barrier();
  return v;
}

void SymTarget::signal(uint64_t *w, uint64_t v) { sim_.signalWord(w, v); }
bool SymTarget::wait(const uint64_t *w, uint64_t v) {
  sim_.waitWord(w, v);
  return true;
}

bool SymTarget::move(const exec::Move &m, int64_t a, int64_t b, int, int) {
  sim_.moveNames(m, a, b);
  return true;
}

// The register path is taken, or declined as a GPU target declines on
// alignment, by turns (rank, lane and launch), so that both of exec.h's
// consume paths run, and lanes of one step may take different ones.
bool SymTarget::moveVec(const char *const *src, int nsrc, char *const *dst,
                        int ndst, int64_t soff, int64_t doff, int64_t bytes,
                        int op, int, int) {
  const Sim::Proc &p = sim_.procs_[proc_];
  if ((p.rank + p.lane + p.launch) % 2 == 1)
    return false;
  sim_.moveFlat(src, nsrc, dst, ndst, soff, doff, bytes, op);
  return true;
}

// The flagged register push, taken or declined by the same turns: the
// names of the range as lines into each slot (a flat Move per slot).
bool SymTarget::pushLines(int fmt, const char *src, char *const *dst, int ndst,
                          int64_t soff, int64_t doff, int64_t bytes, int, int) {
  const Sim::Proc &p = sim_.procs_[proc_];
  const int64_t es = sim_.es_;
  if ((p.rank + p.lane + p.launch) % 2 == 1 || soff % es || doff % es)
    return false;
  exec::Move m = exec::linesPushMove(fmt, src, soff, doff, bytes, es);
  for (int i = 0; i < ndst; ++i) {
    m.dst[0] = dst[i];
    sim_.moveNames(m, doff / es, (doff + bytes) / es);
  }
  return true;
}

// The flagged register consume, taken or declined by the same turns: the
// slots' lines of the range, combined into the destination (one flat Move).
int SymTarget::consumeLines(int fmt, const char *const *src, int nsrc,
                            char *dst, int64_t soff, int64_t doff,
                            int64_t bytes, int op, int, int) {
  const Sim::Proc &p = sim_.procs_[proc_];
  const int64_t es = sim_.es_;
  if ((p.rank + p.lane + p.launch) % 2 == 1 || soff % es || doff % es)
    return 0;
  const exec::Move m =
      exec::linesConsumeMove(fmt, src, nsrc, dst, soff, doff, bytes, es, op);
  sim_.moveNames(m, soff / es, (soff + bytes) / es);
  return 1;
}

} // namespace check
} // namespace purlin
