// The checker's simulation: memory, the callers, the processes and their
// launches (CheckerSim.h says what is simulated and why; CheckAccess.cpp
// the accesses and their rules).
#include "CheckerSim.h"

#include "purlin/spec/Params.h"

#include <algorithm>

namespace purlin {
namespace check {

namespace {
void join(std::vector<int32_t> &a, const int32_t *b) {
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = std::max(a[i], b[i]);
}
void join(std::vector<int32_t> &a, const std::vector<int32_t> &b) { join(a, b.data()); }
} // namespace

Sim::Sim(const Collective &c, const Plan &p, std::vector<PlanDiag> &diags)
    : c_(c), plan_(p), diags_(diags) {}

std::vector<int32_t> &Sim::clockOf(int proc) {
  return proc < P_ ? procs_[proc].clk : callerClk_[proc - P_];
}

bool Sim::setup() {
  // Every run starts afresh (the vectors keep their storage).
  areas_.clear();
  scratchCell0_.clear();
  readPool_.clear();
  clocks_.clear();
  snapWho_.clear();
  pendingJoins_.clear();
  joinCache_.clear();
  prog_.clear();
  expected_.clear();
  expClause_.clear();
  pending_.clear();
  cur_ = curStep_ = -1;
  probe_ = blocked_ = failed_ = false;
  moveSeq_ = 0;
  R_ = cfg_.R;
  L_ = plan_.lanes;
  K_ = plan_.chunks;
  P_ = R_ * L_;
  NP_ = P_ + R_;
  es_ = dtypeSize(cfg_.dtype);
  const int nb = (int)c_.buffers.size();
  S_ = exec::Shared();
  S_.R = R_;
  S_.L = L_;
  S_.K = K_;
  S_.op = (int)bc_->binding.redop;
  S_.elemSize = es_;
  S_.nsignals = (int)plan_.signals.size();
  S_.oneLaunch = cfg_.oneLaunch ? 1 : 0;
  std::string err;
  if (!fillParams(c_, bc_->binding, S_.P, err)) {
    fail(-1, "cannot bind the executor's parameters: " + err);
    return false;
  }
  if (!terms_.reset(cfg_.dtype, R_, bc_->bufElems, kLaunches)) {
    fail(-1, "the buffers are too large to check" + suffix());
    return false;
  }
  const int64_t scratchBytes = layoutScratch(c_, plan_, *bc_, S_);

  // Simulated addresses: every area 16-byte aligned, with a gap after it
  // that no access may touch. An output aliased to an input (SameStart)
  // has no area of its own: it starts at its input's address.
  auto round16 = [](int64_t b) { return (b + 15) / 16 * 16; };
  const int64_t gap = 64;
  std::vector<std::vector<int64_t>> at(R_, std::vector<int64_t>(nb, -1));
  std::vector<int64_t> regionElems(nb, 0), scratchAt(R_);
  for (int b = 0; b < nb; ++b) {
    regionElems[b] = bc_->bufElems[b];
    for (int o = 0; o < nb; ++o)
      if (cfg_.aliasOf[o] == b)
        regionElems[b] = std::max(regionElems[b], bc_->bufElems[o]);
  }
  int64_t off = gap;
  for (int r = 0; r < R_; ++r) {
    for (int b = 0; b < nb; ++b)
      if (cfg_.aliasOf[b] < 0) {
        at[r][b] = off;
        off += round16(regionElems[b] * es_) + gap;
      }
    scratchAt[r] = off;
    off += round16(scratchBytes) + gap;
  }
  arena_.reset(new char[off]);
  cells_.assign(off / es_, Cell());
  for (int r = 0; r < R_; ++r) {
    for (int b = 0; b < nb; ++b) {
      const int home = cfg_.aliasOf[b] < 0 ? b : cfg_.aliasOf[b];
      S_.buf[r][b] = arena_.get() + at[r][home];
      const int64_t cell0 = at[r][home] / es_;
      if (home == b) {
        areas_.push_back({cell0, regionElems[b], r, b});
        for (int64_t i = 0; i < regionElems[b]; ++i)
          cells_[cell0 + i].area = (int32_t)areas_.size() - 1;
      }
      for (int64_t i = 0; i < bc_->bufElems[b]; ++i) {
        Cell &cl = cells_[cell0 + i];
        (c_.buffers[b].role == BufferRole::In ? cl.inBuf : cl.outBuf) = (int8_t)b;
      }
    }
    S_.scratch[r] = arena_.get() + scratchAt[r];
    scratchCell0_.push_back(scratchAt[r] / es_);
    areas_.push_back({scratchAt[r] / es_, round16(scratchBytes) / es_, r, -1});
    for (int64_t i = 0; i < areas_.back().cells; ++i)
      cells_[areas_.back().cell0 + i].area = (int32_t)areas_.size() - 1;
  }
  // Signal words of all ranks in one array: a word's index is its place.
  sigWords_ = exec::signalWords(S_.nsignals, R_, L_, K_);
  sigMem_.assign(R_ * sigWords_, 0);
  sigs_.assign(R_ * sigWords_, SigWord());
  for (int r = 0; r < R_; ++r)
    S_.signals[r] = sigMem_.data() + r * sigWords_;

  procs_.assign(P_, Proc());
  for (int pi = 0; pi < P_; ++pi) {
    procs_[pi].rank = pi / L_;
    procs_[pi].lane = pi % L_;
    procs_[pi].clk.assign(NP_, 0);
  }
  snapOf_.assign(NP_, {-1, -1});
  callerClk_.assign(R_, std::vector<int32_t>(NP_, 0));
  rankEnd_.assign(R_, std::vector<int32_t>(NP_, 0));
  lanesDone_.assign(kLaunches, std::vector<int>(R_, 0));
  callerDone_.assign(R_, 0);
  inReads_.assign(R_, std::vector<std::pair<int32_t, int32_t>>(P_, {-1, 0}));
  outWritten_.assign(R_, std::vector<bool>(kLaunches, false));
  for (const StepRun &run : stepRuns(plan_))
    for (int ch = 0; ch < (run.chunked ? K_ : 1); ++ch)
      for (size_t s = run.begin; s < run.end; ++s)
        prog_.push_back({(int)s, ch});
  return true;
}

//===----------------------------------------------------------------------===//
// The caller of a rank: writes the inputs before each launch, reads the
// outputs after it (and checks the postcondition there).
//===----------------------------------------------------------------------===//

void Sim::callerAct(int r, int ended) {
  cur_ = P_ + r;
  curStep_ = -1;
  if (ended >= 0)
    postcondition(r, ended);
  std::vector<int32_t> &ck = callerClk_[r];
  for (int pass = 0; pass < 2; ++pass) {
    ++ck[P_ + r];
    for (const Area &a : areas_) {
      if (a.rank != r || a.buf < 0)
        continue;
      for (int64_t i = 0; i < a.cells; ++i) {
        const int cell = (int)(a.cell0 + i);
        Cell &cl = cells_[cell];
        if (pass == 0 && cl.outBuf >= 0 && ended >= 0)
          read(cell, cell, false);
        if (pass == 1 && cl.inBuf >= 0)
          write(cell, terms_.input(r, cl.inBuf, i, ended + 1), cell, false);
        if (pass == 1 && cl.outBuf >= 0) {
          if (ended < 0 && cl.inBuf < 0)
            cl.term = terms_.poison(r, cl.outBuf, i);
          cl.start = cl.term;
        }
      }
    }
  }
  ++callerDone_[r];
}

//===----------------------------------------------------------------------===//
// Processes: each (rank, lane) runs the plan's steps, launch after launch.
//===----------------------------------------------------------------------===//

bool Sim::stepProc(int pi, bool &progress) {
  Proc &pr = procs_[pi];
  const int r = pr.rank;
  while (!pr.finished && !failed_) {
    if (!pr.started) {
      // A launch starts after its caller wrote the inputs (in one launch:
      // after every caller did).
      for (int x = 0; x < R_; ++x)
        if ((cfg_.oneLaunch || x == r) && callerDone_[x] < pr.launch + 1)
          return false;
      for (int x = 0; x < R_; ++x)
        if (cfg_.oneLaunch || x == r)
          join(pr.clk, callerClk_[x]);
      ++pr.clk[pi];
      pr.started = true;
      pr.pc = 0;
      progress = true;
      continue;
    }
    if (pr.pc == prog_.size()) {
      const int e = pr.launch;
      join(rankEnd_[r], pr.clk);
      if (++lanesDone_[e][r] == L_) {
        if (!cfg_.oneLaunch) {
          join(callerClk_[r], rankEnd_[r]);
          callerAct(r, e);
        } else if (std::all_of(lanesDone_[e].begin(), lanesDone_[e].end(),
                               [&](int n) { return n == L_; })) {
          for (int x = 0; x < R_; ++x)
            for (int y = 0; y < R_; ++y)
              join(callerClk_[x], rankEnd_[y]);
          for (int x = 0; x < R_ && !failed_; ++x)
            callerAct(x, e);
        }
      }
      pr.started = false;
      pr.finished = ++pr.launch == kLaunches;
      progress = true;
      continue;
    }
    const auto [si, ch] = prog_[pr.pc];
    const Step &st = plan_.steps[si];
    cur_ = pi;
    curStep_ = si;
    SymTarget t(*this, pi);
    // A step that may wait runs first as a probe, without effects: it runs
    // for real only once every word or line it waits for is there.
    if (st.kind == StepKind::Wait || (st.kind == StepKind::Consume && st.flagged())) {
      // A wait blocked on a word that is still short is blocked still.
      if (st.kind == StepKind::Wait && pr.waitOn >= 0 &&
          sigs_[(size_t)pr.waitOn].value < pr.waitFor)
        return false;
      probe_ = true;
      blocked_ = false;
      probeWaitOn_ = -1;
      runStep(t, c_, *bc_, st, ch);
      probe_ = false;
      pr.waitOn = st.kind == StepKind::Wait && blocked_ ? probeWaitOn_ : -1;
      pr.waitFor = probeWaitFor_;
      if (blocked_)
        return false;
    }
    runStep(t, c_, *bc_, st, ch);
    ++pr.pc;
    progress = true;
  }
  return true;
}

bool Sim::run(BoundCollective &bc, const SimConfig &cfg) {
  bc_ = &bc;
  cfg_ = cfg;
  if (!setup())
    return false;
  DynTable &tab = *DynClause<0>::table;
  for (int r = 0; r < R_; ++r)
    callerAct(r, -1);
  bool progress = true;
  while (progress && !failed_) {
    progress = false;
    for (int pi = 0; pi < P_ && !failed_; ++pi)
      stepProc(pi, progress);
  }
  if (!failed_ && tab.failed)
    fail(-1, "a map of the collective does not evaluate" + suffix());
  if (failed_)
    return false;
  for (const Proc &p : procs_)
    if (!p.finished) {
      deadlock();
      return false;
    }
  if (!pending_.empty()) {
    diags_.push_back(pending_.front());
    return false;
  }
  return true;
}

void Sim::deadlock() {
  for (int pi = 0; pi < P_; ++pi) {
    const Proc &pr = procs_[pi];
    if (pr.finished || !pr.started || pr.pc >= prog_.size())
      continue;
    const Step &st = plan_.steps[prog_[pr.pc].first];
    const bool flagWait = st.kind == StepKind::Consume && st.flagged();
    if (st.kind != StepKind::Wait && !flagWait)
      continue;
    fail(prog_[pr.pc].first,
         "deadlock: rank " + std::to_string(pr.rank) + " waits for " +
             (flagWait ? "the flagged lines of clause " + std::to_string(st.clause) +
                             " from its srcs peers, which never push them"
                       : "'" + plan_.signals[st.signal] + "' from its " +
                             peerSetName(st.peers) + " peers, which never notify it") +
             suffix());
    return;
  }
  fail(-1, "deadlock: no process can run on" + suffix());
}

} // namespace check
} // namespace purlin
