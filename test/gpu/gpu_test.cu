// GPU end-to-end tests: every generated collective linked in, on virtual
// ranks of one GPU, checked bit for bit against the reference evaluator
// (purlin/spec/Reference.h); calls of other sizes back to back on one
// instance (launchSequences); CUDA-graph replays checked on the device;
// validation errors and the timeout; table parameters (all_to_all_v: random
// per-pair counts, their queries and rejections). A collective runs with
// what its source declares: its element type when concrete or bound, its
// op when fixed or bound, its rank count, counts and roots when bound (and
// a launch that differs is refused: boundTests). Last line: "N passed, N
// failed"; a run that checked nothing (no collective linked) fails.
//
//   purlin-gpu-test [--quick] [--large] [--only NAME] [--sanitize]
//   purlin-gpu-test --list      the linked collectives' names, one a line
//                               (no GPU needed): tools/gpu.sh runs one
//                               process per collective, several at once
#include "GeneratedRegistry.h"
#include "GpuCheck.h"
#include "Testing.h"
#include "purlin/runtime/BoundValues.h"
#include "purlin/spec/Collective.h"
#include "purlin/spec/Reference.h"
#include "purlin/purlin.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace purlin;

static int gPassed = 0, gFailed = 0;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (cond) {                                                                \
      ++gPassed;                                                               \
    } else {                                                                   \
      ++gFailed;                                                               \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                         \
      std::printf(__VA_ARGS__);                                                \
      std::printf("\n");                                                       \
    }                                                                          \
  } while (0)

