// Unit tests of the element-type conversions in purlin/spec/DType.h:
// exhaustive decode of every f16, bf16, f8e4m3 and f8e5m2 code against an
// independent decoder, round trips, and encoding of the values where
// rounding is delicate (every midpoint between neighbouring codes and the
// floats right beside it: ties to even; subnormals; overflow, which rounds
// to infinity for f16 and bf16 and saturates to the largest finite value for
// f8; NaN). Also names, sizes and the parsers of types and ops.
#include "check.h"

#include "purlin/spec/DType.h"

#include <cmath>
#include <cstring>
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

// A small binary float: 1 sign bit, `eb` exponent bits, `mb` mantissa bits.
struct Fmt {
  const char *name;
  int eb, mb;
  bool ieeeSpecials;   // top exponent is inf/NaN (f16, bf16, e5m2)
  bool saturates;      // f8: overflow gives the largest finite value
  uint32_t nanOut;     // the code a NaN encodes to
  float (*decode)(uint32_t);
  uint32_t (*encode)(float);

  int bits() const { return 1 + eb + mb; }
  uint32_t signBit() const { return 1u << (eb + mb); }
  int bias() const { return (1 << (eb - 1)) - 1; }
  // The independent decoder: straight from the definition, in double.
  bool isNan(uint32_t c) const {
    uint32_t e = (c >> mb) & ((1u << eb) - 1), m = c & ((1u << mb) - 1);
    if (ieeeSpecials)
      return e == (1u << eb) - 1 && m != 0;
    return e == (1u << eb) - 1 && m == (1u << mb) - 1; // e4m3: S.1111.111
  }
  double value(uint32_t c) const {
    uint32_t e = (c >> mb) & ((1u << eb) - 1), m = c & ((1u << mb) - 1);
    double s = (c & signBit()) ? -1.0 : 1.0;
    if (isNan(c))
      return NAN;
    if (ieeeSpecials && e == (1u << eb) - 1)
      return s * INFINITY;
    if (e == 0)
      return s * std::ldexp((double)m, 1 - bias() - mb);
    return s * std::ldexp(1.0 + std::ldexp((double)m, -mb), (int)e - bias());
  }
  // The largest finite positive code.
  uint32_t maxFinite() const {
    if (ieeeSpecials)
      return (((1u << eb) - 2) << mb) | ((1u << mb) - 1);
    return (((1u << eb) - 1) << mb) | ((1u << mb) - 2);
  }
};

const Fmt kFormats[] = {
    {"f16", 5, 10, true, false, 0x7fff,
     [](uint32_t c) { return halfToFloat((uint16_t)c); },
     [](float f) { return (uint32_t)floatToHalf(f); }},
    {"bf16", 8, 7, true, false, 0x7fff,
     [](uint32_t c) { return bf16ToFloat((uint16_t)c); },
     [](float f) { return (uint32_t)floatToBf16(f); }},
    {"f8e4m3", 4, 3, false, true, 0x7f,
     [](uint32_t c) { return e4m3ToFloat((uint8_t)c); },
     [](float f) { return (uint32_t)floatToE4m3(f); }},
    {"f8e5m2", 5, 2, true, true, 0x7f,
     [](uint32_t c) { return e5m2ToFloat((uint8_t)c); },
     [](float f) { return (uint32_t)floatToE5m2(f); }},
};

std::string hexs(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}
std::string fl(float f) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g (0x%08x)", f, bitsOf(f));
  return b;
}

// Every code decodes to the value of its definition, bit for bit (the sign
// of zero included); NaN codes decode to a NaN.
void testDecode(const Fmt &F) {
  purlin_test::Context ctx(F.name);
  int bad = 0;
  uint32_t n = 1u << F.bits();
  for (uint32_t c = 0; c < n; ++c) {
    float got = F.decode(c);
    double want = F.value(c);
    bool ok = F.isNan(c) ? std::isnan(got)
                         : (!std::isnan(got) &&
                            bitsOf(got) == bitsOf((float)want) &&
                            (double)(float)want == want);
    if (!ok && bad++ < 5)
      std::printf("  %s decode %s: got %s, want %.17g\n", F.name,
                  hexs(c).c_str(), fl(got).c_str(), want);
  }
  CHECK_MSG(bad == 0, std::to_string(bad) + " codes decode wrongly");
}

