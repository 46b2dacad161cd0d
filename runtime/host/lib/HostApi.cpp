// The host target's C API (purlin/host/purlin_host.h): a collective
// compiled for the host target, launched on the caller's buffers with
// every rank and lane as a thread. The same steps as the host runner
// (HostRunner.cpp) without its reference buffers: bind, check against the
// values bound at compile time, choose the plan by size and overlap, lay
// out scratch, run the host datapath.
#include "purlin/host/purlin_host.h"

#include "host/target.h"
#include "purlin/host/HostRunner.h"
#include "purlin/purlin.h"
#include "purlin/runtime/BoundValues.h"
#include "purlin/runtime/Launch.h"
#include "purlin/spec/Params.h"

#include <cstdlib>
#include <memory>
#include <sstream>

struct purlinHostColl {
  const purlin_collective_info *info = nullptr;
  purlin::Collective c;
  purlin::rt::BoundValues bound;
  uint64_t localPairs = 0; // epilogueLocalPairs(c): no overlap at one start
  std::string lastPlan;
};

namespace {
using namespace purlin;

thread_local std::string lastError;

int fail(int status, const std::string &msg) {
  lastError = msg;
  return status;
}
int ok() {
  lastError.clear();
  return PURLIN_SUCCESS;
}

// "NAME=VALUE,..." into `b` (see the header); the element type from the
// binding, else from a concrete buffer type.
int parseBinding(const purlinHostColl *h, const char *text, Binding &b) {
  const Collective &c = h->c;
  bool haveType = false;
  std::stringstream items(text ? text : "");
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    std::string name = item.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    const Param *p = c.param(name);
    if (!p) {
      std::string known;
      for (const Param &q : c.params)
        known += (known.empty() ? "" : ", ") + q.name;
      return fail(PURLIN_ERR_INVALID_ARGUMENT,
                  "collective '" + c.name + "' has no parameter '" + name +
                      "' (its parameters: " + known + ")");
    }
    if (eq == std::string::npos || value.empty())
      return fail(PURLIN_ERR_INVALID_ARGUMENT,
                  "parameter '" + name + "' has no value");
    if (p->kind == ParamKind::Type) {
      if (!parseDType(value, b.dtype))
        return fail(PURLIN_ERR_UNSUPPORTED_TYPE,
                    "unknown element type '" + value + "' for '" + name + "'");
      haveType = true;
    } else if (p->kind == ParamKind::Op) {
      if (!parseRedOp(value, b.redop))
        return fail(PURLIN_ERR_UNSUPPORTED_OP,
                    "unknown op '" + value + "' for '" + name + "'");
    } else {
      std::vector<int64_t> vals;
      std::stringstream parts(value);
      std::string part;
      while (std::getline(parts, part, ':')) {
        char *end = nullptr;
        long long v = std::strtoll(part.c_str(), &end, 10);
        if (part.empty() || *end)
          return fail(PURLIN_ERR_INVALID_ARGUMENT,
                      "parameter '" + name + "': '" + part +
                          "' is not an integer");
        vals.push_back(v);
      }
      if (p->kind == ParamKind::Table)
        b.tables[name] = vals;
      else if (vals.size() != 1)
        return fail(PURLIN_ERR_INVALID_ARGUMENT,
                    "parameter '" + name + "' takes one integer");
      else
        b.scalars[name] = vals[0];
    }
  }
  if (!haveType) {
    for (const Param &p : c.params)
      if (p.kind == ParamKind::Type && !p.bound.empty() &&
          parseDType(p.bound, b.dtype))
        haveType = true;
    if (!haveType && clauseDType(c, b.dtype))
      haveType = true;
  }
  return ok();
}

