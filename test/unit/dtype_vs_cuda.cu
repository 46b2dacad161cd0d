// purlin's host conversions (DType.h) against CUDA's own, bit for bit. The
// GPU atoms convert with __float2half_rn, __float2bfloat16_rn and
// __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...); their host-side versions in
// cuda_fp16.h, cuda_bf16.h and cuda_fp8.h compute the same bits, so agreement
// here is host/GPU agreement of the reference evaluator. Compiled by nvcc as
// host code; runs without a GPU.
#include "check.h"

#include "purlin/spec/DType.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace purlin;

namespace {
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

uint16_t cudaF16(float f) { return __half_raw(__float2half_rn(f)).x; }
float cudaF16ToFloat(uint16_t h) {
  __half_raw r;
  r.x = h;
  return __half2float(__half(r));
}
uint16_t cudaBf16(float f) {
  return __nv_bfloat16_raw(__float2bfloat16_rn(f)).x;
}
float cudaBf16ToFloat(uint16_t h) {
  __nv_bfloat16_raw r;
  r.x = h;
  return __bfloat162float(__nv_bfloat16(r));
}
uint8_t cudaE4m3(float f) {
  return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3);
}
uint8_t cudaE5m2(float f) {
  return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E5M2);
}
float cudaFp8ToFloat(uint8_t v, __nv_fp8_interpretation_t k) {
  __half_raw h = __nv_cvt_fp8_to_halfraw(v, k);
  return __half2float(__half(h));
}

struct Conv {
  const char *name;
  int bits;
  uint32_t (*ours)(float);
  uint32_t (*theirs)(float);
  float (*oursDec)(uint32_t);
  float (*theirsDec)(uint32_t);
};
const Conv kConvs[] = {
    {"f16", 16, [](float f) { return (uint32_t)floatToHalf(f); },
     [](float f) { return (uint32_t)cudaF16(f); },
     [](uint32_t c) { return halfToFloat((uint16_t)c); },
     [](uint32_t c) { return cudaF16ToFloat((uint16_t)c); }},
    {"bf16", 16, [](float f) { return (uint32_t)floatToBf16(f); },
     [](float f) { return (uint32_t)cudaBf16(f); },
     [](uint32_t c) { return bf16ToFloat((uint16_t)c); },
     [](uint32_t c) { return cudaBf16ToFloat((uint16_t)c); }},
    {"f8e4m3", 8, [](float f) { return (uint32_t)floatToE4m3(f); },
     [](float f) { return (uint32_t)cudaE4m3(f); },
     [](uint32_t c) { return e4m3ToFloat((uint8_t)c); },
     [](uint32_t c) { return cudaFp8ToFloat((uint8_t)c, __NV_E4M3); }},
    {"f8e5m2", 8, [](float f) { return (uint32_t)floatToE5m2(f); },
     [](float f) { return (uint32_t)cudaE5m2(f); },
     [](uint32_t c) { return e5m2ToFloat((uint8_t)c); },
     [](uint32_t c) { return cudaFp8ToFloat((uint8_t)c, __NV_E5M2); }},
};

// Every code decodes alike (NaN codes: both NaN).
void testDecode(const Conv &C) {
  int bad = 0;
  for (uint32_t c = 0; c < (1u << C.bits); ++c) {
    float a = C.oursDec(c), b = C.theirsDec(c);
    bool ok = std::isnan(b) ? std::isnan(a) : bitsOf(a) == bitsOf(b);
    if (!ok && bad++ < 5)
      std::printf("  %s decode 0x%x: ours %.9g, CUDA %.9g\n", C.name, c, a, b);
  }
  CHECK_MSG(bad == 0, std::string(C.name) + ": " + std::to_string(bad) +
                          " codes decode differently");
}

