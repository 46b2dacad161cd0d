// What the GPU tests share (gpu_test.cu, epilogue_test.cu, mp_cases.cu):
// CUDA_OK, a CUDA call that must succeed, else "FATAL file:line: call:
// error" and exit 1; the sample of (type, op) pairs of the shorter runs.
#pragma once

#include "purlin/spec/DType.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CUDA_OK(x)                                                             \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      std::printf("FATAL %s:%d: %s: %s\n", __FILE__, __LINE__, #x,            \
                  cudaGetErrorString(e_));                                     \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

/// The (type, op) pairs the shorter runs take where a collective's type and
/// op are free (purlin-gpu-test --quick, purlin-mp-test --all-types): every
/// element type with sum, and the other ops on three types of different
/// kinds and sizes (f16, i64, u8): 22 of the 50.
inline bool sampledPair(purlin::DType t, purlin::RedOp op) {
  using purlin::DType;
  return op == purlin::RedOp::Sum || t == DType::F16 || t == DType::I64 ||
         t == DType::U8;
}
