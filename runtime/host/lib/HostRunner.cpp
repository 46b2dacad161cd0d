#include "purlin/host/HostRunner.h"

#include "host/target.h"
#include "purlin/runtime/BoundValues.h"
#include "purlin/runtime/Launch.h"
#include "purlin/spec/Params.h"
#include "purlin/spec/Reference.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <mutex>

namespace purlin {
namespace host {

bool readInfo(const purlin_collective_info *info, Collective &c,
              std::string &error) {
  if (!readDesc(info->desc, c, error))
    return false;
  std::vector<Diag> diags;
  if (!checkStructure(c, diags)) {
    error = diags.front().message;
    return false;
  }
  return true;
}

namespace {
// Where input i0 sits inside output o0 (or o0 inside i0) in an in-place
// call, following NCCL: a smaller buffer sits at rank * its size when R of
// them fit in the larger one, else at 0.
int64_t aliasOffset(int64_t small, int64_t large, int64_t R, int64_t r) {
  return (small > 0 && small * R <= large) ? r * small : 0;
}

std::string hexElem(const uint8_t *p, int es) {
  std::string s;
  char b[4];
  for (int i = es - 1; i >= 0; --i) {
    std::snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

/// One launch of a run: its binding, its overlap, the plan the chooser
/// gives it, its executor state and buffers.
struct Call {
  Binding b;
  int R = 0, es = 0;
  int i0 = -1, o0 = -1; // the first input and output (in place: aliased)
  bool alias = false, sameStart = false;
  int64_t ni = 0, no = 0;
  InPlace mode = InPlace::No;
  int plan = -1;
  exec::Shared S;
  // A parity plan's empty call (emptyParityLaunch, decided on the call's
  // own layout, before its areas move to the maxima): not launched.
  bool empty = false;
  RankBuffers ref, inputsBefore; // expected outputs; inputs as written
  // The buffers the collective runs on: separate, or one arena per rank.
  std::vector<std::vector<std::vector<uint8_t>>> mem;
  std::vector<std::vector<uint8_t *>> view;
  // Element offset of the smaller of the two inside the larger, rank r.
  int64_t aliasAt(int r) const {
    if (sameStart)
      return 0;
    return ni <= no ? aliasOffset(ni, no, R, r) : aliasOffset(no, ni, R, r);
  }
};

/// " (launch K, C=N)": launch K - 1 of a run whose launches have bindings
/// of their own, its first count parameter's value.
std::string launchText(const Collective &c, const Binding &b, int launch) {
  std::string s = " (launch " + std::to_string(launch + 1);
  for (auto &p : c.params)
    if (p.kind == ParamKind::Count && b.scalars.count(p.name)) {
      s += ", " + p.name + "=" + std::to_string(b.scalars.at(p.name));
      break;
    }
  return s + ")";
}

/// Checks binding `bIn` as the runtime checks a launch, and picks its plan
/// (Call::plan). False when it cannot run: res.error says why (refused: as
/// the runtime refuses it). `where` ends the messages (launchText).
bool bindCall(const purlin_collective_info *info, const Collective &c,
              const rt::BoundValues &bound, const Binding &bIn,
              const RunOptions &o, const std::string &where, Call &k,
              RunResult &res) {
  if (bound.check(c, bIn, res.error) != PURLIN_SUCCESS) {
    res.error += where;
    return false;
  }
  k.b = bIn;
  Binding &b = k.b;
  if (!applyBoundParams(c, b, res.error))
    return false;
  std::vector<Diag> diags;
  if (!checkBinding(c, b, diags, 0)) {
    res.error = "bad binding: " + diags.front().message + where;
    return false;
  }
  const int R = k.R = (int)b.ranks(c);
  if (R > exec::kMaxRanks) {
    res.error = "too many ranks for the executor";
    return false;
  }
  const int64_t words = tableEntries(c, b, res.error);
  if (words > exec::kMaxTableWords) {
    std::string why;
    res.refused = true;
    res.error = "the tables hold " + std::to_string(words) + " entries at " +
                std::to_string(R) + " ranks; the executor holds " +
                std::to_string(exec::kMaxTableWords) + " (" + c.name +
                " runs on at most " + std::to_string(maxRanksForTables(c, why)) +
                " ranks)" + where;
    return false;
  }
  k.es = dtypeSize(b.dtype);
  // In place: the first input and the first output share one arena, or
  // the two RunOptions::aliasIn and aliasOut name.
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    const bool named = !o.aliasIn.empty();
    if (c.buffers[i].role == BufferRole::In && k.i0 < 0 &&
        (!named || c.buffers[i].name == o.aliasIn))
      k.i0 = (int)i;
    if (c.buffers[i].role == BufferRole::Out && k.o0 < 0 &&
        (!named || c.buffers[i].name == o.aliasOut))
      k.o0 = (int)i;
  }
  if (o.inplace && !o.aliasIn.empty() && (k.i0 < 0 || k.o0 < 0)) {
    res.error = "--alias " + o.aliasIn + "," + o.aliasOut + ": " + c.name +
                " has no input '" + o.aliasIn + "' and output '" + o.aliasOut + "'";
    return false;
  }
  k.alias = o.inplace && k.i0 >= 0 && k.o0 >= 0;
  k.sameStart = o.sameStart;
  if (k.alias && (!bufferElems(c, b, k.i0, k.ni, res.error) ||
                  !bufferElems(c, b, k.o0, k.no, res.error)))
    return false;
  if (k.alias && k.ni > 0 && k.no > 0) {
    // The runtime's classifier over the places fillCall gives the pair: one
    // arena a rank, the smaller buffer inside the larger at aliasAt(r); the
    // other buffers, given no elements, overlap nothing.
    const int nb = (int)c.buffers.size();
    std::vector<int64_t> elems(nb, 0);
    std::vector<int> ess(nb, k.es);
    elems[k.i0] = k.ni;
    elems[k.o0] = k.no;
    std::vector<void *> at((size_t)R * nb, nullptr);
    for (int r = 0; r < R; ++r) {
      const uintptr_t arena = (uintptr_t)(r + 1) << 40, off = k.aliasAt(r) * k.es;
      at[(size_t)r * nb + k.i0] = (void *)(arena + (k.ni <= k.no ? off : 0));
      at[(size_t)r * nb + k.o0] = (void *)(arena + (k.ni <= k.no ? 0 : off));
    }
    k.mode = classifyOverlap(c, at.data(), R, elems.data(), ess.data(),
                             epilogueLocalPairs(c));
  }
  k.plan = choosePlan(info, callBytes(c, b), k.mode, R, o.strategy, !o.oneLaunch,
                      hasEpilogue(c), epilogueRows(c, b));
  if (k.plan < 0) {
    res.refused = true;
    int reach = 0;
    for (int i = 0; i < info->nplans; ++i)
      reach = std::max(reach, info->plans[i].inplace_max_ranks);
    res.error = "no plan fits (strategy '" + o.strategy + "'" +
                (k.mode == InPlace::Any         ? ", in place"
                 : k.mode == InPlace::SameStart ? ", in place at the same address"
                                                : "") +
                (k.mode != InPlace::No && reach > 0 && R > reach
                     ? ", " + std::to_string(R) + " ranks: in-place proofs reach " +
                           std::to_string(reach)
                     : "") +
                ")" + where;
    return false;
  }
  return true;
}

/// The buffers of launch `launch`: random inputs (seeded by the launch),
/// poisoned outputs (in place, one arena per rank), S.buf pointed at them,
/// and the expected outputs (the reference evaluator).
bool fillCall(const Collective &c, Call &k, int launch, RunResult &res) {
  const int R = k.R, es = k.es, i0 = k.i0, o0 = k.o0;
  RankBuffers &ref = k.ref;
  if (!allocateBuffers(c, k.b, ref, 17 + launch, 0xA5, res.error))
    return false;
  k.mem.assign(R, {});
  k.view.assign(R, {});
  for (int r = 0; r < R; ++r) {
    auto &mem = k.mem;
    auto &view = k.view;
    view[r].resize(c.buffers.size());
    for (size_t i = 0; i < c.buffers.size(); ++i) {
      mem[r].push_back(ref[r][i]);
      view[r][i] = mem[r].back().data();
    }
    if (k.alias) {
      int64_t ni = (int64_t)ref[r][i0].size(), no = (int64_t)ref[r][o0].size();
      if (ni <= no) { // the input inside the output
        int64_t off = k.aliasAt(r) * es;
        std::memcpy(mem[r][o0].data() + off, ref[r][i0].data(), ni);
        view[r][i0] = mem[r][o0].data() + off;
        std::memcpy(ref[r][o0].data() + off, ref[r][i0].data(), ni);
      } else { // the output inside the input
        int64_t off = k.aliasAt(r) * es;
        view[r][o0] = mem[r][i0].data() + off;
        std::memcpy(ref[r][o0].data(), ref[r][i0].data() + off, no);
      }
    }
    for (size_t i = 0; i < c.buffers.size(); ++i)
      k.S.buf[r][i] = view[r][i];
  }
  k.inputsBefore = ref;
  return referenceEvaluate(c, k.b, ref, res.error);
}

/// Compares launch `launch`'s outputs with the reference and its inputs
/// with what was written (an in-place call's aliased input excepted).
/// False on a mismatch (res.error: the first).
bool checkCall(const Collective &c, const Call &k, int launch,
               const std::string &where, RunResult &res) {
  for (int r = 0; r < k.R; ++r)
    for (size_t i = 0; i < c.buffers.size(); ++i) {
      bool out = c.buffers[i].role == BufferRole::Out;
      if (!out && k.alias && (int)i == k.i0)
        continue; // consumed by the in-place call
      const std::vector<uint8_t> &want = out ? k.ref[r][i] : k.inputsBefore[r][i];
      const uint8_t *got = k.view[r][i];
      const int es = dtypeSize(bufferDType(c, k.b, (int)i)); // its own type
      for (size_t e = 0; e < want.size(); e += es)
        if (std::memcmp(want.data() + e, got + e, es) != 0) {
          if (res.mismatches++ == 0)
            res.error = std::string(out ? "output" : "input (must stay intact)") +
                        " '" + c.buffers[i].name + "' of rank " + std::to_string(r) +
                        " differs at element " + std::to_string(e / es) + ": want 0x" +
                        hexElem(want.data() + e, es) + ", got 0x" + hexElem(got + e, es) +
                        (where.empty() ? " (launch " + std::to_string(launch + 1) + ")"
                                       : where);
        }
    }
  return res.mismatches == 0;
}

/// The maximum binding of launches `bs` of R ranks, as purlinCollCreate
/// takes its maxima (runtime/cuda/Coll.cpp, maxima): each count the
/// largest of the launches' (their maxParams), a root R - 1, a group size
/// R; a table bound at compile time its values, any other its declared
/// bound at those values in every entry.
bool maximumBinding(const Collective &c, const std::vector<Binding> &bs, int R,
                    Binding &maxB, std::string &error) {
  maxB = Binding();
  maxB.dtype = bs.front().dtype;
  maxB.redop = bs.front().redop;
  for (auto &p : c.params) {
    if (!isScalarParam(p.kind))
      continue;
    int64_t v = 0;
    if (p.kind == ParamKind::Ranks || p.kind == ParamKind::Group)
      v = R;
    else if (p.kind == ParamKind::Root)
      v = R - 1;
    else
      for (const Binding &b : bs)
        v = std::max(v, b.scalars.at(p.name));
    maxB.scalars[p.name] = v;
  }
  for (auto &p : c.params) {
    if (p.kind != ParamKind::Table)
      continue;
    if (!p.bound.empty()) {
      maxB.tables[p.name] = bs.front().tables.at(p.name);
      continue;
    }
    int64_t words = 1, declared = 0;
    for (auto &d : p.dims) {
      int64_t e = 0;
      if (!evalParamExpr(c, maxB, d, e, error))
        return false;
      words *= e;
    }
    if (!evalParamExpr(c, maxB, p.max, declared, error))
      return false;
    maxB.tables[p.name].assign(words > 0 ? words : 0, declared);
  }
  return true;
}

/// Runs `launches` launches, launch k under bs[k] (bs.size() >= launches),
/// of one plan on one scratch area and one signal array, checking each
/// against the reference. `own`: the launches have bindings of their own,
/// and the scratch is laid out once at their maximum binding, as the CUDA
/// runtime lays it out; else it is laid out for the one binding.
RunResult runCalls(const purlin_collective_info *info,
                   const std::vector<Binding> &bs, int launches,
                   const RunOptions &o, bool own) {
  RunResult res;
  Collective c;
  if (!readInfo(info, c, res.error))
    return res;
  rt::BoundValues bound;
  if (!bound.init(c, res.error))
    return res;
  const int n = (int)bs.size();
  std::vector<Call> calls(n);
  std::vector<std::string> where(n);
  for (int e = 0; e < n; ++e) {
    where[e] = own ? launchText(c, bs[e], e) : "";
    if (!bindCall(info, c, bound, bs[e], o, where[e], calls[e], res))
      return res;
  }
  for (int e = 1; e < n; ++e) {
    if (calls[e].R != calls[0].R || calls[e].b.dtype != calls[0].b.dtype ||
        calls[e].b.redop != calls[0].b.redop) {
      res.error = "the launches of a run take one rank count, type and op";
      return res;
    }
    // One plan runs every launch, on its scratch: the runtime would run
    // the launch the chooser gives another plan on that plan's resources,
    // which this run does not model.
    if (calls[e].plan != calls[0].plan) {
      res.plan = "auto";
      res.error = std::string("the chooser picks '") +
                  info->plans[calls[0].plan].strategy + "'" + where[0] +
                  " and '" + info->plans[calls[e].plan].strategy + "'" +
                  where[e] +
                  ": one plan must run every launch (name it with --strategy)";
      return res;
    }
  }
  const int R = calls[0].R, pi = calls[0].plan;
  const purlin_plan_info &plan = info->plans[pi];
  res.plan = plan.strategy;
  rt::registerTarget(datapath());
  rt::registerTarget(ceModel());
  const rt::RuntimeTarget *dp = rt::targetFor(info->target, res.error);
  if (!dp)
    return res;
  if (!dp->hasEntry(plan)) {
    res.error = std::string("plan '") + plan.strategy +
                "' has no entry for the '" + dp->name() + "' datapath";
    return res;
  }
  // The scratch: laid out for the one binding, or once at the maximum
  // binding as purlinCollCreate lays it out (layoutAtMaxima), its parity
  // stride passed to every launch as purlinLaunch passes it.
  int64_t scratchBytes = 0, stride = 0;
  exec::Shared M; // the maximum binding's parameters (own)
  if (own) {
    Binding maxB;
    M.R = R;
    std::vector<Binding> applied; // with the values bound at compile time
    for (const Call &k : calls)
      applied.push_back(k.b);
    if (!maximumBinding(c, applied, R, maxB, res.error) ||
        !fillParams(c, maxB, M.P, res.error)) {
      res.error = "the maximum binding: " + res.error;
      return res;
    }
    scratchBytes = layoutAtMaxima(plan, M, stride);
  }
  for (int e = 0; e < n; ++e) {
    Call &k = calls[e];
    if (!planShared(c, k.b, plan, R, k.es, k.S, res.error))
      return res;
    k.S.oneLaunch = o.oneLaunch ? 1 : 0;
    if (own)
      k.S.parityStride = o.strideOfCall ? 0 : stride;
    const int64_t need = plan.layout(&k.S);
    k.empty = emptyParityLaunch(k.S);
    if (own && o.rankStreams && partialParityLaunch(plan, M.P, k.S)) {
      // What purlinLaunch refuses where the ranks' launches are not
      // ordered (PURLIN_ERR_NO_PLAN): a parity plan's call in which one
      // staged clause is idle while another moves.
      res.refused = true;
      res.error = std::string("plan '") + plan.strategy +
                  "': a clause staged by launch parity moves nothing" + where[e] +
                  " while another moves (the runtime refuses it on unordered ranks)";
      return res;
    }
    const bool atMaxima = o.areasAtMaxima < 0 ? !o.oneLaunch : o.areasAtMaxima == 1;
    if (own && atMaxima && !areasAtMaxima(plan, M.P, k.S)) {
      res.error = "a staging slot" + where[e] +
                  " is larger than at the maximum binding";
      return res;
    }
    if (!own) {
      scratchBytes = need; // every launch's binding is the one
    } else if (need > scratchBytes) {
      // What purlinLaunch refuses (PURLIN_ERR_PARAM_RANGE): here a
      // launch within the maxima, so the maxima's layout is wrong.
      res.error = std::string("plan '") + plan.strategy + "' needs " +
                  std::to_string(need) + " bytes of scratch" + where[e] +
                  "; the maximum binding's layout gives " +
                  std::to_string(scratchBytes);
      return res;
    }
  }
  // One scratch area and one signal array for every launch; the scratch
  // poisoned once, before the first.
  std::vector<std::vector<uint8_t>> scratch(R, std::vector<uint8_t>(scratchBytes + 16, 0xEE));
  std::vector<std::vector<uint64_t>> signals(
      R, std::vector<uint64_t>(exec::signalWords(plan.nsignals, R, plan.lanes,
                                                 plan.chunks), 0));
  for (Call &k : calls)
    for (int r = 0; r < R; ++r) {
      k.S.scratch[r] = (char *)scratch[r].data();
      k.S.signals[r] = signals[r].data();
    }
  HostAtoms cfg;
  cfg.dtype = calls[0].b.dtype;
  cfg.maxDelayUs = o.maxDelayUs;
  cfg.timeoutMs = o.timeoutMs;
  cfg.applyInLaunch = o.applyInLaunch;
  const int dtype = (int)calls[0].b.dtype;
  auto failed = [&](purlinStatus st, std::string msg, int launch,
                    int rank) {
    // The datapath cannot run the plan (the copy engine and a reduction):
    // refused, as the runtime refuses it.
    res.refused = st == PURLIN_ERR_UNSUPPORTED_OP;
    if (!res.refused)
      msg += (own ? where[launch] : " in launch " + std::to_string(launch + 1)) +
             (rank >= 0 ? " of rank " + std::to_string(rank) : "");
    res.error = msg;
  };
  if (!o.rankStreams) {
    // Every launch ends on every rank before the next starts.
    for (int launch = 0; launch < launches; ++launch) {
      Call &k = calls[launch];
      cfg.seed = o.jitterSeed ? o.jitterSeed * 1000 + launch + 1 : 0;
      if (!fillCall(c, k, launch, res))
        return res;
      std::string msg;
      // An empty launch of a parity plan is not launched (emptyParityLaunch),
      // as purlinLaunch skips it.
      purlinStatus st = k.empty
                            ? PURLIN_SUCCESS
                            : dp->launch(*info, pi, k.S, 0, R, dtype, k.S.op, &cfg, msg);
      if (st != PURLIN_SUCCESS) {
        failed(st, msg, launch, -1);
        return res;
      }
      if (!checkCall(c, k, launch, where[launch], res))
        return res;
      k.mem.clear(), k.ref.clear(), k.inputsBefore.clear(); // done with
    }
  } else {
    // Each rank's launches one after the other, as a GPU's stream runs
    // them, the ranks unordered: rank r's launch e + 1 may run while a
    // peer is still in launch e. Every launch's buffers are ready first;
    // one HostAtoms for all (their waits are woken through its buckets).
    for (int launch = 0; launch < launches; ++launch)
      if (!fillCall(c, calls[launch], launch, res))
        return res;
    cfg.seed = o.jitterSeed ? o.jitterSeed * 1000 + 1 : 0;
    cfg.apart = false; // several launches: never apart (HostDatapath)
    cfg.applyLanes = plan.lanes + 1;
    std::mutex mu;
    purlinStatus firstSt = PURLIN_SUCCESS;
    std::string firstMsg;
    int firstLaunch = 0, firstRank = 0;
    std::vector<std::function<void()>> jobs;
    for (int r = 0; r < R; ++r)
      jobs.push_back([&, r] {
        for (int launch = 0; launch < launches && !cfg.timedOut.load(); ++launch) {
          std::string msg;
          const Call &k = calls[launch];
          if (k.empty) // not launched (above)
            continue;
          if (purlinStatus st = dp->launch(*info, pi, k.S, r, 1, dtype, k.S.op, &cfg, msg)) {
            std::lock_guard<std::mutex> g(mu);
            if (firstSt == PURLIN_SUCCESS)
              firstSt = st, firstMsg = msg, firstLaunch = launch, firstRank = r;
            return;
          }
        }
      });
    runConcurrently(jobs);
    if (firstSt != PURLIN_SUCCESS) {
      failed(firstSt, firstMsg, firstLaunch, firstRank);
      return res;
    }
    for (int launch = 0; launch < launches; ++launch)
      if (!checkCall(c, calls[launch], launch, where[launch], res))
        return res;
  }
  res.ok = true;
  return res;
}
} // namespace

RunResult runAndCheck(const purlin_collective_info *info, const Binding &b,
                      const RunOptions &o) {
  return runCalls(info, std::vector<Binding>(std::max(o.launches, 1), b),
                  o.launches, o, false);
}

RunResult runLaunches(const purlin_collective_info *info,
                      const std::vector<Binding> &launches,
                      const RunOptions &o) {
  if (launches.empty()) {
    RunResult res;
    res.error = "no launches";
    return res;
  }
  return runCalls(info, launches, (int)launches.size(), o, true);
}

} // namespace host
} // namespace purlin