namespace {

struct Options {
  bool quick = false, large = false, sanitize = false;
  // --spread (issue #5; NOT RUN YET): R ranks over the visible GPUs in
  // consecutive blocks (one rank per GPU when R <= GPUs), each rank's
  // buffers on its GPU; graph-replay tests skipped (they use one stream).
  bool spread = false;
  int ndev = 1;
  std::string only;
} gOpt;

/// Rank r's GPU among R ranks.
int devOf(int R, int r) {
  if (!gOpt.spread)
    return 0;
  int nd = gOpt.ndev < R ? gOpt.ndev : R;
  return (int)((int64_t)r * nd / R);
}

struct Coll {
  std::string name;
  const purlin_collective_info *info;
  Collective desc;
  purlin::rt::BoundValues bound; // what the source binds
  bool reduces = false;
  bool hasOpParam = false;
  RedOp fixedOp = RedOp::Copy; // a clause's op, without an op parameter
};

/// One case: a collective under a binding, out of place or in place.
struct Case {
  const Coll *c;
  int R;
  DType t;
  RedOp op;
  int64_t count;
  // 0: out of place; 1: in place, the smaller buffer at rank * its size
  // when R of them fit in the larger (NCCL's convention), else at 0; 2: in
  // place, every output at its input's address.
  int inplace;
  uint64_t seed;
};

std::string caseText(const Case &k) {
  char b[256];
  std::snprintf(b, sizeof b, "%s R=%d %s %s count=%lld %s", k.c->name.c_str(),
                k.R, dtypeName(k.t), redOpName(k.op), (long long)k.count,
                k.inplace == 2 ? "in-place-same-address"
                : k.inplace    ? "in-place"
                               : "out-of-place");
  return b;
}

std::map<int, purlinComm_t> gComms;
purlinComm_t commFor(int R) {
  auto it = gComms.find(R);
  if (it != gComms.end())
    return it->second;
  std::vector<int> devs(R, 0);
  for (int r = 0; r < R; ++r)
    devs[r] = devOf(R, r);
  purlinComm_t c = nullptr;
  if (purlinCommCreate(&c, R, devs.data()) != PURLIN_SUCCESS) {
    std::printf("FATAL: purlinCommCreate: %s\n", purlinGetLastError());
    std::exit(1);
  }
  gComms[R] = c;
  return c;
}

// Instances by (collective, R, max count).
std::map<std::string, purlinColl_t> gColls;
purlinColl_t collFor(const Coll &c, int R, int64_t maxCount) {
  std::string key = c.name + "/" + std::to_string(R) + "/" + std::to_string(maxCount);
  auto it = gColls.find(key);
  if (it != gColls.end())
    return it->second;
  std::string mp;
  bool first = true; // the first count takes the case's count, others <= 3
  for (auto &p : c.desc.params)
    if ((p.kind == ParamKind::Count || p.kind == ParamKind::Root) &&
        p.bound.empty()) { // bound ones: their values (purlinCollCreate)
      int64_t v = p.kind == ParamKind::Root ? R - 1 : first ? maxCount : 3;
      if (p.kind == ParamKind::Count)
        first = false;
      mp += (mp.empty() ? "" : ",") + p.name + "=" + std::to_string(v);
    }
  purlinColl_t h = nullptr;
  if (purlinCollCreate(&h, commFor(R), c.info, mp.c_str()) != PURLIN_SUCCESS) {
    std::printf("FATAL: purlinCollCreate %s: %s\n", key.c_str(),
                purlinGetLastError());
    std::exit(1);
  }
  gColls[key] = h;
  return h;
}

/// The binding of a case: its scalars in purlinArgs order and, for a
/// collective with tables, random entries within each table's bound (zeros
/// and the bound itself often, odd values otherwise), concatenated
/// row-major in declaration order as purlinArgs.tables takes them.
void bindingFor(const Case &k, Binding &b, std::vector<int64_t> &scalars,
                std::vector<int64_t> &tables) {
  b = Binding();
  b.dtype = k.t;
  b.redop = k.op == RedOp::Copy ? RedOp::Sum : k.op;
  std::string bindErr;
  applyBoundParams(k.c->desc, b, bindErr); // the values the source binds
  // The first free count parameter takes the case's count, the others 1 +
  // count % 3 (as the host runner binds them): with every count at 100003,
  // a ROWS x COLS collective would need 10^10 elements per rank.
  bool firstCount = true;
  for (auto &p : k.c->desc.params) {
    const bool bound = !p.bound.empty();
    if (p.kind == ParamKind::Ranks)
      b.scalars[p.name] = k.R;
    else if (p.kind == ParamKind::Count) {
      int64_t v = b.scalars[p.name];
      if (!bound) {
        v = firstCount ? k.count : 1 + k.count % 3;
        firstCount = false;
      }
      b.scalars[p.name] = v;
      scalars.push_back(v);
    } else if (p.kind == ParamKind::Root) {
      int64_t root = bound ? b.scalars[p.name] : (k.seed & 1) ? k.R - 1 : 0;
      b.scalars[p.name] = root;
      scalars.push_back(root);
    } else if (p.kind == ParamKind::Group) { // a divisor of R, by the seed
      const std::vector<int64_t> ds = divisors(k.R);
      const int64_t g = ds[(k.seed / 2) % ds.size()];
      b.scalars[p.name] = g;
      scalars.push_back(g);
    }
  }
  std::mt19937_64 rng(k.seed * 7919 + 1);
  for (auto &p : k.c->desc.params) {
    if (p.kind != ParamKind::Table)
      continue;
    int64_t words = 1, mx = 0;
    std::string err;
    for (auto &e : p.dims) {
      int64_t n = 0;
      evalParamExpr(k.c->desc, b, e, n, err);
      words *= n;
    }
    evalParamExpr(k.c->desc, b, p.max, mx, err);
    std::vector<int64_t> v(words);
    for (auto &x : v) {
      uint64_t u = rng();
      x = u % 4 == 0 ? 0 : u % 4 == 1 ? mx : (int64_t)((u >> 8) % (mx + 1));
    }
    b.tables[p.name] = v;
    tables.insert(tables.end(), v.begin(), v.end());
  }
}

/// The launch arguments of a case (one stream: the default).
purlinArgs argsFor(const Case &k, const std::vector<int64_t> &scalars,
                   const std::vector<int64_t> &tables,
                   const std::vector<void *> &dev) {
  purlinArgs a = {};
  a.dtype = (int)k.t;
  a.op = (int)k.op;
  a.scalars = scalars.data();
  a.nscalars = (int)scalars.size();
  a.tables = tables.data();
  a.ntableWords = (int)tables.size();
  a.buffers = dev.data();
  return a;
}

std::string gCurrent; // the case running, for the crash handler
void onCrash(int sig) {
  std::fprintf(stderr, "CRASH (signal %d) in %s\n", sig, gCurrent.c_str());
  std::fflush(stdout);
  std::_Exit(2);
}

/// Runs one case; returns false (and reports) on a mismatch.
void runCase(const Case &k) {
  gCurrent = caseText(k);
  const Collective &d = k.c->desc;
  Binding b;
  std::vector<int64_t> scalars, tables;
  bindingFor(k, b, scalars, tables);
  RankBuffers data;
  std::string err;
  const uint8_t kPoison = 0xA5;
  if (!allocateBuffers(d, b, data, k.seed, kPoison, err)) {
    CHECK(false, "%s: allocateBuffers: %s", caseText(k).c_str(), err.c_str());
    return;
  }
  const int nb = (int)d.buffers.size(), es = dtypeSize(k.t);
  int inBuf = -1, outBuf = -1, nin = 0, nout = 0;
  for (int i = 0; i < nb; ++i) {
    if (d.buffers[i].role == BufferRole::In) {
      inBuf = i;
      ++nin;
    } else {
      outBuf = i;
      ++nout;
    }
  }
  if (k.inplace && (nin != 1 || nout != 1))
    return; // in place is defined for one input and one output
  if (k.inplace == 2) { // the same as NCCL's layout unless a block moves
    bool moves = false;
    for (int r = 1; r < k.R; ++r) {
      int64_t ib = data[r][inBuf].size(), ob = data[r][outBuf].size();
      moves |= (ob > ib && (r + 1) * ib <= ob) || (ib > ob && (r + 1) * ob <= ib);
    }
    if (!moves)
      return;
  }
  purlinColl_t h = collFor(*k.c, k.R, k.count);
  // Device buffers: one allocation per rank and buffer; in place, the input
  // lies inside the output (or the output inside the input) at rank r's
  // block when sizes differ (NCCL's convention), at 0 when equal.
  std::vector<void *> dev(k.R * nb, nullptr), allocs;
  std::vector<int64_t> inOff(k.R, 0), outOff(k.R, 0);
  for (int r = 0; r < k.R; ++r) {
    if (gOpt.spread)
      CUDA_OK(cudaSetDevice(devOf(k.R, r)));
    if (k.inplace) {
      int64_t ib = data[r][inBuf].size(), ob = data[r][outBuf].size();
      int64_t big = ib > ob ? ib : ob;
      char *p = nullptr;
      CUDA_OK(cudaMalloc(&p, big > 0 ? big : 16));
      allocs.push_back(p);
      if (k.inplace == 1 && ob > ib && (r + 1) * ib <= ob)
        inOff[r] = r * ib;
      if (k.inplace == 1 && ib > ob && (r + 1) * ob <= ib)
        outOff[r] = r * ob;
      dev[r * nb + inBuf] = p + inOff[r];
      dev[r * nb + outBuf] = p + outOff[r];
      // Initial region: poison, then the input over it; the expected output
      // starts from that content.
      std::vector<uint8_t> region(big, kPoison);
      std::memcpy(region.data() + inOff[r], data[r][inBuf].data(), ib);
      CUDA_OK(cudaMemcpy(p, region.data(), big, cudaMemcpyHostToDevice));
      std::memcpy(data[r][outBuf].data(), region.data() + outOff[r], ob);
    } else {
      for (int i = 0; i < nb; ++i) {
        void *p = nullptr;
        size_t sz = data[r][i].size();
        CUDA_OK(cudaMalloc(&p, sz > 0 ? sz : 16));
        allocs.push_back(p);
        dev[r * nb + i] = p;
        CUDA_OK(cudaMemcpy(p, data[r][i].data(), sz, cudaMemcpyHostToDevice));
      }
    }
  }
  if (gOpt.spread)
    CUDA_OK(cudaSetDevice(0));
  purlinArgs a = argsFor(k, scalars, tables, dev);
  purlinStatus st = purlinLaunch(h, &a);
  // The overlap the runtime must see: each output at its input's address
  // (the same element type), or any other; and the plans proved for it.
  bool overlaps = false, sameStart = true;
  for (int r = 0; r < k.R; ++r)
    if (k.inplace && !data[r][inBuf].empty() && !data[r][outBuf].empty()) {
      overlaps = true;
      sameStart &= inOff[r] == outOff[r];
    }
  sameStart &= d.buffers[inBuf].dtype == d.buffers[outBuf].dtype;
  bool anySafe = false, anyDirect = false;
  for (int i = 0; i < k.c->info->nplans; ++i) {
    const purlin_plan_info &pl = k.c->info->plans[i];
    // In place only as far as the proofs reach (inplace_max_ranks).
    const bool ok = k.R <= pl.inplace_max_ranks &&
                    (pl.inplace_safe || (sameStart && pl.inplace_same));
    anySafe |= ok;
    anyDirect |= ok && !pl.copies_inputs;
  }
  if (overlaps && !anySafe) {
    CHECK(st == PURLIN_ERR_NO_PLAN, "%s: expected PURLIN_ERR_NO_PLAN, got %d",
          caseText(k).c_str(), (int)st);
  } else if (st != PURLIN_SUCCESS) {
    CHECK(false, "%s: purlinLaunch: %s", caseText(k).c_str(),
          purlinGetLastError());
  } else {
    cudaError_t e = cudaDeviceSynchronize();
    for (int g = 1; gOpt.spread && g < gOpt.ndev && e == cudaSuccess; ++g) {
      CUDA_OK(cudaSetDevice(g));
      e = cudaDeviceSynchronize();
      CUDA_OK(cudaSetDevice(0));
    }
    if (e != cudaSuccess) {
      std::printf("FATAL %s: %s\n", caseText(k).c_str(), cudaGetErrorString(e));
      std::exit(1);
    }
    CHECK(purlinCommCheck(commFor(k.R)) == PURLIN_SUCCESS, "%s: %s",
          caseText(k).c_str(), purlinGetLastError());
    // In place, a plan that reads the inputs where they are when one is
    // proved right for the overlap (no copy into scratch first).
    if (overlaps && anyDirect) {
      const char *pn = purlinCollLastPlan(h);
      bool copies = true;
      for (int i = 0; i < k.c->info->nplans; ++i)
        if (std::string(k.c->info->plans[i].strategy) == pn)
          copies = k.c->info->plans[i].copies_inputs != 0;
      CHECK(!copies, "%s: ran '%s', which copies its inputs, though a plan "
            "without a copy is proved right in place", caseText(k).c_str(), pn);
    }
    if (!referenceEvaluate(d, b, data, err)) {
      CHECK(false, "%s: reference: %s", caseText(k).c_str(), err.c_str());
    } else {
      bool same = true;
      for (int r = 0; r < k.R && same; ++r)
        for (int i = 0; i < nb && same; ++i) {
          if (d.buffers[i].role != BufferRole::Out)
            continue;
          std::vector<uint8_t> got(data[r][i].size());
          CUDA_OK(cudaMemcpy(got.data(), dev[r * nb + i], got.size(),
                             cudaMemcpyDeviceToHost));
          if (got != data[r][i]) {
            size_t j = 0;
            while (got[j] == data[r][i][j])
              ++j;
            std::string tab;
            for (int64_t v : tables)
              tab += (tab.empty() ? " tables " : ":") + std::to_string(v);
            CHECK(false, "%s%s [%s]: rank %d buffer %s element %zu differs",
                  caseText(k).c_str(), tab.c_str(), purlinCollLastPlan(h), r,
                  d.buffers[i].name.c_str(), j / es);
            same = false;
          }
        }
      if (same)
        ++gPassed;
    }
  }
  for (void *p : allocs)
    cudaFree(p);
}

// ---------------------------------------------------------------------------
// CUDA-graph replays, checked on the device: each replay adds 1 to every
// input element, poisons the outputs, runs the all-reduce (i32 sum) and
// compares every output element with base + R * replay.
// ---------------------------------------------------------------------------
__global__ void bumpInputs(int32_t *const *x, int R, int64_t n, int *iter) {
  for (int r = 0; r < R; ++r)
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
      x[r][i] += 1;
  if (blockIdx.x == 0 && threadIdx.x == 0)
    ++*iter; // read by checkOutputs, the next kernel
}
__global__ void checkOutputs(int32_t *const *y, int R, int64_t n,
                             const int32_t *base, const int *iter,
                             unsigned long long *bad) {
  const uint32_t add = (uint32_t)R * (uint32_t)*iter;
  for (int r = 0; r < R; ++r)
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
      if ((uint32_t)y[r][i] != (uint32_t)base[i] + add)
        atomicAdd(bad, 1ull);
}

/// Why a harness test of type `t`, op `op` and `R` ranks cannot run on
/// this build of a collective (values bound at compile time); "" if it can.
std::string boundConflict(const Coll &c, int t, int op, int R) {
  if (c.bound.dtype() >= 0 && c.bound.dtype() != t)
    return std::string("type bound to ") + dtypeName((DType)c.bound.dtype());
  if (c.bound.op() >= 0 && c.bound.op() != op)
    return std::string("op bound to ") + redOpName((RedOp)c.bound.op());
  if (c.bound.ranks() > 0 && c.bound.ranks() != R)
    return "ranks bound to " + std::to_string(c.bound.ranks());
  return "";
}

/// Instantiates a captured graph, replays it `replays` times and checks the
/// device-side counts the graph's own check kernels keep: no wrong element
/// (`bad`), every replay seen (`iter`), the communicator healthy.
void replayGraph(cudaGraph_t g, cudaGraphExec_t &ge, cudaStream_t s,
                 int replays, const int *iter, const unsigned long long *bad,
                 const Coll &c, int R, int64_t count, purlinColl_t h) {
  CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < replays; ++i)
    CUDA_OK(cudaGraphLaunch(ge, s));
  CUDA_OK(cudaStreamSynchronize(s));
  unsigned long long nbad = 0;
  int it = 0;
  CUDA_OK(cudaMemcpy(&nbad, bad, sizeof nbad, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(&it, iter, sizeof it, cudaMemcpyDeviceToHost));
  CHECK(nbad == 0 && it == replays && purlinCommCheck(commFor(R)) == 0,
        "%s R=%d count=%lld: %d graph replays [%s]: %llu wrong elements, "
        "%d replays seen",
        c.name.c_str(), R, (long long)count, replays, purlinCollLastPlan(h),
        nbad, it);
}

void graphReplays(const Coll &c, int R, int64_t count, int replays) {
  if (c.desc.buffers.size() != 2 || gOpt.spread)
    return;
  // The replay's check kernels add i32 values (exact at any replay count).
  if (std::string why = boundConflict(c, PURLIN_I32, PURLIN_SUM, R);
      !why.empty()) {
    std::printf("  %s: graph replays skipped (they run i32 sum on %d ranks; "
                "%s)\n",
                c.name.c_str(), R, why.c_str());
    return;
  }
  purlinColl_t h = collFor(c, R, count);
  std::vector<int32_t *> x(R), y(R);
  std::vector<std::vector<int32_t>> hx(R, std::vector<int32_t>(count));
  std::vector<int32_t> base(count, 0);
  for (int r = 0; r < R; ++r) {
    fillRandom(DType::I32, (uint8_t *)hx[r].data(), count, 77 + r);
    for (int64_t i = 0; i < count; ++i)
      base[i] = (int32_t)((uint32_t)base[i] + (uint32_t)hx[r][i]);
    CUDA_OK(cudaMalloc(&x[r], count * 4));
    CUDA_OK(cudaMalloc(&y[r], count * 4));
    CUDA_OK(cudaMemcpy(x[r], hx[r].data(), count * 4, cudaMemcpyHostToDevice));
  }
  int32_t **dx, **dy, *dbase;
  int *iter;
  unsigned long long *bad;
  CUDA_OK(cudaMalloc(&dx, R * sizeof(void *)));
  CUDA_OK(cudaMalloc(&dy, R * sizeof(void *)));
  CUDA_OK(cudaMalloc(&dbase, count * 4));
  CUDA_OK(cudaMalloc(&iter, sizeof(int)));
  CUDA_OK(cudaMalloc(&bad, sizeof(unsigned long long)));
  CUDA_OK(cudaMemcpy(dx, x.data(), R * sizeof(void *), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dy, y.data(), R * sizeof(void *), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(dbase, base.data(), count * 4, cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(iter, 0, sizeof(int)));
  CUDA_OK(cudaMemset(bad, 0, sizeof(unsigned long long)));
  std::vector<void *> bufs(2 * R);
  for (int r = 0; r < R; ++r) {
    bufs[2 * r] = x[r];
    bufs[2 * r + 1] = y[r];
  }
  int64_t sc = count;
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *streams[1] = {s};
  purlinArgs a = {PURLIN_I32, PURLIN_SUM, &sc, 1, nullptr, 0, bufs.data(), streams};
  // i32 with sum is not built ahead of time: its kernels must be ready
  // before the capture.
  const int i32 = PURLIN_I32, sum = PURLIN_SUM;
  CHECK(purlinCollPrepare(h, &i32, 1, &sum, 1) == PURLIN_SUCCESS,
        "prepare i32 sum: %s", purlinGetLastError());
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  bumpInputs<<<64, 256, 0, s>>>(dx, R, count, iter);
  for (int r = 0; r < R; ++r)
    CUDA_OK(cudaMemsetAsync(y[r], 0xA5, count * 4, s));
  purlinStatus st = purlinLaunch(h, &a);
  checkOutputs<<<64, 256, 0, s>>>(dy, R, count, dbase, iter, bad);
  CUDA_OK(cudaStreamEndCapture(s, &g));
  CHECK(st == PURLIN_SUCCESS, "graph capture: %s", purlinGetLastError());
  if (st == PURLIN_SUCCESS) {
    replayGraph(g, ge, s, replays, iter, bad, c, R, count, h);
    cudaGraphExecDestroy(ge);
  }
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  for (int r = 0; r < R; ++r) {
    cudaFree(x[r]);
    cudaFree(y[r]);
  }
  cudaFree(dx), cudaFree(dy), cudaFree(dbase), cudaFree(iter), cudaFree(bad);
}

// ---------------------------------------------------------------------------
// Validation and the timeout.
// ---------------------------------------------------------------------------
// CUDA-graph replays of a copy collective (any datapath; the copy engine's
// schedule is captured as copies and stream memory operations): i32, each
// replay adds 1 to every input element, poisons the outputs, runs the
// collective and checks every output element on the device against the
// reference: an element the collective copies grows by 1 per replay (the
// reference of inputs + 1 says which), any other keeps its value.
__global__ void bumpBuffer(int32_t *x, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    x[i] += 1;
}
__global__ void bumpIter(int *iter) { ++*iter; }
__global__ void checkBuffer(const int32_t *y, const int32_t *base,
                            const uint8_t *grows, int64_t n, const int *iter,
                            unsigned long long *bad) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    if ((uint32_t)y[i] != (uint32_t)base[i] + (grows[i] ? (uint32_t)*iter : 0u))
      atomicAdd(bad, 1ull);
}

void copyGraphReplays(const Coll &c, int R, int64_t count, int replays) {
  if (c.reduces || gOpt.spread ||
      !boundConflict(c, PURLIN_I32, PURLIN_COPY, R).empty())
    return;
  Case k{&c, R, DType::I32, RedOp::Copy, count, 0, 4242};
  Binding b;
  std::vector<int64_t> scalars, tables;
  bindingFor(k, b, scalars, tables);
  const Collective &d = c.desc;
  RankBuffers x0, ref0, ref1;
  std::string err;
  const uint8_t kPoison = 0xA5;
  if (!allocateBuffers(d, b, x0, k.seed, kPoison, err)) {
    CHECK(false, "%s: allocateBuffers: %s", c.name.c_str(), err.c_str());
    return;
  }
  ref0 = x0;
  ref1 = x0;
  const int nb = (int)d.buffers.size();
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < nb; ++i)
      if (d.buffers[i].role == BufferRole::In)
        for (size_t j = 0; j + 4 <= ref1[r][i].size(); j += 4) {
          uint32_t v;
          std::memcpy(&v, &ref1[r][i][j], 4);
          ++v;
          std::memcpy(&ref1[r][i][j], &v, 4);
        }
  if (!referenceEvaluate(d, b, ref0, err) || !referenceEvaluate(d, b, ref1, err)) {
    CHECK(false, "%s: reference: %s", c.name.c_str(), err.c_str());
    return;
  }
  purlinColl_t h = collFor(c, R, count);
  std::vector<void *> dev(R * nb), frees;
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int *iter;
  unsigned long long *bad;
  CUDA_OK(cudaMalloc(&iter, sizeof(int)));
  CUDA_OK(cudaMalloc(&bad, sizeof(unsigned long long)));
  CUDA_OK(cudaMemset(iter, 0, sizeof(int)));
  CUDA_OK(cudaMemset(bad, 0, sizeof(unsigned long long)));
  struct OutCheck {
    int32_t *y, *base;
    uint8_t *grows;
    int64_t n;
  };
  std::vector<OutCheck> outs;
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < nb; ++i) {
      const size_t sz = x0[r][i].size();
      CUDA_OK(cudaMalloc(&dev[r * nb + i], sz ? sz : 16));
      frees.push_back(dev[r * nb + i]);
      CUDA_OK(cudaMemcpy(dev[r * nb + i], x0[r][i].data(), sz, cudaMemcpyHostToDevice));
      if (d.buffers[i].role != BufferRole::Out || sz < 4)
        continue;
      OutCheck o{(int32_t *)dev[r * nb + i], nullptr, nullptr, (int64_t)sz / 4};
      std::vector<uint8_t> grows(o.n);
      for (int64_t j = 0; j < o.n; ++j) {
        uint32_t a, b1;
        std::memcpy(&a, &ref0[r][i][j * 4], 4);
        std::memcpy(&b1, &ref1[r][i][j * 4], 4);
        grows[j] = b1 == a + 1;
      }
      CUDA_OK(cudaMalloc(&o.base, sz));
      CUDA_OK(cudaMalloc(&o.grows, o.n));
      frees.push_back(o.base);
      frees.push_back(o.grows);
      CUDA_OK(cudaMemcpy(o.base, ref0[r][i].data(), sz, cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemcpy(o.grows, grows.data(), o.n, cudaMemcpyHostToDevice));
      outs.push_back(o);
    }
  purlinArgs a = argsFor(k, scalars, tables, dev);
  void *streams[1] = {s};
  a.streams = streams;
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  bumpIter<<<1, 1, 0, s>>>(iter);
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < nb; ++i) {
      const int64_t n = (int64_t)x0[r][i].size() / 4;
      if (d.buffers[i].role == BufferRole::In && n > 0)
        bumpBuffer<<<64, 256, 0, s>>>((int32_t *)dev[r * nb + i], n);
      else if (n > 0)
        CUDA_OK(cudaMemsetAsync(dev[r * nb + i], kPoison, n * 4, s));
    }
  purlinStatus st = purlinLaunch(h, &a);
  for (const OutCheck &o : outs)
    checkBuffer<<<64, 256, 0, s>>>(o.y, o.base, o.grows, o.n, iter, bad);
  CUDA_OK(cudaStreamEndCapture(s, &g));
  CHECK(st == PURLIN_SUCCESS, "%s graph capture: %s", c.name.c_str(),
        purlinGetLastError());
  if (st == PURLIN_SUCCESS) {
    size_t nodes = 0, kernels = 0;
    CUDA_OK(cudaGraphGetNodes(g, nullptr, &nodes));
    std::vector<cudaGraphNode_t> ns(nodes);
    CUDA_OK(cudaGraphGetNodes(g, ns.data(), &nodes));
    for (auto nd : ns) {
      // The copy engine's stream memory operations (cuStreamWaitValue /
      // WriteValue, boundary syncs kept) are captured as batch-mem-op
      // nodes, a type the runtime API has no name for: it answers
      // cudaErrorUnknown (not sticky). They are not kernels.
      cudaGraphNodeType t;
      if (cudaGraphNodeGetType(nd, &t) != cudaSuccess) {
        (void)cudaGetLastError();
        continue;
      }
      kernels += t == cudaGraphNodeTypeKernel;
    }
    // The harness's own kernels: bumpIter, a bump per input, a check per
    // output; anything beyond is the collective's.
    size_t mine = 1 + outs.size();
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < nb; ++i)
        mine += d.buffers[i].role == BufferRole::In && x0[r][i].size() >= 4;
    replayGraph(g, ge, s, replays, iter, bad, c, R, count, h);
    std::printf("  %s: %d graph replays, R=%d count=%lld [%s, target %s]: "
                "%zu kernel nodes of the collective in the graph\n",
                c.name.c_str(), replays, R, (long long)count,
                purlinCollLastPlan(h), c.info->target,
                kernels >= mine ? kernels - mine : (size_t)0);
    cudaGraphExecDestroy(ge);
  }
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  for (void *p : frees)
    cudaFree(p);
  cudaFree(iter);
  cudaFree(bad);
}