// Parses, checks against the values bound at compile time and, with
// `full`, the rules that need values (maps inside buffers, ...).
int bindChecked(const purlinHostColl *h, const char *text, Binding &b,
                bool full) {
  if (int st = parseBinding(h, text, b))
    return st;
  std::string err;
  if (int st = h->bound.check(h->c, b, err))
    return fail(st, err);
  if (!applyBoundParams(h->c, b, err))
    return fail(PURLIN_ERR_INVALID_ARGUMENT, err);
  for (const Param &p : h->c.params)
    if (isScalarParam(p.kind) && !b.scalars.count(p.name))
      return fail(PURLIN_ERR_INVALID_ARGUMENT,
                  "parameter '" + p.name + "' (" + paramKindName(p.kind) +
                      ") is not bound");
  const int64_t R = b.ranks(h->c);
  if (R < 1 || R > exec::kMaxRanks)
    return fail(PURLIN_ERR_BAD_RANK_COUNT,
                "rank count " + std::to_string(R) + " outside [1, " +
                    std::to_string(exec::kMaxRanks) + "]");
  if (!full)
    return ok();
  // A few names suffice for the maps' bounds (they are affine); all of
  // them would cost a pass over every element.
  std::vector<Diag> diags;
  if (!checkBinding(h->c, b, diags, 1 << 16))
    return fail(PURLIN_ERR_PARAM_RANGE, diags.front().message);
  return ok();
}
} // namespace

extern "C" {

const char *purlinHostLastError(void) { return lastError.c_str(); }

int purlinHostCollCreate(purlinHostColl_t *coll,
                         const purlin_collective_info *info) {
  if (!coll || !info)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "null argument");
  auto h = std::make_unique<purlinHostColl>();
  h->info = info;
  std::string err;
  if (!host::readInfo(info, h->c, err) || !h->bound.init(h->c, err))
    return fail(PURLIN_ERR_BAD_COLLECTIVE, err);
  h->localPairs = epilogueLocalPairs(h->c);
  rt::registerTarget(host::datapath());
  const rt::RuntimeTarget *dp = rt::targetFor(info->target, err);
  if (!dp || std::string(dp->name()) != "host")
    return fail(PURLIN_ERR_BAD_COLLECTIVE,
                "collective '" + h->c.name + "' is compiled for '" +
                    info->target + "', not the host target");
  *coll = h.release();
  return ok();
}

void purlinHostCollDestroy(purlinHostColl_t coll) { delete coll; }

const char *purlinHostCollName(purlinHostColl_t h) { return h->c.name.c_str(); }
int purlinHostParamCount(purlinHostColl_t h) { return (int)h->c.params.size(); }
const char *purlinHostParamName(purlinHostColl_t h, int i) {
  return h->c.params.at(i).name.c_str();
}
const char *purlinHostParamKind(purlinHostColl_t h, int i) {
  return paramKindName(h->c.params.at(i).kind);
}
const char *purlinHostParamBound(purlinHostColl_t h, int i) {
  return h->c.params.at(i).bound.c_str();
}
int purlinHostBufferCount(purlinHostColl_t h) {
  return (int)h->c.buffers.size();
}
const char *purlinHostBufferName(purlinHostColl_t h, int b) {
  return h->c.buffers.at(b).name.c_str();
}
int purlinHostBufferIsOutput(purlinHostColl_t h, int b) {
  return h->c.buffers.at(b).role == BufferRole::Out;
}
const char *purlinHostBufferType(purlinHostColl_t h, int b) {
  return h->c.buffers.at(b).dtype.c_str();
}

int purlinHostBufferElems(purlinHostColl_t h, const char *binding, int buf,
                          int64_t *elems) {
  if (!h || !elems || buf < 0 || buf >= (int)h->c.buffers.size())
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "bad handle or buffer index");
  Binding b;
  if (int st = bindChecked(h, binding, b, false))
    return st;
  std::string err;
  if (!bufferElems(h->c, b, buf, *elems, err))
    return fail(PURLIN_ERR_PARAM_RANGE, err);
  return ok();
}

