// The thin CUDA runtime (purlin/purlin.h): communicator, per-instance signal
// memory and scratch, validation, plan choice and stream-ordered launch.
#include "purlin/purlin.h"

#include "Bootstrap.h"
#include "PeerMemory.h"
#include "purlin/spec/Exec.h"
#include "common/sm/aux.h"
#include "purlin/spec/Collective.h"
#include "purlin/runtime/Launch.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace purlin;
namespace ex = purlin::exec;

namespace {
thread_local std::string gLastError;

purlinStatus fail(purlinStatus s, const std::string &msg) {
  gLastError = msg;
  return s;
}
purlinStatus ok() {
  gLastError.clear();
  return PURLIN_SUCCESS;
}
purlinStatus cudaFail(cudaError_t e, const std::string &what) {
  cudaGetLastError(); // clear a non-sticky error
  return fail(PURLIN_ERR_CUDA, what + ": " + cudaGetErrorString(e));
}

/// Restores the current device on scope exit.
struct DeviceGuard {
  int prev = 0;
  DeviceGuard() { cudaGetDevice(&prev); }
  ~DeviceGuard() { cudaSetDevice(prev); }
};
} // namespace

struct purlinComm {
  int R = 0;
  std::vector<int> rankDevice;
  // Distinct GPUs in rank order; ranks [first[i], first[i] + count[i]).
  std::vector<int> devices, first, count;
  std::unique_ptr<rt::PeerMemory> mem;
  uint32_t *errHost = nullptr; // mapped host memory, written by the device
  uint32_t *errDev = nullptr;
  uint64_t timeoutNs = sm::kDefaultTimeoutNs;
  // One process per GPU (purlinCommCreateRank): this process's rank, and
  // the symmetric allocations of purlinMemAlloc (peer addresses per rank).
  bool multiProcess = false;
  int rank = 0;
  std::shared_ptr<rt::Bootstrap> boot;
  struct SymAlloc {
    char *base;
    size_t bytes;
    std::vector<void *> peers; // per rank; peers[rank] == base
  };
  std::vector<SymAlloc> sym;
};

namespace {
/// What both communicator constructors share: the error word (mapped host
/// memory that the device writes a timeout into, read by purlinCommCheck)
/// and the wait timeout (PURLIN_TIMEOUT_MS, else the default).
purlinStatus initErrorWord(purlinComm &c) {
  cudaError_t e = cudaHostAlloc((void **)&c.errHost, sizeof(uint32_t),
                                cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess) {
    c.errHost = nullptr;
    return cudaFail(e, "allocating the error word");
  }
  *c.errHost = 0;
  e = cudaHostGetDevicePointer((void **)&c.errDev, c.errHost, 0);
  if (e != cudaSuccess) {
    cudaFreeHost(c.errHost);
    c.errHost = nullptr;
    return cudaFail(e, "mapping the error word");
  }
  if (const char *t = std::getenv("PURLIN_TIMEOUT_MS"))
    c.timeoutNs = (uint64_t)std::atoll(t) * 1000000ull;
  return PURLIN_SUCCESS;
}
} // namespace

struct purlinColl {
  purlinComm *comm = nullptr;
  const purlin_collective_info *info = nullptr;
  Collective desc;
  std::vector<int> scalarParams; // indices into desc.params: R, counts, roots
  std::vector<std::string> scalarNames; // without R
  int ranksSlot = -1;
  std::vector<int> tableParams;  // indices into desc.params, in order
  std::vector<int64_t> maxScalars; // by slot
  // Tables: every entry of table t lies in [0, tableMax[t]] (maxParams, or
  // the declared bound at the maximum scalars); a table bound at compile
  // time takes exactly its bound values (boundTables[t], else empty).
  std::vector<int64_t> tableMax;
  std::vector<std::vector<int64_t>> boundTables;
  int64_t scratchBytes = 0; // per rank, at the maximum values
  // Per plan: where its scratch starts and how much it may use. Plans share
  // one region, except those with exclusive_scratch (flagged lines), each
  // of which gets its own after it.
  std::vector<int64_t> planScratchOff, planScratchBytes;
  bool hasOpParam = false, hasTypeParam = false;
  int fixedType = -1; // a buffer of a concrete type
  int fixedOp = -1;   // the op of clauses with a fixed reduction
  std::vector<void *> scratch;           // per rank
  std::vector<std::vector<void *>> sigs; // per plan, per rank
  std::string lastPlan;
  // Cache of the last valid launch's parameters: its scalars and table
  // entries, the buffer sizes and executor parameters they give.
  bool lastValid = false;
  std::vector<int64_t> lastScalars, lastTables;
  std::vector<int64_t> lastElems;
  ex::Params lastParams;
};

