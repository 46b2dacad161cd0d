// The checker's simulation, continued: signals, the target's moves element
// by element, happens-before, races and the in-place rules (CheckerSim.h
// says what is simulated and why).
#include "CheckerSim.h"

#include <algorithm>

namespace purlin {
namespace check {

namespace {
void join(std::vector<int32_t> &a, const int32_t *b) {
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = std::max(a[i], b[i]);
}
} // namespace

//===----------------------------------------------------------------------===//
// Signals: a wait joins the clock of the first notify that reached the value
// (it may pass as soon as that one lands, whatever came later).
//===----------------------------------------------------------------------===//

int Sim::snapshot(int pi) {
  auto &s = snapOf_[pi];
  const std::vector<int32_t> &ck = clockOf(pi);
  if (s.first != ck[pi]) {
    clocks_.insert(clocks_.end(), ck.begin(), ck.end());
    snapWho_.push_back({pi, ck[pi]});
    s = {ck[pi], (int32_t)snapWho_.size() - 1};
  }
  return s.second;
}

Sim::SigWord &Sim::sigWord(const uint64_t *w) {
  if (w >= sigMem_.data() && w < sigMem_.data() + sigMem_.size())
    return sigs_[w - sigMem_.data()];
  fail(curStep_, "the executor addresses a signal word outside every rank's signals");
  static SigWord none;
  return none;
}

void Sim::signalWord(uint64_t *w, uint64_t v) {
  if (probe_)
    return;
  SigWord &s = sigWord(w);
  if (v <= s.value)
    return;
  const int id = snapshot(cur_);
  for (uint64_t u = s.value + 1; u <= v && u <= kLaunches; ++u)
    s.first[u] = id;
  s.value = v;
}

void Sim::waitWord(const uint64_t *w, uint64_t v) {
  // A probe already blocked: the step does not run yet, whatever the other
  // words hold (each is read when the step runs, below).
  if (probe_ && blocked_)
    return;
  SigWord &s = sigWord(w);
  if (probe_) {
    if (s.value < v && !failed_) {
      blocked_ = true;
      probeWaitOn_ = &s - sigs_.data();
      probeWaitFor_ = v;
    }
    return;
  }
  if (v >= 1 && v <= kLaunches && s.first[v] >= 0)
    pendingJoins_.push_back(s.first[v]); // joined at the lane's barrier
}

// The waits of a step join their notifies' clocks at the lane's barrier.
// Every lane of every rank often waits for the same notifies (all lanes of
// all peers): their join is computed once and kept.
void Sim::flushJoins() {
  if (pendingJoins_.empty())
    return;
  std::vector<int32_t> &ck = clockOf(cur_);
  if (pendingJoins_.size() < 4) {
    for (int id : pendingJoins_)
      joinSnapshot(id);
  } else {
    auto it = joinCache_.find(pendingJoins_);
    if (it == joinCache_.end()) {
      std::vector<int32_t> u(NP_, 0);
      for (int id : pendingJoins_)
        join(u, &clocks_[(size_t)id * NP_]);
      it = joinCache_.emplace(pendingJoins_, std::move(u)).first;
    }
    join(ck, it->second.data());
  }
  pendingJoins_.clear();
}

// Joins a snapshot of process x at phase t, unless the clock already knows
// x at t or later (then it holds all that x knew at t: clocks only grow).
void Sim::joinSnapshot(int id) {
  std::vector<int32_t> &ck = clockOf(cur_);
  const auto &who = snapWho_[id];
  if (ck[who.first] >= who.second)
    return;
  join(ck, &clocks_[(size_t)id * NP_]);
}

//===----------------------------------------------------------------------===//
// Data: the target's moves, element by element.
//===----------------------------------------------------------------------===//

int Sim::cellAt(const char *p, bool write) {
  const int64_t off = p - arena_.get();
  if (off >= 0 && off % es_ == 0 && off / es_ < (int64_t)cells_.size() &&
      cells_[off / es_].area >= 0)
    return (int)(off / es_);
  fail(curStep_, who(cur_, curStep_) + (write ? " writes" : " reads") +
                     " outside every buffer and scratch area" + suffix());
  return -1;
}

// Flagged lines (exec/Lines.h), in two models:
//  - LL: a line's data and its flags are written by one 16-byte store and
//    read by one load, so each element carries the flag: a flagged write
//    marks the element's own cell (Cell::flag, and the writer's clock), a
//    flagged read waits for it and joins that clock;
//  - LL128: a line's data is written by plain stores, then its flag word
//    (a cell of its own, written with the writer's clock: the release), and
//    a reader waits for the flag, joins its clock (the acquire) and then
//    reads the data as plain cells. So whatever a reader takes from a line
//    must be ordered before the flag it polled: a line whose data another
//    lane (or another move of the lane: its threads) writes is a race on
//    the data, or on the flag, which then has two writers.
// The flag's accesses are named apart from the data's (bit 31 of a name).
void Sim::moveNames(const exec::Move &m, int64_t a, int64_t b) {
  const exec::Box &bx = m.box;
  const int64_t seq = ++moveSeq_ << 32;
  const bool srcLines = m.ll == exec::kLinesSrc, dstLines = m.ll == exec::kLinesDst;
  const bool flagCells = m.fmt == exec::kFmtLL128; // LL128: a flag word a line
  const int64_t lineData = exec::lineData(m.fmt);
  // The flag cell of the line of element t on a lines side at `base`.
  auto flagCell = [&](const char *base, int64_t t, bool write) {
    return cellAt(base + exec::lineFlagOf(m.fmt, t * es_ / lineData), write);
  };
  const int64_t flagName = seq | 0x80000000ll;
  int kids[exec::kMaxRanks];
  for (int64_t t = a; t < b && !failed_; ++t) {
    int64_t so = bx.sbase, dof = bx.dbase, rem = t;
    for (int j = bx.nfree - 1; j >= 0; --j) {
      const int64_t cj = rem % bx.ext[j];
      rem /= bx.ext[j];
      so += cj * bx.sstr[j];
      dof += cj * bx.dstr[j];
    }
    const int64_t sb = srcLines ? exec::lineByteOf(m.fmt, t * es_) : (m.srcFlat ? t : so) * es_;
    const int64_t db = dstLines ? exec::lineByteOf(m.fmt, t * es_) : (m.dstFlat ? t : dof) * es_;
    // The first element of a line here, and the last.
    const int64_t line = t * es_ / lineData;
    const bool lineStart = t == a || (t - 1) * es_ / lineData != line;
    const bool lineEnd = t + 1 == b || (t + 1) * es_ / lineData != line;
    if (probe_) {
      // A flagged consume polls its source lines: it runs once every line
      // carries this launch's flag.
      // A line flagged by a later launch was overwritten before this one
      // read it: the push of that launch raced with this read.
      if (srcLines && (!flagCells || lineStart))
        for (int i = 0; i < m.nsrc && !failed_; ++i) {
          const int cell =
              flagCells ? flagCell(m.src[i], t, false) : cellAt(m.src[i] + sb, false);
          if (cell < 0)
            continue;
          const Cell &c = cells_[cell];
          if (c.flag > procs_[cur_].launch + 1)
            race(cell, false, c.wProc, c.wStep, true, c.wLaunch);
          blocked_ |= c.flag != procs_[cur_].launch + 1;
        }
      continue;
    }
    for (int i = 0; i < m.nsrc; ++i) {
      if (srcLines && flagCells && lineStart) { // the acquire of the line's flag
        const int f = flagCell(m.src[i], t, false);
        if (f >= 0)
          read(f, flagName | line, true);
      }
      const int cell = cellAt(m.src[i] + sb, false);
      kids[i] = cell < 0 ? 0 : read(cell, seq | t, srcLines && !flagCells);
    }
    if (failed_)
      return;
    const int term = terms_.combine(m.op, kids, m.nsrc);
    for (int i = 0; i < m.ndst; ++i) {
      const int cell = cellAt(m.dst[i] + db, true);
      if (cell >= 0)
        write(cell, term, seq | t, dstLines && !flagCells);
      if (dstLines && flagCells && lineEnd) { // the release: the line's flag
        const int f = flagCell(m.dst[i], t, true);
        if (f >= 0)
          write(f, term, flagName | line, true);
      }
    }
  }
}

void Sim::moveFlat(const char *const *src, int nsrc, char *const *dst,
                   int ndst, int64_t soff, int64_t doff, int64_t bytes,
                   int op) {
  const int64_t seq = ++moveSeq_ << 32;
  int kids[exec::kMaxRanks];
  for (int64_t k = 0; k * es_ < bytes && !failed_; ++k) {
    for (int i = 0; i < nsrc; ++i) {
      const int cell = cellAt(src[i] + soff + k * es_, false);
      kids[i] = cell < 0 ? 0 : read(cell, seq | k, false);
    }
    if (failed_)
      return;
    const int term = terms_.combine(op, kids, nsrc);
    for (int i = 0; i < ndst; ++i) {
      const int cell = cellAt(dst[i] + doff + k * es_, true);
      if (cell >= 0)
        write(cell, term, seq | k, false);
    }
  }
}

//===----------------------------------------------------------------------===//
// Happens-before, races and the in-place rules.
//===----------------------------------------------------------------------===//

// Whether an earlier access (process x, phase tx, name nx) happens before
// the current one of process p in phase `time` (name `name`): program order
// within a process, where one phase's accesses are ordered only within a
// name; the vector clock across processes.
bool Sim::ordered(int p, int time, int64_t name, int x, int tx, int64_t nx) {
  if (x == p)
    return tx < time || (tx == time && nx == name);
  return clockOf(p)[x] >= tx;
}

int Sim::read(int cell, int64_t name, bool flagged) {
  Cell &c = cells_[cell];
  if (failed_)
    return c.term;
  const int p = cur_;
  std::vector<int32_t> &ck = clockOf(p);
  if (flagged && c.wSnap >= 0)
    joinSnapshot(c.wSnap); // a flagged line carries its push's release
  const int time = ck[p];
  const int launch = p < P_ ? procs_[p].launch : callerDone_[p - P_];
  if (c.wProc >= 0 && !ordered(p, time, name, c.wProc, c.wTime, c.wName))
    return race(cell, false, c.wProc, c.wStep, true, c.wLaunch), c.term;
  // The in-place rules are about reads of inputs. At the same address a
  // cell is both an input and an output element: what the step meant to
  // read decides (a consume from owners' outputs reads outputs).
  if (p < P_ && c.inBuf >= 0 && stepReadsInputs()) {
    const int q = areas_[c.area].rank;
    if (cfg_.alias == Alias::SameStart && c.wProc >= 0 && c.wProc < P_ &&
        c.wLaunch == launch) {
      fail(curStep_, "in place at the same address: " + who(p, curStep_) + " reads " +
                         where(cell, false) + " after " + who(c.wProc, c.wStep) +
                         " wrote the output element at its address in launch " +
                         std::to_string(launch + 1) + suffix());
      return c.term;
    }
    if (cfg_.alias == Alias::Any) {
      if (outWritten_[q][launch]) {
        fail(curStep_, "in place: " + who(p, curStep_) + " reads " + where(cell, false) +
                           " after an output of rank " + std::to_string(q) +
                           " was written in launch " + std::to_string(launch + 1) +
                           ", which may overlap it" + suffix());
        return c.term;
      }
      inReads_[q][p] = {launch, time};
    }
  }
  readPool_.push_back({p, time, curStep_, launch, c.reads, name});
  c.reads = (int32_t)readPool_.size() - 1;
  return c.term;
}

bool Sim::stepReadsInputs() const {
  if (curStep_ < 0)
    return false;
  const Step &st = plan_.steps[curStep_];
  return st.kind != StepKind::Consume || st.src != SourceKind::Output;
}

void Sim::write(int cell, int term, int64_t name, bool flagged) {
  Cell &c = cells_[cell];
  if (failed_)
    return;
  const int p = cur_;
  std::vector<int32_t> &ck = clockOf(p);
  const int time = ck[p];
  // The caller's writes prepare the next launch.
  const int launch = p < P_ ? procs_[p].launch : callerDone_[p - P_];
  if (c.wProc >= 0 && !ordered(p, time, name, c.wProc, c.wTime, c.wName))
    return race(cell, true, c.wProc, c.wStep, true, c.wLaunch);
  for (int i = c.reads; i >= 0; i = readPool_[i].next) {
    const ReadRec &rr = readPool_[i];
    if (!ordered(p, time, name, rr.proc, rr.time, rr.name))
      return race(cell, true, rr.proc, rr.step, false, rr.launch);
  }
  if (p < P_ && cfg_.alias == Alias::Any && c.outBuf >= 0) {
    // Outputs may overlap the rank's inputs anyhow: every read of them in
    // this launch must be over (an earlier phase of this lane, or ordered
    // by the clock), whichever element it read.
    const int q = areas_[c.area].rank;
    outWritten_[q][launch] = true;
    for (int x = 0; x < P_; ++x) {
      const auto &rd = inReads_[q][x];
      if (rd.first == launch && (x == p ? rd.second >= time : ck[x] < rd.second)) {
        fail(curStep_, "in place: " + who(p, curStep_) + " writes " + where(cell, true) +
                           " while " + who(x, -1) + " may still read the inputs of rank " +
                           std::to_string(q) + " in launch " + std::to_string(launch + 1) +
                           ", which it may overlap" + suffix());
        return;
      }
    }
  }
  c.reads = -1;
  c.wProc = p;
  c.wTime = time;
  c.wName = name;
  c.wStep = p < P_ ? curStep_ : -1;
  c.wLaunch = launch;
  c.term = term;
  if (flagged) {
    c.flag = launch + 1;
    c.wSnap = snapshot(p);
  }
}

} // namespace check
} // namespace purlin
