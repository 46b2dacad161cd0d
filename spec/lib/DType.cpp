#include "purlin/spec/DType.h"

#include <cmath>
#include <random>

namespace purlin {

namespace {
#define PURLIN_X(E, name, bytes) name,
const char *const kDTypeNames[] = {PURLIN_DTYPES(PURLIN_X)};
#undef PURLIN_X
#define PURLIN_X(E, name, bytes) bytes,
const int kDTypeSizes[] = {PURLIN_DTYPES(PURLIN_X)};
#undef PURLIN_X
#define PURLIN_X(E, Camel, name) name,
const char *const kOpNames[] = {PURLIN_REDOPS(PURLIN_X)};
#undef PURLIN_X

uint32_t bitsOf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
float floatOf(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// Encodes |a| (finite, non-negative) into a small float with `m` mantissa
// bits and exponent bias `bias`, round to nearest even, saturating at
// `maxCode` (the code of the largest finite value).
uint32_t encodeSmall(double a, int m, int bias, uint32_t maxCode) {
  double minNormal = std::ldexp(1.0, 1 - bias);
  if (a < minNormal) {
    double q = std::nearbyint(std::ldexp(a, bias - 1 + m));
    return (uint32_t)q; // may equal 1 << m: the smallest normal, encoded alike
  }
  int e;
  double fr = std::frexp(a, &e); // a = fr * 2^e, fr in [0.5, 1)
  e -= 1;                        // a = (2 fr) * 2^e, 2 fr in [1, 2)
  double q = std::nearbyint((2 * fr - 1) * (1 << m));
  if (q >= (1 << m)) {
    q = 0;
    ++e;
  }
  uint64_t code = ((uint64_t)(e + bias) << m) | (uint64_t)q;
  return code > maxCode ? maxCode : (uint32_t)code;
}
} // namespace

const char *dtypeName(DType t) { return kDTypeNames[(int)t]; }
bool parseDType(const std::string &s, DType &out) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (s == kDTypeNames[i]) {
      out = (DType)i;
      return true;
    }
  return false;
}
int dtypeSize(DType t) { return kDTypeSizes[(int)t]; }
bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         t == DType::F8E4M3 || t == DType::F8E5M2 || t == DType::F64;
}
const char *redOpName(RedOp op) { return kOpNames[(int)op]; }
bool parseRedOp(const std::string &s, RedOp &out) {
  for (int i = 0; i < kNumRedOps; ++i)
    if (s == kOpNames[i]) {
      out = (RedOp)i;
      return true;
    }
  return false;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0)
    return std::copysign(std::ldexp((float)m, -24), sign ? -1.0f : 1.0f);
  if (e == 31)
    return floatOf(sign | 0x7f800000 | (m << 13));
  return floatOf(sign | ((e + 112) << 23) | (m << 13));
}

uint16_t floatToHalf(float f) {
  uint32_t x = bitsOf(f);
  uint32_t sign = (x >> 16) & 0x8000, ax = x & 0x7fffffff;
  if (ax > 0x7f800000)
    return 0x7fff;
  if (ax >= 0x477ff000)
    return (uint16_t)(sign | 0x7c00);
  if (ax >= 0x38800000) {
    uint32_t r = ax - 0x38000000;
    r += 0xfff + ((r >> 13) & 1);
    return (uint16_t)(sign | (r >> 13));
  }
  if (ax <= 0x33000000)
    return (uint16_t)sign;
  int e = (int)(ax >> 23);
  uint32_t m = (ax & 0x7fffff) | 0x800000;
  int shift = 126 - e;
  uint32_t q = m >> shift, rem = m & ((1u << shift) - 1),
           half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  return (uint16_t)(sign | q);
}

