// The SNAC checker: proves a plan by running the executor's own code
// (exec.h, through DynClause and the symbolic target of CheckerSim.h) for
// every configuration it explores, and reports the first problem at its
// step. What one run proves is in CheckerSim.h and CheckPost.cpp; this file
// holds the rules that need no run (the steps cover the collective) and the
// exploration:
//  - R = 1..maxRanks (or the bound R), roots at both ends, every group size
//    (divisor of R; one per R at the largest count), tables filled
//    pseudo-randomly within their bounds;
//  - the plan's own lane and chunk counts;
//  - each element size the plan may run with (the bound type's, else 1, 2,
//    4 and 8 bytes, each as its least exact type: f8e4m3, f16, f32, f64),
//    which sets the executor's vector rounding (16 / size elements);
//  - counts 0, 1, 7 and lanes * chunks * vector + 1 (so that lane, chunk
//    and vector boundaries fall inside boxes; a plan with LL128 lines: a
//    line, 120 bytes, for the vector; further counts 1 + C % 3);
//  - both launch models (each rank its own launch; every rank in one launch,
//    boundary syncs skipped), three launches each (a launch reuses what the
//    launch two before used: staging by launch parity);
//  - out of place, then in place: outputs overlapping inputs anyhow (Any),
//    and each output at an input's address for every maximal pairing of
//    outputs with inputs of their element type (SameStart).
#include "CheckerSim.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>