void errorTests(const Coll &c) {
  int devs[40] = {0};
  purlinComm_t bad = nullptr;
  CHECK(purlinCommCreate(&bad, 0, devs) == PURLIN_ERR_BAD_RANK_COUNT,
        "0 ranks");
  CHECK(purlinCommCreate(&bad, 33, devs) == PURLIN_ERR_BAD_RANK_COUNT,
        "33 ranks");
  int missing[2] = {0, 99};
  CHECK(purlinCommCreate(&bad, 2, missing) == PURLIN_ERR_NO_DEVICE,
        "missing GPU: %s", purlinGetLastError());
  const int R = 2;
  // The collective's bound type and op where it has them (every type is at
  // most 8 bytes: 256 elements fit the 64 KiB slots below).
  const int dt = c.bound.dtype() >= 0 ? c.bound.dtype() : PURLIN_F32;
  const int rop = c.bound.op() >= 0 ? c.bound.op() : PURLIN_SUM;
  if (std::string why = boundConflict(c, dt, rop, R); !why.empty()) {
    std::printf("  %s: argument and timeout tests skipped (they run %d "
                "ranks; %s)\n",
                c.name.c_str(), R, why.c_str());
    return;
  }
  purlinColl_t h = collFor(c, R, 1024);
  void *p;
  CUDA_OK(cudaMalloc(&p, 1 << 20));
  char *q = (char *)p;
  std::vector<void *> bufs = {q, q + 65536, q + 131072, q + 196608};
  int64_t sc = 256;
  purlinArgs a = {dt, rop, &sc, 1, nullptr, 0, bufs.data(), nullptr};
  CHECK(purlinLaunch(h, &a) == PURLIN_SUCCESS, "valid launch: %s",
        purlinGetLastError());
  purlinArgs x = a;
  x.dtype = 99;
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_UNSUPPORTED_TYPE, "bad dtype");
  x = a;
  x.op = PURLIN_COPY;
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_UNSUPPORTED_OP, "bad op");
  int64_t big = 4096;
  x = a;
  x.scalars = &big;
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_PARAM_RANGE, "count beyond max: %s",
        purlinGetLastError());
  int64_t stray = 1;
  x = a;
  x.tables = &stray;
  x.ntableWords = 1;
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_INVALID_ARGUMENT,
        "table entries for a collective without tables");
  std::vector<void *> nb = bufs;
  nb[1] = nullptr;
  x = a;
  x.buffers = nb.data();
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_NULL_BUFFER, "null buffer");
  std::vector<void *> mis = bufs;
  mis[2] = q + 131073;
  x = a;
  x.buffers = mis.data();
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_MISALIGNED, "misaligned buffer");
  CUDA_OK(cudaDeviceSynchronize());
  // Timeout: rank 0 runs ahead by 5 epochs, so it waits for notifications
  // that never come, and gives up. The output overlaps the input 16 bytes
  // further on (not at its address), so the plan is direct_copy, whose
  // `ready` wait follows the copy stage: an inner sync, kept even though
  // both ranks run in one launch (boundary syncs, the only ones of the
  // out-of-place plan, are skipped there and cannot time out). Where no
  // plan is safe under that overlap (a build of staged_ll alone), out of
  // place: flagged lines are polled as inner syncs are.
  {
    bool anySafe = false;
    for (int i = 0; i < c.info->nplans; ++i)
      anySafe |= c.info->plans[i].inplace_safe != 0;
    const int shift = anySafe ? 16 : 65536;
    std::vector<void *> ip = {q, q + shift, q + 131072, q + 131072 + shift};
    purlinArgs ipa = {dt, rop, &sc, 1, nullptr, 0, ip.data(), nullptr};
    purlinComm_t tc;
    int d2[2] = {0, 0};
    CHECK(purlinCommCreate(&tc, 2, d2) == 0, "comm: %s", purlinGetLastError());
    purlinCommSetTimeout(tc, 0.2);
    purlinColl_t th;
    CHECK(purlinCollCreate(&th, tc, c.info, "C=1024") == 0, "coll: %s",
          purlinGetLastError());
    for (int plan = 0; plan < c.info->nplans; ++plan)
      purlin::rt::testAdvanceEpoch(th, plan, 0, 5);
    CHECK(purlinLaunch(th, &ipa) == PURLIN_SUCCESS, "launch: %s",
          purlinGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    CHECK(purlinCommCheck(tc) == PURLIN_ERR_TIMEOUT, "timeout not reported");
    std::printf("  timeout reported (%s plan): %s\n", purlinCollLastPlan(th),
                purlinGetLastError());
    CHECK(purlinLaunch(th, &ipa) == PURLIN_ERR_TIMEOUT,
          "next call after a timeout");
    purlinCollDestroy(th);
    purlinCommDestroy(tc);
  }
  cudaFree(p);
}

