// The checker's postcondition and its diagnostics. After each launch, every
// output element a name writes holds exactly the name's value (a copy: the
// contribution's term; a reduction: the contributions combined by the op in
// ascending contributor rank), computed here from the reference semantics
// (BoundCollective::visit, as the reference evaluator does), never from the
// executor; every other output element holds what it held when the launch
// started; every input element not shared with an output holds what the
// caller wrote. Problems are reported at the step that wrote the element.
#include "CheckerSim.h"

#include <algorithm>
#include <map>

namespace purlin {
namespace check {

void Sim::fail(int step, const std::string &msg) {
  if (failed_)
    return;
  failed_ = true;
  diags_.push_back({step, msg});
}

std::string Sim::suffix() const {
  std::string s;
  if (cfg_.oneLaunch)
    s += " (every rank in one launch, boundary syncs skipped)";
  if (cfg_.alias == Alias::Any)
    s += " (outputs overlapping inputs anyhow)";
  else if (cfg_.alias == Alias::SameStart)
    s += " (each output at its input's address)";
  return s + " [" + cfg_.text + "]";
}

std::string Sim::who(int proc, int step) const {
  if (proc >= P_)
    return "the caller of rank " + std::to_string(proc - P_);
  std::string s = "rank " + std::to_string(procs_[proc].rank) + " lane " +
                  std::to_string(procs_[proc].lane);
  if (step >= 0)
    s += std::string(" (") + stepKindName(plan_.steps[step].kind) + ")";
  return s;
}

// Where a cell lies. An element shared by an input and an output (outputs
// at their inputs' addresses) is named as the output where `asOutput`.
std::string Sim::where(int cell, bool asOutput) const {
  const Cell &c = cells_[cell];
  const Area &a = areas_[c.area];
  const int64_t i = cell - a.cell0;
  const std::string of = " of rank " + std::to_string(a.rank);
  if (a.buf >= 0) {
    int b = a.buf;
    if (c.outBuf >= 0 && (asOutput || c.inBuf < 0))
      b = c.outBuf;
    else if (c.inBuf >= 0)
      b = c.inBuf;
    return "'" + c_.buffers[b].name + "' element " + std::to_string(i) + of;
  }
  const int64_t byte = i * es_;
  for (const ScratchArea &sa : scratchAreas(c_, plan_)) {
    const bool copy = sa.kind == ScratchArea::Copy,
               recv = sa.kind == ScratchArea::Received;
    const int buf = copy ? sa.index
                    : recv ? bc_->clauses[sa.index].toBuf
                           : bc_->clauses[sa.index].fromBuf;
    const int64_t lo = copy   ? S_.scratchOff[buf]
                       : recv ? S_.receivedOff[sa.index]
                              : S_.partialOff[sa.index],
                  n = bc_->bufElems[buf] * es_;
    if (sa.kind != ScratchArea::Slots && byte >= lo && byte < lo + n)
      return "element " + std::to_string((byte - lo) / es_) +
             (copy   ? " of the scratch copy of '" + c_.buffers[buf].name + "'"
              : recv ? " of the received area of clause " + std::to_string(sa.index)
                     : " of the partial results of clause " + std::to_string(sa.index)) +
             of;
  }
  for (const ScratchArea &sa : scratchAreas(c_, plan_)) {
    const int k = sa.index;
    const int64_t lo = S_.stagingOff[k], sb = S_.slotBytes[k];
    const int halves = exec::stagingHalves(sa.slotFlags());
    // Half 1 of a parity area lies parityStride bytes after half 0.
    const int half = halves > 1 && byte >= S_.parityStride ? 1 : 0;
    const int64_t at = byte - (half ? S_.parityStride : 0);
    if (sa.kind != ScratchArea::Slots || sb <= 0 || at < lo || at >= lo + R_ * sb)
      continue;
    // Flagged lines (exec/Lines.h): the data byte at a slot byte, or the
    // flag of a line (LL128: a word of its own).
    const int fmt = (int)sa.lines;
    const int64_t in = (at - lo) % sb, slot = (at - lo) / sb;
    const std::string ofHalf =
        halves > 1 ? std::string(half ? " (half 1: odd launches)" : " (half 0: even launches)")
                   : std::string();
    int64_t d = in;
    if (fmt != exec::kFmtNone) {
      const int64_t line = in / exec::lineBytes(fmt), k = in % exec::lineBytes(fmt);
      if (fmt == exec::kFmtLL128 && k >= exec::lineFlagAt(fmt))
        return "the flag of line " + std::to_string(line) + " of staging slot " +
               std::to_string(slot) + ofHalf + of;
      d = line * exec::lineData(fmt) + (fmt == exec::kFmtLL && k >= 8 ? k - 4 : k);
    }
    return "element " + std::to_string(d / es_) + " of staging slot " +
           std::to_string(slot) + ofHalf + of;
  }
  return "scratch byte " + std::to_string(byte) + of;
}

void Sim::race(int cell, bool curWrite, int other, int otherStep,
               bool otherWrite, int otherLaunch) {
  auto describe = [&](int proc, int step, bool write, int launch) {
    if (proc >= P_)
      return who(proc, -1) + (write ? " writes " + where(cell, false) + " before launch " +
                                          std::to_string(launch + 1)
                                    : " reads " + where(cell, true) + " after launch " +
                                          std::to_string(launch));
    const bool outputRead = step >= 0 && plan_.steps[step].kind == StepKind::Consume &&
                            plan_.steps[step].src == SourceKind::Output;
    return who(proc, step) + (write ? " writes " : " reads ") +
           where(cell, write || outputRead) + " in launch " + std::to_string(launch + 1);
  };
  const int curLaunch = cur_ < P_ ? procs_[cur_].launch : callerDone_[cur_ - P_];
  std::string a = describe(cur_, curStep_, curWrite, curLaunch),
              b = describe(other, otherStep, otherWrite, otherLaunch);
  // At a plan step: the later one in the plan where both are steps (the
  // one a missing wait would have to precede), else the step's.
  const bool curIsStep = cur_ < P_ && curStep_ >= 0;
  const bool curAt =
      curIsStep && (other >= P_ || otherStep < 0 || curStep_ >= otherStep);
  fail(curAt ? curStep_ : otherStep,
       "unordered access (a missing wait, or a buffer reused before its consumer "
       "is done): " +
           (curAt ? a + " while " + b : b + " while " + a) + suffix());
}

void Sim::ensureExpected(int e) {
  if ((int)expected_.size() > e && !expected_[e].empty())
    return;
  expected_.resize(kLaunches);
  const int nb = (int)c_.buffers.size();
  auto &ex = expected_[e];
  ex.assign(R_, std::vector<std::vector<int>>(nb));
  const bool clauses = expClause_.empty();
  if (clauses)
    expClause_.assign(R_, std::vector<std::vector<int>>(nb));
  for (int q = 0; q < R_; ++q)
    for (int o = 0; o < nb; ++o)
      if (c_.buffers[o].role == BufferRole::Out) {
        ex[q][o].assign(bc_->bufElems[o], -1);
        if (clauses)
          expClause_[q][o].assign(bc_->bufElems[o], -1);
      }
  std::vector<int> kids;
  std::vector<int64_t> F, D;
  std::vector<std::vector<int>> before(R_);
  for (int ci = 0; ci < (int)c_.clauses.size(); ++ci) {
    const BoundCollective::BoundClause &k = bc_->clauses[ci];
    // A step reads an output as the earlier clauses left it (the terms
    // expected there so far), before its own writes.
    const bool step = readsOutput(c_, ci);
    for (int p = 0; step && p < R_; ++p)
      before[p] = ex[p][k.fromBuf];
    std::string err;
    bc_->visit(ci, [&](const int64_t *s) {
      int64_t fi, ti;
      if (!k.fromIndex.eval(s, fi) || !k.toIndex.eval(s, ti) ||
          !bc_->ranksOf(ci, true, s, F) || !bc_->ranksOf(ci, false, s, D))
        return true; // checkBinding rejects such a binding first
      std::sort(F.begin(), F.end()); // ascending contributor rank
      kids.clear();
      for (int64_t p : F)
        if (p >= 0 && p < R_ && fi >= 0 && fi < bc_->bufElems[k.fromBuf])
          kids.push_back(step ? before[p][fi] : terms_.input((int)p, k.fromBuf, fi, e));
      for (int x : kids)
        if (x < 0)
          return true; // a read of nothing written: checkBinding rejects it
      const int term = terms_.combine((int)k.op, kids.data(), (int)kids.size());
      for (int64_t q : D)
        if (q >= 0 && q < R_ && ti >= 0 && ti < bc_->bufElems[k.toBuf]) {
          ex[q][k.toBuf][ti] = term;
          if (clauses)
            expClause_[q][k.toBuf][ti] = ci;
        }
      return true;
    }, err);
  }
}

void Sim::postcondition(int r, int e) {
  if (failed_ || !pending_.empty())
    return;
  ensureExpected(e);
  for (const Area &a : areas_) {
    if (a.rank != r || a.buf < 0)
      continue;
    for (int64_t i = 0; i < a.cells; ++i) {
      const int cell = (int)(a.cell0 + i);
      const Cell &c = cells_[cell];
      if (c.outBuf >= 0) {
        const int want = expected_[e][r][c.outBuf][i];
        if (want >= 0 && c.term != want)
          return mismatch(cell, want, e, expClause_[r][c.outBuf][i]);
        if (want < 0 && c.term != c.start) {
          pending_.push_back({c.wStep, who(c.wProc, c.wStep) + " writes " + where(cell, true) +
                                           " in launch " + std::to_string(e + 1) +
                                           ", which no name of the collective writes" +
                                           suffix()});
          return;
        }
      } else if (c.inBuf >= 0 && c.term != terms_.input(r, c.inBuf, i, e)) {
        pending_.push_back({c.wStep, "the input " + where(cell, false) + " changed in launch " +
                                         std::to_string(e + 1) + ": " + who(c.wProc, c.wStep) +
                                         " wrote " + terms_.str(c.term, c_, e) + " there" +
                                         suffix()});
        return;
      }
    }
  }
}

void Sim::mismatch(int cell, int want, int e, int clause) {
  const Cell &c = cells_[cell];
  const std::string at = where(cell, true);
  if (c.wProc < 0 || c.wProc >= P_ || c.wLaunch != e) {
    int step = -1;
    for (size_t s = 0; s < plan_.steps.size() && step < 0; ++s)
      if (plan_.steps[s].kind == StepKind::Consume && plan_.steps[s].clause == clause)
        step = (int)s;
    pending_.push_back({step, "no step writes " + at + " in launch " + std::to_string(e + 1) +
                                  ", which its name (clause " + std::to_string(clause) +
                                  ") sets to " + terms_.str(want, c_, e) + suffix()});
    return;
  }
  std::vector<int> got, exp;
  terms_.leaves(c.term, got);
  terms_.leaves(want, exp);
  std::map<int, int> need;
  for (int t : exp)
    ++need[t];
  for (int t : got)
    --need[t];
  std::string why;
  for (auto &kv : need) {
    if (kv.second > 0)
      why += std::string(why.empty() ? "" : "; ") + "the contribution " +
             terms_.str(kv.first, c_, e) + " is missing";
    else if (kv.second < 0 && std::count(exp.begin(), exp.end(), kv.first))
      why += std::string(why.empty() ? "" : "; ") + "the contribution " +
             terms_.str(kv.first, c_, e) + " is combined more than once";
    else if (kv.second < 0)
      why += std::string(why.empty() ? "" : "; ") + terms_.str(kv.first, c_, e) +
             " is no contribution of its name";
  }
  if (why.empty() && got != exp)
    why = "its contributions are combined out of ascending rank order";
  if (why.empty() && terms_.node(c.term).op != terms_.node(want).op)
    why = std::string("it is combined by ") + redOpName((RedOp)terms_.node(c.term).op) +
          " where its name reduces by " + redOpName((RedOp)terms_.node(want).op);
  if (why.empty())
    why = std::string("a partial result stored as ") + dtypeName(terms_.dtype()) +
          " is combined further, which is not exact for " +
          redOpName((RedOp)terms_.node(want).op) +
          " (exact: min and max; sum and prod of f32, f64 and integers)";
  pending_.push_back({c.wStep, "wrong result: " + at + " holds " + terms_.str(c.term, c_, e) +
                                   " after launch " + std::to_string(e + 1) +
                                   ", where its name gives " + terms_.str(want, c_, e) +
                                   ": " + why + suffix()});
}

} // namespace check
} // namespace purlin