namespace {
/// The binding of a launch's scalars (R from the communicator).
void makeBinding(const purlinColl *c, const int64_t *scalars, Binding &b) {
  const Collective &d = c->desc;
  int k = 0;
  for (size_t s = 0; s < c->scalarParams.size(); ++s) {
    const Param &p = d.params[c->scalarParams[s]];
    b.scalars[p.name] = (int)s == c->ranksSlot ? c->comm->R : scalars[k++];
  }
}

/// The extents of table `t` under the scalars of `b`, and its entries.
bool tableShape(const purlinColl *c, int t, const Binding &b,
                std::vector<int64_t> &ext, int64_t &words, std::string &err) {
  const Param &p = c->desc.params[c->tableParams[t]];
  ext.clear();
  words = 1;
  for (const Expr &e : p.dims) {
    int64_t n = 0;
    if (!evalParamExpr(c->desc, b, e, n, err))
      return false;
    if (n < 0) {
      err = "table '" + p.name + "' has the negative extent " + e.str() +
            " = " + std::to_string(n);
      return false;
    }
    ext.push_back(n);
    words *= n;
  }
  return true;
}

/// "cnt[8][8]": a table and its extents; with `lin`, the subscripts of its
/// row-major entry `lin` instead.
std::string tableText(const std::string &name, const std::vector<int64_t> &ext,
                      int64_t lin = -1) {
  std::vector<int64_t> sub(ext.size());
  for (size_t i = ext.size(); i-- > 0;) {
    sub[i] = lin < 0 ? ext[i] : (ext[i] ? lin % ext[i] : 0);
    if (lin >= 0 && ext[i])
      lin /= ext[i];
  }
  std::string s = name;
  for (int64_t x : sub)
    s += "[" + std::to_string(x) + "]";
  return s;
}

/// Binds a launch's table entries (every table in declaration order,
/// row-major) into `b`, which holds the scalars, and checks them: their
/// number, and each entry within [0, min(declared bound, instance maximum)];
/// a table bound at compile time must repeat its bound values.
purlinStatus bindTables(const purlinColl *c, const int64_t *tables,
                        int64_t nwords, Binding &b) {
  const Collective &d = c->desc;
  const int nt = (int)c->tableParams.size();
  std::vector<std::vector<int64_t>> ext(nt);
  std::vector<int64_t> words(nt);
  int64_t total = 0;
  std::string err, shapes;
  for (int t = 0; t < nt; ++t) {
    if (!tableShape(c, t, b, ext[t], words[t], err))
      return fail(PURLIN_ERR_INVALID_ARGUMENT, err);
    total += words[t];
    shapes += (t ? ", " : "") +
              tableText(d.params[c->tableParams[t]].name, ext[t]);
  }
  if (nwords != total)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "collective '" + d.name + "' takes " + std::to_string(total) +
                    " table entries (" + shapes + ", row-major), got " +
                    std::to_string(nwords));
  if (total > ex::kMaxTableWords)
    return fail(PURLIN_ERR_PARAM_RANGE,
                "the tables (" + shapes + ") hold " + std::to_string(total) +
                    " entries; the executor holds at most " +
                    std::to_string(ex::kMaxTableWords));
  if (total > 0 && !tables)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinLaunch: null tables");
  const int64_t *v = tables;
  for (int t = 0; t < nt; ++t) {
    b.tables[d.params[c->tableParams[t]].name].assign(v, v + words[t]);
    v += words[t];
  }
  for (int t = 0; t < nt; ++t) {
    const Param &p = d.params[c->tableParams[t]];
    const std::vector<int64_t> &vals = b.tables[p.name];
    if (!c->boundTables[t].empty()) {
      if (vals != c->boundTables[t])
        return fail(PURLIN_ERR_PARAM_RANGE,
                    "table '" + p.name + "' was bound at compile time to " +
                        p.bound + "; the launch passes other values");
      continue;
    }
    int64_t declared = 0;
    if (!evalParamExpr(d, b, p.max, declared, err))
      return fail(PURLIN_ERR_INVALID_ARGUMENT, err);
    for (size_t k = 0; k < vals.size(); ++k) {
      int64_t x = vals[k];
      if (x < 0)
        return fail(PURLIN_ERR_PARAM_RANGE,
                    "table entry " + tableText(p.name, ext[t], (int64_t)k) +
                        " = " + std::to_string(x) + " is negative");
      if (x > declared)
        return fail(PURLIN_ERR_PARAM_RANGE,
                    "table entry " + tableText(p.name, ext[t], (int64_t)k) +
                        " = " + std::to_string(x) + " is beyond its bound " +
                        p.max.str() + " = " + std::to_string(declared));
      if (x > c->tableMax[t])
        return fail(PURLIN_ERR_PARAM_RANGE,
                    "table entry " + tableText(p.name, ext[t], (int64_t)k) +
                        " = " + std::to_string(x) +
                        " is beyond the instance's maximum " +
                        std::to_string(c->tableMax[t]) + " (maxParams)");
    }
  }
  return PURLIN_SUCCESS;
}
} // namespace