// The floats to encode: specials, every code's value and the floats beside
// it, every midpoint between neighbouring codes and the floats beside it
// (decoded by CUDA, so this does not lean on our decoder), random bit
// patterns and random values of every magnitude.
std::vector<float> inputs(const Conv &C) {
  std::vector<float> v = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN,
                          floatOf(0x7f800001), floatOf(0xffbfffff),
                          floatOf(1), floatOf(0x80000001), floatOf(0x007fffff),
                          floatOf(0x00800000), floatOf(0x7f7fffff),
                          floatOf(0xff7fffff), 0.1f, 1.0f / 3, 65504.0f,
                          65520.0f, 448.0f, 464.0f, 480.0f, 57344.0f,
                          61440.0f, 1e-8f, 1e-20f, 1e-40f, 3e38f};
  std::vector<double> vals;
  for (uint32_t c = 0; c < (1u << C.bits); ++c) {
    float d = C.theirsDec(c);
    if (!std::isnan(d))
      vals.push_back(d);
  }
  std::sort(vals.begin(), vals.end());
  vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
  for (size_t i = 0; i < vals.size(); ++i) {
    float a = (float)vals[i];
    for (float x : {a, std::nextafter(a, -INFINITY), std::nextafter(a, INFINITY)})
      v.push_back(x);
    if (i + 1 < vals.size() && std::isfinite(vals[i + 1]) && std::isfinite(a)) {
      float m = (float)((vals[i] + vals[i + 1]) / 2);
      for (float x : {m, std::nextafter(m, -INFINITY), std::nextafter(m, INFINITY)})
        v.push_back(x);
    }
  }
  // Past the largest finite value: the overflow tie and beyond.
  double mx = vals[vals.size() - 1];
  if (std::isinf(mx))
    mx = vals[vals.size() - 2];
  double ulp = mx - vals[vals.size() - (std::isinf(vals.back()) ? 3 : 2)];
  for (double k = 0.25; k < 64; k *= 2) {
    float x = (float)(mx + ulp * k);
    for (float y : {x, -x, std::nextafter(x, 0.0f), -std::nextafter(x, 0.0f)})
      v.push_back(y);
  }
  std::mt19937 rng(2024);
  for (int i = 0; i < 400000; ++i)
    v.push_back(floatOf(rng())); // every exponent, NaNs included
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::uniform_int_distribution<int> e(-40, 20);
  for (int i = 0; i < 400000; ++i)
    v.push_back(std::ldexp(u(rng), e(rng))); // the types' own ranges
  return v;
}

void testEncode(const Conv &C) {
  int bad = 0;
  std::vector<float> in = inputs(C);
  for (float x : in) {
    uint32_t a = C.ours(x), b = C.theirs(x);
    if (a != b && bad++ < 8)
      std::printf("  %s encode %.9g (0x%08x): ours 0x%x, CUDA 0x%x\n", C.name,
                  x, bitsOf(x), a, b);
  }
  CHECK_MSG(bad == 0, std::string(C.name) + ": " + std::to_string(bad) +
                          " of " + std::to_string(in.size()) +
                          " floats encode differently");
}

// reduceElement's narrow-float path (accumulate in f32, round once) done
// with CUDA's conversions, on random inputs: what a GPU atom computes.
void testReduce() {
  std::mt19937 rng(7);
  int bad = 0, cases = 0;
  const DType types[] = {DType::F16, DType::BF16, DType::F8E4M3, DType::F8E5M2};
  for (int ti = 0; ti < 4; ++ti)
    for (int o = 1; o < kNumRedOps; ++o)
      for (int rep = 0; rep < 2000; ++rep) {
        const Conv &C = kConvs[ti];
        RedOp op = (RedOp)o;
        int n = 1 + rng() % 8, sz = C.bits / 8;
        std::vector<uint8_t> buf(n * sz);
        std::vector<const uint8_t *> srcs;
        for (auto &b : buf)
          b = (uint8_t)rng();
        for (int k = 0; k < n; ++k)
          srcs.push_back(buf.data() + k * sz);
        auto load = [&](int k) {
          uint32_t c = 0;
          std::memcpy(&c, srcs[k], sz);
          return C.theirsDec(c);
        };
        float acc = load(0);
        for (int k = 1; k < n; ++k) {
          float v = load(k);
          acc = op == RedOp::Prod  ? acc * v
                : op == RedOp::Min ? (v < acc ? v : acc)
                : op == RedOp::Max ? (acc < v ? v : acc)
                                   : acc + v;
        }
        if (op == RedOp::Avg)
          acc = acc / (float)n;
        uint32_t want = C.theirs(acc), got = 0;
        reduceElement(types[ti], op, srcs.data(), n, (uint8_t *)&got);
        ++cases;
        if (got != want && bad++ < 5)
          std::printf("  %s %s n=%d: ours 0x%x, CUDA 0x%x\n", C.name,
                      redOpName(op), n, got, want);
      }
  CHECK_MSG(bad == 0, std::to_string(bad) + " of " + std::to_string(cases) +
                          " reductions differ");
}
} // namespace

int main() {
  for (const Conv &C : kConvs) {
    testDecode(C);
    testEncode(C);
  }
  testReduce();
  return purlin_test::finish();
}
