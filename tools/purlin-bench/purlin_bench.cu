// purlin-bench: times a generated collective the way nccl-tests does
// (sizes -b..-e by -f, -n iterations after -w warm-ups, -c check), out of
// place and in place, and on one GPU times cudaMemcpyAsync of
// R x max(input, output bytes per rank) in the same run (ratio = baseline /
// time). Small sizes (< -G bytes) are timed under CUDA-graph replay.
//
//   purlin-bench -C all_reduce -g 8 -b 8 -e 256M -f 2 -d bf16 -o sum
//
// --nccl (issue #5; NOT RUN YET, no multi-GPU machine so far): one rank per
// GPU (-g R, default every visible GPU; R >= 2), and NCCL's collective over
// the same buffers and sizes in the same process (ncclCommInitAll; grouped
// send/recv for all-to-all, gather and scatter) instead of the memcpy
// baseline; p/nccl = purlin time / NCCL time (< 1: purlin faster). NCCL
// cannot put two ranks on one GPU, so with fewer than 2 GPUs it says so and
// exits 0. NCCL_NVLS_ENABLE=0 (no NVLink multicast) is forced.
//
//   purlin-bench --nccl -C all_reduce -b 8 -e 4G -f 2 -d bf16 -o sum
#include "GeneratedRegistry.h"
#include "purlin/spec/Collective.h"
#include "purlin/spec/Reference.h"
#include "purlin/purlin.h"

#include <cuda_runtime.h>
#ifdef PURLIN_HAVE_NCCL
#include <nccl.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace purlin;

#define CUDA_OK(x)                                                             \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,          \
                   cudaGetErrorString(e_));                                    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