extern "C" {

const char *purlinGetLastError(void) { return gLastError.c_str(); }

const char *purlinStatusString(purlinStatus s) {
  switch (s) {
  case PURLIN_SUCCESS: return "success";
  case PURLIN_ERR_INVALID_ARGUMENT: return "invalid argument";
  case PURLIN_ERR_BAD_RANK_COUNT: return "bad rank count";
  case PURLIN_ERR_NULL_BUFFER: return "null buffer";
  case PURLIN_ERR_MISALIGNED: return "misaligned buffer";
  case PURLIN_ERR_UNSUPPORTED_TYPE: return "unsupported element type";
  case PURLIN_ERR_UNSUPPORTED_OP: return "unsupported op";
  case PURLIN_ERR_PARAM_RANGE: return "parameter out of range";
  case PURLIN_ERR_NO_DEVICE: return "no such GPU";
  case PURLIN_ERR_NO_PEER_ACCESS: return "no peer access";
  case PURLIN_ERR_NO_PLAN: return "no plan fits";
  case PURLIN_ERR_CUDA: return "CUDA error";
  case PURLIN_ERR_TIMEOUT: return "timeout";
  case PURLIN_ERR_OUT_OF_MEMORY: return "out of memory";
  case PURLIN_ERR_BAD_COLLECTIVE: return "bad collective";
  }
  return "unknown status";
}

purlinStatus purlinCommCreate(purlinComm_t *out, int nranks,
                              const int *rankDevices) {
  if (!out || !rankDevices)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommCreate: null argument");
  *out = nullptr;
  if (nranks < 1 || nranks > ex::kMaxRanks)
    return fail(PURLIN_ERR_BAD_RANK_COUNT,
                "purlinCommCreate: " + std::to_string(nranks) +
                    " ranks; 1 to " + std::to_string(ex::kMaxRanks) +
                    " supported");
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return fail(PURLIN_ERR_NO_DEVICE, std::string("no CUDA GPU: ") +
                                          cudaGetErrorString(e));
  }
  auto c = std::make_unique<purlinComm>();
  c->R = nranks;
  for (int r = 0; r < nranks; ++r) {
    int d = rankDevices[r];
    if (d < 0 || d >= ndev)
      return fail(PURLIN_ERR_NO_DEVICE,
                  "rank " + std::to_string(r) + " on GPU " +
                      std::to_string(d) + ", but there are " +
                      std::to_string(ndev));
    c->rankDevice.push_back(d);
    if (r == 0 || d != rankDevices[r - 1]) {
      for (int x : c->devices)
        if (x == d)
          return fail(PURLIN_ERR_INVALID_ARGUMENT,
                      "ranks of GPU " + std::to_string(d) +
                          " must be consecutive (they run in one launch)");
      c->devices.push_back(d);
      c->first.push_back(r);
      c->count.push_back(0);
    }
    ++c->count.back();
  }
  DeviceGuard guard;
  for (int a : c->devices)
    for (int b : c->devices) {
      if (a == b)
        continue;
      int can = 0;
      cudaDeviceCanAccessPeer(&can, a, b);
      if (!can)
        return fail(PURLIN_ERR_NO_PEER_ACCESS,
                    "GPU " + std::to_string(a) + " cannot access GPU " +
                        std::to_string(b));
      cudaSetDevice(a);
      e = cudaDeviceEnablePeerAccess(b, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
        return cudaFail(e, "enabling peer access");
      cudaGetLastError();
    }
  if (purlinStatus st = initErrorWord(*c))
    return st;
  c->mem = std::make_unique<rt::LocalPeerMemory>(c->rankDevice);
  *out = c.release();
  return ok();
}

purlinStatus purlinCommCreateRank(purlinComm_t *out, int nranks, int rank,
                                  int device, const char *bootstrapDir) {
  if (!out)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommCreateRank: null argument");
  *out = nullptr;
  std::string dir = bootstrapDir ? bootstrapDir : "", err;
  int64_t timeoutMs = 60000;
  if (!rt::Bootstrap::fromEnvironment(rank, nranks, dir, timeoutMs, err))
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommCreateRank: " + err);
  if (nranks < 1 || nranks > ex::kMaxRanks)
    return fail(PURLIN_ERR_BAD_RANK_COUNT,
                "purlinCommCreateRank: " + std::to_string(nranks) +
                    " ranks; 1 to " + std::to_string(ex::kMaxRanks) +
                    " supported");
  if (rank < 0 || rank >= nranks)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinCommCreateRank: rank " + std::to_string(rank) + " of " +
                    std::to_string(nranks));
  int ndev = 0;
  cudaError_t e = cudaGetDeviceCount(&ndev);
  if (e != cudaSuccess || ndev < 1) {
    cudaGetLastError();
    return fail(PURLIN_ERR_NO_DEVICE, std::string("no CUDA GPU: ") +
                                          cudaGetErrorString(e));
  }
  if (device < 0)
    device = rank % ndev;
  if (device >= ndev)
    return fail(PURLIN_ERR_NO_DEVICE, "rank " + std::to_string(rank) +
                                          " on GPU " + std::to_string(device) +
                                          ", but there are " +
                                          std::to_string(ndev));
  auto c = std::make_unique<purlinComm>();
  c->R = nranks;
  c->rank = rank;
  c->multiProcess = true;
  c->rankDevice.assign(nranks, -1); // other processes' GPUs are theirs
  c->rankDevice[rank] = device;
  c->devices = {device};
  c->first = {rank};
  c->count = {1};
  c->boot = std::make_shared<rt::Bootstrap>(dir, rank, nranks, timeoutMs);
  if (!c->boot->init(err))
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommCreateRank: " + err);
  // Agree on the job's shape: every process must name the same R.
  std::vector<std::string> all;
  std::string mine = std::to_string(nranks) + " " + std::to_string(device);
  if (!c->boot->allGather(mine, all, err))
    return fail(PURLIN_ERR_TIMEOUT, "purlinCommCreateRank: " + err);
  for (int r = 0; r < nranks; ++r)
    if (all[r].substr(0, all[r].find(' ')) != std::to_string(nranks))
      return fail(PURLIN_ERR_BAD_RANK_COUNT,
                  "purlinCommCreateRank: rank " + std::to_string(r) +
                      " says the job has " + all[r].substr(0, all[r].find(' ')) +
                      " ranks, this one " + std::to_string(nranks));
  DeviceGuard guard;
  e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return cudaFail(e, "selecting GPU " + std::to_string(device));
  if (purlinStatus st = initErrorWord(*c))
    return st;
  c->mem = std::make_unique<rt::IpcPeerMemory>(c->boot, device);
  *out = c.release();
  return ok();
}

