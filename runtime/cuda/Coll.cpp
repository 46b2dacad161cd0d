// Collective instances: a compiled collective on a communicator, checked
// (its description, its datapath, its plans), with the maxima of its
// parameters and the resources sized for them: peer-visible scratch shared
// by the plans (or a plan's own) and signal memory per plan.
#include "Bootstrap.h"
#include "Internal.h"
#include "purlin/runtime/Launch.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

using namespace purlin;
using namespace purlin::rt;

namespace {
/// The parameters' kinds: which are scalars (R, counts, roots, in the
/// executor's slot order), which tables; fixed ops.
purlinStatus classifyParams(purlinColl &c) {
  const Collective &d = c.desc;
  for (size_t i = 0; i < d.params.size(); ++i) {
    ParamKind k = d.params[i].kind;
    if (isScalarParam(k)) {
      if (k == ParamKind::Ranks)
        c.ranksSlot = (int)c.scalarParams.size();
      else
        c.scalarNames.push_back(d.params[i].name);
      c.scalarParams.push_back((int)i);
    } else if (k == ParamKind::Table) {
      c.tableParams.push_back((int)i);
    } else if (k == ParamKind::Op) {
      c.hasOpParam = true;
    }
  }
  if ((int)c.scalarParams.size() > exec::kMaxScalars ||
      (int)c.tableParams.size() > exec::kMaxTables)
    return fail(PURLIN_ERR_BAD_COLLECTIVE, "too many parameters");
  for (auto &cl : d.clauses)
    if (cl.opParam.empty() && cl.op != RedOp::Copy)
      c.fixedOp = (int)cl.op;
  return PURLIN_SUCCESS;
}

/// The maximum of every scalar (maxParams; R the communicator's, a root
/// R - 1) and of every table's entries (one value in maxParams, "cnt=64",
/// else the declared bound at the maximum scalars; a table bound at compile
/// time at its values), into `maxB`.
purlinStatus maxima(purlinColl &c, const char *maxParams, Binding &maxB) {
  const Collective &d = c.desc;
  const int R = c.comm->R;
  std::string err;
  Binding mb;
  if (!parseBindingList(d, maxParams ? maxParams : "", mb, err))
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "maxParams: " + err);
  if (!applyBoundParams(d, mb, err))
    return fail(PURLIN_ERR_BAD_COLLECTIVE, err);
  c.maxScalars.assign(c.scalarParams.size(), 0);
  for (size_t s = 0; s < c.scalarParams.size(); ++s) {
    const Param &p = d.params[c.scalarParams[s]];
    if ((int)s == c.ranksSlot || p.kind == ParamKind::Group) {
      c.maxScalars[s] = R; // a group size divides R
      continue;
    }
    auto it = mb.scalars.find(p.name);
    if (it == mb.scalars.end())
      return fail(PURLIN_ERR_INVALID_ARGUMENT,
                  "maxParams: no value for '" + p.name + "'");
    if (it->second < 0)
      return fail(PURLIN_ERR_PARAM_RANGE,
                  "maxParams: '" + p.name + "' is negative");
    c.maxScalars[s] = p.kind == ParamKind::Root ? R - 1 : it->second;
  }
  for (size_t s = 0; s < c.scalarParams.size(); ++s)
    maxB.scalars[d.params[c.scalarParams[s]].name] = c.maxScalars[s];
  int64_t maxWords = 0;
  for (size_t t = 0; t < c.tableParams.size(); ++t) {
    const Param &p = d.params[c.tableParams[t]];
    std::vector<int64_t> ext;
    int64_t words = 0;
    if (!tableShape(&c, (int)t, maxB, ext, words, err))
      return fail(PURLIN_ERR_BAD_COLLECTIVE, err);
    maxWords += words;
    if (maxWords > exec::kMaxTableWords) {
      std::string why;
      const int maxR = maxRanksForTables(d, why);
      return fail(PURLIN_ERR_PARAM_RANGE,
                  "table " + tableText(p.name, ext) +
                      " at the maximum values "
                      "brings the tables to " +
                      std::to_string(maxWords) +
                      " entries; the executor holds at most " +
                      std::to_string(exec::kMaxTableWords) +
                      (maxR < exec::kMaxRanks
                           ? " ('" + d.name + "' runs on at most " +
                                 std::to_string(maxR) + " ranks)"
                           : std::string(" (fewer ranks or smaller maxima)")));
    }
    std::vector<int64_t> vals;
    if (!p.bound.empty()) {
      vals = mb.tables[p.name];
      if ((int64_t)vals.size() != words)
        return fail(PURLIN_ERR_BAD_COLLECTIVE,
                    "table '" + p.name + "' was bound at compile time to " +
                        std::to_string(vals.size()) + " values; " +
                        tableText(p.name, ext) + " needs " +
                        std::to_string(words));
      int64_t mx = 0;
      for (int64_t x : vals)
        mx = x > mx ? x : mx;
      c.tableMax.push_back(mx);
      c.boundTables.push_back(vals);
    } else {
      int64_t declared = 0;
      if (!evalParamExpr(d, maxB, p.max, declared, err))
        return fail(PURLIN_ERR_BAD_COLLECTIVE,
                    "the bound of table '" + p.name + "': " + err);
      int64_t mx = declared;
      auto it = mb.tables.find(p.name);
      if (it != mb.tables.end()) {
        if (it->second.size() != 1)
          return fail(PURLIN_ERR_INVALID_ARGUMENT,
                      "maxParams: table '" + p.name +
                          "' takes one value, the largest entry (e.g. '" +
                          p.name + "=" + std::to_string(declared) + "')");
        mx = it->second[0];
        if (mx < 0 || mx > declared)
          return fail(PURLIN_ERR_PARAM_RANGE,
                      "maxParams: '" + p.name + "' = " + std::to_string(mx) +
                          " is outside [0, " + p.max.str() + " = " +
                          std::to_string(declared) + "]");
      }
      c.tableMax.push_back(mx);
      c.boundTables.emplace_back();
      vals.assign(words, mx);
    }
    maxB.tables[p.name] = vals;
  }
  return PURLIN_SUCCESS;
}

