// purlin-epilogue-bench (issue 16): all-reduce + residual add + RMSNorm on
// R virtual ranks of one GPU, bf16, side by side in one run:
//   fused    the collective all_reduce_rmsnorm (its epilogue runs in the
//            all-reduce's consume: examples/all_reduce_rmsnorm.purlin), the
//            plan the chooser picks by size (column "plan": one-shot
//            "direct" below 1 MiB a rank, "two_shot" with row-aligned
//            owners from it on; spec/Plan.h, kDefaultEpilogueSmallBytes);
//   direct, two_shot
//            the same collective with the plan forced, where the copies
//            all_reduce_rmsnorm_direct and all_reduce_rmsnorm_two_shot are
//            linked in (tools/gpu-epilogue.sh gen makes them; "-" if not):
//            where the chooser's band edge should lie;
//   d_apart, 2s_apart
//            the unfused plans (direct_unfused, two_shot_unfused: the
//            epilogue as a launch of its own);
//   2s_gather
//            two_shot_gather (the owners keep their rows' sums, then every
//            rank applies its own rows, each read from its owner: the
//            pair's shape, the epilogue a launch of its own);
//   unfused  purlin's all_reduce, then a separate residual + RMSNorm kernel
//            (16-byte vector loads, one block per row and rank, the row in
//            registers: the usual hand-written kernel), the "pair";
//   d_wide   one-shot on 32 lanes (all_reduce_rmsnorm_direct_wide);
//   hand     a hand-written fused one-shot kernel (the norm kernel reading
//            every rank's row), one launch, no barrier: the floor on one
//            GPU that a generated fused kernel is held to;
//   hand2s   a hand-written fused two-shot kernel (row-aligned owners: a
//            block a row combines the row's contributions once, then runs
//            the residual and the norm for every rank, 8 side by side),
//            one launch, no barrier: the floor of the owned form, where one-shot reads
//            each row R times (64 tokens and up);
//   hand_l   "hand" in the generated one-shot's shape: min(N, 16) blocks a
//            rank, each walking its rows one after another (the shape or
//            the code: what costs the generated kernel at 32-64 tokens);
// each timed as the median of 5 CUDA-graph replays of -n calls (us per
// call); ratio = unfused / fused (> 1: the fused form is faster), best =
// unfused / the fastest fused plan. Before timing, each fused form's
// outputs are compared with the unfused pipeline's (a sanity check;
// purlin-epilogue-test is the correctness test).
//
// --inplace 1: the fused forms store y at x's address (the output over the
// communicated input), so the chooser takes the in-place plans
// (direct_unfused below its in-place edge, two_shot from it on; before the
// twenty-fourth session direct_copy and two_shot_copy) and the forced
// copies run theirs (direct: direct_copy, two_shot: two_shot, d_apart:
// direct_unfused);
// x is restored from a saved copy before each check, and every timed call
// overwrites it (values stay bounded: y is normalized). The pair and the
// hand-written kernels stay out of place (the baselines).
// --inplace 2: the fused forms store res_out at res's address (the
// residual updated in place: the Python call's default, vLLM's
// fused_add_rms_norm), which no plan minds (spec/Epilogue.h,
// epilogueLocalPair), so they take the plans of a call out of place; res
// is restored before each check (timed calls make it grow: h = sum + res).
//
//   purlin-epilogue-bench [-g 8] [-n 50] [--hidden 4096,8192] [--inplace 0|1|2]
//                         [--tokens 1,2,4,8,16,32,64,128,256,512,1024,2048,4096]
#include "GeneratedRegistry.h"
#include "bench.h"
#include "purlin/purlin.h"
#include "purlin/spec/DType.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {
constexpr int kMaxR = 32;
struct NormPtrs {
  const __nv_bfloat16 *x[kMaxR], *res[kMaxR], *w[kMaxR];
  __nv_bfloat16 *y[kMaxR], *resOut[kMaxR];
};