int purlinCommRank(purlinComm_t c) { return c ? c->rank : -1; }
int purlinCommIsMultiProcess(purlinComm_t c) { return c && c->multiProcess; }

purlinStatus purlinMemAlloc(purlinComm_t c, size_t bytes, void **ptr) {
  if (!c || !ptr)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinMemAlloc: null argument");
  *ptr = nullptr;
  if (!c->multiProcess)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinMemAlloc: only for communicators of purlinCommCreateRank "
                "(one process's ranks take any device memory)");
  std::vector<void *> peers;
  std::string err;
  DeviceGuard guard;
  if (!c->mem->allocate((int64_t)bytes, peers, err))
    return fail(PURLIN_ERR_OUT_OF_MEMORY, "purlinMemAlloc: " + err);
  c->sym.push_back({(char *)peers[c->rank], bytes > 0 ? bytes : 16, peers});
  *ptr = peers[c->rank];
  return ok();
}

purlinStatus purlinMemFree(purlinComm_t c, void *ptr) {
  if (!c || !c->multiProcess)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinMemFree: not a multi-process communicator");
  for (size_t i = 0; i < c->sym.size(); ++i)
    if (c->sym[i].base == ptr) {
      DeviceGuard guard;
      c->mem->release(c->sym[i].peers);
      c->sym.erase(c->sym.begin() + i);
      return ok();
    }
  return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinMemFree: not from purlinMemAlloc");
}

purlinStatus purlinCommDestroy(purlinComm_t c) {
  if (!c)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "null communicator");
  if (c->errHost)
    cudaFreeHost(c->errHost);
  std::string err;
  bool closed = true;
  if (c->multiProcess) {
    for (auto &a : c->sym) // allocations the application did not free
      c->mem->release(a.peers);
    c->mem.reset();
    closed = c->boot->close(err);
  }
  delete c;
  if (!closed)
    return fail(PURLIN_ERR_TIMEOUT, "purlinCommDestroy: " + err);
  return ok();
}

int purlinCommDeviceCount(purlinComm_t c) { return c ? (int)c->devices.size() : 0; }
int purlinCommDevice(purlinComm_t c, int i) {
  return c && i >= 0 && i < (int)c->devices.size() ? c->devices[i] : -1;
}

purlinStatus purlinCommSetTimeout(purlinComm_t c, double seconds) {
  if (!c || !(seconds > 0))
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinCommSetTimeout: bad value");
  c->timeoutNs = (uint64_t)(seconds * 1e9);
  return ok();
}