/// First-use compilation (docs/runtime.md): a pair not built ahead of time
/// (f64 with max) is refused inside a graph capture until it is prepared;
/// purlinCollPrepare compiles it (or loads it from the disk cache); then
/// the capture works and the replay is right.
void jitTests(const Coll &c) {
  const int t = PURLIN_F64, op = PURLIN_MAX;
  if (!c.info->source || ((c.info->aot_dtypes >> t) & 1u) ||
      ((c.info->aot_ops >> op) & 1u) || !c.hasOpParam || c.bound.dtype() >= 0)
    return;
  const int R = 2;
  const int64_t n = 1024;
  purlinColl_t h = collFor(c, R, n);
  std::vector<double> hx(n);
  std::vector<void *> bufs(2 * R);
  for (int r = 0; r < R; ++r) {
    for (int64_t i = 0; i < n; ++i)
      hx[i] = (double)(i * (r + 1) % 97);
    CUDA_OK(cudaMalloc(&bufs[2 * r], n * 8));
    CUDA_OK(cudaMalloc(&bufs[2 * r + 1], n * 8));
    CUDA_OK(cudaMemcpy(bufs[2 * r], hx.data(), n * 8, cudaMemcpyHostToDevice));
  }
  int64_t sc = n;
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *streams[1] = {s};
  purlinArgs a = {t, op, &sc, 1, nullptr, 0, bufs.data(), streams};
  cudaGraph_t g;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  purlinStatus st = purlinLaunch(h, &a);
  CUDA_OK(cudaStreamEndCapture(s, &g));
  cudaGraphDestroy(g);
  CHECK(st == PURLIN_ERR_NOT_READY, "%s f64 max in a capture before prepare: %d",
        c.name.c_str(), (int)st);
  std::printf("  %s f64 max captured before prepare: %s\n", c.name.c_str(),
              purlinGetLastError());
  const auto t0 = std::chrono::steady_clock::now();
  st = purlinCollPrepare(h, &t, 1, &op, 1);
  const double secs = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - t0).count();
  CHECK(st == PURLIN_SUCCESS, "%s prepare f64 max: %s", c.name.c_str(),
        purlinGetLastError());
  std::printf("  %s f64 max prepared in %.1f s (compiled, or from the disk "
              "cache)\n", c.name.c_str(), secs);
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  st = purlinLaunch(h, &a);
  CUDA_OK(cudaStreamEndCapture(s, &g));
  CHECK(st == PURLIN_SUCCESS, "%s f64 max in a capture after prepare: %s",
        c.name.c_str(), purlinGetLastError());
  if (st == PURLIN_SUCCESS) {
    cudaGraphExec_t ge;
    CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
    CUDA_OK(cudaGraphLaunch(ge, s));
    CUDA_OK(cudaStreamSynchronize(s));
    std::vector<double> y(n);
    CUDA_OK(cudaMemcpy(y.data(), bufs[1], n * 8, cudaMemcpyDeviceToHost));
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i)
      wrong += y[i] != (double)std::max(i % 97, i * 2 % 97);
    CHECK(wrong == 0 && purlinCommCheck(commFor(R)) == PURLIN_SUCCESS,
          "%s f64 max replay: %lld wrong", c.name.c_str(), (long long)wrong);
    cudaGraphExecDestroy(ge);
  }
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  for (void *p : bufs)
    cudaFree(p);
}