/// The end of a row's residual + RMSNorm once each thread of block holds
/// its VPT vectors of h (f32) and their sum of squares `ss`: the block's
/// sum, then y = h * rsqrt(sum / H + eps) * w, one rounding.
template <int VPT>
__device__ __forceinline__ void normRow(const float (&h)[VPT][8], float ss,
                                        const uint4 *w, uint4 *y, int H, float eps) {
  const int nv = H / 8;
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1)
    ss += __shfl_xor_sync(0xffffffffu, ss, o);
  if ((threadIdx.x & 31) == 0)
    part[threadIdx.x / 32] = ss;
  __syncthreads();
  float tot = 0.f;
  for (int k = 0; k < (int)(blockDim.x + 31) / 32; ++k)
    tot += part[k];
  const float s = rsqrtf(tot / H + eps);
#pragma unroll
  for (int v = 0; v < VPT; ++v) {
    const int i = threadIdx.x + v * blockDim.x;
    if (i >= nv)
      break;
    uint4 wv = w[i], o;
    const __nv_bfloat16 *wb = (const __nv_bfloat16 *)&wv;
    __nv_bfloat16 *ov = (__nv_bfloat16 *)&o;
#pragma unroll
    for (int k = 0; k < 8; ++k)
      ov[k] = __float2bfloat16_rn(h[v][k] * s * __bfloat162float(wb[k]));
    y[i] = o;
  }
}

/// The 8 bf16 of a 16-byte vector, widened to f32.
__device__ __forceinline__ void widen8(uint4 x, float (&out)[8]) {
  const __nv_bfloat16 *xv = (const __nv_bfloat16 *)&x;
#pragma unroll
  for (int k = 0; k < 8; ++k)
    out[k] = __bfloat162float(xv[k]);
}

/// h = a + the residual vector b (f32), h's squares added to ss; returns h
/// rounded to bf16 (the new residual, stored by the caller).
__device__ __forceinline__ uint4 addResidual(const float (&a)[8], uint4 b, float (&h)[8],
                                             float &ss) {
  float bf[8];
  widen8(b, bf);
  uint4 o;
  __nv_bfloat16 *ov = (__nv_bfloat16 *)&o;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    h[k] = a[k] + bf[k];
    ss += h[k] * h[k];
    ov[k] = __float2bfloat16_rn(h[k]);
  }
  return o;
}

/// The separate residual + RMSNorm: block (row, rank), 8 bf16 per 16-byte
/// vector, VPT vectors per thread kept in registers between the sum of
/// squares and the scaling.
template <int VPT>
__global__ void __launch_bounds__(1024) residualRmsNorm(NormPtrs p, int H, float eps) {
  const int r = blockIdx.y;
  const int64_t off = (int64_t)blockIdx.x * H;
  const int nv = H / 8;
  const uint4 *x = (const uint4 *)(p.x[r] + off), *res = (const uint4 *)(p.res[r] + off),
              *w = (const uint4 *)p.w[r];
  uint4 *y = (uint4 *)(p.y[r] + off), *ro = (uint4 *)(p.resOut[r] + off);
  float h[VPT][8];
  float ss = 0.f;
#pragma unroll
  for (int v = 0; v < VPT; ++v) {
    const int i = threadIdx.x + v * blockDim.x;
    if (i >= nv)
      break;
    float a[8];
    widen8(x[i], a);
    ro[i] = addResidual(a, res[i], h[v], ss);
  }
  normRow<VPT>(h, ss, w, y, H, eps);
}

/// A hand-written fused one-shot kernel, the floor a generated one is held
/// to on one GPU (column "hand"): block (row, rank) reads the row of every
/// rank's input (8 loads issued before they are combined, f32 in ascending
/// rank), adds the residual, and normalizes as residualRmsNorm does, all
/// in one launch. On one GPU the launch's start orders every rank's inputs
/// before it and each block stores only its own rank's outputs, so it needs
/// no barrier (what purlin's one-launch plans skip too); several GPUs would
/// need one at each end.
struct FusedPtrs {
  const __nv_bfloat16 *in[kMaxR], *res[kMaxR], *w[kMaxR];
  __nv_bfloat16 *y[kMaxR], *resOut[kMaxR];
};