purlinStatus purlinCommCheck(purlinComm_t c) {
  if (!c)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "null communicator");
  uint32_t v = *(volatile uint32_t *)c->errHost;
  if (v & sm::kErrTimeout)
    return fail(PURLIN_ERR_TIMEOUT,
                "a wait timed out on the device (rank " +
                    std::to_string((v >> 8) & 0xfff) + ", lane " +
                    std::to_string(v >> 20) +
                    "): a peer never arrived; the communicator's collectives "
                    "are unusable");
  return ok();
}

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
  if (!info->target || std::strncmp(info->target, "sm_", 3) != 0)
    return fail(PURLIN_ERR_BAD_COLLECTIVE,
                std::string("collective '") + info->name +
                    "' was compiled for '" + (info->target ? info->target : "?") +
                    "', not a GPU");
  if (info->nplans < 1)
    return fail(PURLIN_ERR_BAD_COLLECTIVE, "collective has no plans");
  for (int i = 0; i < info->nplans; ++i)
    if (!info->plans[i].cuda_entry || !info->plans[i].layout)
      return fail(PURLIN_ERR_BAD_COLLECTIVE,
                  std::string("plan '") + info->plans[i].strategy +
                      "' has no CUDA entry");
  const Collective &d = c->desc;
  for (size_t i = 0; i < d.params.size(); ++i) {
    ParamKind k = d.params[i].kind;
    if (isScalarParam(k)) {
      if (k == ParamKind::Ranks)
        c->ranksSlot = (int)c->scalarParams.size();
      else
        c->scalarNames.push_back(d.params[i].name);
      c->scalarParams.push_back((int)i);
    } else if (k == ParamKind::Table) {
      c->tableParams.push_back((int)i);
    } else if (k == ParamKind::Op) {
      c->hasOpParam = true;
    } else if (k == ParamKind::Type) {
      c->hasTypeParam = true;
    }
  }
  if ((int)c->scalarParams.size() > ex::kMaxScalars ||
      (int)c->tableParams.size() > ex::kMaxTables)
    return fail(PURLIN_ERR_BAD_COLLECTIVE, "too many parameters");
  for (auto &b : d.buffers) {
    DType t;
    if (parseDType(b.dtype, t))
      c->fixedType = (int)t;
  }
  for (auto &cl : d.clauses)
    if (cl.opParam.empty() && cl.op != RedOp::Copy)
      c->fixedOp = (int)cl.op;
  // Maximum values.
  Binding mb;
  if (!parseBindingList(d, maxParams ? maxParams : "", mb, err))
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "maxParams: " + err);
  if (!applyBoundParams(d, mb, err))
    return fail(PURLIN_ERR_BAD_COLLECTIVE, err);
  c->maxScalars.assign(c->scalarParams.size(), 0);
  for (size_t s = 0; s < c->scalarParams.size(); ++s) {
    const Param &p = d.params[c->scalarParams[s]];
    if ((int)s == c->ranksSlot || p.kind == ParamKind::Group) {
      c->maxScalars[s] = comm->R; // a group size divides R
      continue;
    }
    auto it = mb.scalars.find(p.name);
    if (it == mb.scalars.end())
      return fail(PURLIN_ERR_INVALID_ARGUMENT,
                  "maxParams: no value for '" + p.name + "'");
    if (it->second < 0)
      return fail(PURLIN_ERR_PARAM_RANGE, "maxParams: '" + p.name +
                                              "' is negative");
    c->maxScalars[s] = p.kind == ParamKind::Root ? comm->R - 1 : it->second;
  }
  // The maximum binding: scalars at their maxima, every table entry at its
  // maximum (one value in maxParams, "cnt=64", else the declared bound at
  // the maximum scalars); a table bound at compile time at its values.
  Binding maxB;
  for (size_t s = 0; s < c->scalarParams.size(); ++s)
    maxB.scalars[d.params[c->scalarParams[s]].name] = c->maxScalars[s];
  int64_t maxWords = 0;
  for (size_t t = 0; t < c->tableParams.size(); ++t) {
    const Param &p = d.params[c->tableParams[t]];
    std::vector<int64_t> ext;
    int64_t words = 0;
    if (!tableShape(c.get(), (int)t, maxB, ext, words, err))
      return fail(PURLIN_ERR_BAD_COLLECTIVE, err);
    maxWords += words;
    if (maxWords > ex::kMaxTableWords)
      return fail(PURLIN_ERR_PARAM_RANGE,
                  "table " + tableText(p.name, ext) + " at the maximum values "
                  "brings the tables to " + std::to_string(maxWords) +
                  " entries; the executor holds at most " +
                  std::to_string(ex::kMaxTableWords) +
                  " (fewer ranks or smaller maxima)");
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
      c->tableMax.push_back(mx);
      c->boundTables.push_back(vals);
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
      c->tableMax.push_back(mx);
      c->boundTables.emplace_back();
      vals.assign(words, mx);
    }
    maxB.tables[p.name] = vals;
  }
  // Resources: scratch (the largest any plan needs at the maximum values,
  // for the widest element), signals per plan (plans never share signal
  // words, so each plan's epochs stay consistent whatever the sequence).
  ex::Shared S;
  std::memset(&S, 0, sizeof S);
  S.R = comm->R;
  S.elemSize = 8;
  if (!fillParams(d, maxB, S.P, err))
    return fail(PURLIN_ERR_PARAM_RANGE, "maxParams: " + err);
  int64_t shared = 0;
  std::vector<int64_t> need(info->nplans, 0);
  for (int i = 0; i < info->nplans; ++i) {
    const purlin_plan_info &pl = info->plans[i];
    S.L = pl.lanes;
    S.K = pl.chunks;
    S.nsignals = pl.nsignals;
    need[i] = (pl.layout(&S) + 15) / 16 * 16;
    if (!pl.exclusive_scratch && need[i] > shared)
      shared = need[i];
  }
  int64_t scratchBytes = shared;
  for (int i = 0; i < info->nplans; ++i) {
    const bool own = info->plans[i].exclusive_scratch != 0;
    c->planScratchOff.push_back(own ? scratchBytes : 0);
    c->planScratchBytes.push_back(own ? need[i] : shared);
    if (own)
      scratchBytes += need[i];
  }
  c->scratchBytes = scratchBytes;
  DeviceGuard guard;
  if (!comm->mem->allocate(scratchBytes, c->scratch, err))
    return fail(PURLIN_ERR_OUT_OF_MEMORY, "scratch: " + err);
  for (int i = 0; i < info->nplans; ++i) {
    const purlin_plan_info &pl = info->plans[i];
    int64_t words = sm::planSignalWords(pl.nsignals, comm->R, pl.lanes, pl.chunks);
    std::vector<void *> sig;
    if (!comm->mem->allocate(words * 8, sig, err))
      return fail(PURLIN_ERR_OUT_OF_MEMORY, "signals: " + err);
    c->sigs.push_back(sig);
    uint64_t aux[sm::kAuxWords] = {(uint64_t)(uintptr_t)comm->errDev,
                                   comm->timeoutNs,
                                   comm->devices.size() == 1 && !comm->multiProcess
                                       ? 1ull : 0ull};
    // Each process initializes its own ranks' aux words (aux[0] is an
    // address in this process).
    for (int r = comm->first[0]; r < comm->first.back() + comm->count.back(); ++r) {
      cudaSetDevice(comm->rankDevice[r]);
      cudaError_t e = cudaMemcpy(
          (uint64_t *)sig[r] + ex::signalWords(pl.nsignals, comm->R, pl.lanes,
                                               pl.chunks),
          aux, sizeof aux, cudaMemcpyHostToDevice);
      if (e != cudaSuccess)
        return cudaFail(e, "initialising signals");
    }
  }
  for (int dev : comm->devices) {
    cudaSetDevice(dev);
    cudaDeviceSynchronize();
  }
  // Every process has initialized its signals before anyone launches.
  if (!comm->mem->barrier(err))
    return fail(PURLIN_ERR_TIMEOUT, "purlinCollCreate: " + err);
  *out = c.release();
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

