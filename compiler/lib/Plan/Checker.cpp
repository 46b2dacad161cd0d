// The SNAC checker: simulates a plan for R ranks over two launches in a row,
// every lane running freely, and tracks happens-before through notify/wait
// with vector clocks. Two launch models: every rank launched on its own
// (stream order per rank), and every rank in one launch (`oneLaunch`: the
// boundary syncs are skipped, and each launch starts after every rank ended
// the previous one). It reports what would make the plan wrong on some
// interleaving: reads and writes of one place not ordered by the signals
// (a missing wait, or a buffer reused before its consumer is done), waits
// that no notify satisfies (deadlock), and steps that do not cover the
// collective.
//
// In place, two aliasing models: `Alias::Any`, every rank's inputs and
// outputs overlap anyhow (the plan may be used whatever the user's overlap),
// and `Alias::SameStart`, each output starts at the address of an input of
// the same element type (element i of one is element i of the other: an
// in-place all-reduce as torch.distributed calls it). The second needs the
// element offsets each access touches, so the simulation computes them for
// the buffers (names sliced the way exec.h slices them, one element per
// vector).
#include "purlin/Plan/Plan.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <map>
#include <set>

namespace purlin {

namespace {
using Clock = std::vector<int>;

bool leq(const Clock &a, const Clock &b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] > b[i])
      return false;
  return true;
}
void join(Clock &a, const Clock &b) {
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = std::max(a[i], b[i]);
}

// A region of memory touched by a step: rank, space (in/out/scratch of a
// buffer, staging of a clause and slot), and which piece of which slicing.
struct Region {
  int rank;
  int space;      // see spaceOf()
  std::string scheme; // how names were sliced ("" = all of the space)
  int lane, chunk;
  // Alias::SameStart, buffers only: the element offsets touched, sorted
  // (allOffs: the whole buffer).
  std::vector<int64_t> offs = {};
  bool allOffs = true;
};

struct Access {
  int proc;   // rank * L + lane, or -1 - rank for the user of a rank
  int step;   // plan step, or -1 for the user
  int epoch;
  bool write;
  Region reg;
  Clock clock;
};

struct Sim {
  const Collective &c;
  const Plan &plan;
  Binding bind;
  int R, L, K;
  Alias alias;
  bool oneLaunch;
  std::vector<PlanDiag> &diags;
  std::vector<Access> accesses;
  BoundCollective bc = {}; // Alias::SameStart: names, to compute offsets
  bool aliased = alias != Alias::None;

  // Spaces: 0..B-1 buffers (in and out), B..2B-1 scratch copies of
  // buffers, 2B + clause * R + slot: staging slots.
  int B() const { return (int)c.buffers.size(); }
  int bufSpace(int b) const { return b; }
  int scratchSpace(int b) const { return B() + b; }
  int stagingSpace(int k, int slot) const { return 2 * B() + k * R + slot; }
  bool isIO(int s) const { return s < B(); }
  // The hidden signal of clause k's flagged lines (after the plan's own).
  int flagSignal(int k) const { return (int)plan.signals.size() + k; }

  int64_t fixedRank(const RankSel &sel) {
    int64_t v = -1;
    std::string err;
    evalParamExpr(c, bind, sel.rank, v, err);
    return v;
  }
  bool flows(int k, int p, int q) {
    const Clause &cl = c.clauses[k];
    RankRole f = rankRole(cl, cl.from.rank), t = rankRole(cl, cl.to.rank);
    if (f.kind == RankRole::Fixed && fixedRank(cl.from.rank) != p)
      return false;
    if (t.kind == RankRole::Fixed && fixedRank(cl.to.rank) != q)
      return false;
    if (f.kind == RankRole::Coord && t.kind == RankRole::Coord &&
        f.dim == t.dim && p != q)
      return false;
    return true;
  }
  bool inPeers(int k, PeerSet ps, int r, int x) {
    if (ps == PeerSet::Srcs)
      return flows(k, x, r);
    if (ps == PeerSet::Dsts)
      return flows(k, r, x);
    return true;
  }