float bf16ToFloat(uint16_t h) { return floatOf((uint32_t)h << 16); }
uint16_t floatToBf16(float f) {
  uint32_t x = bitsOf(f);
  if ((x & 0x7fffffff) > 0x7f800000)
    return 0x7fff;
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

float e4m3ToFloat(uint8_t v) {
  float s = (v & 0x80) ? -1.0f : 1.0f;
  int e = (v >> 3) & 15, m = v & 7;
  if (e == 15 && m == 7)
    return std::nanf("");
  if (e == 0)
    return s * std::ldexp((float)m, -9);
  return s * std::ldexp(1.0f + m / 8.0f, e - 7);
}
uint8_t floatToE4m3(float f) {
  if (std::isnan(f))
    return 0x7f;
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  double a = std::fabs((double)f);
  if (a >= 448.0)
    return sign | 0x7e;
  return (uint8_t)(sign | encodeSmall(a, 3, 7, 0x7e));
}

float e5m2ToFloat(uint8_t v) {
  float s = (v & 0x80) ? -1.0f : 1.0f;
  int e = (v >> 2) & 31, m = v & 3;
  if (e == 31)
    return m ? std::nanf("") : s * INFINITY;
  if (e == 0)
    return s * std::ldexp((float)m, -16);
  return s * std::ldexp(1.0f + m / 4.0f, e - 15);
}
uint8_t floatToE5m2(float f) {
  if (std::isnan(f))
    return 0x7f;
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  double a = std::fabs((double)f);
  if (a >= 57344.0)
    return sign | 0x7b;
  return (uint8_t)(sign | encodeSmall(a, 2, 15, 0x7b));
}

namespace {
template <class Acc> Acc combine(RedOp op, Acc a, Acc b) {
  switch (op) {
  case RedOp::Sum:
  case RedOp::Avg:
    return a + b;
  case RedOp::Prod:
    return a * b;
  case RedOp::Min:
    return b < a ? b : a;
  case RedOp::Max:
    return a < b ? b : a;
  default:
    return b;
  }
}

// Floating types: load to the accumulator type, combine, store once.
template <class Acc, class Load, class Store>
void reduceFloat(RedOp op, const uint8_t *const *srcs, int n, uint8_t *dst,
                 Load load, Store store) {
  Acc acc = load(srcs[0]);
  for (int i = 1; i < n; ++i)
    acc = combine<Acc>(op, acc, load(srcs[i]));
  if (op == RedOp::Avg)
    acc = acc / (Acc)n;
  store(dst, acc);
}

// Integer types: wrap-around arithmetic in the unsigned type of the width.
template <class T, class U>
void reduceInt(RedOp op, const uint8_t *const *srcs, int n, uint8_t *dst) {
  auto ld = [](const uint8_t *p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  T out;
  if (op == RedOp::Avg) {
    uint64_t s = 0;
    for (int i = 0; i < n; ++i)
      s += (uint64_t)(int64_t)ld(srcs[i]);
    out = (T)((int64_t)s / (int64_t)n);
  } else if (op == RedOp::Sum || op == RedOp::Prod) {
    U acc = (U)ld(srcs[0]);
    for (int i = 1; i < n; ++i)
      acc = op == RedOp::Sum ? (U)(acc + (U)ld(srcs[i]))
                             : (U)(acc * (U)ld(srcs[i]));
    out = (T)acc;
  } else {
    T acc = ld(srcs[0]);
    for (int i = 1; i < n; ++i)
      acc = combine<T>(op, acc, ld(srcs[i]));
    out = acc;
  }
  std::memcpy(dst, &out, sizeof(T));
}

uint16_t ld16(const uint8_t *p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
void st16(uint8_t *p, uint16_t v) { std::memcpy(p, &v, 2); }
} // namespace

void reduceElement(DType t, RedOp op, const uint8_t *const *srcs, int n,
                   uint8_t *dst) {
  if (op == RedOp::Copy) {
    std::memcpy(dst, srcs[0], dtypeSize(t));
    return;
  }
  switch (t) {
  case DType::F32:
    reduceFloat<float>(
        op, srcs, n, dst,
        [](const uint8_t *p) {
          float v;
          std::memcpy(&v, p, 4);
          return v;
        },
        [](uint8_t *p, float v) { std::memcpy(p, &v, 4); });
    return;
  case DType::F64:
    reduceFloat<double>(
        op, srcs, n, dst,
        [](const uint8_t *p) {
          double v;
          std::memcpy(&v, p, 8);
          return v;
        },
        [](uint8_t *p, double v) { std::memcpy(p, &v, 8); });
    return;
  case DType::F16:
    reduceFloat<float>(
        op, srcs, n, dst, [](const uint8_t *p) { return halfToFloat(ld16(p)); },
        [](uint8_t *p, float v) { st16(p, floatToHalf(v)); });
    return;
  case DType::BF16:
    reduceFloat<float>(
        op, srcs, n, dst, [](const uint8_t *p) { return bf16ToFloat(ld16(p)); },
        [](uint8_t *p, float v) { st16(p, floatToBf16(v)); });
    return;
  case DType::F8E4M3:
    reduceFloat<float>(
        op, srcs, n, dst, [](const uint8_t *p) { return e4m3ToFloat(*p); },
        [](uint8_t *p, float v) { *p = floatToE4m3(v); });
    return;
  case DType::F8E5M2:
    reduceFloat<float>(
        op, srcs, n, dst, [](const uint8_t *p) { return e5m2ToFloat(*p); },
        [](uint8_t *p, float v) { *p = floatToE5m2(v); });
    return;
  case DType::I8:
    reduceInt<int8_t, uint8_t>(op, srcs, n, dst);
    return;
  case DType::U8:
    reduceInt<uint8_t, uint8_t>(op, srcs, n, dst);
    return;
  case DType::I32:
    reduceInt<int32_t, uint32_t>(op, srcs, n, dst);
    return;
  case DType::I64:
    reduceInt<int64_t, uint64_t>(op, srcs, n, dst);
    return;
  }
}

void fillRandom(DType t, uint8_t *dst, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 12345);
  // Multiples of 1/8 in [-2, 2): exact in every float type but f8e5m2 (which
  // rounds them), so sums of a few stay exact in f32 and results are
  // sensitive to any wrong or missing contribution.
  auto val = [&]() { return (float)((int64_t)(rng() % 32) - 16) / 8.0f; };
  int sz = dtypeSize(t);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t *p = dst + i * sz;
    switch (t) {
    case DType::F32: {
      float v = val() + (float)(rng() % 1024) / 65536.0f;
      std::memcpy(p, &v, 4);
      break;
    }
    case DType::F64: {
      double v = val() + (double)(rng() % 1048576) / 1e9;
      std::memcpy(p, &v, 8);
      break;
    }
    case DType::F16:
      st16(p, floatToHalf(val()));
      break;
    case DType::BF16:
      st16(p, floatToBf16(val()));
      break;
    case DType::F8E4M3:
      *p = floatToE4m3(val());
      break;
    case DType::F8E5M2:
      *p = floatToE5m2(val());
      break;
    default: {
      uint64_t v = rng();
      std::memcpy(p, &v, sz);
    }
    }
  }
}

float elementToFloat(DType t, const uint8_t *src) {
  auto get = [&](auto v) {
    std::memcpy(&v, src, sizeof v);
    return v;
  };
  switch (t) {
  case DType::F32:
    return get(float());
  case DType::F16:
    return halfToFloat(get(uint16_t()));
  case DType::BF16:
    return bf16ToFloat(get(uint16_t()));
  case DType::F8E4M3:
    return e4m3ToFloat(src[0]);
  case DType::F8E5M2:
    return e5m2ToFloat(src[0]);
  case DType::I8:
    return (float)get(int8_t());
  case DType::U8:
    return (float)src[0];
  case DType::I32:
    return (float)get(int32_t());
  case DType::I64:
    return (float)get(int64_t());
  case DType::F64:
    return (float)get(double());
  }
  return 0;
}

void floatToElement(DType t, float v, uint8_t *dst) {
  auto put = [&](auto x) { std::memcpy(dst, &x, sizeof x); };
  switch (t) {
  case DType::F32:
    return put(v);
  case DType::F16:
    return put(floatToHalf(v));
  case DType::BF16:
    return put(floatToBf16(v));
  case DType::F8E4M3:
    dst[0] = floatToE4m3(v);
    return;
  case DType::F8E5M2:
    dst[0] = floatToE5m2(v);
    return;
  case DType::I8:
    return put((int8_t)(int64_t)v);
  case DType::U8:
    return put((uint8_t)(int64_t)v);
  case DType::I32:
    return put((int32_t)(int64_t)v);
  case DType::I64:
    return put((int64_t)v);
  case DType::F64:
    return put((double)v);
  }
}

} // namespace purlin