int purlinCollScalarCount(purlinColl_t c) {
  return c ? (int)c->scalarNames.size() : 0;
}
const char *purlinCollScalarName(purlinColl_t c, int i) {
  return c && i >= 0 && i < (int)c->scalarNames.size()
             ? c->scalarNames[i].c_str()
             : nullptr;
}
int purlinCollTableCount(purlinColl_t c) {
  return c ? (int)c->tableParams.size() : 0;
}
const char *purlinCollTableName(purlinColl_t c, int t) {
  return c && t >= 0 && t < (int)c->tableParams.size()
             ? c->desc.params[c->tableParams[t]].name.c_str()
             : nullptr;
}
int purlinCollTableDims(purlinColl_t c, int t) {
  return c && t >= 0 && t < (int)c->tableParams.size()
             ? (int)c->desc.params[c->tableParams[t]].dims.size()
             : -1;
}
int64_t purlinCollTableMax(purlinColl_t c, int t) {
  return c && t >= 0 && t < (int)c->tableParams.size() ? c->tableMax[t] : -1;
}
int purlinCollBufferCount(purlinColl_t c) {
  return c ? (int)c->desc.buffers.size() : 0;
}
const char *purlinCollLastPlan(purlinColl_t c) {
  return c ? c->lastPlan.c_str() : "";
}

} // extern "C"

namespace {
bool oneLaunchAllowed() {
  static const bool on = [] {
    const char *e = getenv("PURLIN_ONE_LAUNCH");
    return !(e && e[0] == '0');
  }();
  return on;
}

} // namespace

namespace {
/// The launch's tables and buffer sizes (c->lastElems) and, for a
/// collective with tables, its executor parameters (c->lastParams); the
/// scalars are already checked. Cached for a launch that repeats the last
/// valid one's scalars and table entries.
purlinStatus bindLaunch(purlinColl *c, const purlinArgs *a) {
  const Collective &d = c->desc;
  const int nsc = (int)c->scalarNames.size();
  if (a->ntableWords < 0)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "purlinLaunch: ntableWords is negative");
  if (c->tableParams.empty() && a->ntableWords != 0)
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "collective '" + d.name + "' has no table parameters, got " +
                    std::to_string(a->ntableWords) + " table entries");
  std::vector<int64_t> sc(a->scalars, a->scalars + nsc), tw;
  const bool fits = a->ntableWords <= ex::kMaxTableWords && a->tables;
  if (fits)
    tw.assign(a->tables, a->tables + a->ntableWords);
  if (c->lastValid && (fits || a->ntableWords == 0) && sc == c->lastScalars &&
      tw == c->lastTables)
    return PURLIN_SUCCESS;
  c->lastValid = false;
  Binding b;
  makeBinding(c, a->scalars, b);
  std::string err;
  if (!c->tableParams.empty()) {
    if (purlinStatus st = bindTables(c, a->tables, a->ntableWords, b))
      return st;
    if (!fillParams(d, b, c->lastParams, err))
      return fail(PURLIN_ERR_PARAM_RANGE, err);
  }
  std::vector<int64_t> elems;
  for (size_t i = 0; i < d.buffers.size(); ++i) {
    int64_t n;
    if (!bufferElems(d, b, (int)i, n, err))
      return fail(PURLIN_ERR_INVALID_ARGUMENT, err);
    if (n < 0)
      return fail(PURLIN_ERR_PARAM_RANGE,
                  "buffer '" + d.buffers[i].name + "' has the negative size " +
                      d.buffers[i].size.str() + " = " + std::to_string(n));
    elems.push_back(n);
  }
  c->lastScalars = sc;
  c->lastTables = tw;
  c->lastElems = elems;
  c->lastValid = true;
  return PURLIN_SUCCESS;
}
} // namespace

extern "C" int64_t purlinCollBufferElemsTables(purlinColl_t c,
                                               const int64_t *scalars,
                                               const int64_t *tables, int b) {
  if (!c || b < 0 || b >= (int)c->desc.buffers.size() ||
      (!scalars && !c->scalarNames.empty()))
    return -1;
  Binding bd;
  makeBinding(c, scalars, bd);
  std::string err;
  if (tables) { // every table's entries at the extents the scalars give
    const int64_t *v = tables;
    for (size_t t = 0; t < c->tableParams.size(); ++t) {
      std::vector<int64_t> ext;
      int64_t words = 0;
      if (!tableShape(c, (int)t, bd, ext, words, err))
        return -1;
      bd.tables[c->desc.params[c->tableParams[t]].name].assign(v, v + words);
      v += words;
    }
  }
  int64_t n;
  if (!bufferElems(c->desc, bd, b, n, err))
    return -1;
  return n;
}

extern "C" int64_t purlinCollBufferElems(purlinColl_t c, const int64_t *scalars,
                                         int b) {
  return purlinCollBufferElemsTables(c, scalars, nullptr, b);
}