namespace purlin {

namespace {
// Rules that hold whatever runs: every step names a clause and a signal
// that exist, chunked data steps, flags where they mean something, the
// stage a consume's source needs, a consume per clause.
bool staticChecks(const Collective &c, const Plan &plan,
                  std::vector<PlanDiag> &diags) {
  bool ok = true;
  auto err = [&](int step, const std::string &m) {
    diags.push_back({step, m});
    ok = false;
  };
  if (plan.lanes < 1 || plan.chunks < 1)
    err(-1, "a plan needs at least one lane and one chunk");
  if (c.clauses.size() > exec::kMaxClauses || c.buffers.size() > exec::kMaxBuffers)
    err(-1, "the executor supports at most " + std::to_string(exec::kMaxClauses) +
                " clauses and " + std::to_string(exec::kMaxBuffers) + " buffers");
  if (!ok)
    return false;
  std::vector<bool> consumed(c.clauses.size(), false);
  std::set<std::pair<int, int>> staged; // (clause, stage mode)
  // Per clause, the line format of its first push: its slots' layout
  // (exec::layoutSlots), which every push and consume of them must share.
  std::map<int, LineFormat> pushed;
  // Per clause, whether its first push stages by launch parity (doubled
  // slots): every push and consume of the clause must agree.
  std::map<int, bool> pushedParity;
  // "not flagged", "flagged" (ll lines: the word's old meaning, as the
  // text forms print it), "flagged ll128"; `named`: "flagged ll" for ll.
  auto linesText = [](LineFormat f, bool named) {
    return f == LineFormat::None ? std::string("not flagged")
           : named                ? "flagged " + std::string(lineFormatName(f))
                                  : flaggedWords(f);
  };
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &st = plan.steps[i];
    const int si = (int)i;
    if (st.clause < 0 || st.clause >= (int)c.clauses.size()) {
      err(si, "step names clause " + std::to_string(st.clause) + ", but the collective has " +
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
                  " outside the chunk loop moves chunk 0 only, but the plan has " +
                  std::to_string(plan.chunks) + " chunks");
    // An epilogue: exactly the consumes of a clause that has one (the snac
    // verifier keeps them one-shot, where a rank owns whole rows).
    // A consume `to received` (the unfused plans) keeps the rows for a later
    // consume `from received` through the epilogue, so it runs none.
    const bool hasEpi = !c.clauses[st.clause].epilogue.empty();
    if (st.kind == StepKind::Consume && st.dst == DestKind::Received) {
      if (!hasEpi) // (the snac verifier keeps `epilogue` off such a consume)
        err(si, "consume keeps received rows of clause " + std::to_string(st.clause) +
                    ", which has no epilogue");
    } else if (st.kind == StepKind::Consume && st.epilogue != hasEpi) {
      err(si, st.epilogue ? "consume through an epilogue, but clause " +
                                std::to_string(st.clause) + " has none"
                          : "consume of clause " + std::to_string(st.clause) +
                                " without its epilogue");
    }
    if (st.flagged() && !(st.kind == StepKind::Stage && st.stage == StageMode::Push) &&
        !(st.kind == StepKind::Consume && st.src == SourceKind::Staging))
      err(si, "only a push stage and a consume from staging carry flagged lines");
    if (st.parity && !st.flagged())
      err(si, "staging by launch parity (`parity`) needs flagged lines: only a line's "
              "flag tells a launch's data from a stale launch's in the same half");
    if (st.kind == StepKind::Stage)
      staged.insert({st.clause, (int)st.stage});
    if (st.kind == StepKind::Stage && st.stage == StageMode::Push) {
      auto par = pushedParity.emplace(st.clause, st.parity).first;
      if (par->second != st.parity)
        err(si, "push stage of clause " + std::to_string(st.clause) +
                    (st.parity ? " stages by launch parity (doubled slots)"
                               : " stages without launch parity (one half)") +
                    " but an earlier push of the clause " +
                    (par->second ? "does" : "does not") +
                    ": a clause's slots have one layout");
      auto first = pushed.emplace(st.clause, st.lines).first;
      if (first->second != st.lines)
        err(si, "push stage of clause " + std::to_string(st.clause) + " writes " +
                    (st.flagged() ? linesText(st.lines, true) + " lines" : "plain data") +
                    " into staging slots that an earlier push of the clause lays out " +
                    (first->second == LineFormat::None
                         ? std::string("as plain data (not flagged)")
                         : "as " + linesText(first->second, true) + " lines") +
                    ": a clause's slots have one line format");
    }
    if (st.kind != StepKind::Consume)
      continue;
    consumed[st.clause] = true;
    auto push = pushed.find(st.clause);
    if (st.src == SourceKind::Staging && (push == pushed.end() || push->second != st.lines)) {
      const std::string words = flaggedWords(st.lines);
      err(si, (st.flagged() ? "a " + words + " consume" : std::string("consume")) +
                  " reads staging slots of clause " + std::to_string(st.clause) +
                  " that no earlier " + (st.flagged() ? words + " " : "") + "push stage fills" +
                  (push != pushed.end()
                       ? " (the push's lines are " +
                             linesText(push->second, st.flagged() && push->second != LineFormat::None) +
                             ")"
                       : ""));
    }
    if (st.src == SourceKind::Staging && push != pushed.end() && push->second == st.lines &&
        st.flagged() && pushedParity[st.clause] != st.parity)
      err(si, "a " + flaggedWords(st.lines, st.parity) + " consume reads staging slots of clause " +
                  std::to_string(st.clause) + " in " +
                  (st.parity ? "the half of the launch's parity" : "one half") +
                  ", but its push stage writes them " +
                  (st.parity ? "without launch parity" : "by launch parity (`parity`)"));
    if (st.src == SourceKind::Scratch) {
      // A copy stage of any clause reading the same buffer makes the copy.
      bool copied = false;
      for (auto &s : staged)
        copied |= s.second == (int)StageMode::Copy &&
                  c.clauses[s.first].from.buffer == c.clauses[st.clause].from.buffer;
      if (!copied)
        err(si, "consume reads scratch copies of clause " + std::to_string(st.clause) +
                    " that no earlier copy stage makes");
    }
    if (st.sel == Selection::Mine && st.dst == DestKind::All)
      err(si, "a consume of the names a rank receives writes to itself ('self') "
              "or its partial results");
    if (st.sel == Selection::Owned &&
        (st.src == SourceKind::Staging || st.src == SourceKind::Output))
      err(si, "a consume of owned parts reads inputs, scratch or partial results");
    const Clause &cl = c.clauses[st.clause];
    const bool everyFrom = rankRole(c, cl, cl.from.rank).kind == RankRole::Every;
    const bool everyTo = rankRole(c, cl, cl.to.rank).kind == RankRole::Every;
    if ((st.src == SourceKind::Partial || st.dst == DestKind::Partial) && !everyFrom)
      err(si, "partial results combine contributions of every rank: clause " +
                  std::to_string(st.clause) + " has one contributor per name");
    if (st.src == SourceKind::Output && !(everyFrom && everyTo && st.sel == Selection::Mine &&
                                          st.dst == DestKind::Self))
      err(si, "a consume from owners' outputs reads the parts that owners kept "
              "('owned ... to self') of a clause every rank receives from every rank");
    // What a consume reads must have been written by an earlier step.
    auto earlier = [&](auto pred) {
      for (size_t j = 0; j < i; ++j)
        if (plan.steps[j].kind == StepKind::Consume && plan.steps[j].clause == st.clause &&
            pred(plan.steps[j]))
          return true;
      return false;
    };
    if (st.src == SourceKind::Partial &&
        !earlier([&](const Step &s) { return s.dst == DestKind::Partial && s.sel == st.sel; }))
      err(si, "consume reads partial results of clause " + std::to_string(st.clause) +
                  " that no earlier '" + selectionName(st.sel) + "' consume to partial makes");
    // A rank's area holds the rows its consume to received kept: the names
    // it receives (mine: every row it applies, owned or not), or the rows
    // it owns (owned: only what an owned apply reads).
    if (st.src == SourceKind::Received &&
        !earlier([&](const Step &s) { return s.dst == DestKind::Received; }))
      err(si, "consume reads received rows of clause " + std::to_string(st.clause) +
                  " that no earlier consume to received keeps");
    else if (st.src == SourceKind::Received && st.sel == Selection::Mine &&
             !earlier([&](const Step &s) {
               return s.dst == DestKind::Received && s.sel == Selection::Mine;
             }))
      err(si, "a 'mine' consume reads received rows of clause " + std::to_string(st.clause) +
                  " that only their owners kept ('owned ... to received': each owner's "
                  "area holds its own rows)");
    // The gathered apply reads each row from its owner's area: the rows an
    // owned consume `to received` kept there.
    if (st.src == SourceKind::Owners &&
        !earlier([&](const Step &s) {
          return s.dst == DestKind::Received && s.sel == Selection::Owned;
        }))
      err(si, "consume reads owners' received rows of clause " + std::to_string(st.clause) +
                  " that no earlier 'owned ... to received' consume keeps");
    // (`mine ... to self ... epilogue` from owners: the snac verifier; a
    // clause with an epilogue goes from every rank to every rank.)
    if (st.src == SourceKind::Output &&
        !earlier([&](const Step &s) {
          return s.sel == Selection::Owned && s.dst == DestKind::Self;
        }))
      err(si, "consume reads owners' parts of clause " + std::to_string(st.clause) +
                  " that no earlier 'owned ... to self' consume keeps");
  }
  for (size_t k = 0; k < consumed.size(); ++k)
    if (!consumed[k])
      err(-1, "clause " + std::to_string(k) +
                  " is never consumed: its names reach no destination");
  return ok;
}

// The maximal pairings of outputs with inputs of their element type (each
// input at most once): per buffer, the input an output starts at, or -1.
void pairings(const Collective &c, size_t o, std::vector<int> &cur,
              std::vector<bool> &used, std::vector<std::vector<int>> &out) {
  if (o == c.buffers.size()) {
    // Maximal: no unpaired output could still take an unused input.
    for (size_t y = 0; y < c.buffers.size(); ++y)
      if (c.buffers[y].role == BufferRole::Out && cur[y] < 0)
        for (size_t x = 0; x < c.buffers.size(); ++x)
          if (c.buffers[x].role == BufferRole::In && !used[x] &&
              c.buffers[x].dtype == c.buffers[y].dtype)
            return;
    for (int v : cur)
      if (v >= 0) {
        out.push_back(cur);
        return;
      }
    return;
  }
  pairings(c, o + 1, cur, used, out);
  if (c.buffers[o].role != BufferRole::Out)
    return;
  for (size_t x = 0; x < c.buffers.size(); ++x)
    if (c.buffers[x].role == BufferRole::In && !used[x] &&
        c.buffers[x].dtype == c.buffers[o].dtype) {
      cur[o] = (int)x;
      used[x] = true;
      pairings(c, o + 1, cur, used, out);
      used[x] = false;
      cur[o] = -1;
    }
}

struct Binder {
  const Collective &c;
  std::vector<DType> dtypes;
  int boundR = 0;
  bool countBound = false; // every count parameter is bound