int purlinHostLaunch(purlinHostColl_t h, const char *binding,
                     void *const *buffers, const char *strategy,
                     int64_t timeoutMs) {
  if (!h || !buffers)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "null handle or buffers");
  const Collective &c = h->c;
  Binding b;
  if (int st = bindChecked(h, binding, b, true))
    return st;
  std::string err;
  const int R = (int)b.ranks(c);
  const int nb = (int)c.buffers.size();
  const int64_t words = tableEntries(c, b, err);
  if (words < 0)
    return fail(PURLIN_ERR_PARAM_RANGE, err);
  if (words > exec::kMaxTableWords)
    return fail(PURLIN_ERR_PARAM_RANGE,
                "the tables hold " + std::to_string(words) +
                    " entries; the executor holds " +
                    std::to_string(exec::kMaxTableWords));
  std::vector<int64_t> elems(nb);
  std::vector<int> ess(nb);
  for (int i = 0; i < nb; ++i) {
    const int es = ess[i] = dtypeSize(bufferDType(c, b, i));
    if (!bufferElems(c, b, i, elems[i], err))
      return fail(PURLIN_ERR_PARAM_RANGE, err);
    for (int r = 0; r < R; ++r) {
      void *p = buffers[r * nb + i];
      if (!p && elems[i] > 0)
        return fail(PURLIN_ERR_NULL_BUFFER, "buffer '" + c.buffers[i].name +
                                                "' of rank " +
                                                std::to_string(r) + " is null");
      if ((uintptr_t)p % es)
        return fail(PURLIN_ERR_MISALIGNED,
                    "buffer '" + c.buffers[i].name + "' of rank " +
                        std::to_string(r) + " is not aligned to its " +
                        std::to_string(es) + "-byte element");
    }
  }
  InPlace mode =
      classifyOverlap(c, buffers, R, elems.data(), ess.data(), h->localPairs);
  std::string strat = strategy ? strategy : "";
  // Several launches: the host API keeps the boundary syncs (below).
  int pi = choosePlan(h->info, callBytes(c, b), mode, R, strat, true, hasEpilogue(c),
                      epilogueRows(c, b));
  if (pi < 0)
    return fail(PURLIN_ERR_NO_PLAN,
                "no plan of '" + c.name + "' fits this call" +
                    (strat.empty() ? "" : " (strategy '" + strat + "')") +
                    (mode != InPlace::No ? ": an output overlaps an input and "
                                           "no plan is proved right for that"
                                         : ""));
  const purlin_plan_info &plan = h->info->plans[pi];
  exec::Shared S;
  if (!planShared(c, b, plan, R, dtypeSize(b.dtype), S, err))
    return fail(PURLIN_ERR_PARAM_RANGE, err);
  S.oneLaunch = 0; // keep the boundary syncs: always right
  const int64_t scratchBytes = plan.layout(&S);
  std::vector<std::vector<uint8_t>> scratch(
      R, std::vector<uint8_t>(scratchBytes + 16));
  std::vector<std::vector<uint64_t>> signals(
      R, std::vector<uint64_t>(exec::signalWords(S.nsignals, R, S.L, S.K)));
  for (int r = 0; r < R; ++r) {
    S.scratch[r] = (char *)scratch[r].data();
    S.signals[r] = signals[r].data();
    for (int i = 0; i < nb; ++i)
      S.buf[r][i] = buffers[r * nb + i];
  }
  host::HostAtoms atoms;
  atoms.dtype = b.dtype;
  atoms.seed = 0;
  atoms.maxDelayUs = 0;
  atoms.timeoutMs = timeoutMs > 0 ? timeoutMs : 20000;
  std::string msg;
  if (int st = host::datapath().launch(*h->info, pi, S, 0, R, (int)b.dtype,
                                       S.op, &atoms, msg))
    return fail(st, msg);
  h->lastPlan = plan.strategy;
  return ok();
}

const char *purlinHostCollLastPlan(purlinHostColl_t h) {
  return h->lastPlan.c_str();
}

} // extern "C"