  bool overlap(const Region &a, const Region &b) const {
    if (a.rank != b.rank)
      return false;
    if (alias == Alias::SameStart && isIO(a.space) && isIO(b.space)) {
      if (a.space != b.space) {
        const Buffer &x = c.buffers[a.space], &y = c.buffers[b.space];
        if (x.role == y.role)
          return false; // only an output aliases an input
        if (x.dtype != y.dtype)
          return true; // element offsets differ: anyhow
      }
      if (a.allOffs || b.allOffs)
        return true;
      for (size_t i = 0, j = 0; i < a.offs.size() && j < b.offs.size();) {
        if (a.offs[i] == b.offs[j])
          return true;
        a.offs[i] < b.offs[j] ? ++i : ++j;
      }
      return false;
    }
    if (a.space != b.space) {
      // An in-place call: a rank's inputs and outputs may overlap anyhow.
      return aliased && isIO(a.space) && isIO(b.space);
    }
    if (a.scheme.empty() || b.scheme.empty())
      return true;
    // "family:part": names of different parts of one family are disjoint,
    // so are the places they write (outputs are injective, staging is
    // indexed by name). Different families may overlap anyhow.
    size_t ca = a.scheme.find(':'), cb = b.scheme.find(':');
    if (a.scheme.compare(0, ca, b.scheme, 0, cb) != 0)
      return true;
    if (a.scheme != b.scheme)
      return false;
    return a.lane == b.lane && a.chunk == b.chunk;
  }

  void touch(int proc, int step, int epoch, bool write, Region reg,
             const Clock &clk) {
    accesses.push_back({proc, step, epoch, write, reg, clk});
  }

  // Alias::SameStart: the names of box (p, q) of clause k in exec.h's order
  // (row-major over the dims; p or q < 0: that side takes every rank), as
  // (from offset, to offset).
  std::map<std::tuple<int, int, int>, std::vector<std::pair<int64_t, int64_t>>>
      boxNames_;
  const std::vector<std::pair<int64_t, int64_t>> &boxNames(int k, int p, int q) {
    auto key = std::make_tuple(k, p, q);
    auto it = boxNames_.find(key);
    if (it != boxNames_.end())
      return it->second;
    auto &v = boxNames_[key];
    const auto &bk = bc.clauses[k];
    std::string err;
    bc.visit(k, [&](const int64_t *s) {
      int64_t fr = 0, tr = 0, fi = 0, ti = 0;
      if (!bk.fromEvery && p >= 0 && (!bk.fromRank.eval(s, fr) || fr != p))
        return true;
      if (!bk.toEvery && q >= 0 && (!bk.toRank.eval(s, tr) || tr != q))
        return true;
      if (bk.fromIndex.eval(s, fi) && bk.toIndex.eval(s, ti))
        v.push_back({fi, ti});
      return true;
    }, err);
    return v;
  }
  static void split(int64_t n, int64_t parts, int64_t i, int64_t &a,
                    int64_t &b) {
    a = n * i / parts;
    b = n * (i + 1) / parts;
  }
  // A buffer region with the offsets of piece (l, ch) of box (p, q) (part
  // `owner` of it first when owner >= 0), on the from or the to side.
  Region boxRegion(int rank, int space, const std::string &key, int l, int ch,
                   int k, int p, int q, bool fromSide, int owner = -1) {
    Region g{rank, space, key, l, ch};
    if (alias != Alias::SameStart)
      return g;
    const auto &v = boxNames(k, p, q);
    int64_t n = (int64_t)v.size(), pa = 0, pb = n, a, b;
    if (owner >= 0)
      split(n, R, owner, pa, pb);
    split(pb - pa, (int64_t)K * L, (int64_t)ch * L + l, a, b);
    for (int64_t t = pa + a; t < pa + b; ++t)
      g.offs.push_back(fromSide ? v[t].first : v[t].second);
    std::sort(g.offs.begin(), g.offs.end());
    g.offs.erase(std::unique(g.offs.begin(), g.offs.end()), g.offs.end());
    g.allOffs = false;
    return g;
  }