  explicit Binder(const Collective &coll) : c(coll) {
    Binding b;
    std::string err;
    applyBoundParams(c, b, err);
    countBound = true;
    for (auto &p : c.params) {
      if (p.kind == ParamKind::Ranks && !p.bound.empty())
        boundR = (int)b.scalars[p.name];
      if (p.kind == ParamKind::Count && p.bound.empty())
        countBound = false;
    }
    // The element type: bound (a Type parameter's value, or a concrete
    // buffer type), else each size as its least exact type.
    DType t;
    bool concrete = false;
    concrete |= clauseDType(c, t);
    for (auto &p : c.params)
      concrete |= p.kind == ParamKind::Type && !p.bound.empty() && parseDType(p.bound, t);
    if (concrete)
      dtypes = {t};
    else
      dtypes = {DType::F8E4M3, DType::F16, DType::F32, DType::F64};
  }

  // A binding for R ranks and count C; false where the collective has no
  // valid binding there (a fixed rank beyond R, say).
  bool bind(int R, int64_t C, int rootEnd, int64_t group, DType t, Binding &b) const {
    b = Binding();
    // The first unbound count gets C, the others small values, so that
    // sizes stay near C (bound ones keep their values).
    bool first = true;
    for (auto &p : c.params) {
      if (p.kind == ParamKind::Ranks)
        b.scalars[p.name] = R;
      else if (p.kind == ParamKind::Count && p.bound.empty()) {
        b.scalars[p.name] = first || C == 0 ? C : 1 + C % 3;
        first = false;
      }
    }
    std::string err;
    if (!applyBoundParams(c, b, err) || b.ranks(c) != R)
      return false;
    for (auto &p : c.params)
      if (p.kind == ParamKind::Root && p.bound.empty())
        b.scalars[p.name] = rootEnd ? R - 1 : 0;
      else if (p.kind == ParamKind::Group && p.bound.empty())
        b.scalars[p.name] = group;
    std::mt19937 rng((unsigned)(R * 7919 + C * 31 + rootEnd));
    for (auto &p : c.params) {
      if (p.kind != ParamKind::Table || !p.bound.empty())
        continue;
      int64_t n = 1, mx = 0;
      for (auto &d : p.dims) {
        int64_t e = 0;
        evalParamExpr(c, b, d, e, err);
        n *= std::max<int64_t>(e, 0);
      }
      evalParamExpr(c, b, p.max, mx, err);
      std::vector<int64_t> v(n);
      for (auto &x : v)
        x = mx > 0 ? (int64_t)(rng() % (mx + 1)) : 0;
      b.tables[p.name] = v;
    }
    b.dtype = t;
    std::vector<Diag> diags;
    return checkBinding(c, b, diags, 1 << 20);
  }
};

struct Stats {
  int runs = 0;
  double seconds = 0;
};

// Runs the plan under every explored configuration of `alias` (every
// pairing for SameStart); false with the first problem in `diags`.
std::vector<std::vector<int>> samePairings(const Collective &c) {
  std::vector<std::vector<int>> out;
  std::vector<int> cur(c.buffers.size(), -1);
  std::vector<bool> used(c.buffers.size(), false);
  pairings(c, 0, cur, used, out);
  return out;
}

// The group sizes explored: every divisor of R, except at the largest
// count (the costliest runs, there for lane, chunk and vector boundaries
// inside boxes), where one divisor per R takes turns (R = 1..8 covers
// groups of one rank, of every rank and in between).
std::vector<int64_t> groupSizes(bool hasGroup, int R, bool largest) {
  if (!hasGroup)
    return {1};
  std::vector<int64_t> ds = divisors(R);
  if (largest)
    return {ds[R % ds.size()]};
  return ds;
}

bool explore(const Collective &c, const Plan &p, int maxRanks, Alias alias,
             std::vector<PlanDiag> &diags, Stats &stats) {
  Binder binder(c);
  std::vector<std::vector<int>> aliasings;
  if (alias == Alias::SameStart) {
    aliasings = samePairings(c);
  } else {
    aliasings.push_back(std::vector<int>(c.buffers.size(), -1));
  }
  bool hasRoot = false, hasGroup = false;
  for (auto &pr : c.params) {
    hasRoot |= pr.kind == ParamKind::Root && pr.bound.empty();
    hasGroup |= pr.kind == ParamKind::Group && pr.bound.empty();
  }
  check::Sim sim(c, p, diags);
  const int r0 = binder.boundR ? binder.boundR : 1;
  const int r1 = binder.boundR ? binder.boundR : maxRanks;
  for (int R = r0; R <= r1; ++R)
    for (DType t : binder.dtypes) {
      // The elements the steps' pieces start on (exec::pieceElems): a
      // vector, or where a step moves LL128 lines a line (120 bytes).
      int64_t vec = 16 / dtypeSize(t);
      for (const Step &st : p.steps)
        vec = std::max(vec, exec::pieceElems(lineFlags(st.lines), dtypeSize(t)));
      std::vector<int64_t> counts = {1, 7, (int64_t)p.lanes * p.chunks * vec + 1};
      if (t == binder.dtypes.front())
        counts.insert(counts.begin(), 0); // nothing moves: one type is enough
      if (binder.countBound)
        counts = {0};
      for (int64_t C : counts)
        for (int64_t group : groupSizes(hasGroup, R, C == counts.back() && counts.size() > 1))
        for (int rootEnd = 0; rootEnd < (hasRoot && R > 1 ? 2 : 1); ++rootEnd) {
          Binding b;
          if (!binder.bind(R, C, rootEnd, group, t, b))
            continue;
          BoundCollective bc;
          std::string err;
          if (!bc.init(c, b, err)) {
            diags.push_back({-1, "cannot bind the collective: " + err});
            return false;
          }
          check::DynTable table;
          check::DynScope scope(bc, table);
          for (const auto &aliasOf : aliasings)
            for (int one = 0; one < 2; ++one) {
              check::SimConfig cfg;
              cfg.R = R;
              cfg.count = C;
              cfg.dtype = t;
              cfg.oneLaunch = one;
              cfg.alias = alias;
              cfg.aliasOf = aliasOf;
              cfg.text = "R = " + std::to_string(R) +
                         (binder.countBound ? "" : ", count " + std::to_string(C)) +
                         (hasRoot ? ", root " + std::to_string(rootEnd ? R - 1 : 0) : "") +
                         (hasGroup ? ", group " + std::to_string(group) : "") +
                         ", " + dtypeName(t) + ", " + std::to_string(p.lanes) +
                         (p.lanes == 1 ? " lane, " : " lanes, ") + std::to_string(p.chunks) +
                         (p.chunks == 1 ? " chunk" : " chunks");
              auto t0 = std::chrono::steady_clock::now();
              const bool ok = sim.run(bc, cfg);
              stats.seconds += std::chrono::duration<double>(
                                   std::chrono::steady_clock::now() - t0)
                                   .count();
              ++stats.runs;
              if (!ok)
                return false;
            }
        }
    }
  return true;
}
} // namespace

bool verifyPlan(const Collective &c, Plan &p, std::vector<PlanDiag> &diags,
                int maxRanks) {
  if (!staticChecks(c, p, diags))
    return false;
  Stats stats;
  if (!explore(c, p, maxRanks, Alias::None, diags, stats))
    return false;
  std::vector<PlanDiag> any, same;
  p.inplaceSafe = explore(c, p, maxRanks, Alias::Any, any, stats);
  // At the same address: where an output can start at an input of its
  // type (else a call with that overlap is another overlap: Any).
  p.inplaceSame = p.inplaceSafe || (!samePairings(c).empty() &&
                                    explore(c, p, maxRanks, Alias::SameStart, same, stats));
  // The owned form of an epilogue (exec/Epilogue.h, consumeRowsOwned) reads
  // each name's contributions once before any rank's output at its address
  // is stored, in the register row and in the general form alike
  // (epiRowGeneral), as the plain consume explored above does: so its
  // proofs hold for it (the fused two-shot in place at the same address).
  Binder binder(c);
  p.inplaceMaxRanks =
      p.inplaceSafe || p.inplaceSame ? (binder.boundR ? binder.boundR : maxRanks) : 0;
  // PURLIN_DEBUG_INPLACE=1: why a plan is not proved right in place.
  if (getenv("PURLIN_DEBUG_INPLACE")) {
    for (auto &d : any)
      fprintf(stderr, "%s, any overlap: %s\n", p.strategy.c_str(), d.message.c_str());
    for (auto &d : same)
      fprintf(stderr, "%s, at the same address: %s\n", p.strategy.c_str(),
              d.message.c_str());
  }
  // PURLIN_CHECK_STATS=1: what the proof cost.
  if (getenv("PURLIN_CHECK_STATS"))
    fprintf(stderr, "check %s %s lanes %d chunks %d: %d runs, %.3f s\n", c.name.c_str(),
            p.strategy.c_str(), p.lanes, p.chunks, stats.runs, stats.seconds);
  return true;
}

} // namespace purlin