#define PURLIN_OK(x)                                                           \
  do {                                                                         \
    if ((x) != PURLIN_SUCCESS) {                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,          \
                   purlinGetLastError());                                      \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

static int64_t parseSize(const char *s) {
  char *end;
  double v = std::strtod(s, &end);
  switch (*end) {
  case 'K': case 'k': v *= 1024; break;
  case 'M': case 'm': v *= 1024 * 1024; break;
  case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
  }
  return (int64_t)v;
}

static double busFactor(const std::string &n, int R) {
  if (n == "all_reduce")
    return 2.0 * (R - 1) / R;
  if (n == "broadcast" || n == "reduce")
    return 1.0;
  return (double)(R - 1) / R;
}

struct Run {
  purlinColl_t h;
  const Collective *d;
  int R, nb;
  DType t;
  RedOp op;
  std::vector<int64_t> scalars;
  std::vector<void *> bufs;
  cudaStream_t s;
  std::vector<cudaStream_t> ss; // --nccl: one stream per GPU (ss[0] == s)
};

static purlinArgs argsOf(Run &r) {
  static void *streams[64];
  streams[0] = r.s;
  for (size_t g = 0; g < r.ss.size() && g < 64; ++g)
    streams[g] = r.ss[g];
  purlinArgs a = {};
  a.dtype = (int)r.t;
  a.op = (int)r.op;
  a.scalars = r.scalars.data();
  a.nscalars = (int)r.scalars.size();
  a.buffers = r.bufs.data();
  a.streams = streams;
  return a;
}

/// The plan column: the out-of-place plan, and the in-place one after a
/// slash when it differs.
static std::string planCol(const std::string plan[2]) {
  if (plan[1].empty() || plan[1] == plan[0])
    return plan[0];
  return plan[0] + "/" + plan[1];
}

/// Average time of one call in us: `iters` calls, eager or in one graph.
static double timeCalls(Run &r, int iters, int warm, bool graph) {
  purlinArgs a = argsOf(r);
  cudaEvent_t e0, e1;
  CUDA_OK(cudaEventCreate(&e0));
  CUDA_OK(cudaEventCreate(&e1));
  float ms = 0;
  if (graph) {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CUDA_OK(cudaStreamBeginCapture(r.s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < iters; ++i)
      PURLIN_OK(purlinLaunch(r.h, &a));
    CUDA_OK(cudaStreamEndCapture(r.s, &g));
    CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
    for (int i = 0; i < std::max(1, warm / std::max(1, iters)) + 1; ++i)
      CUDA_OK(cudaGraphLaunch(ge, r.s));
    // Median of 5 replays of the graph of `iters` calls.
    std::vector<float> v;
    for (int k = 0; k < 5; ++k) {
      CUDA_OK(cudaEventRecord(e0, r.s));
      CUDA_OK(cudaGraphLaunch(ge, r.s));
      CUDA_OK(cudaEventRecord(e1, r.s));
      CUDA_OK(cudaEventSynchronize(e1));
      float x;
      CUDA_OK(cudaEventElapsedTime(&x, e0, e1));
      v.push_back(x);
    }
    std::sort(v.begin(), v.end());
    ms = v[2];
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
  } else {
    for (int i = 0; i < warm; ++i)
      PURLIN_OK(purlinLaunch(r.h, &a));
    CUDA_OK(cudaEventRecord(e0, r.s));
    for (int i = 0; i < iters; ++i)
      PURLIN_OK(purlinLaunch(r.h, &a));
    CUDA_OK(cudaEventRecord(e1, r.s));
    CUDA_OK(cudaEventSynchronize(e1));
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return ms * 1000.0 / iters;
}

/// --nccl: average time of one call in us of `launch` (which launches on
/// every GPU's stream), `iters` calls, eager or in one graph captured on
/// ss[0] with the other GPUs' streams forked from and joined to it.
template <class F>
static double timeMulti(const std::vector<cudaStream_t> &ss,
                        const std::vector<int> &devs, F launch, int iters,
                        int warm, bool graph) {
  int prev = 0;
  CUDA_OK(cudaGetDevice(&prev));
  const size_t G = ss.size();
  std::vector<cudaEvent_t> ev(G); // per GPU, for fork/join
  for (size_t g = 0; g < G; ++g) {
    CUDA_OK(cudaSetDevice(devs[g]));
    CUDA_OK(cudaEventCreateWithFlags(&ev[g], cudaEventDisableTiming));
  }
  CUDA_OK(cudaSetDevice(devs[0]));
  cudaEvent_t e0, e1;
  CUDA_OK(cudaEventCreate(&e0));
  CUDA_OK(cudaEventCreate(&e1));
  auto fork = [&] {
    CUDA_OK(cudaEventRecord(ev[0], ss[0]));
    for (size_t g = 1; g < G; ++g)
      CUDA_OK(cudaStreamWaitEvent(ss[g], ev[0], 0));
  };
  auto join = [&] {
    for (size_t g = 1; g < G; ++g) {
      CUDA_OK(cudaEventRecord(ev[g], ss[g]));
      CUDA_OK(cudaStreamWaitEvent(ss[0], ev[g], 0));
    }
  };
  float ms = 0;
  if (graph) {
    cudaGraph_t gr;
    cudaGraphExec_t ge;
    CUDA_OK(cudaStreamBeginCapture(ss[0], cudaStreamCaptureModeThreadLocal));
    fork();
    for (int i = 0; i < iters; ++i)
      launch();
    join();
    CUDA_OK(cudaStreamEndCapture(ss[0], &gr));
    CUDA_OK(cudaGraphInstantiate(&ge, gr, 0));
    for (int i = 0; i < std::max(1, warm / std::max(1, iters)) + 1; ++i)
      CUDA_OK(cudaGraphLaunch(ge, ss[0]));
    std::vector<float> v;
    for (int k = 0; k < 5; ++k) {
      CUDA_OK(cudaEventRecord(e0, ss[0]));
      CUDA_OK(cudaGraphLaunch(ge, ss[0]));
      CUDA_OK(cudaEventRecord(e1, ss[0]));
      CUDA_OK(cudaEventSynchronize(e1));
      float x;
      CUDA_OK(cudaEventElapsedTime(&x, e0, e1));
      v.push_back(x);
    }
    std::sort(v.begin(), v.end());
    ms = v[2];
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(gr);
  } else {
    fork();
    for (int i = 0; i < warm; ++i)
      launch();
    join();
    CUDA_OK(cudaEventRecord(e0, ss[0]));
    fork();
    for (int i = 0; i < iters; ++i)
      launch();
    join();
    CUDA_OK(cudaEventRecord(e1, ss[0]));
    CUDA_OK(cudaEventSynchronize(e1));
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  for (size_t g = 0; g < G; ++g) {
    CUDA_OK(cudaSetDevice(devs[g]));
    cudaEventDestroy(ev[g]);
  }
  CUDA_OK(cudaSetDevice(prev));
  return ms * 1000.0 / iters;
}

#ifdef PURLIN_HAVE_NCCL
#define NCCL_OK(x)                                                             \
  do {                                                                         \
    ncclResult_t r_ = (x);                                                     \
    if (r_ != ncclSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,          \
                   ncclGetErrorString(r_));                                    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

static bool ncclTypeOf(DType t, ncclDataType_t &n) {
  switch (t) {
  case DType::F32: n = ncclFloat32; return true;
  case DType::F16: n = ncclFloat16; return true;
  case DType::BF16: n = ncclBfloat16; return true;
#if NCCL_VERSION_CODE >= 22400
  case DType::F8E4M3: n = ncclFloat8e4m3; return true;
  case DType::F8E5M2: n = ncclFloat8e5m2; return true;
#endif
  case DType::I8: n = ncclInt8; return true;
  case DType::U8: n = ncclUint8; return true;
  case DType::I32: n = ncclInt32; return true;
  case DType::I64: n = ncclInt64; return true;
  case DType::F64: n = ncclFloat64; return true;
  default: return false;
  }
}
static ncclRedOp_t ncclOpOf(RedOp o) {
  switch (o) {
  case RedOp::Prod: return ncclProd;
  case RedOp::Min: return ncclMin;
  case RedOp::Max: return ncclMax;
  case RedOp::Avg: return ncclAvg;
  default: return ncclSum;
  }
}

/// NCCL's counterpart of purlin collective `name` on every rank (root 0),
/// in one group: in/out are each rank's buffers, inE/outE their elements.
static bool ncclCall(const std::string &name, const std::vector<ncclComm_t> &comms,
                     const std::vector<cudaStream_t> &ss,
                     const std::vector<void *> &in, const std::vector<void *> &out,
                     int64_t inE, int64_t outE, ncclDataType_t t, int es,
                     ncclRedOp_t op) {
  const int R = (int)comms.size();
  bool known = true;
  NCCL_OK(ncclGroupStart());
  for (int r = 0; r < R; ++r) {
    ncclComm_t c = comms[r];
    cudaStream_t s = ss[r];
    if (name == "all_reduce")
      NCCL_OK(ncclAllReduce(in[r], out[r], outE, t, op, c, s));
    else if (name == "all_gather")
      NCCL_OK(ncclAllGather(in[r], out[r], inE, t, c, s));
    else if (name == "reduce_scatter")
      NCCL_OK(ncclReduceScatter(in[r], out[r], outE, t, op, c, s));
    else if (name == "broadcast")
      NCCL_OK(ncclBroadcast(in[r], out[r], outE, t, 0, c, s));
    else if (name == "reduce")
      NCCL_OK(ncclReduce(in[r], out[r], inE, t, op, 0, c, s));
    else if (name == "all_to_all") {
      const int64_t k = inE / R;
      for (int q = 0; q < R; ++q) {
        NCCL_OK(ncclSend((char *)in[r] + q * k * es, k, t, q, c, s));
        NCCL_OK(ncclRecv((char *)out[r] + q * k * es, k, t, q, c, s));
      }
    } else if (name == "gather") {
      NCCL_OK(ncclSend(in[r], inE, t, 0, c, s));
      if (r == 0)
        for (int q = 0; q < R; ++q)
          NCCL_OK(ncclRecv((char *)out[r] + q * inE * es, inE, t, q, c, s));
    } else if (name == "scatter") {
      if (r == 0)
        for (int q = 0; q < R; ++q)
          NCCL_OK(ncclSend((char *)in[r] + q * outE * es, outE, t, q, c, s));
      NCCL_OK(ncclRecv(out[r], outE, t, 0, c, s));
    } else {
      known = false;
    }
  }
  NCCL_OK(ncclGroupEnd());
  return known;
}
#endif

int main(int argc, char **argv) {
  std::string name = "all_reduce", dt = "f32", opName = "sum";
  int64_t minB = 8, maxB = 64 << 20, graphBelow = 4 << 20;
  double factor = 2;
  int iters = 20, warm = 5, check = 1, R = 8;
  bool nccl = false, gGiven = false;
  for (int i = 1; i < argc; ++i) {
    std::string f = argv[i];
    if (f == "--nccl") {
      nccl = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "flag %s needs a value\n", f.c_str());
      return 2;
    }
    const char *v = argv[++i];
    if (f == "-g") gGiven = true;
    if (f == "-b") minB = parseSize(v);
    else if (f == "-e") maxB = parseSize(v);
    else if (f == "-f") factor = std::atof(v);
    else if (f == "-n") iters = std::atoi(v);
    else if (f == "-w") warm = std::atoi(v);
    else if (f == "-c") check = std::atoi(v);
    else if (f == "-g") R = std::atoi(v);
    else if (f == "-d") dt = v;
    else if (f == "-o") opName = v;
    else if (f == "-C") name = v;
    else if (f == "-G") graphBelow = parseSize(v);
    else {
      std::fprintf(stderr, "unknown flag %s\n", f.c_str());
      return 2;
    }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIPPED: no CUDA GPU\n");
    return 0;
  }
  if (nccl) {
#ifndef PURLIN_HAVE_NCCL
    std::printf("SKIPPED: this purlin-bench was built without NCCL "
                "(PURLIN_NCCL; nccl.h and libnccl not found)\n");
    return 0;
#else
    if (ndev < 2) {
      std::printf("SKIPPED: the purlin/NCCL comparison needs >= 2 GPUs (NCCL "
                  "runs one rank per GPU and cannot put two ranks on one); "
                  "found %d\n", ndev);
      return 0;
    }
    if (!gGiven)
      R = ndev;
    if (R < 2 || R > ndev) {
      std::printf("SKIPPED: --nccl -g %d needs %d GPUs (one rank per GPU); "
                  "found %d\n", R, R, ndev);
      return 0;
    }
    // Never NVLink multicast (NVLS): off unless already off.
    const char *nv = std::getenv("NCCL_NVLS_ENABLE");
    if (nv && std::strcmp(nv, "0") != 0)
      std::fprintf(stderr, "purlin-bench: NCCL_NVLS_ENABLE=%s overridden to 0 "
                           "(no NVLink multicast)\n", nv);
    setenv("NCCL_NVLS_ENABLE", "0", 1);
#endif
  }
  int n = 0;
  const purlin::rt::GeneratedCollective *gc = purlin::rt::generatedCollectives(&n);
  const purlin_collective_info *info = nullptr;
  std::string names;
  for (int i = 0; i < n; ++i) {
    names += std::string(" ") + gc[i].name;
    if (name == gc[i].name)
      info = gc[i].info();
  }
  if (!info) {
    std::fprintf(stderr, "no collective '%s'; linked:%s\n", name.c_str(),
                 names.c_str());
    return 2;
  }
  Collective d;
  std::string err;
  if (!readDesc(info->desc, d, err)) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  DType t;
  RedOp op;
  if (!parseDType(dt, t) || !parseRedOp(opName, op)) {
    std::fprintf(stderr, "bad -d or -o\n");
    return 2;
  }
  bool hasOp = false;
  for (auto &p : d.params)
    hasOp |= p.kind == ParamKind::Op;
  if (!hasOp)
    op = RedOp::Copy;
  const int es = dtypeSize(t), nb = (int)d.buffers.size();
  // Elements of the largest buffer per rank at count 1 (sizes are linear).
  auto bindingFor = [&](int64_t C, Binding &b, std::vector<int64_t> &sc) {
    b = Binding();
    b.dtype = t;
    b.redop = hasOp ? op : RedOp::Sum;
    sc.clear();
    for (auto &p : d.params) {
      if (p.kind == ParamKind::Ranks) b.scalars[p.name] = R;
      else if (p.kind == ParamKind::Count) { b.scalars[p.name] = C; sc.push_back(C); }
      else if (p.kind == ParamKind::Root) { b.scalars[p.name] = 0; sc.push_back(0); }
    }
  };
  auto largest = [&](int64_t C, int64_t &in, int64_t &out) {
    Binding b;
    std::vector<int64_t> sc;
    bindingFor(C, b, sc);
    in = out = 0;
    for (int i = 0; i < nb; ++i) {
      int64_t e;
      bufferElems(d, b, i, e, err);
      (d.buffers[i].role == BufferRole::In ? in : out) =
          std::max(d.buffers[i].role == BufferRole::In ? in : out, e);
    }
  };
  int64_t in1, out1;
  largest(1, in1, out1);
  const int64_t per1 = std::max(in1, out1);
  const int64_t maxC = std::max<int64_t>(1, maxB / es / per1);

  std::vector<int> devs(R, 0);
  if (nccl) // one rank per GPU: purlin's multi-GPU path, as NCCL runs
    for (int r = 0; r < R; ++r)
      devs[r] = r;
  purlinComm_t comm;
  PURLIN_OK(purlinCommCreate(&comm, R, devs.data()));
  std::string mp;
  for (auto &p : d.params)
    if (p.kind == ParamKind::Count || p.kind == ParamKind::Root)
      mp += (mp.empty() ? "" : ",") + p.name + "=" +
            std::to_string(p.kind == ParamKind::Count ? maxC : R - 1);
  purlinColl_t h;
  PURLIN_OK(purlinCollCreate(&h, comm, info, mp.c_str()));
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  if (nccl) {
    int nv = 0;
#ifdef PURLIN_HAVE_NCCL
    ncclGetVersion(&nv);
#endif
    std::printf("# purlin-bench --nccl %s on %d ranks, one per GPU (%s), %s %s; "
                "NCCL %d in the same process (NCCL_NVLS_ENABLE=0); graph replay "
                "below %lld bytes for both\n",
                name.c_str(), R, prop.name, dt.c_str(), redOpName(op), nv,
                (long long)graphBelow);
    std::printf("# size: bytes of the largest buffer of one rank; nccl: NCCL's "
                "out-of-place time and busbw on the same buffers; p/nccl = "
                "purlin out-of-place time / NCCL time (< 1: purlin faster)\n");
  } else {
  std::printf("# purlin-bench %s on %d virtual ranks of %s, %s %s; graph "
              "replay below %lld bytes\n",
              name.c_str(), R, prop.name, dt.c_str(), redOpName(op),
              (long long)graphBelow);
  std::printf("# size: bytes of the largest buffer of one rank; baseline: "
              "cudaMemcpyAsync of R x that; ratio = baseline / out-of-place time; plan: out of place[/in place]\n");
  }
  std::printf("#%11s %12s %7s %6s %5s | %9s %8s %8s %6s | %9s %8s %8s %6s | %9s %6s %s\n",
              "size", "count", "type", "redop", "root", "time(us)", "algbw",
              "busbw", "#wrong", "time(us)", "algbw", "busbw", "#wrong",
              nccl ? "nccl(us)" : "memcpy", nccl ? "p/nccl" : "ratio", "plan");
  // Buffers at the maximum size: out of place, and in-place regions.
  int64_t inMax, outMax;
  largest(maxC, inMax, outMax);
  std::vector<void *> oop(R * nb), region(R);
  for (int r = 0; r < R; ++r) {
    CUDA_OK(cudaSetDevice(devs[r])); // --nccl: rank r's own GPU
    for (int i = 0; i < nb; ++i) {
      int64_t e;
      Binding b;
      std::vector<int64_t> sc;
      bindingFor(maxC, b, sc);
      bufferElems(d, b, i, e, err);
      CUDA_OK(cudaMalloc(&oop[r * nb + i], std::max<int64_t>(16, e * es)));
    }
    CUDA_OK(cudaMalloc(&region[r], std::max<int64_t>(16, std::max(inMax, outMax) * es)));
  }
  CUDA_OK(cudaSetDevice(0));
  void *cpySrc = nullptr, *cpyDst = nullptr;
  if (!nccl) { // the one-GPU baseline
    CUDA_OK(cudaMalloc(&cpySrc, std::max(inMax, outMax) * es * R));
    CUDA_OK(cudaMalloc(&cpyDst, std::max(inMax, outMax) * es * R));
  }
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // --nccl: a stream per GPU (the first is s), NCCL's communicators.
  std::vector<cudaStream_t> ss;
  if (nccl) {
    ss.push_back(s);
    for (int g = 1; g < R; ++g) {
      CUDA_OK(cudaSetDevice(devs[g]));
      cudaStream_t x;
      CUDA_OK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
      ss.push_back(x);
    }
    CUDA_OK(cudaSetDevice(0));
  }
  auto syncAll = [&] {
    CUDA_OK(cudaStreamSynchronize(s));
    for (size_t g = 1; g < ss.size(); ++g)
      CUDA_OK(cudaStreamSynchronize(ss[g]));
  };
#ifdef PURLIN_HAVE_NCCL
  std::vector<ncclComm_t> comms;
  ncclDataType_t ntype = ncclFloat32;
  bool ncclType = false;
  if (nccl) {
    comms.resize(R);
    NCCL_OK(ncclCommInitAll(comms.data(), R, devs.data()));
    ncclType = ncclTypeOf(t, ntype);
    if (!ncclType)
      std::printf("# NCCL has no %s: its column is n/a\n", dt.c_str());
  }
#endif
  int inBuf = -1, outBuf = -1, nin = 0, nout = 0;
  for (int i = 0; i < nb; ++i)
    if (d.buffers[i].role == BufferRole::In) { inBuf = i; ++nin; }
    else { outBuf = i; ++nout; }

  for (int64_t bytes = minB; bytes <= maxB;
       bytes = std::max<int64_t>(bytes + 1, (int64_t)(bytes * factor))) {
    int64_t C = bytes / es / per1;
    if (C < 1)
      continue;
    int64_t inE, outE;
    largest(C, inE, outE);
    const int64_t size = std::max(inE, outE) * es;
    Binding b;
    std::vector<int64_t> sc;
    bindingFor(C, b, sc);
    std::vector<int64_t> elems(nb);
    for (int i = 0; i < nb; ++i)
      bufferElems(d, b, i, elems[i], err);
    const bool graph = size < graphBelow;
    const int it = graph ? std::max(iters, 100) : iters;
    double tm[2] = {0, 0};
    long long wrong[2] = {0, 0};
    std::string plan[2];
    for (int ip = 0; ip < 2; ++ip) {
      Run run{h, &d, R, nb, t, op, sc, std::vector<void *>(R * nb), s, ss};
      if (ip == 1 && (nin != 1 || nout != 1)) {
        tm[1] = -1;
        continue;
      }
      for (int r = 0; r < R; ++r)
        for (int i = 0; i < nb; ++i) {
          if (ip == 0) {
            run.bufs[r * nb + i] = oop[r * nb + i];
          } else {
            int64_t off = 0;
            if (i == inBuf && elems[outBuf] > elems[inBuf])
              off = r * elems[inBuf] * es;
            if (i == outBuf && elems[inBuf] > elems[outBuf])
              off = r * elems[outBuf] * es;
            run.bufs[r * nb + i] = (char *)region[r] + off;
          }
        }
      if (check) {
        RankBuffers data;
        allocateBuffers(d, b, data, 1234 + bytes, 0xA5, err);
        for (int r = 0; r < R; ++r) {
          if (ip == 1) {
            std::vector<uint8_t> reg(std::max(elems[inBuf], elems[outBuf]) * es, 0xA5);
            int64_t io = (char *)run.bufs[r * nb + inBuf] - (char *)region[r];
            int64_t oo = (char *)run.bufs[r * nb + outBuf] - (char *)region[r];
            std::memcpy(reg.data() + io, data[r][inBuf].data(), data[r][inBuf].size());
            std::memcpy(data[r][outBuf].data(), reg.data() + oo, data[r][outBuf].size());
            CUDA_OK(cudaMemcpy(region[r], reg.data(), reg.size(), cudaMemcpyHostToDevice));
          } else {
            for (int i = 0; i < nb; ++i)
              CUDA_OK(cudaMemcpy(run.bufs[r * nb + i], data[r][i].data(),
                                 data[r][i].size(), cudaMemcpyHostToDevice));
          }
        }
        purlinArgs a = argsOf(run);
        purlinStatus st = purlinLaunch(h, &a);
        if (st == PURLIN_ERR_NO_PLAN) {
          tm[ip] = -1;
          continue;
        }
        PURLIN_OK(st);
        syncAll();
        PURLIN_OK(purlinCommCheck(comm));
        referenceEvaluate(d, b, data, err);
        for (int r = 0; r < R; ++r)
          for (int i = 0; i < nb; ++i) {
            if (d.buffers[i].role != BufferRole::Out)
              continue;
            std::vector<uint8_t> got(data[r][i].size());
            CUDA_OK(cudaMemcpy(got.data(), run.bufs[r * nb + i], got.size(),
                               cudaMemcpyDeviceToHost));
            for (size_t j = 0; j < got.size(); j += es)
              wrong[ip] += std::memcmp(&got[j], &data[r][i][j], es) != 0;
          }
      }
      purlinArgs a = argsOf(run);
      purlinStatus st = purlinLaunch(h, &a);
      if (st == PURLIN_ERR_NO_PLAN) {
        tm[ip] = -1;
        continue;
      }
      PURLIN_OK(st);
      plan[ip] = purlinCollLastPlan(h);
      if (nccl) {
        syncAll();
        tm[ip] = timeMulti(ss, devs, [&] {
          purlinArgs aa = argsOf(run);
          PURLIN_OK(purlinLaunch(h, &aa));
        }, it, warm, graph);
      } else {
        tm[ip] = timeCalls(run, it, warm, graph);
      }
      PURLIN_OK(purlinCommCheck(comm));
    }
    double base = -1;
    if (nccl) {
#ifdef PURLIN_HAVE_NCCL
      // NCCL on the out-of-place buffers (their contents do not matter now).
      std::vector<void *> in(R), out(R);
      for (int r = 0; r < R; ++r) {
        in[r] = oop[r * nb + (inBuf < 0 ? 0 : inBuf)];
        out[r] = oop[r * nb + (outBuf < 0 ? 0 : outBuf)];
      }
      const int64_t inE = inBuf < 0 ? 0 : elems[inBuf],
                    outE = outBuf < 0 ? 0 : elems[outBuf];
      const ncclRedOp_t nop = ncclOpOf(op);
      if (ncclType && nin == 1 && nout == 1 &&
          ncclCall(name, comms, ss, in, out, inE, outE, ntype, es, nop)) {
        syncAll();
        base = timeMulti(ss, devs, [&] {
          ncclCall(name, comms, ss, in, out, inE, outE, ntype, es, nop);
        }, it, warm, graph);
      }
#endif
      char nc[48];
      if (base > 0)
        std::snprintf(nc, sizeof nc, "%9.2f %6.2f", base, tm[0] > 0 ? tm[0] / base : 0.0);
      else
        std::snprintf(nc, sizeof nc, "%9s %6s", "n/a", "");
      char col[2][80];
      for (int ip = 0; ip < 2; ++ip) {
        if (tm[ip] < 0) {
          std::snprintf(col[ip], sizeof col[ip], "%9s %8s %8s %6s", "n/a", "", "", "");
          continue;
        }
        double alg = size / tm[ip] / 1e3;
        std::snprintf(col[ip], sizeof col[ip], "%9.2f %8.2f %8.2f %6lld", tm[ip],
                      alg, alg * busFactor(name, R), check ? wrong[ip] : -1ll);
      }
      std::printf("%12lld %12lld %7s %6s %5d | %s | %s | %s %s%s  nccl busbw %.2f\n",
                  (long long)size, (long long)C, dt.c_str(), redOpName(op), 0,
                  col[0], col[1], nc, planCol(plan).c_str(), graph ? " (graph)" : "",
                  base > 0 ? size / base / 1e3 * busFactor(name, R) : 0.0);
      std::fflush(stdout);
      continue;
    }
    // Baseline: one copy of R x size bytes, same iterations.
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    for (int i = 0; i < warm; ++i)
      CUDA_OK(cudaMemcpyAsync(cpyDst, cpySrc, size * R, cudaMemcpyDeviceToDevice, s));
    CUDA_OK(cudaEventRecord(e0, s));
    for (int i = 0; i < it; ++i)
      CUDA_OK(cudaMemcpyAsync(cpyDst, cpySrc, size * R, cudaMemcpyDeviceToDevice, s));
    CUDA_OK(cudaEventRecord(e1, s));
    CUDA_OK(cudaEventSynchronize(e1));
    float ms;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
    base = ms * 1000.0 / it;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    char col[2][80];
    for (int ip = 0; ip < 2; ++ip) {
      if (tm[ip] < 0) {
        std::snprintf(col[ip], sizeof col[ip], "%9s %8s %8s %6s", "n/a", "", "", "");
        continue;
      }
      double alg = size / tm[ip] / 1e3;
      std::snprintf(col[ip], sizeof col[ip], "%9.2f %8.2f %8.2f %6lld", tm[ip],
                    alg, alg * busFactor(name, R), check ? wrong[ip] : -1ll);
    }
    std::printf("%12lld %12lld %7s %6s %5d | %s | %s | %9.2f %6.2f %s%s\n",
                (long long)size, (long long)C, dt.c_str(), redOpName(op), 0,
                col[0], col[1], base, tm[0] > 0 ? base / tm[0] : 0.0,
                planCol(plan).c_str(), graph ? " (graph)" : "");
    std::fflush(stdout);
  }
#ifdef PURLIN_HAVE_NCCL
  for (ncclComm_t c : comms)
    ncclCommDestroy(c);
#endif
  purlinCollDestroy(h);
  purlinCommDestroy(comm);
  return 0;
}