  // The accesses of one step of process (r, l) in chunk ch.
  void stepAccesses(int r, int l, int si, int ch, int epoch, const Clock &clk) {
    const Step &st = plan.steps[si];
    const Clause &cl = c.clauses[st.clause];
    int k = st.clause, proc = r * L + l;
    int fromBuf = c.bufferIndex(cl.from.buffer), toBuf = c.bufferIndex(cl.to.buffer);
    RankRole f = rankRole(cl, cl.from.rank);
    auto box = [](int p, int q) {
      return "box:" + std::to_string(p) + "," + std::to_string(q);
    };
    if (st.kind == StepKind::Stage) {
      // Only ranks that contribute a name of the clause copy their input.
      if (st.stage == StageMode::Copy &&
          !(f.kind == RankRole::Fixed && fixedRank(cl.from.rank) != r)) {
        Region in{r, bufSpace(fromBuf), "whole:", l, ch};
        if (alias == Alias::SameStart) {
          int64_t a, b;
          split(bc.bufElems[fromBuf], (int64_t)K * L, (int64_t)ch * L + l, a, b);
          for (int64_t t = a; t < b; ++t)
            in.offs.push_back(t);
          in.allOffs = false;
        }
        touch(proc, si, epoch, false, in, clk);
        touch(proc, si, epoch, true, {r, scratchSpace(fromBuf), "whole:", l, ch}, clk);
      } else if (st.stage == StageMode::Push) {
        for (int q = 0; q < R; ++q)
          if (flows(k, r, q)) {
            const int p = f.kind == RankRole::Every ? -1 : r;
            std::string key = box(p, q);
            touch(proc, si, epoch, false,
                  boxRegion(r, bufSpace(fromBuf), key, l, ch, k, p, q, true), clk);
            touch(proc, si, epoch, true, {q, stagingSpace(k, r), key, l, ch}, clk);
          }
      }
      return;
    }
    if (st.kind != StepKind::Consume)
      return;
    // Box (bp, bq) of contributor p; owner: see boxRegion.
    auto srcRegion = [&](int p, const std::string &key, int bp, int bq,
                         int owner = -1) -> Region {
      if (st.src == SourceKind::Staging)
        return {r, stagingSpace(k, p), key, l, ch};
      if (st.src == SourceKind::Scratch)
        return {p, scratchSpace(fromBuf), key, l, ch};
      return boxRegion(p, bufSpace(fromBuf), key, l, ch, k, bp, bq, true, owner);
    };
    if (st.sel == Selection::Mine) {
      if (f.kind == RankRole::Every) {
        if (!flows(k, 0, r))
          return;
        std::string key = box(-1, r);
        for (int p = 0; p < R; ++p)
          touch(proc, si, epoch, false, srcRegion(p, key, -1, r), clk);
        touch(proc, si, epoch, true,
              boxRegion(r, bufSpace(toBuf), key, l, ch, k, -1, r, false), clk);
      } else {
        for (int p = 0; p < R; ++p)
          if (flows(k, p, r)) {
            std::string key = box(p, r);
            touch(proc, si, epoch, false, srcRegion(p, key, p, r), clk);
            touch(proc, si, epoch, true,
                  boxRegion(r, bufSpace(toBuf), key, l, ch, k, p, r, false), clk);
          }
      }
      return;
    }
    // Owned: part r of every box; its contributors and destinations.
    std::string key = "owned:" + std::to_string(r);
    RankRole t = rankRole(cl, cl.to.rank);
    for (int p = 0; p < R; ++p)
      for (int q = 0; q < R; ++q)
        if (flows(k, p, q)) {
          const int bp = f.kind == RankRole::Every ? -1 : p,
                    bq = t.kind == RankRole::Every ? -1 : q;
          touch(proc, si, epoch, false, srcRegion(p, key, bp, bq, r), clk);
          touch(proc, si, epoch, true,
                boxRegion(q, bufSpace(toBuf), key, l, ch, k, bp, bq, false, r), clk);
        }
  }

