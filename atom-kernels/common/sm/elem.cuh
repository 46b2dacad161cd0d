// Element types on the SM datapath: how a stored element widens to its
// accumulator and narrows back, and the reduction ops. This is DType.h's
// bit-exact contract in device code:
//  - f16, bf16, f8 accumulate in f32 and round once (RNE; f8 SATFINITE);
//  - f32 in f32, f64 in f64;
//  - integers wrap in their width (accumulated in 64 bits, truncated on
//    store, which is the same modulo 2^width); avg sums in int64 and
//    divides with truncation toward zero;
//  - min(a, b) = b < a ? b : a; max(a, b) = a < b ? b : a;
//  - contributions combine in ascending contributor order (the caller's).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "purlin/spec/Exec.h"
#include "purlin/spec/Numbering.h"

namespace purlin {
namespace sm {

// The numbering of purlin/spec/Numbering.h (kF32, kF16, ...).
enum DTypeId : int {
#define PURLIN_X(E, name, bytes) k##E,
  PURLIN_DTYPES(PURLIN_X)
#undef PURLIN_X
};

// Elem concept: Raw (stored type), Acc (accumulator), kCanReduce,
// static Acc widen(Raw), static Raw narrow(Acc), static Acc div(Acc, int).
struct ElemF32 {
  using Raw = float;
  using Acc = float;
  static constexpr bool kCanReduce = true, kInt = false;
  static __device__ __forceinline__ Acc widen(Raw r) { return r; }
  static __device__ __forceinline__ Raw narrow(Acc a) { return a; }
};
struct ElemF64 {
  using Raw = double;
  using Acc = double;
  static constexpr bool kCanReduce = true, kInt = false;
  static __device__ __forceinline__ Acc widen(Raw r) { return r; }
  static __device__ __forceinline__ Raw narrow(Acc a) { return a; }
};
struct ElemF16 {
  using Raw = uint16_t;
  using Acc = float;
  static constexpr bool kCanReduce = true, kInt = false;
  static __device__ __forceinline__ Acc widen(Raw r) {
    return __half2float(__ushort_as_half(r));
  }
  static __device__ __forceinline__ Raw narrow(Acc a) {
    return __half_as_ushort(__float2half_rn(a));
  }
};
struct ElemBF16 {
  using Raw = uint16_t;
  using Acc = float;
  static constexpr bool kCanReduce = true, kInt = false;
  static __device__ __forceinline__ Acc widen(Raw r) {
    return __uint_as_float((uint32_t)r << 16);
  }
  static __device__ __forceinline__ Raw narrow(Acc a) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(a));
  }
};
template <__nv_fp8_interpretation_t K> struct ElemF8 {
  using Raw = uint8_t;
  using Acc = float;
  static constexpr bool kCanReduce = true, kInt = false;
  static __device__ __forceinline__ Acc widen(Raw r) {
    __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)r, K);
    return __half2float(__half(h));
  }
  static __device__ __forceinline__ Raw narrow(Acc a) {
    return (Raw)__nv_cvt_float_to_fp8(a, __NV_SATFINITE, K);
  }
};
using ElemF8E4M3 = ElemF8<__NV_E4M3>;
using ElemF8E5M2 = ElemF8<__NV_E5M2>;
template <class T> struct ElemInt {
  using Raw = T;
  using Acc = int64_t; // sign- or zero-extended
  static constexpr bool kCanReduce = true, kInt = true;
  static __device__ __forceinline__ Acc widen(Raw r) { return (Acc)r; }
  static __device__ __forceinline__ Raw narrow(Acc a) { return (Raw)a; }
};
using ElemI8 = ElemInt<int8_t>;
using ElemU8 = ElemInt<uint8_t>;
using ElemI32 = ElemInt<int32_t>;
using ElemI64 = ElemInt<int64_t>;

/// Copy-only element of N bytes (collectives without reductions).
template <int N> struct ElemBytes {
  using Raw = typename std::conditional<
      N == 1, uint8_t,
      typename std::conditional<
          N == 2, uint16_t,
          typename std::conditional<N == 4, uint32_t, uint64_t>::type>::type>::
      type;
  using Acc = Raw;
  static constexpr bool kCanReduce = false, kInt = true;
  static __device__ __forceinline__ Acc widen(Raw r) { return r; }
  static __device__ __forceinline__ Raw narrow(Acc a) { return a; }
};

/// acc = op(acc, x), in the contract's form.
template <class E, int OP>
__device__ __forceinline__ typename E::Acc combine(typename E::Acc a,
                                                   typename E::Acc b) {
  using Acc = typename E::Acc;
  if constexpr (OP == exec::kSum || OP == exec::kAvg) {
    if constexpr (E::kInt)
      return (Acc)((uint64_t)a + (uint64_t)b);
    else
      return a + b;
  } else if constexpr (OP == exec::kProd) {
    if constexpr (E::kInt)
      return (Acc)((uint64_t)a * (uint64_t)b);
    else
      return a * b;
  } else if constexpr (OP == exec::kMin) {
    return b < a ? b : a;
  } else {
    static_assert(OP == exec::kMax, "not a reduction op");
    return a < b ? b : a;
  }
}

/// The final step of a combination of n contributions (avg divides).
template <class E, int OP>
__device__ __forceinline__ typename E::Acc finish(typename E::Acc a, int n) {
  if constexpr (OP == exec::kAvg) {
    if constexpr (E::kInt)
      return a / (typename E::Acc)n; // truncation toward zero
    else if constexpr (sizeof(typename E::Acc) == 8)
      return __ddiv_rn(a, (double)n);
    else
      return __fdiv_rn(a, (float)n); // a true division, even with fast math
  } else
    return a;
}

} // namespace sm
} // namespace purlin