// encode(decode(c)) == c for every non-NaN code; infinities of e5m2
// saturate to the largest finite value.
void testRoundTrip(const Fmt &F) {
  purlin_test::Context ctx(F.name);
  int bad = 0;
  uint32_t n = 1u << F.bits();
  for (uint32_t c = 0; c < n; ++c) {
    if (F.isNan(c))
      continue;
    uint32_t want = c;
    if (std::isinf(F.value(c)) && F.saturates)
      want = (c & F.signBit()) | F.maxFinite();
    uint32_t got = F.encode(F.decode(c));
    if (got != want && bad++ < 5)
      std::printf("  %s round trip %s: got %s\n", F.name, hexs(c).c_str(),
                  hexs(got).c_str());
  }
  CHECK_MSG(bad == 0, std::to_string(bad) + " codes do not round-trip");
}

// Between every two neighbouring finite codes a < b (of either sign): the
// midpoint encodes to the even code (ties to even), the floats next to it
// encode to the nearer code, and the float right next to a code encodes to
// it.
void testRounding(const Fmt &F) {
  purlin_test::Context ctx(F.name);
  int bad = 0, cases = 0;
  auto expect = [&](float x, uint32_t want, const char *what) {
    ++cases;
    uint32_t got = F.encode(x);
    if (got != want && bad++ < 8)
      std::printf("  %s encode %s (%s): got %s, want %s\n", F.name,
                  fl(x).c_str(), what, hexs(got).c_str(), hexs(want).c_str());
  };
  for (uint32_t sign : {0u, F.signBit()}) {
    for (uint32_t a = 0; a < F.maxFinite(); ++a) {
      uint32_t b = a + 1;
      double va = F.value(a), vb = F.value(b);
      double mid = (va + vb) / 2;
      float m = (float)mid;
      if ((double)m != mid) { // cannot happen: the types are narrower
        ++bad;
        continue;
      }
      float s = sign ? -1.0f : 1.0f;
      uint32_t even = (a & 1) ? b : a;
      expect(s * m, sign | even, "midpoint");
      expect(s * std::nextafter(m, 0.0f), sign | a, "below midpoint");
      expect(s * std::nextafter(m, INFINITY), sign | b, "above midpoint");
      if (a > 0) {
        float fa = (float)va;
        expect(s * fa, sign | a, "exact");
        expect(s * std::nextafter(fa, 0.0f), sign | a, "just below");
        expect(s * std::nextafter(fa, INFINITY), sign | a, "just above");
      }
    }
    // Beyond the largest finite value.
    uint32_t mx = F.maxFinite();
    double vmax = F.value(mx);
    double ulp = vmax - F.value(mx - 1);
    float s = sign ? -1.0f : 1.0f;
    uint32_t over = F.saturates ? sign | mx
                                : sign | (((1u << F.eb) - 1) << F.mb); // inf
    // For bf16 the midpoint vmax + ulp/2 is a float; f16 and f8 too.
    float tie = (float)(vmax + ulp / 2);
    expect(s * std::nextafter(tie, 0.0f), sign | mx, "below overflow tie");
    expect(s * tie, over, "overflow tie (max is odd: rounds up)");
    expect(s * (float)(vmax * 4), over, "overflow");
    if (3.0e38 > vmax + ulp)
      expect(s * 3.0e38f, over, "huge");
    expect(s * INFINITY, over, "infinity");
    // Below the smallest subnormal: 0 or the smallest subnormal.
    float tiny = (float)(F.value(1) / 2);
    expect(s * tiny, sign, "half the smallest subnormal ties to 0");
    expect(s * std::nextafter(tiny, INFINITY), sign | 1,
           "above half the smallest subnormal");
    if (1e-40 < F.value(1) / 2)
      expect(s * 1e-40f, sign, "f32 subnormal");
    expect(s * floatOf(1), sign, "smallest f32 subnormal");
    expect(s * 0.0f, sign, "zero");
  }
  // NaN: the canonical NaN of the type, whatever the sign and payload.
  for (uint32_t nb : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu})
    expect(floatOf(nb), F.nanOut, "NaN");
  CHECK_MSG(bad == 0, std::to_string(bad) + " of " + std::to_string(cases) +
                          " encodings are wrong");
}

