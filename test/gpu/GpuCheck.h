// What the GPU tests share (gpu_test.cu, epilogue_test.cu): CUDA_OK, a CUDA
// call that must succeed, else "FATAL file:line: call: error" and exit 1.
#pragma once

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