/// Scratch (the largest any plan needs at the maximum values, for the
/// widest element) and signals per plan (plans never share signal words,
/// so each plan's epochs stay consistent whatever the sequence), with the
/// datapath's own words after each plan's signals.
purlinStatus allocateResources(purlinColl &c, const Binding &maxB) {
  const purlin_collective_info *info = c.info;
  purlinComm *comm = c.comm;
  std::string err;
  exec::Shared S;
  std::memset(&S, 0, sizeof S);
  S.R = comm->R;
  if (!fillParams(c.desc, maxB, S.P, err))
    return fail(PURLIN_ERR_PARAM_RANGE, "maxParams: " + err);
  c.maxP = S.P;
  int64_t shared = 0;
  std::vector<int64_t> need(info->nplans, 0);
  for (int i = 0; i < info->nplans; ++i) {
    const purlin_plan_info &pl = info->plans[i];
    int64_t stride = 0; // where the layout at the maxima puts half 1
    // A low-latency band plan at the band's binding (Internal.h, planMaxP).
    exec::Shared Si = S;
    Binding band;
    if (pl.several_launches && pl.max_bytes > 0 &&
        bandBinding(c.desc, maxB, pl.max_bytes, band) &&
        !fillParams(c.desc, band, Si.P, err))
      return fail(PURLIN_ERR_PARAM_RANGE, "the low-latency band's binding: " + err);
    c.planMaxP.push_back(Si.P);
    need[i] = layoutAtMaxima(pl, Si, stride);
    c.planParityStride.push_back(stride);
    if (!pl.exclusive_scratch && need[i] > shared)
      shared = need[i];
  }
  int64_t scratchBytes = shared;
  for (int i = 0; i < info->nplans; ++i) {
    const bool own = info->plans[i].exclusive_scratch != 0;
    c.planScratchOff.push_back(own ? scratchBytes : 0);
    c.planScratchBytes.push_back(own ? need[i] : shared);
    if (own)
      scratchBytes += need[i];
  }
  c.scratchBytes = scratchBytes;
  DeviceGuard guard;
  if (!comm->mem->allocate(scratchBytes, c.scratch, err))
    return fail(PURLIN_ERR_OUT_OF_MEMORY, "scratch: " + err);
  CommInfo ci;
  ci.errorWord = (uint64_t)(uintptr_t)comm->errDev;
  ci.timeoutNs = comm->timeoutNs;
  ci.oneDevice = comm->devices.size() == 1 && !comm->multiProcess;
  const std::vector<uint64_t> aux = c.datapath->auxWords(ci);
  for (int i = 0; i < info->nplans; ++i) {
    const purlin_plan_info &pl = info->plans[i];
    std::vector<void *> sig;
    if (!comm->mem->allocate(c.datapath->signalWords(pl, comm->R) * 8, sig,
                             err))
      return fail(PURLIN_ERR_OUT_OF_MEMORY, "signals: " + err);
    c.sigs.push_back(sig);
    if (aux.empty())
      continue;
    // Each process initializes its own ranks' words (they may hold
    // addresses in this process).
    const int64_t at =
        exec::signalWords(pl.nsignals, comm->R, pl.lanes, pl.chunks);
    for (int r = comm->first[0]; r < comm->first.back() + comm->count.back();
         ++r) {
      cudaSetDevice(comm->rankDevice[r]);
      cudaError_t e = cudaMemcpy((uint64_t *)sig[r] + at, aux.data(),
                                 aux.size() * 8, cudaMemcpyHostToDevice);
      if (e != cudaSuccess)
        return cudaFail(e, "initialising signals");
    }
  }
  for (int dev : comm->devices) {
    cudaSetDevice(dev);
    cudaDeviceSynchronize();
  }
  return PURLIN_SUCCESS;
}
} // namespace