  // Static rules: what the steps must contain whatever the interleaving.
  bool staticChecks() {
    bool ok = true;
    auto err = [&](int step, const std::string &m) {
      diags.push_back({step, m});
      ok = false;
    };
    std::vector<bool> consumed(c.clauses.size(), false);
    std::set<std::pair<int, int>> staged; // (clause, mode)
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const Step &st = plan.steps[i];
      int si = (int)i;
      if (st.clause < 0 || st.clause >= (int)c.clauses.size()) {
        err(si, "step names clause " + std::to_string(st.clause) +
                    ", but the collective has " +
                    std::to_string(c.clauses.size()));
        continue;
      }
      if ((st.kind == StepKind::Notify || st.kind == StepKind::Wait) &&
          (st.signal < 0 || st.signal >= (int)plan.signals.size())) {
        err(si, "unknown signal " + std::to_string(st.signal));
        continue;
      }
      if (plan.chunks > 1 && !st.chunked &&
          (st.kind == StepKind::Consume ||
           (st.kind == StepKind::Stage && st.stage != StageMode::Expose)))
        err(si, std::string(stepKindName(st.kind)) +
                    " outside the chunk loop moves chunk 0 only, but the "
                    "plan has " +
                    std::to_string(plan.chunks) + " chunks");
      if (st.flagged && !(st.kind == StepKind::Stage && st.stage == StageMode::Push) &&
          !(st.kind == StepKind::Consume && st.src == SourceKind::Staging))
        err(si, "only a push stage and a consume from staging carry flagged lines");
      if (st.kind == StepKind::Stage)
        staged.insert({st.clause, (int)st.stage + (st.flagged ? 8 : 0)});
      if (st.kind == StepKind::Consume) {
        consumed[st.clause] = true;
        const int push = (int)StageMode::Push + (st.flagged ? 8 : 0);
        if (st.src == SourceKind::Staging && !staged.count({st.clause, push}))
          err(si, std::string(st.flagged ? "a flagged consume" : "consume") +
                      " reads staging slots of clause " + std::to_string(st.clause) +
                      " that no earlier " + (st.flagged ? "flagged " : "") +
                      "push stage fills" +
                      (staged.count({st.clause, push ^ 8})
                           ? std::string(" (the push's lines are ") +
                                 (st.flagged ? "not flagged)" : "flagged)")
                           : ""));
        if (st.src == SourceKind::Scratch && !staged.count({st.clause, (int)StageMode::Copy}))
          err(si, "consume reads scratch copies of clause " +
                      std::to_string(st.clause) + " that no earlier copy stage makes");
        if (st.sel == Selection::Mine && st.dst != DestKind::Self)
          err(si, "a consume of the names a rank receives writes to itself ('self')");
        if (st.sel == Selection::Owned && st.dst != DestKind::All)
          err(si, "a consume of owned parts writes to every destination ('all')");
        if (st.sel == Selection::Owned && st.src == SourceKind::Staging)
          err(si, "a consume of owned parts reads inputs or scratch, not staging");
      }
    }
    for (size_t k = 0; k < consumed.size(); ++k)
      if (!consumed[k])
        err(-1, "clause " + std::to_string(k) +
                    " is never consumed: its names reach no destination");
    return ok;
  }

  bool run() {
    if (!staticChecks())
      return false;
    const int P = R * L, E = 2;
    // The program of one epoch: (step, chunk) in order, chunked runs looped.
    std::vector<std::pair<int, int>> prog;
    for (size_t i = 0; i < plan.steps.size();) {
      if (!plan.steps[i].chunked) {
        prog.push_back({(int)i, 0});
        ++i;
        continue;
      }
      size_t j = i;
      while (j < plan.steps.size() && plan.steps[j].chunked)
        ++j;
      for (int ch = 0; ch < K; ++ch)
        for (size_t s = i; s < j; ++s)
          prog.push_back({(int)s, ch});
      i = j;
    }
    struct Proc {
      int epoch = 0;
      size_t pc = 0;
      bool started = false, finished = false;
      Clock clk;
    };
    std::vector<Proc> procs(P);
    for (auto &p : procs)
      p.clk.assign(P, 0);
    std::vector<Clock> rankEnd(R, Clock(P, 0)); // join of a rank's lanes
    std::vector<std::vector<int>> lanesDone(E, std::vector<int>(R, 0));
    // A signal word: its value, and for each value it took the clock of
    // the notify that stored it. A wait for >= v may pass as soon as the
    // first such notify lands, so it joins that notify's clock only (not a
    // later one that the simulation's schedule happened to run first).
    struct Sig {
      int value = 0;
      std::map<int, Clock> clks;
      void set(int v, const Clock &c) {
        value = v;
        clks[v] = c;
      }
      const Clock &reached(int v) const { return clks.lower_bound(v)->second; }
    };
    std::map<std::vector<int>, Sig> sigs;
    auto userAccess = [&](int r, int epoch, const Clock &clk) {
      for (int b = 0; b < B(); ++b) {
        bool in = c.buffers[b].role == BufferRole::In;
        touch(-1 - r, -1, epoch, in, {r, bufSpace(b), "", 0, 0}, clk);
      }
    };
    // First launch: the user has written every input.
    for (int r = 0; r < R; ++r)
      userAccess(r, 0, Clock(P, 0));
    bool progress = true;
    while (progress) {
      progress = false;
      for (int pi = 0; pi < P; ++pi) {
        Proc &pr = procs[pi];
        int r = pi / L, l = pi % L;
        while (!pr.finished) {
          if (!pr.started) {
            if (pr.epoch > 0) {
              // Stream order: a rank's next launch starts after all its
              // lanes ended (in one launch: every rank's lanes), and after
              // its caller read outputs and wrote inputs.
              bool ended = true;
              for (int x = 0; x < R; ++x)
                if ((oneLaunch || x == r) && lanesDone[pr.epoch - 1][x] < L)
                  ended = false;
              if (!ended)
                break;
              for (int x = 0; x < R; ++x)
                if (oneLaunch || x == r)
                  join(pr.clk, rankEnd[x]);
            }
            pr.started = true;
            pr.pc = 0;
          }
          if (pr.pc == prog.size()) {
            join(rankEnd[r], pr.clk);
            if (++lanesDone[pr.epoch][r] == L) {
              if (!oneLaunch) {
                userAccess(r, pr.epoch + 1, rankEnd[r]);
              } else {
                bool all = true;
                Clock g(P, 0);
                for (int x = 0; x < R; ++x) {
                  all &= lanesDone[pr.epoch][x] == L;
                  join(g, rankEnd[x]);
                }
                if (all)
                  for (int x = 0; x < R; ++x)
                    userAccess(x, pr.epoch + 1, g);
              }
            }
            pr.started = false;
            if (++pr.epoch == E)
              pr.finished = true;
            progress = true;
            continue;
          }
          auto [si, ch] = prog[pr.pc];
          const Step &st = plan.steps[si];
          if (oneLaunch && st.boundary &&
              (st.kind == StepKind::Wait || st.kind == StepKind::Notify)) {
            ++pr.pc; // skipped: the launch boundary orders it
            progress = true;
            continue;
          }
          // A flagged consume waits for the flagged lines of its sources'
          // push (same lane and chunk, this epoch): a hidden signal.
          const bool flagWait = st.kind == StepKind::Consume && st.flagged;
          if (st.kind == StepKind::Wait || flagWait) {
            const int sig = flagWait ? flagSignal(st.clause) : st.signal;
            const PeerSet ps = flagWait ? PeerSet::Srcs : st.peers;
            bool ready = true;
            int l0 = st.allLanes ? 0 : l, l1 = st.allLanes ? L : l + 1;
            for (int p = 0; p < R && ready; ++p)
              if (inPeers(st.clause, ps, r, p))
                for (int x = l0; x < l1; ++x) {
                  auto it = sigs.find({r, sig, p, x, ch});
                  if (it == sigs.end() || it->second.value < pr.epoch + 1)
                    ready = false;
                }
            if (!ready)
              break;
            for (int p = 0; p < R; ++p)
              if (inPeers(st.clause, ps, r, p))
                for (int x = l0; x < l1; ++x)
                  join(pr.clk, sigs[{r, sig, p, x, ch}].reached(pr.epoch + 1));
          }
          ++pr.clk[pi];
          if (st.kind == StepKind::Stage && st.flagged) {
            stepAccesses(r, l, si, ch, pr.epoch, pr.clk);
            for (int q = 0; q < R; ++q)
              if (inPeers(st.clause, PeerSet::Dsts, r, q)) {
                sigs[{q, flagSignal(st.clause), r, l, ch}].set(pr.epoch + 1, pr.clk);
              }
          } else if (st.kind == StepKind::Notify) {
            for (int q = 0; q < R; ++q)
              if (inPeers(st.clause, st.peers, r, q)) {
                sigs[{q, st.signal, r, l, ch}].set(pr.epoch + 1, pr.clk);
              }
          } else {
            stepAccesses(r, l, si, ch, pr.epoch, pr.clk);
          }
          ++pr.pc;
          progress = true;
        }
      }
    }
    bool ok = true;
    for (int pi = 0; pi < P; ++pi) {
      Proc &pr = procs[pi];
      if (pr.finished || !pr.started || pr.pc >= prog.size())
        continue;
      auto [si, ch] = prog[pr.pc];
      const Step &st = plan.steps[si];
      const bool flagWait = st.kind == StepKind::Consume && st.flagged;
      if (st.kind != StepKind::Wait && !flagWait)
        continue;
      diags.push_back(
          {si, "deadlock: rank " + std::to_string(pi / L) + " waits for " +
                   (flagWait ? std::string("the flagged lines of clause ") +
                                   std::to_string(st.clause) + " from its srcs peers, "
                                   "which never push them"
                             : "'" + plan.signals[st.signal] + "' from its " +
                                   peerSetName(st.peers) +
                                   " peers, which never notify it") +
                   (oneLaunch ? " (every rank in one launch)" : "")});
      ok = false;
      break;
    }
    if (!ok)
      return false;
    // Races: overlapping accesses of different processes, one a write,
    // neither happening before the other.
    std::map<std::pair<int, int>, std::vector<size_t>> byPlace;
    for (size_t i = 0; i < accesses.size(); ++i) {
      const Region &g = accesses[i].reg;
      byPlace[{g.rank, aliased && isIO(g.space) ? -1 : g.space}].push_back(i);
    }
    for (auto &kv : byPlace) {
      auto &v = kv.second;
      for (size_t x = 0; x < v.size(); ++x)
        for (size_t y = x + 1; y < v.size(); ++y) {
          const Access &a = accesses[v[x]], &b = accesses[v[y]];
          if (a.proc == b.proc || (!a.write && !b.write))
            continue;
          if (a.proc < 0 && b.proc < 0)
            continue;
          if (!overlap(a.reg, b.reg))
            continue;
          if (leq(a.clock, b.clock) || leq(b.clock, a.clock))
            continue;
          report(a, b);
          return false;
        }
    }
    return true;
  }

  std::string describe(const Access &a) const {
    std::string who = a.proc < 0 ? "the caller of rank " + std::to_string(-1 - a.proc)
                                 : "rank " + std::to_string(a.proc / L) + " lane " +
                                       std::to_string(a.proc % L);
    std::string what = a.step < 0 ? "" : std::string(" (") + stepKindName(plan.steps[a.step].kind) + ")";
    std::string space;
    int s = a.reg.space;
    if (s < B())
      space = "'" + c.buffers[s].name + "'";
    else if (s < 2 * B())
      space = "the scratch copy of '" + c.buffers[s - B()].name + "'";
    else
      space = "staging slot " + std::to_string((s - 2 * B()) % R);
    return who + what + (a.write ? " writes " : " reads ") + space + " of rank " +
           std::to_string(a.reg.rank) + " in launch " + std::to_string(a.epoch + 1);
  }

  void report(const Access &a, const Access &b) {
    // Point at the plan step (the later one in the plan when both are steps).
    const Access &at = b.step >= 0 ? b : a;
    const Access &other = &at == &b ? a : b;
    diags.push_back({at.step, "unordered access (a missing wait, or a buffer "
                              "reused before its consumer is done): " +
                                  describe(at) + " while " + describe(other) +
                                  (aliased ? " (inputs aliasing outputs)" : "") +
                                  (oneLaunch ? " (every rank in one launch, "
                                               "boundary syncs skipped)"
                                             : "")});
  }
};
} // namespace