/// Vector i of the row at `off` of every rank's input, combined in f32 in
/// ascending rank (8 loads issued before they are combined).
__device__ __forceinline__ void combineRow(const FusedPtrs &p, int R, int64_t off, int i,
                                           float (&sum)[8]) {
  for (int q0 = 0; q0 < R; q0 += 8) {
    uint4 c[8];
#pragma unroll
    for (int q = 0; q < 8; ++q)
      if (q0 + q < R)
        c[q] = ((const uint4 *)(p.in[q0 + q] + off))[i];
#pragma unroll
    for (int q = 0; q < 8; ++q)
      if (q0 + q < R) {
        float cf[8];
        widen8(c[q], cf);
#pragma unroll
        for (int k = 0; k < 8; ++k)
          sum[k] = q0 + q == 0 ? cf[k] : sum[k] + cf[k];
      }
  }
}

/// Row `n` of rank r (blockIdx.y) in one block: every rank's row
/// combined, the residual added, normalized (residualRmsNorm's end).
template <int VPT>
__device__ __forceinline__ void handFusedRow(const FusedPtrs &p, int R, int64_t n, int H,
                                             float eps) {
  const int r = blockIdx.y;
  const int64_t off = n * H;
  const int nv = H / 8;
  const uint4 *res = (const uint4 *)(p.res[r] + off), *w = (const uint4 *)p.w[r];
  uint4 *y = (uint4 *)(p.y[r] + off), *ro = (uint4 *)(p.resOut[r] + off);
  float h[VPT][8];
  float ss = 0.f;
#pragma unroll
  for (int v = 0; v < VPT; ++v) {
    const int i = threadIdx.x + v * blockDim.x;
    if (i >= nv)
      break;
    float sum[8];
    combineRow(p, R, off, i, sum);
    ro[i] = addResidual(sum, res[i], h[v], ss);
  }
  normRow<VPT>(h, ss, w, y, H, eps);
}

template <int VPT>
__global__ void __launch_bounds__(1024) handFused(FusedPtrs p, int R, int H, float eps) {
  handFusedRow<VPT>(p, R, blockIdx.x, H, eps);
}

/// The same kernel in the generated one-shot's shape (column "hand_l"):
/// gridDim.x blocks a rank (the plan's live lanes: min(N, 16)), block l
/// walking rows l, l + gridDim.x, ... one after another. Beside "hand" (a
/// block a row) it tells whether a gap between the generated kernel and
/// the hand-written one at 32-64 tokens is the shape (a lane's rows one
/// after another, a block an SM) or the code.
template <int VPT>
__global__ void __launch_bounds__(1024) handFusedLanes(FusedPtrs p, int R, int64_t N, int H,
                                                       float eps) {
  for (int64_t n = blockIdx.x; n < N; n += gridDim.x) {
    handFusedRow<VPT>(p, R, n, H, eps);
    __syncthreads(); // normRow's partial sums are written again by the next row
  }
}

/// The ends of G ranks' rows at once (normRow side by side): each thread
/// holds its VPT vectors of the combined row and of every rank's residual,
/// and the ranks' sums of squares; one block sum for the G of them, then
/// rank q0 + g's output with its weight, for the ng ranks of the group (h
/// recomputed from the row and the residual: the same f32 additions as
/// addResidual's, fewer registers than keeping it).
template <int VPT, int G>
__device__ __forceinline__ void normRows(const float (&sum)[VPT][8], const uint4 (&rv)[G][VPT],
                                         float (&ss)[G], int ng, const FusedPtrs &p, int q0,
                                         int64_t off, int H, float eps) {
  const int nv = H / 8;
  __shared__ float part[G][32];
#pragma unroll
  for (int g = 0; g < G; ++g) {
    for (int o = 16; o > 0; o >>= 1)
      ss[g] += __shfl_xor_sync(0xffffffffu, ss[g], o);
    if ((threadIdx.x & 31) == 0)
      part[g][threadIdx.x / 32] = ss[g];
  }
  __syncthreads();
#pragma unroll
  for (int g = 0; g < G; ++g) {
    if (g >= ng)
      break;
    float tot = 0.f;
    for (int k = 0; k < (int)(blockDim.x + 31) / 32; ++k)
      tot += part[g][k];
    const float sc = rsqrtf(tot / H + eps);
    const uint4 *w = (const uint4 *)p.w[q0 + g];
    uint4 *y = (uint4 *)(p.y[q0 + g] + off);
#pragma unroll
    for (int v = 0; v < VPT; ++v) {
      const int i = threadIdx.x + v * blockDim.x;
      if (i >= nv)
        break;
      float bf[8];
      widen8(rv[g][v], bf);
      uint4 wv = w[i], o;
      const __nv_bfloat16 *wb = (const __nv_bfloat16 *)&wv;
      __nv_bfloat16 *ov = (__nv_bfloat16 *)&o;
#pragma unroll
      for (int k = 0; k < 8; ++k)
        ov[k] = __float2bfloat16_rn((sum[v][k] + bf[k]) * sc * __bfloat162float(wb[k]));
      y[i] = o;
    }
  }
  __syncthreads(); // part is used again by the next group
}