/// A launch that differs from a value the collective was compiled with is
/// refused with the status of that value (purlin/runtime/BoundValues.h):
/// another element type, another op, another rank count (at
/// purlinCollCreate), another count or root.
void boundTests(const Coll &c) {
  const purlin::rt::BoundValues &bv = c.bound;
  if (bv.ranks() < 0 && bv.dtype() < 0 && bv.op() < 0) {
    bool any = false;
    for (auto &p : c.desc.params)
      any |= !p.bound.empty();
    if (!any)
      return; // nothing bound
  }
  const int R = bv.ranks() > 0 ? bv.ranks() : 2;
  if (bv.ranks() > 0) {
    purlinColl_t other = nullptr;
    CHECK(purlinCollCreate(&other, commFor(R == 2 ? 3 : 2), c.info, "C=16") ==
              PURLIN_ERR_BAD_RANK_COUNT,
          "%s: another rank count: %s", c.name.c_str(), purlinGetLastError());
    std::printf("  %s on other ranks refused: %s\n", c.name.c_str(),
                purlinGetLastError());
  }
  Case k{&c, R, bv.dtype() >= 0 ? (DType)bv.dtype() : DType::F32,
         c.hasOpParam ? (bv.op() >= 0 ? (RedOp)bv.op() : RedOp::Sum)
                      : c.fixedOp,
         16, 0, 7};
  Binding b;
  std::vector<int64_t> scalars, tables;
  bindingFor(k, b, scalars, tables);
  RankBuffers data;
  std::string err;
  if (!allocateBuffers(c.desc, b, data, 7, 0xA5, err))
    return;
  purlinColl_t h = collFor(c, R, 16);
  const int nb = (int)c.desc.buffers.size();
  std::vector<void *> dev(R * nb, nullptr);
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < nb; ++i)
      CUDA_OK(cudaMalloc(&dev[r * nb + i], std::max<size_t>(16, data[r][i].size() * 8)));
  purlinArgs a = argsFor(k, scalars, tables, dev);
  CHECK(purlinLaunch(h, &a) == PURLIN_SUCCESS, "%s: the bound launch: %s",
        c.name.c_str(), purlinGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  if (bv.dtype() >= 0) {
    purlinArgs x = a;
    x.dtype = bv.dtype() == PURLIN_F64 ? PURLIN_F32 : PURLIN_F64;
    CHECK(purlinLaunch(h, &x) == PURLIN_ERR_UNSUPPORTED_TYPE,
          "%s: another element type", c.name.c_str());
    std::printf("  %s of another type refused: %s\n", c.name.c_str(),
                purlinGetLastError());
  }
  if (c.hasOpParam && bv.op() >= 0) {
    purlinArgs x = a;
    x.op = bv.op() == PURLIN_SUM ? PURLIN_MAX : PURLIN_SUM;
    CHECK(purlinLaunch(h, &x) == PURLIN_ERR_UNSUPPORTED_OP,
          "%s: another op", c.name.c_str());
    std::printf("  %s with another op refused: %s\n", c.name.c_str(),
                purlinGetLastError());
  }
  int k2 = 0;
  for (auto &p : c.desc.params)
    if (p.kind == ParamKind::Count || p.kind == ParamKind::Root) {
      if (!p.bound.empty() && p.kind == ParamKind::Root && R > 1) {
        std::vector<int64_t> other = scalars;
        other[k2] = other[k2] == 0 ? 1 : 0;
        purlinArgs x = a;
        x.scalars = other.data();
        CHECK(purlinLaunch(h, &x) == PURLIN_ERR_PARAM_RANGE,
              "%s: another %s", c.name.c_str(), p.name.c_str());
        std::printf("  %s with another %s refused: %s\n", c.name.c_str(),
                    p.name.c_str(), purlinGetLastError());
      }
      ++k2;
    }
  CUDA_OK(cudaDeviceSynchronize());
  for (void *p : dev)
    cudaFree(p);
}

