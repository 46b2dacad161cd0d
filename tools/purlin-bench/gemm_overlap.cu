// purlin-gemm-overlap: how much a collective running beside a large bf16
// GEMM (cuBLAS, fp32 accumulate) slows the GEMM down, on one GPU with R
// virtual ranks (issue 17: the copy engine's collectives should leave the
// SMs to the GEMM). In one run, for each collective named: the GEMM alone,
// the collective alone (back to back), then both at once on two streams
// (the collective repeated for as long as the GEMMs run); slowdown = GEMM
// time with the collective / GEMM time alone - 1.
//
//   purlin-gemm-overlap -g 8 -m 8192 -s 256M all_gather all_gather_ce
//
// -s: bytes of the largest buffer of one rank (the count is derived from
// the collective's first count parameter); bf16 elements, copy
// collectives (their scalars: counts only).
#include "GeneratedRegistry.h"
#include "purlin/purlin.h"
#include "purlin/spec/Collective.h"
#include "options.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace purlin;

#define CK(x)                                                                  \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("FATAL %s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
#define PK(x)                                                                  \
  do {                                                                         \
    if ((x) != PURLIN_SUCCESS) {                                               \
      std::printf("FATAL %s:%d: %s\n", __FILE__, __LINE__, purlinGetLastError()); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace {
float elapsed(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}
} // namespace

int main(int argc, char **argv) {
  int R = 8, M = 8192, gemms = 20;
  int64_t size = 256ll << 20;
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-g" && i + 1 < argc)
      R = std::atoi(argv[++i]);
    else if (a == "-m" && i + 1 < argc)
      M = std::atoi(argv[++i]);
    else if (a == "-s" && i + 1 < argc)
      size = bench::parseSize(argv[++i]);
    else if (a == "-n" && i + 1 < argc)
      gemms = std::atoi(argv[++i]);
    else
      names.push_back(a);
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIPPED: no CUDA GPU\n");
    return 0;
  }
  cudaStream_t sg, sc;
  CK(cudaStreamCreateWithFlags(&sg, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
    std::printf("FATAL: cublasCreate\n");
    return 1;
  }
  cublasSetStream(blas, sg);
  __nv_bfloat16 *A, *B, *C;
  CK(cudaMalloc(&A, (size_t)M * M * 2));
  CK(cudaMalloc(&B, (size_t)M * M * 2));
  CK(cudaMalloc(&C, (size_t)M * M * 2));
  CK(cudaMemset(A, 0x3c, (size_t)M * M * 2)); // small finite values
  CK(cudaMemset(B, 0x3c, (size_t)M * M * 2));
  const float one = 1, zero = 0;
  auto gemm = [&] {
    if (cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, M, M, M, &one, A,
                     CUDA_R_16BF, M, B, CUDA_R_16BF, M, &zero, C, CUDA_R_16BF,
                     M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) !=
        CUBLAS_STATUS_SUCCESS) {
      std::printf("FATAL: cublasGemmEx\n");
      std::exit(1);
    }
  };
  cudaEvent_t e0, e1, c0, c1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventCreate(&c0));
  CK(cudaEventCreate(&c1));
  for (int i = 0; i < 3; ++i)
    gemm();
  CK(cudaEventRecord(e0, sg));
  for (int i = 0; i < gemms; ++i)
    gemm();
  CK(cudaEventRecord(e1, sg));
  CK(cudaStreamSynchronize(sg));
  const float alone = elapsed(e0, e1) / gemms;
  std::printf("# purlin-gemm-overlap: bf16 GEMM %dx%dx%d (cuBLAS, fp32 "
              "accumulate) alone: %.3f ms each (%.0f TFLOP/s); %d virtual "
              "ranks, %lld bytes per rank\n",
              M, M, M, alone, 2.0 * M * M * M / alone / 1e9, R, (long long)size);

  // A communicator per collective: a communicator's collectives share one
  // datapath (sm or ce), and this tool compares datapaths.
  std::vector<int> devs(R, 0);
  int ng = 0;
  const rt::GeneratedCollective *gc = rt::generatedCollectives(&ng);
  for (const std::string &name : names) {
    const purlin_collective_info *info = nullptr;
    for (int i = 0; i < ng; ++i)
      if (name == gc[i].name)
        info = gc[i].info();
    if (!info) {
      std::printf("%s: not linked in\n", name.c_str());
      continue;
    }
    Collective d;
    std::string err;
    if (!readDesc(info->desc, d, err)) {
      std::printf("%s: %s\n", name.c_str(), err.c_str());
      continue;
    }
    // The count that makes the largest buffer `size` bytes.
    Binding b;
    b.dtype = DType::BF16;
    std::string countName;
    for (auto &p : d.params) {
      if (p.kind == ParamKind::Ranks)
        b.scalars[p.name] = R;
      if (p.kind == ParamKind::Count && countName.empty())
        countName = p.name;
    }
    b.scalars[countName] = 1;
    int64_t big = 0;
    for (size_t i = 0; i < d.buffers.size(); ++i) {
      int64_t n = 0;
      bufferElems(d, b, (int)i, n, err);
      big = n > big ? n : big;
    }
    const int64_t count = big > 0 ? size / 2 / big : 0;
    b.scalars[countName] = count;
    const int nb = (int)d.buffers.size();
    std::vector<void *> bufs(R * nb);
    for (int r = 0; r < R; ++r)
      for (int i = 0; i < nb; ++i) {
        int64_t n = 0;
        bufferElems(d, b, i, n, err);
        CK(cudaMalloc(&bufs[r * nb + i], n > 0 ? n * 2 : 16));
        CK(cudaMemset(bufs[r * nb + i], 0, n > 0 ? n * 2 : 16));
      }
    purlinComm_t comm;
    PK(purlinCommCreate(&comm, R, devs.data()));
    purlinColl_t h;
    PK(purlinCollCreate(&h, comm, info,
                        (countName + "=" + std::to_string(count)).c_str()));
    int64_t sc0 = count;
    void *streams[1] = {sc};
    purlinArgs a = {PURLIN_BF16, PURLIN_COPY, &sc0, 1, nullptr, 0, bufs.data(), streams};
    auto coll = [&] { PK(purlinLaunch(h, &a)); };
    for (int i = 0; i < 3; ++i)
      coll();
    CK(cudaStreamSynchronize(sc));
    const int calls = 10;
    CK(cudaEventRecord(c0, sc));
    for (int i = 0; i < calls; ++i)
      coll();
    CK(cudaEventRecord(c1, sc));
    CK(cudaStreamSynchronize(sc));
    const float collAlone = elapsed(c0, c1) / calls;
    // Both at once: the collective back to back for the GEMMs' span.
    const int k = (int)(alone * gemms / (collAlone > 0 ? collAlone : 1)) + 2;
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(c0, sc));
    for (int i = 0; i < k; ++i)
      coll();
    CK(cudaEventRecord(c1, sc));
    CK(cudaEventRecord(e0, sg));
    for (int i = 0; i < gemms; ++i)
      gemm();
    CK(cudaEventRecord(e1, sg));
    CK(cudaDeviceSynchronize());
    const float with = elapsed(e0, e1) / gemms;
    const float collWith = elapsed(c0, c1) / k;
    std::printf("%-24s plan %-22s count %-10lld collective alone %8.3f ms, "
                "beside the GEMM %8.3f ms | GEMM %.3f ms (alone %.3f): "
                "slowdown %+.1f%%\n",
                name.c_str(),
                (std::string(purlinCollLastPlan(h)) + "@" + info->target).c_str(),
                (long long)count, collAlone, collWith, with, alone,
                (with / alone - 1) * 100);
    std::fflush(stdout);
    purlinCollDestroy(h);
    purlinCommDestroy(comm);
    for (void *p : bufs)
      cudaFree(p);
  }
  cublasDestroy(blas);
  return 0;
}
