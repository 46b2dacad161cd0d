// purlin-bench: times a generated collective the way nccl-tests does
// (sizes -b..-e by -f, -n iterations after -w warm-ups, -c check), out of
// place and in place, and on one GPU times cudaMemcpyAsync of
// R x max(input, output bytes per rank) in the same run (ratio = baseline /
// time). Small sizes (< -G bytes) are timed under CUDA-graph replay.
//
//   purlin-bench -C all_reduce -g 8 -b 8 -e 256M -f 2 -d bf16 -o sum
//   purlin-bench -C all_reduce_groups -g 8 -P G=4 -b 8K -e 64M -d bf16
//
// -P NAME=V fixes a group size or a root (default: a group of every rank,
// root 0). --host-time adds the host's time per eager purlinLaunch to the
// plan column (host=: the caller's cost, the GPU not awaited).
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
#include "bench.h"
#include "options.h"
#include "purlin/spec/Reference.h"

#include <algorithm>
#include <cstring>
#include <map>

using namespace purlin;
using namespace bench;

namespace {
double busFactor(const std::string &n, int R) {
  if (n == "all_reduce")
    return 2.0 * (R - 1) / R;
  if (n == "broadcast" || n == "reduce")
    return 1.0;
  return (double)(R - 1) / R;
}

/// The plan column: the out-of-place plan, and the in-place one after a
/// slash when it differs.
std::string planCol(const std::string plan[2]) {
  if (plan[1].empty() || plan[1] == plan[0])
    return plan[0];
  return plan[0] + "/" + plan[1];
}

/// The time, bandwidths and wrong elements of one column ("n/a": none).
std::string timeColumn(double tm, int64_t size, const std::string &name, int R,
                       int check, long long wrong) {
  char col[80];
  if (tm < 0) {
    std::snprintf(col, sizeof col, "%9s %8s %8s %6s", "n/a", "", "", "");
    return col;
  }
  const double alg = size / tm / 1e3;
  std::snprintf(col, sizeof col, "%9.2f %8.2f %8.2f %6lld", tm, alg,
                alg * busFactor(name, R), check ? wrong : -1ll);
  return col;
}
} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int rc = parseOptions(argc, argv, o); rc >= 0)
    return rc;
  const std::string &name = o.name, &dt = o.dt;
  int R = o.R;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIPPED: no CUDA GPU\n");
    return 0;
  }
  if (o.nccl) {
    if (!Nccl::available()) {
      std::printf("SKIPPED: this purlin-bench was built without NCCL "
                  "(PURLIN_NCCL; nccl.h and libnccl not found)\n");
      return 0;
    }
    if (ndev < 2) {
      std::printf("SKIPPED: the purlin/NCCL comparison needs >= 2 GPUs (NCCL "
                  "runs one rank per GPU and cannot put two ranks on one); "
                  "found %d\n",
                  ndev);
      return 0;
    }
    if (!o.gGiven)
      R = ndev;
    if (R < 2 || R > ndev) {
      std::printf("SKIPPED: --nccl -g %d needs %d GPUs (one rank per GPU); "
                  "found %d\n",
                  R, R, ndev);
      return 0;
    }
    // Never NVLink multicast (NVLS): off unless already off.
    const char *nv = std::getenv("NCCL_NVLS_ENABLE");
    if (nv && std::strcmp(nv, "0") != 0)
      std::fprintf(stderr,
                   "purlin-bench: NCCL_NVLS_ENABLE=%s overridden to 0 "
                   "(no NVLink multicast)\n",
                   nv);
    setenv("NCCL_NVLS_ENABLE", "0", 1);
  }
  int n = 0;
  const purlin::rt::GeneratedCollective *gc =
      purlin::rt::generatedCollectives(&n);
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
  if (!parseDType(dt, t) || !parseRedOp(o.opName, op)) {
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
      if (p.kind == ParamKind::Ranks)
        b.scalars[p.name] = R;
      else if (p.kind == ParamKind::Count) {
        b.scalars[p.name] = C;
        sc.push_back(C);
      } else if (p.kind == ParamKind::Root || p.kind == ParamKind::Group) {
        // -P's value; else root 0 and a group of every rank.
        auto it = o.params.find(p.name);
        const int64_t v = it != o.params.end()       ? it->second
                          : p.kind == ParamKind::Root ? 0
                                                      : R;
        b.scalars[p.name] = v;
        sc.push_back(v);
      }
    }
  };
  // Elements of each buffer at count C, and of the largest input / output.
  auto sizesAt = [&](int64_t C, std::vector<int64_t> &elems, int64_t &in,
                     int64_t &out) {
    Binding b;
    std::vector<int64_t> sc;
    bindingFor(C, b, sc);
    elems.assign(nb, 0);
    in = out = 0;
    for (int i = 0; i < nb; ++i) {
      bufferElems(d, b, i, elems[i], err);
      int64_t &m = d.buffers[i].role == BufferRole::In ? in : out;
      m = std::max(m, elems[i]);
    }
  };
  std::vector<int64_t> elems;
  int64_t in1, out1;
  sizesAt(1, elems, in1, out1);
  const int64_t per1 = std::max(in1, out1);
  const int64_t maxC = std::max<int64_t>(1, o.maxB / es / per1);

  std::vector<int> devs(R, 0);
  if (o.nccl) // one rank per GPU: purlin's multi-GPU path, as NCCL runs
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
  // Kernels not built ahead of time are compiled now, not in a timed call
  // or a graph capture.
  const int tInt = (int)t, opInt = (int)op;
  PURLIN_OK(purlinCollPrepare(h, &tInt, 1, &opInt, 1));
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  if (o.nccl) {
    std::printf(
        "# purlin-bench --nccl %s on %d ranks, one per GPU (%s), %s %s; "
        "NCCL %d in the same process (NCCL_NVLS_ENABLE=0); graph replay "
        "below %lld bytes for both\n",
        name.c_str(), R, prop.name, dt.c_str(), redOpName(op), Nccl::version(),
        (long long)o.graphBelow);
    std::printf("# size: bytes of the largest buffer of one rank; nccl: NCCL's "
                "out-of-place time and busbw on the same buffers; p/nccl = "
                "purlin out-of-place time / NCCL time (< 1: purlin faster)\n");
  } else {
    std::printf("# purlin-bench %s on %d virtual ranks of %s, %s %s; graph "
                "replay below %lld bytes\n",
                name.c_str(), R, prop.name, dt.c_str(), redOpName(op),
                (long long)o.graphBelow);
    std::printf("# size: bytes of the largest buffer of one rank; baseline: "
                "cudaMemcpyAsync of R x that; ratio = baseline / out-of-place "
                "time; plan: out of place[/in place]@target, and kernels per call (0: no SM used)\n");
  }
  std::printf("#%11s %12s %7s %6s %5s | %9s %8s %8s %6s | %9s %8s %8s %6s | "
              "%9s %6s %s\n",
              "size", "count", "type", "redop", "root", "time(us)", "algbw",
              "busbw", "#wrong", "time(us)", "algbw", "busbw", "#wrong",
              o.nccl ? "nccl(us)" : "memcpy", o.nccl ? "p/nccl" : "ratio",
              "plan");
  // Buffers at the maximum size: out of place, and in-place regions.
  int64_t inMax, outMax;
  sizesAt(maxC, elems, inMax, outMax);
  std::vector<void *> oop(R * nb), region(R);
  for (int r = 0; r < R; ++r) {
    CUDA_OK(cudaSetDevice(devs[r])); // --nccl: rank r's own GPU
    for (int i = 0; i < nb; ++i)
      CUDA_OK(
          cudaMalloc(&oop[r * nb + i], std::max<int64_t>(16, elems[i] * es)));
    CUDA_OK(cudaMalloc(&region[r],
                       std::max<int64_t>(16, std::max(inMax, outMax) * es)));
  }
  CUDA_OK(cudaSetDevice(0));
  void *cpySrc = nullptr, *cpyDst = nullptr;
  if (!o.nccl) { // the one-GPU baseline
    CUDA_OK(cudaMalloc(&cpySrc, std::max(inMax, outMax) * es * R));
    CUDA_OK(cudaMalloc(&cpyDst, std::max(inMax, outMax) * es * R));
  }
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // --nccl: a stream per GPU (the first is s), NCCL's communicators.
  std::vector<cudaStream_t> ss;
  Nccl ncclSide;
  if (o.nccl) {
    ss.push_back(s);
    for (int g = 1; g < R; ++g) {
      CUDA_OK(cudaSetDevice(devs[g]));
      cudaStream_t x;
      CUDA_OK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
      ss.push_back(x);
    }
    CUDA_OK(cudaSetDevice(0));
    if (!ncclSide.init(devs, t))
      std::printf("# NCCL has no %s: its column is n/a\n", dt.c_str());
  }
  auto syncAll = [&] {
    CUDA_OK(cudaStreamSynchronize(s));
    for (size_t g = 1; g < ss.size(); ++g)
      CUDA_OK(cudaStreamSynchronize(ss[g]));
  };
  int inBuf = -1, outBuf = -1, nin = 0, nout = 0;
  for (int i = 0; i < nb; ++i)
    if (d.buffers[i].role == BufferRole::In) {
      inBuf = i;
      ++nin;
    } else {
      outBuf = i;
      ++nout;
    }

  for (int64_t bytes = o.minB; bytes <= o.maxB;
       bytes = std::max<int64_t>(bytes + 1, (int64_t)(bytes * o.factor))) {
    const int64_t C = bytes / es / per1;
    if (C < 1)
      continue;
    int64_t inE, outE;
    sizesAt(C, elems, inE, outE);
    const int64_t size = std::max(inE, outE) * es;
    Binding b;
    std::vector<int64_t> sc;
    bindingFor(C, b, sc);
    const bool graph = size < o.graphBelow;
    const int it = graph ? std::max(o.iters, 100) : o.iters;
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
      if (o.check) {
        RankBuffers data;
        allocateBuffers(d, b, data, 1234 + bytes, 0xA5, err);
        for (int r = 0; r < R; ++r) {
          if (ip == 1) {
            std::vector<uint8_t> reg(std::max(elems[inBuf], elems[outBuf]) * es,
                                     0xA5);
            int64_t io = (char *)run.bufs[r * nb + inBuf] - (char *)region[r];
            int64_t oo = (char *)run.bufs[r * nb + outBuf] - (char *)region[r];
            std::memcpy(reg.data() + io, data[r][inBuf].data(),
                        data[r][inBuf].size());
            std::memcpy(data[r][outBuf].data(), reg.data() + oo,
                        data[r][outBuf].size());
            CUDA_OK(cudaMemcpy(region[r], reg.data(), reg.size(),
                               cudaMemcpyHostToDevice));
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
      // The plan column names the plan, the target (so its datapath) and,
      // on one GPU, the kernels one call launches (0: no SM used).
      plan[ip] = std::string(purlinCollLastPlan(h)) + "@" + info->target;
      if (!o.nccl && ip == 0)
        plan[ip] += " kernels=" + std::to_string(kernelsPerCall(run));
      if (!o.nccl && o.hostTime) { // --host-time: the caller's cost
        char h[40];
        std::snprintf(h, sizeof h, " host=%.2fus", hostCallUs(run, 200));
        plan[ip] += h;
      }
      if (o.nccl) {
        syncAll();
        tm[ip] = timeMulti(
            ss, devs,
            [&] {
              purlinArgs aa = argsOf(run);
              PURLIN_OK(purlinLaunch(h, &aa));
            },
            it, o.warm, graph);
      } else {
        tm[ip] = timeCalls(run, it, o.warm, graph);
      }
      PURLIN_OK(purlinCommCheck(comm));
    }
    const std::string cols =
        timeColumn(tm[0], size, name, R, o.check, wrong[0]) + " | " +
        timeColumn(tm[1], size, name, R, o.check, wrong[1]);
    if (o.nccl) {
      // NCCL on the out-of-place buffers (their contents do not matter now).
      std::vector<void *> in(R), out(R);
      for (int r = 0; r < R; ++r) {
        in[r] = oop[r * nb + (inBuf < 0 ? 0 : inBuf)];
        out[r] = oop[r * nb + (outBuf < 0 ? 0 : outBuf)];
      }
      const double base = nin == 1 && nout == 1
                              ? ncclSide.time(name, ss, devs, in, out,
                                              inBuf < 0 ? 0 : elems[inBuf],
                                              outBuf < 0 ? 0 : elems[outBuf],
                                              es, op, it, o.warm, graph)
                              : -1;
      char nc[48];
      if (base > 0)
        std::snprintf(nc, sizeof nc, "%9.2f %6.2f", base,
                      tm[0] > 0 ? tm[0] / base : 0.0);
      else
        std::snprintf(nc, sizeof nc, "%9s %6s", "n/a", "");
      std::printf("%12lld %12lld %7s %6s %5d | %s | %s %s%s  nccl busbw %.2f\n",
                  (long long)size, (long long)C, dt.c_str(), redOpName(op), 0,
                  cols.c_str(), nc, planCol(plan).c_str(),
                  graph ? " (graph)" : "",
                  base > 0 ? size / base / 1e3 * busFactor(name, R) : 0.0);
    } else {
      // Baseline: one copy of R x size bytes, same iterations.
      const double base = timeMemcpy(cpyDst, cpySrc, size * R, s, it, o.warm);
      std::printf("%12lld %12lld %7s %6s %5d | %s | %9.2f %6.2f %s%s\n",
                  (long long)size, (long long)C, dt.c_str(), redOpName(op), 0,
                  cols.c_str(), base, tm[0] > 0 ? base / tm[0] : 0.0,
                  planCol(plan).c_str(), graph ? " (graph)" : "");
    }
    std::fflush(stdout);
  }
  purlinCollDestroy(h);
  purlinCommDestroy(comm);
  return 0;
}