/// The hand-written fused two-shot kernel (column "hand2s"), the floor of
/// the owned form on one GPU: block `row` combines the row's R
/// contributions once (f32, ascending rank, as handFused), then runs the
/// residual and norm of G ranks side by side (every residual vector of the
/// group loaded before the first is used, one block sum for the G ranks),
/// each with its own residual and weight into its own outputs. Each row is
/// read once from each input, not R times; the blocks of one row are one,
/// so it needs no barrier on one GPU (several GPUs would need the
/// reduce-scatter's and the all-gather's). The eighteenth session's form
/// walked the ranks one after another: 9.3 us at 1 token (hidden 4096) on
/// the H100, 8 dependent row passes.
template <int VPT>
__global__ void __launch_bounds__(1024) handFusedOwned(FusedPtrs p, int R, int H, float eps) {
  constexpr int G = VPT == 1 ? 8 : VPT == 2 ? 2 : 1; // registers: G x VPT x 4 words
  const int64_t off = (int64_t)blockIdx.x * H;
  const int nv = H / 8;
  float sum[VPT][8];
#pragma unroll
  for (int v = 0; v < VPT; ++v) {
    const int i = threadIdx.x + v * blockDim.x;
    if (i >= nv)
      break;
    combineRow(p, R, off, i, sum[v]);
  }
  for (int q0 = 0; q0 < R; q0 += G) {
    const int ng = R - q0 < G ? R - q0 : G;
    uint4 rv[G][VPT]; // the group's residual vectors, all loaded first
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
      for (int v = 0; v < VPT; ++v) {
        const int i = threadIdx.x + v * blockDim.x;
        rv[g][v] = make_uint4(0, 0, 0, 0);
        if (g < ng && i < nv)
          rv[g][v] = ((const uint4 *)(p.res[q0 + g] + off))[i];
      }
    float ss[G];
#pragma unroll
    for (int g = 0; g < G; ++g) {
      ss[g] = 0.f;
      if (g >= ng)
        continue;
      uint4 *ro = (uint4 *)(p.resOut[q0 + g] + off);
#pragma unroll
      for (int v = 0; v < VPT; ++v) {
        const int i = threadIdx.x + v * blockDim.x;
        if (i >= nv)
          break;
        float h[8];
        ro[i] = addResidual(sum[v], rv[g][v], h, ss[g]);
      }
    }
    normRows<VPT, G>(sum, rv, ss, ng, p, q0, off, H, eps);
  }
}

/// A row kernel's launch shape for hidden size H: threads for the row's
/// 16-byte vectors (a multiple of 32, at most 1024), and f(VPT, threads)
/// with VPT (1, 2 or 4) the vectors a thread holds.
template <class F> void byRowShape(int H, F &&f) {
  const int nv = H / 8;
  const int threads = std::min(1024, ((nv + 31) / 32) * 32);
  const int vpt = (nv + threads - 1) / threads;
  if (vpt <= 1)
    f(std::integral_constant<int, 1>(), threads);
  else if (vpt <= 2)
    f(std::integral_constant<int, 2>(), threads);
  else
    f(std::integral_constant<int, 4>(), threads);
  CUDA_OK(cudaGetLastError());
}