/// all_to_all_v's table `cnt` through the C API: the queries, a launch
/// checked element by element (also after rejected launches, which must not
/// leave the last valid launch's cached sizes and tables behind), and every
/// rejection of a bad table or bad table maximum.
void tableTests(const Coll &c) {
  const int R = 2;
  const int64_t maxM = 64, maxCnt = 16;
  purlinColl_t h = nullptr;
  CHECK(purlinCollCreate(&h, commFor(R), c.info, "M=64,cnt=16") == 0,
        "all_to_all_v M=64,cnt=16: %s", purlinGetLastError());
  if (!h)
    return;
  int64_t M = 40;
  CHECK(purlinCollTableCount(h) == 1 && purlinCollTableName(h, 0) &&
            std::strcmp(purlinCollTableName(h, 0), "cnt") == 0 &&
            purlinCollTableDims(h, 0) == 2 &&
            purlinCollTableExtent(h, &M, 0, 0) == R &&
            purlinCollTableExtent(h, &M, 0, 1) == R &&
            purlinCollTableExtent(h, &M, 0, 2) == -1 &&
            purlinCollTableWords(h, &M) == R * R &&
            purlinCollTableMax(h, 0) == maxCnt && purlinCollTableMax(h, 1) == -1,
        "table queries");
  std::vector<int64_t> cnt = {3, 0, 16, 9}; // cnt[s][d], row-major
  CHECK(purlinCollBufferElemsTables(h, &M, cnt.data(), 0) == R * M &&
            purlinCollBufferElems(h, &M, 1) == R * M,
        "buffer sizes with tables");
  // x of rank s: element d*M + i = s*1000 + d*100 + i; y poisoned.
  std::vector<int32_t *> dev(2 * R);
  for (auto &p : dev) {
    CUDA_OK(cudaMalloc(&p, maxM * R * 4));
    CUDA_OK(cudaMemset(p, 0xA5, maxM * R * 4));
  }
  for (int s = 0; s < R; ++s) {
    std::vector<int32_t> hx(R * M);
    for (int64_t j = 0; j < R * M; ++j)
      hx[j] = (int32_t)(s * 1000 + (j / M) * 100 + j % M);
    CUDA_OK(cudaMemcpy(dev[2 * s], hx.data(), hx.size() * 4,
                       cudaMemcpyHostToDevice));
  }
  std::vector<void *> bufs(dev.begin(), dev.end());
  purlinArgs a = {PURLIN_I32, PURLIN_COPY, &M, 1, cnt.data(), (int)cnt.size(),
                  bufs.data(), nullptr};
  auto launchAndCheck = [&](const char *what) {
    a.tables = cnt.data();
    for (int d = 0; d < R; ++d)
      CUDA_OK(cudaMemset(dev[2 * d + 1], 0xA5, R * M * 4));
    purlinStatus st = purlinLaunch(h, &a);
    CHECK(st == PURLIN_SUCCESS, "%s: %s", what, purlinGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    int64_t wrong = 0;
    for (int d = 0; d < R; ++d) {
      std::vector<int32_t> hy(R * M);
      CUDA_OK(cudaMemcpy(hy.data(), dev[2 * d + 1], hy.size() * 4,
                         cudaMemcpyDeviceToHost));
      for (int s = 0; s < R; ++s)
        for (int64_t i = 0; i < M; ++i) {
          int32_t want = i < cnt[s * R + d] ? (int32_t)(s * 1000 + d * 100 + i)
                                            : (int32_t)0xA5A5A5A5;
          wrong += hy[s * M + i] != want;
        }
    }
    CHECK(st != PURLIN_SUCCESS || wrong == 0, "%s [%s]: %lld wrong elements",
          what, purlinCollLastPlan(h), (long long)wrong);
  };
  launchAndCheck("all_to_all_v with cnt = 3:0:16:9");
  // Rejected launches.
  purlinArgs x = a;
  x.ntableWords = 3;
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_INVALID_ARGUMENT,
        "3 table entries instead of 4");
  std::printf("  short table reported: %s\n", purlinGetLastError());
  std::vector<int64_t> five = {1, 1, 1, 1, 1};
  x = a;
  x.tables = five.data();
  x.ntableWords = 5;
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_INVALID_ARGUMENT,
        "5 table entries instead of 4");
  x = a;
  x.ntableWords = -1;
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_INVALID_ARGUMENT,
        "negative table length");
  x = a;
  x.tables = nullptr;
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_INVALID_ARGUMENT, "null tables");
  x = a;
  x.tables = nullptr;
  x.ntableWords = 0;
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_INVALID_ARGUMENT, "no tables");
  std::vector<int64_t> bad = cnt;
  bad[1] = -1;
  x = a;
  x.tables = bad.data();
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_PARAM_RANGE, "negative entry");
  std::printf("  negative entry reported: %s\n", purlinGetLastError());
  bad = cnt;
  bad[3] = maxCnt + 1; // within M = 40, beyond the instance's cnt = 16
  x = a;
  x.tables = bad.data();
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_PARAM_RANGE,
        "entry beyond the instance's maximum");
  std::printf("  entry over the maximum reported: %s\n", purlinGetLastError());
  int64_t smallM = 8; // cnt <= M: 9 fits the instance, not this launch's M
  bad = {9, 0, 0, 0};
  x = a;
  x.scalars = &smallM;
  x.tables = bad.data();
  CHECK(purlinLaunch(h, &x) == PURLIN_ERR_PARAM_RANGE,
        "entry beyond the declared bound M");
  std::printf("  entry over the bound reported: %s\n", purlinGetLastError());
  // The same scalars and tables as the first launch: valid again, and
  // once more from the cache.
  launchAndCheck("all_to_all_v again after rejected launches");
  launchAndCheck("all_to_all_v repeated");
  cnt = {0, 16, 1, 7};
  launchAndCheck("all_to_all_v with cnt = 0:16:1:7");
  M = 0;
  cnt = {0, 0, 0, 0};
  launchAndCheck("all_to_all_v with M = 0");
  for (void *p : dev)
    cudaFree(p);
  purlinCollDestroy(h);
  // Bad maxima: beyond the declared bound, several values, too many
  // entries for the executor (cnt[16][16] = 256 > 96).
  purlinColl_t bh = nullptr;
  CHECK(purlinCollCreate(&bh, commFor(R), c.info, "M=64,cnt=65") ==
            PURLIN_ERR_PARAM_RANGE,
        "cnt maximum beyond M");
  std::printf("  table maximum over its bound reported: %s\n",
              purlinGetLastError());
  CHECK(purlinCollCreate(&bh, commFor(R), c.info, "M=64,cnt=1:2") ==
            PURLIN_ERR_INVALID_ARGUMENT,
        "cnt maximum of two values");
  CHECK(purlinCollCreate(&bh, commFor(16), c.info, "M=64") ==
            PURLIN_ERR_PARAM_RANGE,
        "cnt[16][16] beyond the executor's table capacity");
  std::printf("  table capacity reported: %s\n", purlinGetLastError());
}

} // namespace