// Hand-picked values, in case the property test above shares a blind spot
// with the code.
void testKnownValues() {
  CHECK_EQ(floatToHalf(1.0f), 0x3c00);
  CHECK_EQ(floatToHalf(-2.0f), 0xc000);
  CHECK_EQ(floatToHalf(65504.0f), 0x7bff);
  CHECK_EQ(floatToHalf(65519.996f), 0x7bff);
  CHECK_EQ(floatToHalf(65520.0f), 0x7c00);
  CHECK_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3c00);     // tie, even below
  CHECK_EQ(floatToHalf(1.0f + 3.0f / 2048), 0x3c02);     // tie, even above
  CHECK_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  CHECK_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie to 0
  CHECK_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // tie to 2
  CHECK_EQ(floatToHalf(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)), 0x0400);
  CHECK_EQ(floatToHalf(std::ldexp(1023.0f, -24)), 0x03ff);
  CHECK_EQ(floatToHalf(-0.0f), 0x8000);
  CHECK_EQ(floatToHalf(NAN), 0x7fff);
  CHECK_EQ(floatToHalf(-INFINITY), 0xfc00);
  CHECK_EQ(floatToHalf(0.1f), 0x2e66);
  CHECK_EQ(halfToFloat(0x3555), 0.333251953125f);
  CHECK_EQ(halfToFloat(0x8001), -std::ldexp(1.0f, -24));
  CHECK(std::signbit(halfToFloat(0x8000)));

  CHECK_EQ(floatToBf16(1.0f), 0x3f80);
  CHECK_EQ(floatToBf16(floatOf(0x3f808000)), 0x3f80);  // tie, even below
  CHECK_EQ(floatToBf16(floatOf(0x3f818000)), 0x3f82);  // tie, even above
  CHECK_EQ(floatToBf16(floatOf(0x3f808001)), 0x3f81);
  CHECK_EQ(floatToBf16(floatOf(0x7f7fffff)), 0x7f80);  // FLT_MAX rounds to inf
  CHECK_EQ(floatToBf16(floatOf(0x7f7f7fff)), 0x7f7f);
  CHECK_EQ(floatToBf16(floatOf(0x00008000)), 0x0000);  // subnormal tie
  CHECK_EQ(floatToBf16(floatOf(0x00018000)), 0x0002);
  CHECK_EQ(floatToBf16(floatOf(0x80000001)), 0x8000);
  CHECK_EQ(floatToBf16(-NAN), 0x7fff);
  CHECK_EQ(floatToBf16(0.1f), 0x3dcd);
  CHECK_EQ(bf16ToFloat(0x3dcd), floatOf(0x3dcd0000));

  CHECK_EQ(floatToE4m3(448.0f), 0x7e);
  CHECK_EQ(floatToE4m3(464.0f), 0x7e);   // would round up to NaN: saturates
  CHECK_EQ(floatToE4m3(1e6f), 0x7e);
  CHECK_EQ(floatToE4m3(-1e6f), 0xfe);
  CHECK_EQ(floatToE4m3(INFINITY), 0x7e);
  CHECK_EQ(floatToE4m3(NAN), 0x7f);
  CHECK_EQ(floatToE4m3(1.0f), 0x38);
  CHECK_EQ(floatToE4m3(1.0625f), 0x38);  // tie, even below
  CHECK_EQ(floatToE4m3(1.1875f), 0x3a);  // tie, even above
  CHECK_EQ(floatToE4m3(std::ldexp(1.0f, -9)), 0x01);
  CHECK_EQ(floatToE4m3(std::ldexp(1.0f, -10)), 0x00);
  CHECK_EQ(floatToE4m3(std::ldexp(3.0f, -10)), 0x02);
  CHECK_EQ(floatToE4m3(std::ldexp(15.0f, -10)), 0x08); // 7.5 * 2^-9 -> 2^-6
  CHECK_EQ(floatToE4m3(0.1f), 0x1d);
  CHECK(std::isnan(e4m3ToFloat(0xff)));
  CHECK_EQ(e4m3ToFloat(0xfe), -448.0f);
  CHECK_EQ(e4m3ToFloat(0x7f & 0x78), 256.0f);

  CHECK_EQ(floatToE5m2(57344.0f), 0x7b);
  CHECK_EQ(floatToE5m2(61440.0f), 0x7b);  // tie to even would be inf
  CHECK_EQ(floatToE5m2(INFINITY), 0x7b);
  CHECK_EQ(floatToE5m2(-INFINITY), 0xfb);
  CHECK_EQ(floatToE5m2(NAN), 0x7f);
  CHECK_EQ(floatToE5m2(1.0f), 0x3c);
  CHECK_EQ(floatToE5m2(1.125f), 0x3c);    // tie, even below
  CHECK_EQ(floatToE5m2(1.375f), 0x3e);    // tie, even above
  CHECK_EQ(floatToE5m2(std::ldexp(1.0f, -16)), 0x01);
  CHECK_EQ(floatToE5m2(std::ldexp(1.0f, -17)), 0x00);
  CHECK_EQ(floatToE5m2(0.1f), 0x2e);
  CHECK(std::isinf(e5m2ToFloat(0x7c)) && e5m2ToFloat(0xfc) < 0);
  CHECK(std::isnan(e5m2ToFloat(0x7d)));
}

