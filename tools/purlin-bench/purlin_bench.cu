// purlin-bench: times a generated collective the way nccl-tests does
// (sizes -b..-e by -f, -n iterations after -w warm-ups, -c check), out of
// place and in place, and on one GPU times cudaMemcpyAsync of
// R x max(input, output bytes per rank) in the same run (ratio = baseline /
// time). Small sizes (< -G bytes) are timed under CUDA-graph replay.
//
//   purlin-bench -C all_reduce -g 8 -b 8 -e 256M -f 2 -d bf16 -o sum
#include "GeneratedRegistry.h"
#include "purlin/core/Collective.h"
#include "purlin/core/Reference.h"
#include "purlin/purlin.h"

#include <cuda_runtime.h>

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
};

static purlinArgs argsOf(Run &r) {
  static void *streams[1];
  streams[0] = r.s;
  purlinArgs a = {};
  a.dtype = (int)r.t;
  a.op = (int)r.op;
  a.scalars = r.scalars.data();
  a.nscalars = (int)r.scalars.size();
  a.buffers = r.bufs.data();
  a.streams = streams;
  return a;
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

int main(int argc, char **argv) {
  std::string name = "all_reduce", dt = "f32", opName = "sum";
  int64_t minB = 8, maxB = 64 << 20, graphBelow = 4 << 20;
  double factor = 2;
  int iters = 20, warm = 5, check = 1, R = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string f = argv[i];
    const char *v = argv[i + 1];
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
  std::printf("# purlin-bench %s on %d virtual ranks of %s, %s %s; graph "
              "replay below %lld bytes\n",
              name.c_str(), R, prop.name, dt.c_str(), redOpName(op),
              (long long)graphBelow);
  std::printf("# size: bytes of the largest buffer of one rank; baseline: "
              "cudaMemcpyAsync of R x that; ratio = baseline / out-of-place time\n");
  std::printf("#%11s %12s %7s %6s %5s | %9s %8s %8s %6s | %9s %8s %8s %6s | %9s %6s %s\n",
              "size", "count", "type", "redop", "root", "time(us)", "algbw",
              "busbw", "#wrong", "time(us)", "algbw", "busbw", "#wrong",
              "memcpy", "ratio", "plan");
  // Buffers at the maximum size: out of place, and in-place regions.
  int64_t inMax, outMax;
  largest(maxC, inMax, outMax);
  std::vector<void *> oop(R * nb), region(R);
  for (int r = 0; r < R; ++r) {
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
  void *cpySrc, *cpyDst;
  CUDA_OK(cudaMalloc(&cpySrc, std::max(inMax, outMax) * es * R));
  CUDA_OK(cudaMalloc(&cpyDst, std::max(inMax, outMax) * es * R));
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
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
      Run run{h, &d, R, nb, t, op, sc, std::vector<void *>(R * nb), s};
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
        CUDA_OK(cudaStreamSynchronize(s));
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
      tm[ip] = timeCalls(run, it, warm, graph);
      PURLIN_OK(purlinCommCheck(comm));
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
    const double base = ms * 1000.0 / it;
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
                plan[0].c_str(), graph ? " (graph)" : "");
    std::fflush(stdout);
  }
  purlinCollDestroy(h);
  purlinCommDestroy(comm);
  return 0;
}