// ---------------------------------------------------------------------------
// Calls of other sizes back to back on one instance (created for the
// sequence's largest count: one scratch laid out at that maximum and, for a
// plan staged by launch parity, one parity stride for every call), launched
// with no synchronization between them, then each checked against the
// reference: what `purlin-host-run --launch-counts` runs on the host
// (test/Host/staged-ll-parity-sizes.test). Calls of count 0 among them: a
// parity plan's is not launched (emptyParityLaunch). On one GPU every rank
// runs in each launch; with --spread each GPU's stream runs its ranks'
// launches, unordered with the other GPUs' (what --rank-streams models).
// ---------------------------------------------------------------------------
void launchSequences(const Coll &c, int R, DType t, RedOp op, uint64_t &seed) {
  static const std::vector<std::vector<int64_t>> kSequences = {
      {263, 1, 4099, 7, 263},
      {4099, 0, 7, 0, 4099, 263},
      {40000, 7, 263, 40000, 1},
      {263, 0, 263, 0, 263}};
  if (!boundConflict(c, (int)t, (int)op, R).empty())
    return;
  const Collective &d = c.desc;
  const int nb = (int)d.buffers.size();
  for (const std::vector<int64_t> &seq : kSequences) {
    const int64_t maxC = *std::max_element(seq.begin(), seq.end());
    purlinColl_t h = collFor(c, R, maxC);
    struct Call {
      Case k;
      Binding b;
      std::vector<int64_t> scalars, tables;
      RankBuffers data;
      std::vector<void *> dev;
    };
    std::vector<Call> calls(seq.size());
    std::vector<void *> allocs;
    std::string text = c.name + " R=" + std::to_string(R) + " " +
                       dtypeName(t) + " " + redOpName(op) + " counts";
    for (size_t i = 0; i < seq.size(); ++i)
      text += (i ? "," : " ") + std::to_string(seq[i]);
    gCurrent = "launch sequence " + text;
    bool ok = true;
    for (size_t i = 0; i < seq.size() && ok; ++i) {
      Call &l = calls[i];
      l.k = {&c, R, t, op, seq[i], 0, seed++};
      bindingFor(l.k, l.b, l.scalars, l.tables);
      std::string err;
      if (!allocateBuffers(d, l.b, l.data, l.k.seed, 0xA5, err)) {
        CHECK(false, "%s: allocateBuffers: %s", text.c_str(), err.c_str());
        ok = false;
        break;
      }
      l.dev.assign(R * nb, nullptr);
      for (int r = 0; r < R; ++r) {
        if (gOpt.spread)
          CUDA_OK(cudaSetDevice(devOf(R, r)));
        for (int b = 0; b < nb; ++b) {
          const size_t sz = l.data[r][b].size();
          void *p = nullptr;
          CUDA_OK(cudaMalloc(&p, sz > 0 ? sz : 16));
          allocs.push_back(p);
          l.dev[r * nb + b] = p;
          CUDA_OK(cudaMemcpy(p, l.data[r][b].data(), sz, cudaMemcpyHostToDevice));
        }
      }
      if (gOpt.spread)
        CUDA_OK(cudaSetDevice(0));
    }
    // Every call's inputs in place first (the copies above are from
    // pageable memory), then the calls one after the other.
    for (int g = 0; ok && g < (gOpt.spread ? gOpt.ndev : 1); ++g) {
      CUDA_OK(cudaSetDevice(g));
      CUDA_OK(cudaDeviceSynchronize());
    }
    CUDA_OK(cudaSetDevice(0));
    for (size_t i = 0; i < seq.size() && ok; ++i) {
      purlinArgs a = argsFor(calls[i].k, calls[i].scalars, calls[i].tables,
                             calls[i].dev);
      if (purlinLaunch(h, &a) != PURLIN_SUCCESS) {
        CHECK(false, "%s: launch %zu: purlinLaunch: %s", text.c_str(), i + 1,
              purlinGetLastError());
        ok = false;
      }
    }
    for (int g = 0; g < (gOpt.spread ? gOpt.ndev : 1); ++g) {
      CUDA_OK(cudaSetDevice(g));
      cudaError_t e = cudaDeviceSynchronize();
      if (e != cudaSuccess) {
        std::printf("FATAL %s: %s\n", text.c_str(), cudaGetErrorString(e));
        std::exit(1);
      }
    }
    CUDA_OK(cudaSetDevice(0));
    if (ok)
      CHECK(purlinCommCheck(commFor(R)) == PURLIN_SUCCESS, "%s: %s",
            text.c_str(), purlinGetLastError());
    for (size_t i = 0; i < seq.size() && ok; ++i) {
      Call &l = calls[i];
      std::string err;
      if (!referenceEvaluate(d, l.b, l.data, err)) {
        CHECK(false, "%s: reference: %s", text.c_str(), err.c_str());
        continue;
      }
      bool same = true;
      for (int r = 0; r < R && same; ++r)
        for (int b = 0; b < nb && same; ++b) {
          if (d.buffers[b].role != BufferRole::Out)
            continue;
          std::vector<uint8_t> got(l.data[r][b].size());
          CUDA_OK(cudaMemcpy(got.data(), l.dev[r * nb + b], got.size(),
                             cudaMemcpyDeviceToHost));
          if (got != l.data[r][b]) {
            size_t j = 0;
            while (got[j] == l.data[r][b][j])
              ++j;
            CHECK(false, "%s [%s]: launch %zu (count %lld): rank %d buffer %s "
                  "byte %zu differs", text.c_str(), purlinCollLastPlan(h),
                  i + 1, (long long)seq[i], r, d.buffers[b].name.c_str(), j);
            same = false;
          }
        }
      if (same)
        ++gPassed;
    }
    for (void *p : allocs)
      cudaFree(p);
  }
}

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  bool list = false;
  std::signal(SIGSEGV, onCrash);
  std::signal(SIGABRT, onCrash);
  std::signal(SIGBUS, onCrash);
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--quick")
      gOpt.quick = true;
    else if (s == "--large")
      gOpt.large = true;
    else if (s == "--sanitize")
      gOpt.sanitize = true;
    else if (s == "--only" && i + 1 < argc)
      gOpt.only = argv[++i];
    else if (s == "--spread")
      gOpt.spread = true;
    else if (s == "--list")
      list = true;
    else {
      std::printf("FAIL: unknown argument '%s'\n", s.c_str());
      return 2;
    }
  }
  int n = 0;
  const purlin::rt::GeneratedCollective *gc = purlin::rt::generatedCollectives(&n);
  if (n == 0) {
    std::printf("FAIL: no collective is linked into purlin-gpu-test: nothing "
                "to test (PURLIN_GEN_DIR, PURLIN_GEN_ONLY)\n");
    return 1;
  }
  // Epilogues compute in f32 with a row reduction whose order differs
  // from the host's (docs/language.md): purlin-epilogue-test checks them
  // within their tolerance; bit for bit here would be wrong.
  auto hasEpilogue = [](const Collective &d) {
    for (auto &cl : d.clauses)
      if (!cl.epilogue.empty())
        return true;
    return false;
  };
  if (list) { // what this test checks
    for (int i = 0; i < n; ++i) {
      Collective d;
      std::string err;
      if (!readDesc(gc[i].info()->desc, d, err) || !hasEpilogue(d))
        std::printf("%s\n", gc[i].name);
    }
    return 0;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIPPED: no CUDA GPU\n");
    return 0;
  }
  gOpt.ndev = ndev;
  if (gOpt.spread && ndev < 2) {
    std::printf("SKIPPED: --spread needs >= 2 GPUs, found %d\n", ndev);
    return 0;
  }
  if (gOpt.spread)
    std::printf("purlin-gpu-test --spread: ranks over %d GPUs\n", ndev);
  std::vector<Coll> colls;
  for (int i = 0; i < n; ++i) {
    Coll c;
    c.name = gc[i].name;
    c.info = gc[i].info();
    std::string err;
    if (!readDesc(c.info->desc, c.desc, err) || !c.bound.init(c.desc, err)) {
      CHECK(false, "%s: bad description: %s", c.name.c_str(), err.c_str());
      continue;
    }
    for (auto &p : c.desc.params)
      c.hasOpParam |= p.kind == ParamKind::Op;
    for (auto &cl : c.desc.clauses)
      if (cl.opParam.empty() && cl.op != RedOp::Copy)
        c.fixedOp = cl.op;
    c.reduces = c.hasOpParam || c.fixedOp != RedOp::Copy;
    if (hasEpilogue(c.desc)) {
      if (gOpt.only == c.name) {
        std::printf("SKIPPED: %s has an epilogue (purlin-epilogue-test runs "
                    "it)\n", c.name.c_str());
        return 0;
      }
      std::printf("%s: has an epilogue (purlin-epilogue-test runs it)\n",
                  c.name.c_str());
      continue;
    }
    if (gOpt.only.empty() || gOpt.only == c.name)
      colls.push_back(c);
  }
  std::printf("purlin-gpu-test: %d collectives\n", (int)colls.size());
  for (const Coll &c : colls)
    if (c.name == "all_reduce" && !gOpt.spread)
      jitTests(c);
  uint64_t seed = 1;
  for (const Coll &c : colls) {
    int before = gFailed, pbefore = gPassed;
    // What the source declares: its rank count, type and op when bound or
    // concrete, else every one of them.
    std::vector<int> Rs = gOpt.sanitize ? std::vector<int>{2}
                                        : std::vector<int>{2, 4, 8};
    if (c.bound.ranks() > 0)
      Rs = {c.bound.ranks()};
    std::vector<DType> types;
    for (int t = 0; t < kNumDTypes; ++t)
      if (c.bound.dtype() < 0 || c.bound.dtype() == t)
        types.push_back((DType)t);
    std::vector<RedOp> ops = {RedOp::Copy};
    if (c.hasOpParam && c.bound.op() >= 0)
      ops = {(RedOp)c.bound.op()};
    else if (c.hasOpParam)
      ops = {RedOp::Sum, RedOp::Prod, RedOp::Min, RedOp::Max, RedOp::Avg};
    else if (c.reduces)
      ops = {c.fixedOp};
    // The (type, op) pairs: every one, except with --quick where the
    // collective has a free type and op: sampledPair's 22 of the 50, so
    // that the whole suite's first-use compiles fit a device call.
    // --sanitize: the first op on the first three types.
    std::vector<std::pair<DType, RedOp>> pairs;
    const bool fewer = gOpt.quick && ops.size() > 1 && types.size() > 3;
    for (size_t ti = 0; ti < types.size(); ++ti)
      for (RedOp op : ops) {
        const DType t = types[ti];
        if (fewer && !sampledPair(t, op))
          continue;
        if (gOpt.sanitize && (ti > 2 || op != ops[0]))
          continue;
        pairs.push_back({t, op});
      }
    // Their kernels not built ahead of time: compiled now, in parallel (or
    // read from the disk cache), rather than one at a time at their first
    // launches; one purlinCollPrepare per op, with the types that take it.
    {
      const auto t0 = std::chrono::steady_clock::now();
      for (RedOp op : ops) {
        std::vector<int> ts;
        for (auto &pr : pairs)
          if (pr.second == op)
            ts.push_back((int)pr.first);
        const int o = (int)op;
        if (!ts.empty())
          CHECK(purlinCollPrepare(collFor(c, Rs[0], 1), ts.data(),
                                  (int)ts.size(), &o, 1) == PURLIN_SUCCESS,
                "%s: purlinCollPrepare: %s", c.name.c_str(),
                purlinGetLastError());
      }
      std::printf("  %s: kernels of %zu (type, op) pairs ready in %.1f s\n",
                  c.name.c_str(), pairs.size(),
                  std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - t0).count());
    }
    for (int R : Rs)
      for (auto &pr : pairs) {
        const DType t = pr.first;
        const RedOp op = pr.second;
        std::vector<int64_t> counts = {0, 1, 7, 1037, 100003};
        bool full = op == RedOp::Sum || op == RedOp::Max || op == RedOp::Copy;
        if (full && !gOpt.quick)
          counts.push_back((1 << 20) / dtypeSize(t)); // 1 MiB
        if (gOpt.sanitize)
          counts = {1, 1037};
        for (int64_t cnt : counts)
          for (int ip = 0; ip < 3; ++ip)
            runCase({&c, R, t, op, cnt, ip, seed++});
        // Calls of other sizes on one instance: three types of different
        // sizes, the first op.
        if (!gOpt.sanitize && op == ops[0] &&
            (t == DType::F32 || t == DType::BF16 || t == DType::U8))
          launchSequences(c, R, t, op, seed);
      }
    if (!gOpt.sanitize && !gOpt.spread)
      boundTests(c);
    std::printf("  %s: %d passed, %d failed\n", c.name.c_str(),
                gPassed - pbefore, gFailed - before);
  }
  if (gOpt.large && !gOpt.sanitize)
    for (const Coll &c : colls) {
      // 256 MiB per rank (the largest buffer), 8 ranks.
      if (c.name == "all_reduce")
        runCase({&c, 8, DType::BF16, RedOp::Sum, (256ll << 20) / 2, 0, 99});
      if (c.name == "all_to_all")
        runCase({&c, 8, DType::F32, RedOp::Copy, (256ll << 20) / 4 / 8, 0, 98});
      std::fflush(stdout);
    }
  for (const Coll &c : colls)
    if (c.name == "all_reduce") {
      graphReplays(c, 8, 2048, gOpt.sanitize ? 10 : 10000); // 8 KiB per rank
      if (!gOpt.sanitize)
        graphReplays(c, 8, 1 << 18, 1000); // 1 MiB per rank (two-shot)
      if (!gOpt.sanitize && !gOpt.spread)
        errorTests(c);
    }
  for (const Coll &c : colls)
    if (!c.reduces && !gOpt.sanitize) {
      copyGraphReplays(c, 8, 1031, 1000);
      copyGraphReplays(c, 4, 100003, 100);
    }
  for (const Coll &c : colls)
    if (c.name == "all_to_all_v" && !gOpt.sanitize && !gOpt.spread)
      tableTests(c);
  for (auto &kv : gColls)
    purlinCollDestroy(kv.second);
  for (auto &kv : gComms)
    purlinCommDestroy(kv.second);
  if (gPassed + gFailed == 0) {
    std::printf("FAIL: nothing was checked (--only %s matches no linked "
                "collective?)\n", gOpt.only.c_str());
    return 1;
  }
  std::printf("%d passed, %d failed\n", gPassed, gFailed);
  return gFailed ? 1 : 0;
}