void launchHandFusedOwned(const FusedPtrs &p, int R, int64_t N, int H, float eps,
                          cudaStream_t s) {
  byRowShape(H, [&](auto vpt, int threads) {
    handFusedOwned<decltype(vpt)::value><<<(unsigned)N, threads, 0, s>>>(p, R, H, eps);
  });
}

void launchHandFused(const FusedPtrs &p, int R, int64_t N, int H, float eps, cudaStream_t s) {
  byRowShape(H, [&](auto vpt, int threads) {
    handFused<decltype(vpt)::value><<<dim3((unsigned)N, (unsigned)R), threads, 0, s>>>(
        p, R, H, eps);
  });
}

void launchHandFusedLanes(const FusedPtrs &p, int R, int64_t N, int H, float eps, int lanes,
                          cudaStream_t s) {
  byRowShape(H, [&](auto vpt, int threads) {
    handFusedLanes<decltype(vpt)::value>
        <<<dim3((unsigned)std::min<int64_t>(N, lanes), (unsigned)R), threads, 0, s>>>(p, R, N, H,
                                                                                     eps);
  });
}

void launchNorm(const NormPtrs &p, int R, int64_t N, int H, float eps, cudaStream_t s) {
  byRowShape(H, [&](auto vpt, int threads) {
    residualRmsNorm<decltype(vpt)::value><<<dim3((unsigned)N, (unsigned)R), threads, 0, s>>>(
        p, H, eps);
  });
}

/// The median of 5 replays of a graph of `iters` calls of `body`, per call, in us.
double timeGraph(cudaStream_t s, int iters, const std::function<void()> &body) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < iters; ++i)
    body();
  CUDA_OK(cudaStreamEndCapture(s, &g));
  CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
  CUDA_OK(cudaGraphLaunch(ge, s));
  CUDA_OK(cudaStreamSynchronize(s));
  const float ms = bench::medianReplay(ge, s);
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  return ms * 1000.0 / iters;
}

const purlin_collective_info *find(const char *name) {
  int n = 0;
  const purlin::rt::GeneratedCollective *gc = purlin::rt::generatedCollectives(&n);
  for (int i = 0; i < n; ++i)
    if (std::strcmp(gc[i].name, name) == 0)
      return gc[i].info();
  return nullptr;
}

std::vector<int64_t> list(const char *s) {
  std::vector<int64_t> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ','))
    v.push_back(std::atoll(x.c_str()));
  return v;
}
} // namespace

