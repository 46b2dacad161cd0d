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
  kNumDTypeIds
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

/// The unsigned integer of N bytes (no <type_traits>: NVRTC compiles
/// these headers too).
template <int N> struct UIntOfSize { using type = uint64_t; };
template <> struct UIntOfSize<1> { using type = uint8_t; };
template <> struct UIntOfSize<2> { using type = uint16_t; };
template <> struct UIntOfSize<4> { using type = uint32_t; };

/// Copy-only element of N bytes (collectives without reductions).
template <int N> struct ElemBytes {
  using Raw = typename UIntOfSize<N>::type;
  using Acc = Raw;
  static constexpr bool kCanReduce = false, kInt = true;
  static __device__ __forceinline__ Acc widen(Raw r) { return r; }
  static __device__ __forceinline__ Raw narrow(Acc a) { return a; }
};

/// The element of type id T (Numbering.h): its own when the kernel
/// reduces, else the copy-only element of its size.
template <int T, bool Reduces> struct ElemFor;
#define PURLIN_X(E, name, bytes)                                               \
  template <> struct ElemFor<k##E, false> { using type = ElemBytes<bytes>; };
PURLIN_DTYPES(PURLIN_X)
#undef PURLIN_X
template <> struct ElemFor<kF32, true> { using type = ElemF32; };
template <> struct ElemFor<kF16, true> { using type = ElemF16; };
template <> struct ElemFor<kBF16, true> { using type = ElemBF16; };
template <> struct ElemFor<kF8E4M3, true> { using type = ElemF8E4M3; };
template <> struct ElemFor<kF8E5M2, true> { using type = ElemF8E5M2; };
template <> struct ElemFor<kI8, true> { using type = ElemI8; };
template <> struct ElemFor<kU8, true> { using type = ElemU8; };
template <> struct ElemFor<kI32, true> { using type = ElemI32; };
template <> struct ElemFor<kI64, true> { using type = ElemI64; };
template <> struct ElemFor<kF64, true> { using type = ElemF64; };

/// Which ops a kernel is built for: bit op of a mask (exec::Op numbering).
/// A kernel built ahead of time holds the pairs purlinc was asked for; one
/// compiled at first use holds the launch's op; every kernel holds copy.
constexpr uint32_t kAllOps = (1u << (exec::kAvg + 1)) - 1;
__host__ __device__ constexpr bool hasOp(uint32_t ops, int op) {
  return (ops >> op) & 1u;
}
template <int OP> struct OpConst {
  static constexpr int value = OP;
};

/// Calls f(OpConst<OP>()) for the reduction `op` when the kernel is built
/// for it (OPS) and E reduces; false (nothing done) otherwise. The one
/// dispatch of a launch's op to the moves' templates.
template <class E, uint32_t OPS, class F>
__device__ __forceinline__ bool withReduction(int op, F &&f) {
  if constexpr (E::kCanReduce) {
    switch (op) {
    case exec::kSum:
      if constexpr (hasOp(OPS, exec::kSum)) {
        f(OpConst<exec::kSum>());
        return true;
      }
      break;
    case exec::kProd:
      if constexpr (hasOp(OPS, exec::kProd)) {
        f(OpConst<exec::kProd>());
        return true;
      }
      break;
    case exec::kMin:
      if constexpr (hasOp(OPS, exec::kMin)) {
        f(OpConst<exec::kMin>());
        return true;
      }
      break;
    case exec::kMax:
      if constexpr (hasOp(OPS, exec::kMax)) {
        f(OpConst<exec::kMax>());
        return true;
      }
      break;
    case exec::kAvg:
      if constexpr (hasOp(OPS, exec::kAvg)) {
        f(OpConst<exec::kAvg>());
        return true;
      }
      break;
    }
  }
  return false;
}

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