void testNames() {
  const char *names[] = {"f32", "f16", "bf16", "f8e4m3", "f8e5m2",
                         "i8",  "u8",  "i32",  "i64",    "f64"};
  const int sizes[] = {4, 2, 2, 1, 1, 1, 1, 4, 8, 8};
  const bool floats[] = {true, true, true, true, true,
                         false, false, false, false, true};
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t;
    CHECK(parseDType(names[i], t) && t == (DType)i);
    CHECK_EQ(std::string(dtypeName((DType)i)), std::string(names[i]));
    CHECK_EQ(dtypeSize((DType)i), sizes[i]);
    CHECK_EQ(isFloat((DType)i), floats[i]);
  }
  DType t;
  CHECK(!parseDType("float", t) && !parseDType("", t) && !parseDType("F32", t));
  const char *ops[] = {"copy", "sum", "prod", "min", "max", "avg"};
  for (int i = 0; i < kNumRedOps; ++i) {
    RedOp op;
    CHECK(parseRedOp(ops[i], op) && op == (RedOp)i);
    CHECK_EQ(std::string(redOpName((RedOp)i)), std::string(ops[i]));
  }
  RedOp op;
  CHECK(!parseRedOp("add", op) && !parseRedOp("", op));
}

// fillRandom: reproducible, seed-dependent, finite and within [-2, 2]
// (plus a small fraction) for floats.
void testFillRandom() {
  for (int ti = 0; ti < kNumDTypes; ++ti) {
    DType t = (DType)ti;
    purlin_test::Context ctx(dtypeName(t));
    int sz = dtypeSize(t);
    std::vector<uint8_t> a(1000 * sz), b(1000 * sz), c(1000 * sz);
    fillRandom(t, a.data(), 1000, 5);
    fillRandom(t, b.data(), 1000, 5);
    fillRandom(t, c.data(), 1000, 6);
    CHECK(a == b);
    CHECK(a != c);
    if (!isFloat(t))
      continue;
    int bad = 0;
    for (int i = 0; i < 1000; ++i) {
      double v;
      const uint8_t *p = a.data() + i * sz;
      uint16_t h;
      std::memcpy(&h, p, sz >= 2 ? 2 : 1);
      switch (t) {
      case DType::F32: { float f; std::memcpy(&f, p, 4); v = f; break; }
      case DType::F64: std::memcpy(&v, p, 8); break;
      case DType::F16: v = halfToFloat(h); break;
      case DType::BF16: v = bf16ToFloat(h); break;
      case DType::F8E4M3: v = e4m3ToFloat(*p); break;
      default: v = e5m2ToFloat(*p);
      }
      if (!(std::fabs(v) <= 2.01))
        ++bad;
    }
    CHECK_EQ(bad, 0);
  }
}
} // namespace

int main() {
  for (const Fmt &F : kFormats) {
    testDecode(F);
    testRoundTrip(F);
    testRounding(F);
  }
  testKnownValues();
  testNames();
  testFillRandom();
  return purlin_test::finish();
}
