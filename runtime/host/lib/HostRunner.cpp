#include "purlin/host/HostRunner.h"

#include "host/target.h"
#include "purlin/runtime/BoundValues.h"
#include "purlin/runtime/Launch.h"
#include "purlin/spec/Params.h"
#include "purlin/spec/Reference.h"

#include <algorithm>
#include <cstdio>

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
} // namespace

RunResult runAndCheck(const purlin_collective_info *info, const Binding &bIn,
                      const RunOptions &o) {
  RunResult res;
  Collective c;
  if (!readInfo(info, c, res.error))
    return res;
  rt::BoundValues bound;
  if (!bound.init(c, res.error))
    return res;
  if (bound.check(c, bIn, res.error) != PURLIN_SUCCESS)
    return res;
  Binding b = bIn;
  if (!applyBoundParams(c, b, res.error))
    return res;
  std::vector<Diag> diags;
  if (!checkBinding(c, b, diags, 0)) {
    res.error = "bad binding: " + diags.front().message;
    return res;
  }
  const int R = (int)b.ranks(c);
  if (R > exec::kMaxRanks) {
    res.error = "too many ranks for the executor";
    return res;
  }
  const int64_t words = tableEntries(c, b, res.error);
  if (words > exec::kMaxTableWords) {
    std::string why;
    res.refused = true;
    res.error = "the tables hold " + std::to_string(words) + " entries at " +
                std::to_string(R) + " ranks; the executor holds " +
                std::to_string(exec::kMaxTableWords) + " (" + c.name +
                " runs on at most " + std::to_string(maxRanksForTables(c, why)) +
                " ranks)";
    return res;
  }
  const int es = dtypeSize(b.dtype);
  // In place: the first input and the first output share one arena.
  int i0 = -1, o0 = -1;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    if (c.buffers[i].role == BufferRole::In && i0 < 0)
      i0 = (int)i;
    if (c.buffers[i].role == BufferRole::Out && o0 < 0)
      o0 = (int)i;
  }
  const bool alias = o.inplace && i0 >= 0 && o0 >= 0;
  int64_t ni = 0, no = 0;
  if (alias && (!bufferElems(c, b, i0, ni, res.error) ||
                !bufferElems(c, b, o0, no, res.error)))
    return res;
  // Element offset of the smaller of the two inside the larger, per rank.
  auto aliasAt = [&](int r) -> int64_t {
    if (o.sameStart)
      return 0;
    return ni <= no ? aliasOffset(ni, no, R, r) : aliasOffset(no, ni, R, r);
  };
  InPlace mode = InPlace::No;
  if (alias && ni > 0 && no > 0) {
    mode = c.buffers[i0].dtype == c.buffers[o0].dtype ? InPlace::SameStart
                                                       : InPlace::Any;
    for (int r = 0; r < R; ++r)
      if (aliasAt(r) != 0)
        mode = InPlace::Any;
  }
  int pi = choosePlan(info, callBytes(c, b), mode, R, o.strategy, !o.oneLaunch);
  if (pi < 0) {
    res.refused = true;
    int reach = 0;
    for (int i = 0; i < info->nplans; ++i)
      reach = std::max(reach, info->plans[i].inplace_max_ranks);
    res.error = "no plan fits (strategy '" + o.strategy + "'" +
                (mode == InPlace::Any         ? ", in place"
                 : mode == InPlace::SameStart ? ", in place at the same address"
                                              : "") +
                (mode != InPlace::No && reach > 0 && R > reach
                     ? ", " + std::to_string(R) + " ranks: in-place proofs reach " +
                           std::to_string(reach)
                     : "") +
                ")";
    return res;
  }
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
  exec::Shared S;
  if (!planShared(c, b, plan, R, es, S, res.error))
    return res;
  S.oneLaunch = o.oneLaunch ? 1 : 0;
  int64_t scratchBytes = plan.layout(&S);
  std::vector<std::vector<uint8_t>> scratch(R, std::vector<uint8_t>(scratchBytes + 16, 0xEE));
  std::vector<std::vector<uint64_t>> signals(
      R, std::vector<uint64_t>(exec::signalWords(S.nsignals, R, S.L, S.K), 0));
  for (int r = 0; r < R; ++r) {
    S.scratch[r] = (char *)scratch[r].data();
    S.signals[r] = signals[r].data();
  }
  HostAtoms cfg;
  cfg.dtype = b.dtype;
  cfg.maxDelayUs = o.maxDelayUs;
  cfg.timeoutMs = o.timeoutMs;
  for (int launch = 0; launch < o.launches; ++launch) {
    cfg.seed = o.jitterSeed ? o.jitterSeed * 1000 + launch + 1 : 0;
    RankBuffers ref;
    if (!allocateBuffers(c, b, ref, 17 + launch, 0xA5, res.error))
      return res;
    // The buffers the collective runs on: separate, or one arena per rank.
    std::vector<std::vector<std::vector<uint8_t>>> mem(R);
    std::vector<std::vector<uint8_t *>> view(R);
    for (int r = 0; r < R; ++r) {
      view[r].resize(c.buffers.size());
      for (size_t i = 0; i < c.buffers.size(); ++i) {
        mem[r].push_back(ref[r][i]);
        view[r][i] = mem[r].back().data();
      }
      if (alias) {
        int64_t ni = (int64_t)ref[r][i0].size(), no = (int64_t)ref[r][o0].size();
        if (ni <= no) { // the input inside the output
          int64_t off = aliasAt(r) * es;
          std::memcpy(mem[r][o0].data() + off, ref[r][i0].data(), ni);
          view[r][i0] = mem[r][o0].data() + off;
          std::memcpy(ref[r][o0].data() + off, ref[r][i0].data(), ni);
        } else { // the output inside the input
          int64_t off = aliasAt(r) * es;
          view[r][o0] = mem[r][i0].data() + off;
          std::memcpy(ref[r][o0].data(), ref[r][i0].data() + off, no);
        }
      }
      for (size_t i = 0; i < c.buffers.size(); ++i)
        S.buf[r][i] = view[r][i];
    }
    RankBuffers inputsBefore = ref;
    if (!referenceEvaluate(c, b, ref, res.error))
      return res;
    std::string msg;
    if (purlinStatus st = dp->launch(*info, pi, S, 0, R, (int)b.dtype, S.op, &cfg, msg)) {
      // The datapath cannot run the plan (the copy engine and a reduction):
      // refused, as the runtime refuses it.
      res.refused = st == PURLIN_ERR_UNSUPPORTED_OP;
      res.error = msg + (res.refused ? "" : " in launch " + std::to_string(launch + 1));
      return res;
    }
    for (int r = 0; r < R; ++r)
      for (size_t i = 0; i < c.buffers.size(); ++i) {
        bool out = c.buffers[i].role == BufferRole::Out;
        if (!out && alias && (int)i == i0)
          continue; // consumed by the in-place call
        const std::vector<uint8_t> &want = out ? ref[r][i] : inputsBefore[r][i];
        const uint8_t *got = view[r][i];
        const int es = dtypeSize(bufferDType(c, b, (int)i)); // its own type
        for (size_t e = 0; e < want.size(); e += es)
          if (std::memcmp(want.data() + e, got + e, es) != 0) {
            if (res.mismatches++ == 0)
              res.error = std::string(out ? "output" : "input (must stay intact)") +
                          " '" + c.buffers[i].name + "' of rank " + std::to_string(r) +
                          " differs at element " + std::to_string(e / es) + ": want 0x" +
                          hexElem(want.data() + e, es) + ", got 0x" + hexElem(got + e, es) +
                          " (launch " + std::to_string(launch + 1) + ")";
          }
      }
    if (res.mismatches)
      return res;
  }
  res.ok = true;
  return res;
}

} // namespace host
} // namespace purlin