int main(int argc, char **argv) {
  int R = 8, iters = 50;
  bool inplace = false, resInPlace = false;
  std::vector<int64_t> hidden = {4096, 8192}, tokens = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "-g")
      R = std::atoi(argv[i + 1]);
    else if (k == "-n")
      iters = std::atoi(argv[i + 1]);
    else if (k == "--hidden")
      hidden = list(argv[i + 1]);
    else if (k == "--tokens")
      tokens = list(argv[i + 1]);
    else if (k == "--inplace") {
      inplace = std::atoi(argv[i + 1]) == 1;
      resInPlace = std::atoi(argv[i + 1]) == 2;
    }
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIPPED: no CUDA GPU\n");
    return 0;
  }
  const purlin_collective_info *fusedInfo = find("all_reduce_rmsnorm"),
                               *arInfo = find("all_reduce");
  if (!fusedInfo || !arInfo) {
    std::printf("FAIL: all_reduce_rmsnorm and all_reduce must be linked in\n");
    return 1;
  }
  const int64_t maxN = *std::max_element(tokens.begin(), tokens.end()),
                maxH = *std::max_element(hidden.begin(), hidden.end());
  std::vector<int> devs(R, 0);
  purlinComm_t comm;
  PURLIN_OK(purlinCommCreate(&comm, R, devs.data()));
  // The fused forms: the chooser's, then each plan forced (if linked),
  // then the unfused plans forced (the epilogue apart from the combine, in
  // the same kernel: purlinc --epilogue-unfused-bytes).
  // Last, one-shot on 32 lanes (a row a lane up to 32 tokens; "-" where the
  // GPU cannot hold 32 lanes of every rank at once: with 512-thread lanes
  // of 128 registers one block fits an SM).
  constexpr int kForms = 7;
  const char *names[kForms] = {"all_reduce_rmsnorm", "all_reduce_rmsnorm_direct",
                               "all_reduce_rmsnorm_two_shot",
                               "all_reduce_rmsnorm_direct_unfused",
                               "all_reduce_rmsnorm_two_shot_unfused",
                               "all_reduce_rmsnorm_direct_wide",
                               "all_reduce_rmsnorm_two_shot_gather"};
  purlinColl_t fusedH[kForms] = {}, ar;
  const int bf16 = (int)purlin::DType::BF16, sum = (int)purlin::RedOp::Sum;
  for (int v = 0; v < kForms; ++v) {
    const purlin_collective_info *info = find(names[v]);
    if (!info)
      continue;
    PURLIN_OK(purlinCollCreate(&fusedH[v], comm, info,
                               ("N=" + std::to_string(maxN) + ",H=" + std::to_string(maxH)).c_str()));
    PURLIN_OK(purlinCollPrepare(fusedH[v], &bf16, 1, &sum, 1));
  }
  purlinColl_t fused = fusedH[0];
  PURLIN_OK(purlinCollCreate(&ar, comm, arInfo, ("C=" + std::to_string(maxN * maxH)).c_str()));
  PURLIN_OK(purlinCollPrepare(ar, &bf16, 1, &sum, 1));
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Per rank: x, res, w, eps (inputs), y, res_out (fused outputs), ar
  // (the all-reduce's output), y2, res2 (the norm kernel's outputs).
  const int64_t E = maxN * maxH;
  std::vector<__nv_bfloat16 *> x(R), res(R), w(R), eps(R), y(R), ro(R), arOut(R), y2(R), ro2(R),
      xs(R), rs(R);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<__nv_bfloat16> host(E);
  auto fill = [&](__nv_bfloat16 *p, int64_t n, float scale, float bias) {
    for (int64_t i = 0; i < n; ++i)
      host[i] = __float2bfloat16(bias + scale * u(rng));
    CUDA_OK(cudaMemcpy(p, host.data(), n * 2, cudaMemcpyHostToDevice));
  };
  const float epsV = 1e-5f;
  for (int r = 0; r < R; ++r) {
    for (auto *v : {&x, &res, &y, &ro, &arOut, &y2, &ro2, &xs, &rs})
      CUDA_OK(cudaMalloc(&(*v)[r], E * 2));
    CUDA_OK(cudaMalloc(&w[r], maxH * 2));
    CUDA_OK(cudaMalloc(&eps[r], 16));
    fill(x[r], E, 1.f, 0.f);
    CUDA_OK(cudaMemcpy(xs[r], x[r], E * 2, cudaMemcpyDeviceToDevice));
    fill(res[r], E, 1.f, 0.f);
    CUDA_OK(cudaMemcpy(rs[r], res[r], E * 2, cudaMemcpyDeviceToDevice));
    fill(w[r], maxH, 0.5f, 1.f);
    host[0] = __float2bfloat16(epsV);
    CUDA_OK(cudaMemcpy(eps[r], host.data(), 2, cudaMemcpyHostToDevice));
  }
  std::vector<void *> fb(R * 6), ab(R * 2);
  for (int r = 0; r < R; ++r) {
    void *b6[6] = {x[r], res[r], w[r], eps[r], inplace ? x[r] : y[r],
                   resInPlace ? res[r] : ro[r]};
    std::copy(b6, b6 + 6, fb.begin() + r * 6);
    ab[r * 2] = x[r];
    ab[r * 2 + 1] = arOut[r];
  }
  NormPtrs np;
  FusedPtrs hp; // the hand-written fused kernel: stores into y, ro as the fused forms
  for (int r = 0; r < R; ++r) {
    np.x[r] = arOut[r];
    np.res[r] = res[r];
    np.w[r] = w[r];
    np.y[r] = y2[r];
    np.resOut[r] = ro2[r];
    hp.in[r] = x[r];
    hp.res[r] = res[r];
    hp.w[r] = w[r];
    hp.y[r] = y[r];
    hp.resOut[r] = ro[r];
  }
  void *streams[1] = {s};
  std::printf("# purlin-epilogue-bench: %d virtual ranks, bf16, %d calls per graph, "
              "median of 5 replays (us per call)%s\n", R, iters,
              inplace      ? "; the fused forms in place (y at x's address)"
              : resInPlace ? "; the fused forms update the residual in place (res_out at "
                             "res's address)"
                           : "");
  // unfused: purlin's all-reduce, then the norm kernel (two launches);
  // d_apart, 2s_apart: the unfused plans (one launch); ratio: unfused /
  // the chooser's fused form; best: unfused / the fastest purlin form.
  std::printf("%8s %8s %12s %10s %-9s %10s %10s %10s %10s %10s %10s %10s %10s %7s %7s %10s %10s %10s %10s %s\n",
              "hidden", "tokens", "bytes/rank", "fused", "plan", "direct", "two_shot",
              "d_apart", "2s_apart", "2s_gather", "unfused", "allreduce", "norm", "ratio", "best",
              "d_wide", "hand", "hand2s", "hand_l", "check");
  int bad = 0;
  for (int64_t H : hidden)
    for (int64_t N : tokens) {
      int64_t fs[2] = {N, H}, as[1] = {N * H};
      purlinArgs fa{}, aa{};
      fa.dtype = aa.dtype = bf16;
      fa.op = aa.op = sum;
      fa.scalars = fs;
      fa.nscalars = 2;
      fa.buffers = fb.data();
      fa.streams = aa.streams = streams;
      aa.scalars = as;
      aa.nscalars = 1;
      aa.buffers = ab.data();
      // The scalar order of each instance (count parameters: N, H and C).
      if (std::string(purlinCollScalarName(fused, 0)) != "N") {
        std::printf("FAIL: unexpected scalar order of all_reduce_rmsnorm\n");
        return 1;
      }
      // In place, x as filled (a timed fused call overwrote it).
      auto restoreX = [&] {
        for (int r = 0; r < R; ++r)
          CUDA_OK(cudaMemcpyAsync(x[r], xs[r], N * H * 2, cudaMemcpyDeviceToDevice, s));
      };
      // With the residual in place, res as filled (timed calls updated it).
      auto restoreRes = [&] {
        if (resInPlace)
          for (int r = 0; r < R; ++r)
            CUDA_OK(cudaMemcpyAsync(res[r], rs[r], N * H * 2, cudaMemcpyDeviceToDevice, s));
      };
      if (inplace)
        restoreX();
      restoreRes();
      auto arCall = [&] { PURLIN_OK(purlinLaunch(ar, &aa)); };
      auto normCall = [&] { launchNorm(np, R, N, (int)H, epsV, s); };
      arCall();
      normCall();
      CUDA_OK(cudaStreamSynchronize(s));
      // Each fused form: sanity against the unfused pipeline (it rounds the
      // sum and h to bf16 first: a few bf16 units, relative to the row's
      // scale), then timed; -1: not linked.
      double tv[kForms] = {-1, -1, -1, -1, -1, -1, -1}, worst = 0;
      std::string plan = "-";
      bool ok = true;
      // out (the form's output: y, or x where the fused forms run in place)
      // against y2 (the pipeline's), ranks 0 and R-1.
      auto check = [&](const std::vector<__nv_bfloat16 *> &out,
                       const std::vector<__nv_bfloat16 *> *want = nullptr) {
        double maxd = 0;
        for (int r = 0; r < R; r += std::max(1, R - 1)) {
          std::vector<__nv_bfloat16> a(N * H), b(N * H);
          CUDA_OK(cudaMemcpy(a.data(), out[r], N * H * 2, cudaMemcpyDeviceToHost));
          CUDA_OK(cudaMemcpy(b.data(), (want ? *want : y2)[r], N * H * 2,
                             cudaMemcpyDeviceToHost));
          for (int64_t i = 0; i < N * H; ++i) {
            const double d = std::fabs((double)__bfloat162float(a[i]) - __bfloat162float(b[i])) /
                             (1.0 + std::fabs((double)__bfloat162float(b[i])));
            if (!(d <= maxd))
              maxd = d;
          }
        }
        worst = std::max(worst, maxd);
        ok = ok && maxd <= 0.05;
      };
      for (int v = 0; v < kForms; ++v) {
        if (!fusedH[v])
          continue;
        auto fusedCall = [&] { PURLIN_OK(purlinLaunch(fusedH[v], &fa)); };
        // Poison (a form that stores nothing fails); in place x itself,
        // restored (a form that stores nothing leaves the input: fails).
        if (inplace)
          restoreX();
        else
          for (int r = 0; r < R; ++r)
            CUDA_OK(cudaMemsetAsync(y[r], 0xff, N * H * 2, s));
        restoreRes();
        if (purlinStatus st = purlinLaunch(fusedH[v], &fa)) {
          // A form this GPU cannot launch (the wide one's lanes do not
          // fit at once): said once, then left out.
          std::printf("# %s left out: %s\n", names[v], purlinGetLastError());
          purlinCollDestroy(fusedH[v]);
          fusedH[v] = nullptr;
          if (v == 0 || st != PURLIN_ERR_CUDA)
            return 1;
          continue;
        }
        CUDA_OK(cudaStreamSynchronize(s));
        if (v == 0)
          plan = purlinCollLastPlan(fusedH[v]);
        check(inplace ? x : y);
        if (resInPlace)
          check(res, &ro2); // res_out, stored over res
        tv[v] = timeGraph(s, iters, fusedCall);
      }
      // The hand-written fused kernels (one-shot, two-shot), checked the
      // same way: outputs poisoned, one call checked, then timed.
      auto checkedTime = [&](const std::function<void()> &call) {
        if (inplace)
          restoreX();
        restoreRes();
        for (int r = 0; r < R; ++r)
          CUDA_OK(cudaMemsetAsync(y[r], 0xff, N * H * 2, s));
        call();
        CUDA_OK(cudaStreamSynchronize(s));
        check(y);
        return timeGraph(s, iters, call);
      };
      const double th = checkedTime([&] { launchHandFused(hp, R, N, (int)H, epsV, s); });
      const double th2 =
          checkedTime([&] { launchHandFusedOwned(hp, R, N, (int)H, epsV, s); });
      const double thl =
          checkedTime([&] { launchHandFusedLanes(hp, R, N, (int)H, epsV, 16, s); });
      bad += !ok;
      const double ta = timeGraph(s, iters, arCall);
      const double tn = timeGraph(s, iters, normCall);
      const double tu = timeGraph(s, iters, [&] { arCall(); normCall(); });
      double best = tv[0];
      for (double t : tv)
        if (t > 0 && t < best)
          best = t;
      auto col = [](double t) {
        char b[32];
        if (t < 0)
          std::snprintf(b, sizeof b, "%10s", "-");
        else
          std::snprintf(b, sizeof b, "%10.2f", t);
        return std::string(b);
      };
      std::printf("%8lld %8lld %12lld %s %-9s %s %s %s %s %s %10.2f %10.2f %10.2f %7.2f %7.2f %s %10.2f %10.2f %10.2f %s (max rel diff %.3g)\n",
                  (long long)H, (long long)N, (long long)(N * H * 2), col(tv[0]).c_str(),
                  plan.c_str(), col(tv[1]).c_str(), col(tv[2]).c_str(), col(tv[3]).c_str(),
                  col(tv[4]).c_str(), col(tv[6]).c_str(), tu, ta, tn, tu / tv[0], tu / best,
                  col(tv[5]).c_str(),
                  th, th2, thl, ok ? "ok" : "FAIL",
                  worst);
      std::fflush(stdout);
    }
  std::printf("%s\n", bad ? "FAIL: the fused outputs differ from the unfused ones" : "bench done");
  for (purlinColl_t h : fusedH)
    if (h)
      purlinCollDestroy(h);
  purlinCollDestroy(ar);
  purlinCommDestroy(comm);
  return bad ? 1 : 0;
}