bool checkPlan(const Collective &c, const Plan &p, int R, Alias alias,
               std::vector<PlanDiag> &diags, bool oneLaunch, int64_t count) {
  if (p.lanes < 1 || p.chunks < 1) {
    diags.push_back({-1, "a plan needs at least one lane and one chunk"});
    return false;
  }
  bool hasRoot = false;
  for (auto &pr : c.params)
    hasRoot |= pr.kind == ParamKind::Root;
  for (int rootEnd = 0; rootEnd < (hasRoot ? 2 : 1); ++rootEnd) {
    Binding b;
    for (auto &pr : c.params) {
      if (pr.kind == ParamKind::Ranks)
        b.scalars[pr.name] = R;
      else if (pr.kind == ParamKind::Count)
        b.scalars[pr.name] = count;
      else if (pr.kind == ParamKind::Root)
        b.scalars[pr.name] = rootEnd ? R - 1 : 0;
    }
    Sim sim{c, p, b, R, std::min(p.lanes, 2), std::min(p.chunks, 2),
            alias, oneLaunch, diags, {}};
    std::string err;
    if (alias == Alias::SameStart && !sim.bc.init(c, b, err)) {
      diags.push_back({-1, "in place at the same address: " + err});
      return false;
    }
    if (!sim.run())
      return false;
  }
  return true;
}

