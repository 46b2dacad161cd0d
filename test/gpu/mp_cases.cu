// The cases of purlin-mp-test that move data (mp_test.cu says what each
// proves) and the helpers every case shares (MpCommon.h). Every rank
// process runs one case; all ranks make the same calls in the same order (a
// rank whose check fails goes on, so its peers never wait for it).
#include "GpuCheck.h"
#include "MpCommon.h"

#include <chrono>
#include <cstring>
#include <map>

using namespace purlin;

namespace mptest {
std::vector<Coll> loadColls(const Options &o) {
  std::vector<Coll> out;
  for (auto &nc : o.colls) {
    Coll c;
    c.name = nc.first;
    c.info = nc.second;
    std::string err;
    if (!readDesc(c.info->desc, c.desc, err))
      continue;
    for (auto &p : c.desc.params) {
      c.hasOpParam |= p.kind == ParamKind::Op;
      c.tables |= p.kind == ParamKind::Table;
    }
    for (auto &cl : c.desc.clauses)
      c.reduces |= !cl.opParam.empty() || cl.op != RedOp::Copy;
    out.push_back(c);
  }
  return out;
}

const Coll *findColl(const std::vector<Coll> &cs, const char *name) {
  for (auto &c : cs)
    if (c.name == name)
      return &c;
  return nullptr;
}

/// The binding of a launch (as purlin-gpu-test binds: the first count is
/// `count`, others 1 + count % 3; a root R - 1 or 0; a group a divisor).
void bindingFor(const Coll &c, int R, int64_t count, DType t, RedOp op,
                Binding &b, std::vector<int64_t> &scalars) {
  b = Binding();
  b.dtype = t;
  b.redop = op == RedOp::Copy ? RedOp::Sum : op;
  std::string err;
  applyBoundParams(c.desc, b, err);
  bool first = true;
  for (auto &p : c.desc.params) {
    const bool bound = !p.bound.empty();
    if (p.kind == ParamKind::Ranks) {
      b.scalars[p.name] = R;
    } else if (p.kind == ParamKind::Count) {
      int64_t v = bound ? b.scalars[p.name] : first ? count : 1 + count % 3;
      first = first && bound;
      b.scalars[p.name] = v;
      scalars.push_back(v);
    } else if (p.kind == ParamKind::Root) {
      int64_t v = bound ? b.scalars[p.name] : (count & 1) ? R - 1 : 0;
      b.scalars[p.name] = v;
      scalars.push_back(v);
    } else if (p.kind == ParamKind::Group) {
      int64_t g = R % 2 == 0 ? 2 : 1;
      b.scalars[p.name] = g;
      scalars.push_back(g);
    }
  }
}

std::string maxParams(const Coll &c, int R, int64_t maxCount) {
  std::string mp;
  bool first = true;
  for (auto &p : c.desc.params)
    if ((p.kind == ParamKind::Count || p.kind == ParamKind::Root) &&
        p.bound.empty()) {
      int64_t v = p.kind == ParamKind::Root ? R - 1 : first ? maxCount : 3;
      if (p.kind == ParamKind::Count)
        first = false;
      mp += (mp.empty() ? "" : ",") + p.name + "=" + std::to_string(v);
    }
  return mp;
}

purlinStatus initComm(purlinComm_t *comm, const purlinUniqueId &id, int R,
                      int rank) {
  return purlinCommInitRank(comm, R, id, rank, -1);
}

/// One checked launch of `c` on this rank's buffers carved from pools[] (in
/// place: input and output in pools[0]). 0: passed or refused in place
/// (NO_PLAN, as every rank is); 1: wrong data; -1: an API failure.
int checkedLaunch(purlinComm_t comm, purlinColl_t h, const Coll &c, int R,
                  int rank, int64_t count, DType t, RedOp op, bool inplace,
                  const std::vector<char *> &pools, cudaStream_t s,
                  std::string &what) {
  const Collective &d = c.desc;
  Binding b;
  std::vector<int64_t> scalars;
  bindingFor(c, R, count, t, op, b, scalars);
  RankBuffers data;
  std::string err;
  const uint8_t kPoison = 0xA5;
  uint64_t seed = (uint64_t)count * 31 + (int)t * 7 + inplace;
  if (!allocateBuffers(d, b, data, seed, kPoison, err)) {
    what = "allocateBuffers: " + err;
    return -1;
  }
  const int nb = (int)d.buffers.size();
  int inBuf = -1, outBuf = -1, nin = 0, nout = 0;
  for (int i = 0; i < nb; ++i)
    (d.buffers[i].role == BufferRole::In ? (inBuf = i, ++nin)
                                         : (outBuf = i, ++nout));
  if (inplace && (nin != 1 || nout != 1))
    return 0;
  std::vector<void *> bufs(nb);
  int64_t inOff = 0, outOff = 0;
  if (inplace) {
    int64_t ib = data[rank][inBuf].size(), ob = data[rank][outBuf].size();
    // Input and output at one address on every rank: a peer's buffer is
    // found at this rank's offset (symmetric), so NCCL's rank-dependent
    // in-place offsets (all_gather's input at block r) do not apply here.
    int64_t big = std::max(ib, ob);
    bufs[inBuf] = pools[0] + inOff;
    bufs[outBuf] = pools[0] + outOff;
    std::vector<uint8_t> region(big, kPoison);
    std::memcpy(region.data() + inOff, data[rank][inBuf].data(), ib);
    if (big && cudaMemcpy(pools[0], region.data(), big,
                          cudaMemcpyHostToDevice) != cudaSuccess)
      return -1;
    std::memcpy(data[rank][outBuf].data(), region.data() + outOff, ob);
  } else {
    for (int i = 0; i < nb; ++i) {
      bufs[i] = pools[i];
      size_t sz = data[rank][i].size();
      if (sz && cudaMemcpy(pools[i], data[rank][i].data(), sz,
                           cudaMemcpyHostToDevice) != cudaSuccess)
        return -1;
    }
  }
  // A peer reads this rank's input once this rank's kernel runs, and a
  // copy from pageable memory may still be landing when cudaMemcpy returns
  // (the launch's stream does not wait for the legacy stream): the inputs
  // must be in place first. Seen on the H200 (one all_gather of 4
  // processes read a 16 KiB block of the previous input).
  if (cudaDeviceSynchronize() != cudaSuccess) {
    what = "cudaDeviceSynchronize";
    return -1;
  }
  void *streams[1] = {s};
  purlinArgs a = {(int)t,  (int)op, scalars.data(), (int)scalars.size(),
                  nullptr, 0,       bufs.data(),    streams};
  purlinStatus st = purlinLaunch(h, &a);
  if (inplace && st == PURLIN_ERR_NO_PLAN)
    return 0;
  if (st != PURLIN_SUCCESS) {
    what = std::string("purlinLaunch: ") + purlinGetLastError();
    return st == PURLIN_ERR_NOT_REGISTERED ? -2 : -1;
  }
  if (cudaStreamSynchronize(s) != cudaSuccess) {
    what = "cudaStreamSynchronize";
    return -1;
  }
  if (purlinCommCheck(comm) != PURLIN_SUCCESS) {
    what = std::string("purlinCommCheck: ") + purlinGetLastError();
    return -1;
  }
  if (!referenceEvaluate(d, b, data, err)) {
    what = "reference: " + err;
    return -1;
  }
  for (int i = 0; i < nb; ++i) {
    if (d.buffers[i].role != BufferRole::Out)
      continue;
    std::vector<uint8_t> got(data[rank][i].size());
    if (got.size() && cudaMemcpy(got.data(), bufs[i], got.size(),
                                 cudaMemcpyDeviceToHost) != cudaSuccess)
      return -1;
    if (got != data[rank][i]) {
      size_t j = 0;
      while (got[j] == data[rank][i][j])
        ++j;
      what = "buffer " + d.buffers[i].name + " byte " + std::to_string(j) +
             " differs [" + purlinCollLastPlan(h) + "]";
      return 1;
    }
  }
  return 0;
}

/// The bytes an eager launch on unregistered buffers takes of the staging
/// area (runtime/cuda/MultiProcess.cpp: each at a 256-byte boundary).
int64_t stagingNeed(purlinColl_t h, const Coll &c, int R, int64_t C, DType t,
                    RedOp op) {
  Binding b;
  std::vector<int64_t> sc;
  bindingFor(c, R, C, t, op, b, sc);
  int64_t total = 0;
  for (int i = 0; i < purlinCollBufferCount(h); ++i) {
    const int64_t bytes = purlinCollBufferElems(h, sc.data(), i) * dtypeSize(t);
    if (bytes > 0)
      total = ((total + 255) & ~(int64_t)255) + bytes;
  }
  return total;
}

int caseColl(const Options &o, const purlinUniqueId &id, int rank) {
  const int R = o.R;
  // A staging area that holds R buffers of the largest count of 4-byte
  // elements: the all_gather and all_to_all launches there ((R + 1) such
  // buffers) are refused (PURLIN_ERR_NOT_REGISTERED), the rest staged.
  const int64_t topC = o.quick ? 65539 : (1 << 20) + 3;
  const int64_t stagingBytes = (int64_t)R * topC * 4 + 512;
  setenv("PURLIN_STAGING_BYTES", std::to_string(stagingBytes).c_str(), 1);
  purlinComm_t comm;
  MP_OK(initComm(&comm, id, R, rank));
  cudaStream_t s;
  MP_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<int64_t> counts = {0, 1, 1037, 65539};
  if (!o.quick)
    counts.push_back((1 << 20) + 3);
  struct TO {
    DType t;
    RedOp op;
  };
  std::vector<TO> types = {{DType::F32, RedOp::Sum},
                           {DType::BF16, RedOp::Sum},
                           {DType::I32, RedOp::Max}};
  // --all-types: the pairs of GpuCheck.h's sampledPair (every element type
  // with sum, the other ops on three types), ops in numbering order
  const RedOp allOps[] = {RedOp::Sum, RedOp::Prod, RedOp::Min, RedOp::Max,
                          RedOp::Avg};
  if (o.allTypes) {
    types.clear();
    for (RedOp op : allOps)
      for (int d = 0; d < kNumDTypes; ++d)
        if (sampledPair((DType)d, op))
          types.push_back({(DType)d, op});
  }
  int passed = 0, failed = 0;
  for (const Coll &c : loadColls(o)) {
    if (c.tables)
      continue; // all_to_all_v: purlin-gpu-test covers its tables
    int64_t maxC = counts.back();
    if (o.large && c.name == "all_reduce")
      maxC = 1 << 24; // 64 MiB of f32 per rank
    purlinColl_t h;
    MP_OK(purlinCollCreate(&h, comm, c.info, maxParams(c, R, maxC).c_str()));
    if (o.allTypes) { // the pairs' kernels first (NVRTC, in parallel)
      auto t0 = std::chrono::steady_clock::now();
      // one purlinCollPrepare per op, with its types (sum alone for a copy
      // collective: its kernels go by element size)
      for (RedOp op : allOps) {
        std::vector<int> ts;
        for (const TO &to : types)
          if (to.op == op)
            ts.push_back((int)to.t);
        const int oi = (int)op;
        if (!ts.empty() && (c.reduces || op == RedOp::Sum))
          MP_OK(purlinCollPrepare(h, ts.data(), (int)ts.size(), &oi, 1));
      }
      if (rank == 0)
        std::printf("rank 0: %s: every pair prepared in %.1f s\n", c.name.c_str(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    // Pools as large as the largest buffer at the largest count, in
    // elements of the largest type tested (8 bytes with --all-types):
    // purlinMemAlloc'd, and cudaMalloc'd + registered.
    std::vector<int64_t> sc;
    Binding b;
    bindingFor(c, R, maxC, DType::F32, RedOp::Sum, b, sc);
    int64_t most = 16, es = 4;
    for (const TO &to : types)
      es = std::max<int64_t>(es, dtypeSize(to.t));
    const int nb = purlinCollBufferCount(h);
    for (int i = 0; i < nb; ++i)
      most = std::max(most, purlinCollBufferElems(h, sc.data(), i) * es);
    std::vector<char *> sym(nb), reg(nb), raw(nb);
    for (int i = 0; i < nb; ++i) {
      MP_OK(purlinMemAlloc(comm, most, (void **)&sym[i]));
      MP_CU(cudaMalloc((void **)&reg[i], most + 4096));
      reg[i] += 256; // not at the allocation's base
      MP_OK(purlinCommRegister(comm, reg[i], most));
      MP_CU(cudaMalloc((void **)&raw[i], most + 4096));
      raw[i] += 512; // never registered: through the staging area
    }
    const char *modes[] = {"purlinMemAlloc", "registered", "staged"};
    for (int mode = 0; mode < 3; ++mode)
      for (size_t ti = 0; ti < types.size(); ++ti) {
        const TO &to = types[ti];
        bool seen = false; // a copy collective takes each type once
        for (size_t tj = 0; tj < ti && !c.reduces; ++tj)
          seen |= types[tj].t == to.t;
        if (seen)
          continue;
        for (int64_t C : counts)
          for (int inplace = 0; inplace < 2; ++inplace) {
            RedOp op = c.reduces ? to.op : RedOp::Copy;
            if (!c.hasOpParam && c.reduces)
              op = RedOp::Sum; // a fixed op (none of the examples)
            std::string what;
            int r = checkedLaunch(comm, h, c, R, rank, C, to.t, op, inplace,
                                  mode == 0 ? sym : mode == 1 ? reg : raw, s,
                                  what);
            if (mode == 2 &&
                stagingNeed(h, c, R, C, to.t, op) > stagingBytes) {
              // refused, and said why
              if (r == -2 && what.find("staging area") != std::string::npos)
                ++passed;
              else if (failed++ < 20)
                std::printf("rank %d: FAIL %s %s C=%lld: needs more than "
                            "the staging area, not refused (%d: %s)\n",
                            rank, c.name.c_str(), dtypeName(to.t),
                            (long long)C, r, what.c_str());
              continue;
            }
            if (r < 0) {
              std::printf("rank %d: FAIL %s %s C=%lld: %s\n", rank,
                          c.name.c_str(), dtypeName(to.t), (long long)C,
                          what.c_str());
              return 1;
            }
            if (r > 0 && failed++ < 20)
              std::printf("rank %d: FAIL %s %s %s C=%lld %s %s: %s\n", rank,
                          c.name.c_str(), dtypeName(to.t), redOpName(op),
                          (long long)C, inplace ? "in-place" : "out-of-place",
                          modes[mode], what.c_str());
            passed += r == 0;
          }
      }
    if (o.large && c.name == "all_reduce") {
      std::string what;
      int r = checkedLaunch(comm, h, c, R, rank, 1 << 24, DType::F32,
                            RedOp::Sum, false, sym, s, what);
      r == 0 ? ++passed : ++failed;
      if (r)
        std::printf("rank %d: FAIL all_reduce f32 64 MiB: %s\n", rank,
                    what.c_str());
    }
    for (int i = 0; i < nb; ++i) {
      MP_OK(purlinCommDeregister(comm, reg[i]));
      cudaFree(reg[i] - 256);
      cudaFree(raw[i] - 512);
      MP_OK(purlinMemFree(comm, sym[i]));
    }
    MP_OK(purlinCollDestroy(h));
  }
  MP_OK(purlinCommCheck(comm));
  MP_OK(purlinCommDestroy(comm));
  std::printf("rank %d: coll: %d passed, %d failed\n", rank, passed, failed);
  return failed ? 1 : 0;
}

// ---- CUDA graphs -----------------------------------------------------------
__global__ void bump(int32_t *x, int64_t n, int *iter) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    x[i] += 1;
  if (blockIdx.x == 0 && threadIdx.x == 0)
    ++*iter;
}
__global__ void check(const int32_t *y, int64_t n, const int32_t *base, int R,
                      const int *iter, unsigned long long *bad) {
  const uint32_t add = (uint32_t)R * (uint32_t)*iter;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    if ((uint32_t)y[i] != (uint32_t)base[i] + add)
      atomicAdd(bad, 1ull);
}

int caseGraph(const Options &o, const purlinUniqueId &id, int rank) {
  const int R = o.R, replays = 1000;
  const Coll *c = nullptr;
  auto cs = loadColls(o);
  if (!(c = findColl(cs, "all_reduce"))) {
    std::printf("rank %d: FAIL no all_reduce\n", rank);
    return 1;
  }
  purlinComm_t comm;
  MP_OK(initComm(&comm, id, R, rank));
  int failed = 0;
  for (int64_t C : {1037ll, 65539ll}) {
    purlinColl_t h;
    MP_OK(purlinCollCreate(&h, comm, c->info, "C=65539"));
    int32_t *x, *y, *base;
    int *iter;
    unsigned long long *bad;
    MP_OK(purlinMemAlloc(comm, C * 4, (void **)&x));
    MP_OK(purlinMemAlloc(comm, C * 4, (void **)&y));
    MP_CU(cudaMalloc((void **)&base, C * 4));
    MP_CU(cudaMalloc((void **)&iter, sizeof(int)));
    MP_CU(cudaMalloc((void **)&bad, 8));
    std::vector<int32_t> hx(C), hb(C);
    for (int64_t i = 0; i < C; ++i) {
      hx[i] = (int32_t)(i * 2654435761u + rank * 40503u);
      uint32_t sum = 0;
      for (int q = 0; q < R; ++q)
        sum += (uint32_t)(i * 2654435761u + q * 40503u);
      hb[i] = (int32_t)sum;
    }
    MP_CU(cudaMemcpy(x, hx.data(), C * 4, cudaMemcpyHostToDevice));
    MP_CU(cudaMemcpy(base, hb.data(), C * 4, cudaMemcpyHostToDevice));
    MP_CU(cudaMemset(iter, 0, sizeof(int)));
    MP_CU(cudaMemset(bad, 0, 8));
    MP_CU(cudaDeviceSynchronize()); // the copies landed (see checkedLaunch)
    cudaStream_t s;
    MP_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    void *bufs[2] = {x, y};
    void *streams[1] = {s};
    purlinArgs a = {PURLIN_I32, PURLIN_SUM, &C, 1, nullptr, 0, bufs, streams};
    cudaGraph_t g;
    cudaGraphExec_t ge;
    MP_CU(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    bump<<<64, 256, 0, s>>>(x, C, iter);
    MP_OK(purlinLaunch(h, &a));
    check<<<64, 256, 0, s>>>(y, C, base, R, iter, bad);
    MP_CU(cudaStreamEndCapture(s, &g));
    MP_CU(cudaGraphInstantiate(&ge, g, 0));
    auto t0 = Clock::now();
    for (int k = 0; k < replays; ++k)
      MP_CU(cudaGraphLaunch(ge, s));
    MP_CU(cudaStreamSynchronize(s));
    double secs = since(t0);
    MP_OK(purlinCommCheck(comm));
    unsigned long long nbad = 0;
    int it = 0;
    MP_CU(cudaMemcpy(&nbad, bad, 8, cudaMemcpyDeviceToHost));
    MP_CU(cudaMemcpy(&it, iter, 4, cudaMemcpyDeviceToHost));
    std::printf("rank %d: graph all_reduce i32 sum C=%lld x%d replays (%s): "
                "%llu wrong, %.1f us/replay\n",
                rank, (long long)C, it, purlinCollLastPlan(h), nbad,
                secs * 1e6 / replays);
    failed += nbad != 0 || it != replays;
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    MP_OK(purlinMemFree(comm, x));
    MP_OK(purlinMemFree(comm, y));
    cudaFree(base);
    cudaFree(iter);
    cudaFree(bad);
    MP_OK(purlinCollDestroy(h));
  }
  MP_OK(purlinCommDestroy(comm));
  return failed ? 1 : 0;
}

int checkedAllReduce(purlinComm_t comm, const Coll &c, int rank, int R,
                     int64_t C) {
  purlinColl_t h;
  MP_OK(purlinCollCreate(&h, comm, c.info, ("C=" + std::to_string(C)).c_str()));
  float *x, *y;
  MP_OK(purlinMemAlloc(comm, C * 4, (void **)&x));
  MP_OK(purlinMemAlloc(comm, C * 4, (void **)&y));
  std::vector<float> hx(C), got(C);
  for (int64_t i = 0; i < C; ++i)
    hx[i] = (float)(i % 97) + rank;
  MP_CU(cudaMemcpy(x, hx.data(), C * 4, cudaMemcpyHostToDevice));
  void *bufs[2] = {x, y};
  purlinArgs a = {PURLIN_F32, PURLIN_SUM, &C, 1, nullptr, 0, bufs, nullptr};
  MP_OK(purlinLaunch(h, &a));
  MP_CU(cudaDeviceSynchronize());
  MP_OK(purlinCommCheck(comm));
  MP_CU(cudaMemcpy(got.data(), y, C * 4, cudaMemcpyDeviceToHost));
  int64_t wrong = 0;
  for (int64_t i = 0; i < C; ++i)
    wrong += got[i] != (float)((i % 97) * R + R * (R - 1) / 2);
  MP_OK(purlinMemFree(comm, x));
  MP_OK(purlinMemFree(comm, y));
  MP_OK(purlinCollDestroy(h));
  if (wrong)
    std::printf("rank %d: FAIL all_reduce C=%lld: %lld wrong\n", rank,
                (long long)C, (long long)wrong);
  return wrong ? 1 : 0;
}

int caseSplit(const Options &o, const purlinUniqueId &id, int rank) {
  const int R = o.R;
  purlinComm_t comm, sub = nullptr;
  MP_OK(initComm(&comm, id, R, rank));
  auto t0 = Clock::now();
  MP_OK(purlinCommSplit(comm, rank % 2, -rank, &sub));
  double secs = since(t0);
  const int G = (R - rank % 2 + 1) / 2; // ranks of my color
  int want = 0;                         // ranks of my color above me
  for (int q = rank + 2; q < R; q += 2)
    ++want;
  if (!sub || purlinCommRank(sub) != want) {
    std::printf("rank %d: FAIL split rank %d, want %d\n", rank,
                sub ? purlinCommRank(sub) : -1, want);
    return 1;
  }
  auto cs = loadColls(o);
  int failed = 0;
  cudaStream_t s;
  MP_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const Coll *c = findColl(cs, rank % 2 ? "all_gather" : "all_reduce");
  purlinColl_t h;
  const int64_t C = 65539;
  MP_OK(purlinCollCreate(&h, sub, c->info, maxParams(*c, G, C).c_str()));
  std::vector<char *> pools(2);
  for (auto &p : pools)
    MP_OK(purlinMemAlloc(sub, C * 4 * G, (void **)&p));
  for (int k = 0; k < 10; ++k) {
    std::string what;
    int r = checkedLaunch(sub, h, *c, G, want, C - k * 1000, DType::F32,
                          rank % 2 ? RedOp::Copy : RedOp::Sum, false, pools, s,
                          what);
    if (r)
      std::printf("rank %d: FAIL split %s: %s\n", rank, c->name.c_str(),
                  what.c_str());
    failed += r != 0;
  }
  for (auto p : pools)
    MP_OK(purlinMemFree(sub, p));
  MP_OK(purlinCollDestroy(h));
  MP_OK(purlinCommDestroy(sub));
  // NOCOLOR: no communicator.
  purlinComm_t none = (purlinComm_t)&failed;
  MP_OK(purlinCommSplit(comm, rank == 0 ? 0 : PURLIN_SPLIT_NOCOLOR, 0, &none));
  if ((rank == 0) != (none != nullptr))
    ++failed;
  if (none)
    MP_OK(purlinCommDestroy(none));
  MP_OK(purlinCommDestroy(comm));
  std::printf("rank %d: split (%.3f s) into %d ranks, rank %d: %s, %s\n", rank,
              secs, G, want, c->name.c_str(), failed ? "FAILED" : "checked");
  return failed ? 1 : 0;
}

CaseFn caseFunction(const std::string &name) {
  static const std::map<std::string, CaseFn> all = {
      {"coll", caseColl},   {"graph", caseGraph},
      {"graphbuf", caseGraphBuffers},
      {"kill", caseKill},   {"absent", caseAbsent},
      {"split", caseSplit}, {"callbacks", caseCallbacks},
      {"bench", caseBench}, {"mismatch", caseMismatch},
      {"stagemix", caseStageMix}, {"sizes", caseSizes}};
  auto it = all.find(name);
  return it == all.end() ? nullptr : it->second;
}
} // namespace mptest