extern "C" {

purlinStatus purlinCollCreate(purlinColl_t *out, purlinComm_t comm,
                              const purlin_collective_info *info,
                              const char *maxParams) {
  if (!out || !comm || !info)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCollCreate: null argument");
  *out = nullptr;
  auto c = std::make_unique<purlinColl>();
  c->comm = comm;
  c->info = info;
  std::string err;
  if (!info->desc || !readDesc(info->desc, c->desc, err))
    return fail(PURLIN_ERR_BAD_COLLECTIVE, "bad description: " + err);
  c->hasEpilogue = hasEpilogue(c->desc);
  c->epiLocalPairs = epilogueLocalPairs(c->desc);
  for (const Buffer &b : c->desc.buffers) {
    DType t;
    c->bufDType.push_back(declaredDType(c->desc, b, t) ? (int)t : -1);
  }
  registerDatapaths();
  c->datapath = targetFor(info->target, err);
  if (!c->datapath)
    return fail(PURLIN_ERR_BAD_COLLECTIVE,
                std::string("collective '") + info->name + "': " + err);
  if (comm->datapath && comm->datapath != c->datapath)
    return fail(PURLIN_ERR_BAD_COLLECTIVE, std::string("collective '") +
                                               info->name + "' runs on the '" +
                                               c->datapath->name() +
                                               "' datapath; the communicator's "
                                               "collectives run on '" +
                                               comm->datapath->name() + "'");
  if (info->nplans < 1)
    return fail(PURLIN_ERR_BAD_COLLECTIVE, "collective has no plans");
  for (int i = 0; i < info->nplans; ++i)
    if (!c->datapath->hasEntry(info->plans[i]) || !info->plans[i].layout)
      return fail(PURLIN_ERR_BAD_COLLECTIVE,
                  std::string("plan '") + info->plans[i].strategy +
                      "' has no entry for the '" + c->datapath->name() +
                      "' datapath");
  if (purlinStatus st = classifyParams(*c))
    return st;
  // Values bound at compile time: the rank count now, the rest at launch.
  if (!c->bound.init(c->desc, err))
    return fail(PURLIN_ERR_BAD_COLLECTIVE, err);
  if (purlinStatus st = c->bound.checkRanks(comm->R, err))
    return fail(st, err);
  Binding maxB;
  if (purlinStatus st = maxima(*c, maxParams, maxB))
    return st;
  // Every process creates the same collective with the same maxima (one
  // process: nothing to agree on).
  std::string mine = std::string("purlinCollCreate ") + info->name;
  for (size_t s = 0; s < c->maxScalars.size(); ++s)
    mine += " " + std::to_string(c->maxScalars[s]);
  for (int64_t t : c->tableMax)
    mine += " " + std::to_string(t);
  if (!comm->mem->agree(mine, err))
    return fail(comm->multiProcess && comm->boot && comm->boot->broken()
                    ? PURLIN_ERR_BOOTSTRAP
                    : PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCollCreate: " + err);
  if (purlinStatus st = allocateResources(*c, maxB))
    return st;
  // Every process has initialized its signals before anyone launches.
  if (!comm->mem->barrier(err))
    return fail(PURLIN_ERR_BOOTSTRAP, "purlinCollCreate: " + err);
  comm->datapath = c->datapath;
  *out = c.release();
  return ok();
}

purlinStatus purlinCollPrepare(purlinColl_t c, const int *dtypes, int ndtypes,
                               const int *ops, int nops) {
  if (!c || ndtypes < 0 || nops < 0 || (ndtypes && !dtypes) || (nops && !ops))
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCollPrepare: bad argument");
  // The distinct (type, op) pairs the datapath is not ready for, checked
  // as a launch checks them.
  std::vector<std::pair<int, int>> todo;
  for (int i = 0; i < ndtypes; ++i)
    for (int j = 0; j < (nops > 0 ? nops : 1); ++j) {
      int op = exec::kCopy;
      if (purlinStatus st =
              typeAndOp(c, dtypes[i], nops > 0 ? ops[j] : PURLIN_SUM, op))
        return st;
      const std::pair<int, int> pair(dtypes[i], op);
      if (!c->datapath->ready(*c->info, pair.first, pair.second) &&
          std::find(todo.begin(), todo.end(), pair) == todo.end())
        todo.push_back(pair);
    }
  // Compiled in parallel, a few at a time (each compile is one thread).
  std::vector<purlinStatus> st(todo.size(), PURLIN_SUCCESS);
  std::vector<std::string> msg(todo.size());
  DeviceGuard guard;
  const int device = c->comm->devices[0];
  std::atomic<size_t> next{0};
  auto worker = [&] {
    cudaSetDevice(device); // the architecture compiled for
    for (size_t k; (k = next++) < todo.size();)
      st[k] =
          c->datapath->prepare(*c->info, todo[k].first, todo[k].second, msg[k]);
  };
  const size_t nthreads = std::min<size_t>(
      todo.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t t = 1; t < nthreads; ++t)
    threads.emplace_back(worker);
  if (!todo.empty())
    worker();
  for (auto &t : threads)
    t.join();
  for (size_t k = 0; k < todo.size(); ++k)
    if (st[k] != PURLIN_SUCCESS)
      return fail(st[k], msg[k]);
  return ok();
}

purlinStatus purlinCollDestroy(purlinColl_t c) {
  if (!c)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "null collective");
  DeviceGuard guard;
  c->comm->mem->release(c->scratch);
  for (auto &s : c->sigs)
    c->comm->mem->release(s);
  delete c;
  return ok();
}

} // extern "C"
