// Element types and reduction ops, and their host arithmetic: the one
// definition of what `reduce(op)` computes, which every target must match
// bit for bit.
//
// Reduction order and precision (the documented contract):
//  - contributions of a name are combined in ascending contributor rank:
//      acc = v[r0]; acc = op(acc, v[r1]); ...
//  - floating types narrower than 32 bits (f16, bf16, f8e4m3, f8e5m2)
//    accumulate in f32 and round once at the end (round to nearest even;
//    f8 saturates to the largest finite value);
//  - f32 accumulates in f32, f64 in f64;
//  - integers accumulate in their own width with wrap-around (two's
//    complement), except avg, which sums in int64 and truncates toward zero;
//  - avg is the accumulated sum divided (a true division) by the number of
//    contributions; min(a, b) = b < a ? b : a; max(a, b) = a < b ? b : a.
#pragma once

#include "purlin/spec/Numbering.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace purlin {

// The numbering is Numbering.h's, shared with the C API and the atoms.
enum class DType : uint8_t {
#define PURLIN_X(E, name, bytes) E,
  PURLIN_DTYPES(PURLIN_X)
#undef PURLIN_X
};
#define PURLIN_X(E, name, bytes) +1
constexpr int kNumDTypes = 0 PURLIN_DTYPES(PURLIN_X);
#undef PURLIN_X

enum class RedOp : uint8_t {
#define PURLIN_X(E, Camel, name) Camel,
  PURLIN_REDOPS(PURLIN_X)
#undef PURLIN_X
};
#define PURLIN_X(E, Camel, name) +1
constexpr int kNumRedOps = 0 PURLIN_REDOPS(PURLIN_X);
#undef PURLIN_X

const char *dtypeName(DType t);
bool parseDType(const std::string &s, DType &out);
int dtypeSize(DType t);
bool isFloat(DType t);

const char *redOpName(RedOp op); // "copy", "sum", ...
bool parseRedOp(const std::string &s, RedOp &out);

// Bit-exact host conversions (match CUDA's __float2half_rn,
// __float2bfloat16_rn and __nv_cvt_float_to_fp8(.., __NV_SATFINITE, ..)).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t h);
uint16_t floatToBf16(float f);
float e4m3ToFloat(uint8_t v);
uint8_t floatToE4m3(float f);
float e5m2ToFloat(uint8_t v);
uint8_t floatToE5m2(float f);

/// An element widened to f32 and an f32 narrowed with one rounding, as an
/// epilogue reads and stores them (f8 saturates; f64 and integers convert
/// as C++ does, integers truncating toward zero): the host target and the
/// reference evaluator share these.
float elementToFloat(DType t, const uint8_t *src);
void floatToElement(DType t, float v, uint8_t *dst);

/// Combines `n` contributions (each `dtypeSize(t)` bytes, in ascending rank
/// order) into `dst` by `op`. For RedOp::Copy, n must be 1.
void reduceElement(DType t, RedOp op, const uint8_t *const *srcs, int n,
                   uint8_t *dst);

/// Fills `n` elements at `dst` with reproducible random values of type `t`
/// (finite, of moderate magnitude so that sums and products stay finite).
void fillRandom(DType t, uint8_t *dst, int64_t n, uint64_t seed);

} // namespace purlin