bool verifyPlan(const Collective &c, Plan &p, std::vector<PlanDiag> &diags,
                int maxRanks) {
  for (int one = 0; one < 2; ++one)
    for (int R = 1; R <= maxRanks; ++R)
      if (!checkPlan(c, p, R, Alias::None, diags, one))
        return false;
  std::vector<PlanDiag> inplace;
  p.inplaceSafe = true;
  for (int one = 0; one < 2 && p.inplaceSafe; ++one)
    for (int R = 1; R <= maxRanks && p.inplaceSafe; ++R)
      p.inplaceSafe = checkPlan(c, p, R, Alias::Any, inplace, one);
  // Outputs at their inputs' addresses: implied by the above, else proved
  // under two counts (pieces cut at different places).
  // Only when each name reads and writes one element offset (a clause's
  // from and to maps are the same expression; one input, one output). Then
  // the names of one step touch different offsets, so the simulation's
  // lanes (a step's accesses in program order, where a GPU lane's threads
  // take its names at once) miss no race inside a step, and its small
  // counts stand for every count.
  p.inplaceSame = p.inplaceSafe;
  int nin = 0, nout = 0;
  for (auto &b : c.buffers)
    (b.role == BufferRole::In ? nin : nout) += 1;
  bool sameMaps = nin == 1 && nout == 1;
  for (auto &cl : c.clauses)
    sameMaps &= cl.from.index.str() == cl.to.index.str();
  // PURLIN_DEBUG_INPLACE=1: why a plan is not right in place (stderr).
  const bool why = getenv("PURLIN_DEBUG_INPLACE") != nullptr;
  if (why)
    for (auto &d : inplace)
      fprintf(stderr, "%s, any overlap: %s\n", p.strategy.c_str(), d.message.c_str());
  if (!p.inplaceSame && sameMaps) {
    inplace.clear();
    p.inplaceSame = true;
    for (int64_t count : {2, 5})
      for (int one = 0; one < 2 && p.inplaceSame; ++one)
        for (int R = 1; R <= maxRanks && p.inplaceSame; ++R)
          p.inplaceSame = checkPlan(c, p, R, Alias::SameStart, inplace, one, count);
  }
  if (why && !p.inplaceSafe && !sameMaps)
    fprintf(stderr, "%s, at the same address: not tried (a clause's from and "
                    "to maps differ, or not one input and one output)\n",
            p.strategy.c_str());
  else if (why && !p.inplaceSafe)
    for (auto &d : inplace)
      fprintf(stderr, "%s, at the same address: %s\n", p.strategy.c_str(),
              d.message.c_str());
  return true;
}

} // namespace purlin