extern "C" int64_t purlinCollTableExtent(purlinColl_t c, const int64_t *scalars,
                                         int t, int dim) {
  if (!c || t < 0 || t >= (int)c->tableParams.size() ||
      (!scalars && !c->scalarNames.empty()))
    return -1;
  const Param &p = c->desc.params[c->tableParams[t]];
  if (dim < 0 || dim >= (int)p.dims.size())
    return -1;
  Binding bd;
  makeBinding(c, scalars, bd);
  int64_t n;
  std::string err;
  return evalParamExpr(c->desc, bd, p.dims[dim], n, err) ? n : -1;
}

extern "C" int64_t purlinCollTableWords(purlinColl_t c, const int64_t *scalars) {
  if (!c || (!scalars && !c->scalarNames.empty()))
    return -1;
  Binding bd;
  makeBinding(c, scalars, bd);
  int64_t total = 0;
  for (size_t t = 0; t < c->tableParams.size(); ++t) {
    std::vector<int64_t> ext;
    int64_t words = 0;
    std::string err;
    if (!tableShape(c, (int)t, bd, ext, words, err))
      return -1;
    total += words;
  }
  return total;
}

extern "C" purlinStatus purlinLaunch(purlinColl_t c, const purlinArgs *a) {
  if (!c || !a)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "purlinLaunch: null argument");
  purlinComm *comm = c->comm;
  if (purlinCommCheck(comm) != PURLIN_SUCCESS)
    return PURLIN_ERR_TIMEOUT;
  const Collective &d = c->desc;
  const int R = comm->R;
  // Element type and op.
  if (a->dtype < 0 || a->dtype >= kNumDTypes)
    return fail(PURLIN_ERR_UNSUPPORTED_TYPE,
                "element type " + std::to_string(a->dtype) + " is unknown");
  if (c->fixedType >= 0 && a->dtype != c->fixedType)
    return fail(PURLIN_ERR_UNSUPPORTED_TYPE,
                std::string("collective '") + d.name + "' is compiled for " +
                    dtypeName((DType)c->fixedType) + ", not " +
                    dtypeName((DType)a->dtype));
  int op = ex::kCopy;
  if (c->hasOpParam) {
    if (a->op < PURLIN_SUM || a->op > PURLIN_AVG)
      return fail(PURLIN_ERR_UNSUPPORTED_OP,
                  "op " + std::to_string(a->op) +
                      " is not a reduction (sum, prod, min, max, avg)");
    op = a->op;
  } else if (c->fixedOp >= 0) {
    op = c->fixedOp;
  }
  // Parameters.
  const int nsc = (int)c->scalarNames.size();
  if (a->nscalars != nsc || (nsc > 0 && !a->scalars))
    return fail(PURLIN_ERR_INVALID_ARGUMENT,
                "collective '" + d.name + "' takes " + std::to_string(nsc) +
                    " scalar parameters, got " + std::to_string(a->nscalars));
  ex::Shared S;
  S.R = R;
  S.op = op;
  S.elemSize = dtypeSize((DType)a->dtype);
  // One launch holds every rank (one GPU, one process; PURLIN_ONE_LAUNCH=0
  // keeps the boundary barriers, to measure what they cost on several GPUs).
  S.oneLaunch = comm->devices.size() == 1 && !comm->multiProcess &&
                oneLaunchAllowed();
  {
    int k = 0;
    for (size_t s = 0; s < c->scalarParams.size(); ++s) {
      if ((int)s == c->ranksSlot) {
        S.P.s[s] = R;
        continue;
      }
      const Param &p = d.params[c->scalarParams[s]];
      int64_t v = a->scalars[k++];
      if (v < 0 || v > c->maxScalars[s])
        return fail(PURLIN_ERR_PARAM_RANGE,
                    "parameter '" + p.name + "' = " + std::to_string(v) +
                        " is outside [0, " + std::to_string(c->maxScalars[s]) +
                        "] (the instance's maximum)");
      if (p.kind == ParamKind::Group && (v < 1 || R % v != 0))
        return fail(PURLIN_ERR_PARAM_RANGE, "group size '" + p.name + "' = " +
                                                std::to_string(v) +
                                                " must divide the rank count " +
                                                std::to_string(R));
      S.P.s[s] = v;
    }
  }
  // Tables, buffer sizes and the executor's parameters: evaluated once per
  // distinct (scalars, table entries), then cached.
  if (purlinStatus st = bindLaunch(c, a))
    return st;
  if (!c->tableParams.empty())
    S.P = c->lastParams; // the scalars above, and the tables
  const std::vector<int64_t> &elems = c->lastElems;
  const int nb = (int)d.buffers.size();
  if (!a->buffers)
    return fail(PURLIN_ERR_NULL_BUFFER, "purlinLaunch: null buffer array");
  void *const *bufs = a->buffers;
  std::vector<void *> symBufs;
  if (comm->multiProcess) {
    // This rank's buffers -> every rank's, through the symmetric allocation.
    symBufs.assign((size_t)R * nb, nullptr);
    for (int i = 0; i < nb; ++i) {
      char *p = (char *)a->buffers[i];
      if (!p)
        continue; // checked below, with the buffer's size
      const purlinComm::SymAlloc *hit = nullptr;
      for (auto &sa : comm->sym)
        if (p >= sa.base && p < sa.base + sa.bytes)
          hit = &sa;
      if (!hit)
        return fail(PURLIN_ERR_INVALID_ARGUMENT,
                    "buffer '" + d.buffers[i].name +
                        "' is not in memory of purlinMemAlloc (a multi-process "
                        "communicator needs symmetric buffers)");
      if ((int64_t)(hit->base + hit->bytes - p) < elems[i] * S.elemSize)
        return fail(PURLIN_ERR_INVALID_ARGUMENT,
                    "buffer '" + d.buffers[i].name +
                        "' runs past the end of its purlinMemAlloc allocation");
      for (int r = 0; r < R; ++r)
        symBufs[(size_t)r * nb + i] = (char *)hit->peers[r] + (p - hit->base);
    }
    bufs = symBufs.data();
  }
  int64_t maxBytes = 0;
  std::vector<void *> flat((size_t)R * nb);
  for (int r = 0; r < R; ++r) {
    for (int i = 0; i < nb; ++i) {
      void *p = bufs[r * nb + i];
      int64_t bytes = elems[i] * S.elemSize;
      if (bytes > maxBytes)
        maxBytes = bytes;
      if (!p && bytes > 0)
        return fail(PURLIN_ERR_NULL_BUFFER,
                    "buffer '" + d.buffers[i].name + "' of rank " +
                        std::to_string(r) + " is null");
      if ((uintptr_t)p % (uintptr_t)S.elemSize)
        return fail(PURLIN_ERR_MISALIGNED,
                    "buffer '" + d.buffers[i].name + "' of rank " +
                        std::to_string(r) + " is not aligned to its " +
                        std::to_string(S.elemSize) + "-byte elements");
      S.buf[r][i] = p;
      flat[(size_t)r * nb + i] = p;
    }
  }
  // Plan: the size band's, or one proved right for the call's overlap
  // (each output at its input's address, or any other overlap).
  const purlin_collective_info *info = c->info;
  const InPlace overlap = classifyOverlap(d, flat.data(), R, elems.data(), S.elemSize);
  int pick = choosePlan(info, maxBytes, overlap, R);
  if (pick < 0) {
    int reach = 0;
    for (int i = 0; i < info->nplans; ++i)
      reach = std::max(reach, info->plans[i].inplace_max_ranks);
    return fail(PURLIN_ERR_NO_PLAN,
                std::string("an output overlaps an input") +
                    (overlap == InPlace::SameStart ? " (at the same address)" : "") +
                    ", and no plan of '" + d.name + "' is proved right for that" +
                    (reach > 0 && R > reach ? " at " + std::to_string(R) +
                                     " ranks (the in-place proofs reach " +
                                     std::to_string(reach) + ")"
                               : ""));
  }
  const purlin_plan_info &pl = info->plans[pick];
  S.L = pl.lanes;
  S.K = pl.chunks;
  S.nsignals = pl.nsignals;
  int64_t need = pl.layout(&S);
  if (need > c->planScratchBytes[pick]) // past the maximum binding's layout
    return fail(PURLIN_ERR_PARAM_RANGE,
                std::string("plan '") + pl.strategy + "' needs " +
                    std::to_string(need) + " bytes of scratch for this "
                    "launch; the instance has " +
                    std::to_string(c->planScratchBytes[pick]) +
                    " (its maxParams)");
  for (int r = 0; r < R; ++r) {
    S.scratch[r] = (char *)c->scratch[r] + c->planScratchOff[pick];
    S.signals[r] = (uint64_t *)c->sigs[pick][r];
  }
  c->lastPlan = pl.strategy;
  DeviceGuard guard;
  for (size_t g = 0; g < comm->devices.size(); ++g) {
    cudaError_t e = cudaSetDevice(comm->devices[g]);
    if (e != cudaSuccess)
      return cudaFail(e, "selecting GPU " + std::to_string(comm->devices[g]));
    void *stream = a->streams ? a->streams[g] : nullptr;
    e = (cudaError_t)pl.cuda_entry(&S, comm->first[g], comm->count[g],
                                   a->dtype, op, stream);
    if (e != cudaSuccess)
      return cudaFail(e, std::string("launching '") + d.name + "' (" +
                             pl.strategy + ") on GPU " +
                             std::to_string(comm->devices[g]) +
                             (e == cudaErrorCooperativeLaunchTooLarge
                                  ? ": the ranks of one GPU do not fit on it "
                                    "at once (fewer ranks or lanes)"
                                  : ""));
  }
  return ok();
}

#include "Testing.h"

purlinStatus purlin::rt::testAdvanceEpoch(purlinColl_t c, int plan, int rank,
                                          uint64_t by) {
  if (!c || plan < 0 || plan >= c->info->nplans || rank < 0 ||
      rank >= c->comm->R)
    return fail(PURLIN_ERR_INVALID_ARGUMENT, "testAdvanceEpoch: bad argument");
  const purlin_plan_info &pl = c->info->plans[plan];
  DeviceGuard guard;
  cudaSetDevice(c->comm->rankDevice[rank]);
  uint64_t *ep = (uint64_t *)c->sigs[plan][rank] +
                 (int64_t)pl.nsignals * c->comm->R * pl.lanes * pl.chunks;
  std::vector<uint64_t> w(pl.lanes);
  cudaDeviceSynchronize();
  cudaMemcpy(w.data(), ep, w.size() * 8, cudaMemcpyDeviceToHost);
  for (auto &x : w)
    x += by;
  cudaError_t e = cudaMemcpy(ep, w.data(), w.size() * 8, cudaMemcpyHostToDevice);
  return e == cudaSuccess ? ok() : cudaFail(e, "testAdvanceEpoch");
}
