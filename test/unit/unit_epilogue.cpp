// Unit tests of epilogues in the reference evaluator (spec/lib/Epilogue.cpp):
// all-reduce + residual + RMSNorm, Gemma's (1 + w) norm and the norm
// without a residual, as the examples' descriptions, on random inputs,
// against plain loops written here from docs/language.md ("Epilogues"):
//  - the fused contract (f32 from the received sum to each store, one
//    rounding): bit for bit;
//  - the unfused chain (the all-reduce and each `let` stored in T):
//    bit for bit with referenceEvaluateUnfused;
//  - fused against unfused within the documented tolerance: the chain's
//    extra roundings of the received sum and of h (each at most half a unit
//    in the last place of T, of |recv| and of |h|), carried through the
//    norm's scale, plus one unit of the output.
// Every element type of the contract's floating family; ranks 1, 2, 8;
// tokens 1, 7, 128, 1000 and hidden 1024, 4096 (4096 x 8192 and the rest
// of the issue's grid run on the GPU: tools/gpu-epilogue.sh).
#include "check.h"

#include "purlin/spec/Epilogue.h"
#include "purlin/spec/Reference.h"

#include <cmath>
#include <cstring>

using namespace purlin;

namespace {
const uint8_t kPoison = 0xAB;

enum Variant { kRms, kGemma, kNoRes };

std::string descText(Variant v) {
  std::string s = "purlin-desc 1\ncollective epi\nparam R ranks\nparam N count\n"
                  "param H count\nparam T type\nbuffer in x T [N*H]\n";
  if (v != kNoRes)
    s += "buffer in res T [N*H]\n";
  s += "buffer in w T [H]\nbuffer in eps T [1]\nbuffer out y T [N*H]\n";
  if (v != kNoRes)
    s += "buffer out res_out T [N*H]\n";
  s += "clause sum\n  dim n [N]\n  dim i [H]\n  from x @ [*] [n*H + i]\n"
       "  to y @ [*] [n*H + i]\n  rows n\n";
  if (v == kNoRes)
    s += "  store y [n*H + i] [recv/sqrt(rowsum(recv*recv)/H + eps[0])*w[i]]\n";
  else
    s += std::string("  let h [recv + res[n*H + i]]\n  store res_out [n*H + i] [h]\n") +
         "  store y [n*H + i] [h/sqrt(rowsum(h*h)/H + eps[0])*" +
         (v == kGemma ? "(1 + w[i])" : "w[i]") + "]\n";
  return s + "end\n";
}

float rnd(DType t, float v) {
  uint8_t b[8];
  floatToElement(t, v, b);
  return elementToFloat(t, b);
}
// Half a unit in the last place of T at |v| (relative), as an upper bound.
float halfUlp(DType t, float v) {
  const int bits = t == DType::F32 ? 24 : t == DType::F16 ? 11 : t == DType::BF16 ? 8
                 : t == DType::F8E4M3 ? 4 : 3;
  return std::fabs(v) * std::ldexp(1.0f, -bits);
}

// The received value of element k: buffer ix of every rank summed in f32,
// in ascending rank (the contract's order).
float recvAt(const RankBuffers &d, DType t, int R, int ix, int64_t k) {
  const int es = dtypeSize(t);
  float recv = elementToFloat(t, d[0][ix].data() + k * es);
  for (int p = 1; p < R; ++p)
    recv += elementToFloat(t, d[p][ix].data() + k * es);
  return recv;
}

struct Expect {
  std::vector<std::vector<float>> y, res; // per rank
  std::vector<float> recvAbs, hAbs, scale; // for the tolerance (rank 0's rows)
};

// The plain loops: rank q's outputs, fused (one rounding) or unfused.
Expect loops(Variant v, DType t, int R, int N, int H, const RankBuffers &d,
             bool unfused) {
  const int es = dtypeSize(t);
  const int ix = 0, ires = 1, iw = v == kNoRes ? 1 : 2, ieps = iw + 1;
  auto at = [&](int q, int b, int64_t i) { return elementToFloat(t, d[q][b].data() + i * es); };
  Expect e;
  e.y.assign(R, std::vector<float>((size_t)N * H));
  e.res.assign(R, std::vector<float>((size_t)N * H));
  e.recvAbs.resize((size_t)N * H);
  e.hAbs.resize((size_t)N * H);
  e.scale.resize((size_t)N * H);
  for (int q = 0; q < R; ++q)
    for (int n = 0; n < N; ++n) {
      std::vector<float> h(H);
      float ss = 0.0f;
      for (int i = 0; i < H; ++i) {
        const int64_t k = (int64_t)n * H + i;
        float recv = recvAt(d, t, R, ix, k);
        if (unfused)
          recv = rnd(t, recv);
        h[i] = v == kNoRes ? recv : recv + at(q, ires, k);
        if (unfused && v != kNoRes)
          h[i] = rnd(t, h[i]);
        ss += h[i] * h[i];
        if (q == 0) {
          e.recvAbs[k] = std::fabs(recv);
          e.hAbs[k] = std::fabs(h[i]);
        }
      }
      const float s = std::sqrt(ss / (float)H + at(q, ieps, 0));
      for (int i = 0; i < H; ++i) {
        const int64_t k = (int64_t)n * H + i;
        const float w = v == kGemma ? 1.0f + at(q, iw, i) : at(q, iw, i);
        e.y[q][k] = rnd(t, h[i] / s * w);
        e.res[q][k] = rnd(t, h[i]);
        if (q == 0)
          e.scale[k] = std::fabs(w) / s;
      }
    }
  return e;
}

// A description read and checked, bound to R ranks, N tokens of H and type
// t, its buffers allocated (random inputs from `seed`); false on a failed
// check (reported).
bool setUp(const std::string &desc, DType t, int R, int N, int H, uint64_t seed,
           Collective &c, Binding &b, RankBuffers &data) {
  std::string err;
  if (!CHECK_MSG(readDesc(desc, c, err), err))
    return false;
  std::vector<Diag> diags;
  if (!CHECK_MSG(checkStructure(c, diags), diags.empty() ? "" : diags[0].message))
    return false;
  b.scalars = {{"R", R}, {"N", N}, {"H", H}};
  b.dtype = t;
  return CHECK_MSG(allocateBuffers(c, b, data, seed, kPoison, err), err);
}

void runCase(Variant v, DType t, int R, int N, int H) {
  Collective c;
  Binding b;
  RankBuffers data;
  std::string err;
  if (!setUp(descText(v), t, R, N, H, 1000 + N * 7 + H + R, c, b, data))
    return;
  const int es = dtypeSize(t);
  const int ieps = c.bufferIndex("eps"), iy = c.bufferIndex("y"),
            ires = c.bufferIndex("res_out");
  for (int q = 0; q < R; ++q) // a realistic epsilon (random ones may be < 0)
    floatToElement(t, 1e-5f, data[q][ieps].data());
  RankBuffers fused = data, unf = data;
  if (!CHECK_MSG(referenceEvaluate(c, b, fused, err), err) ||
      !CHECK_MSG(referenceEvaluateUnfused(c, b, unf, err), err))
    return;
  const Expect ef = loops(v, t, R, N, H, data, false),
               eu = loops(v, t, R, N, H, data, true);
  const std::string what = std::string(dtypeName(t)) + " R=" + std::to_string(R) +
                           " N=" + std::to_string(N) + " H=" + std::to_string(H) +
                           " variant " + std::to_string(v);
  int64_t bad = 0, badU = 0, badTol = 0;
  for (int q = 0; q < R; ++q)
    for (int64_t k = 0; k < (int64_t)N * H; ++k) {
      uint8_t want[8];
      floatToElement(t, ef.y[q][k], want);
      bad += std::memcmp(fused[q][iy].data() + k * es, want, es) != 0;
      floatToElement(t, eu.y[q][k], want);
      badU += std::memcmp(unf[q][iy].data() + k * es, want, es) != 0;
      if (ires >= 0) {
        floatToElement(t, ef.res[q][k], want);
        bad += std::memcmp(fused[q][ires].data() + k * es, want, es) != 0;
        floatToElement(t, eu.res[q][k], want);
        badU += std::memcmp(unf[q][ires].data() + k * es, want, es) != 0;
      }
      if (q == 0) {
        // The chain rounds recv and h once more each (half an ulp of T
        // of their magnitudes); the norm's scale is shared by the row and
        // moves by at most as much relative to h; one ulp of the output.
        const float dh = halfUlp(t, eu.recvAbs[k]) + halfUlp(t, eu.hAbs[k]);
        const float tol = 2.0f * dh * eu.scale[k] + 2.0f * halfUlp(t, ef.y[0][k]) +
                          2.0f * halfUlp(t, ef.hAbs[k] * ef.scale[k]) + 1e-30f;
        const float a = elementToFloat(t, fused[0][iy].data() + k * es),
                    u = elementToFloat(t, unf[0][iy].data() + k * es);
        badTol += !(std::fabs(a - u) <= tol) && !(std::isnan(a) && std::isnan(u));
      }
    }
  CHECK_MSG(bad == 0, what + ": fused reference differs from the loops at " +
                          std::to_string(bad) + " elements");
  CHECK_MSG(badU == 0, what + ": unfused reference differs from the loops at " +
                           std::to_string(badU) + " elements");
  CHECK_MSG(badTol == 0, what + ": fused differs from unfused beyond the tolerance at " +
                             std::to_string(badTol) + " elements");
}

// Buffers of their own types in an epilogue (an f32 scale in; an f8e4m3
// output, and per token an f32 scale out): RMSNorm quantized to f8e4m3, per
// tensor (q = v / scale) or per token (s = max(rowmax|v| / 448, eps),
// q = v / s), as examples/all_reduce_rmsnorm_fp8*.purlin, against plain
// loops; the buffers are sized and filled each in its own type.
void ownTypes(bool perToken, DType t, int R, int N, int H) {
  std::string s = "purlin-desc 1\ncollective epi\nparam R ranks\nparam N count\n"
                  "param H count\nparam T type\nbuffer in x T [N*H]\n"
                  "buffer in res T [N*H]\nbuffer in w T [H]\nbuffer in eps T [1]\n";
  if (!perToken)
    s += "buffer in scale f32 [1]\n";
  s += "buffer out res_out T [N*H]\nbuffer out q f8e4m3 [N*H]\n";
  if (perToken)
    s += "buffer out qs f32 [N]\n";
  s += "clause sum\n  dim n [N]\n  dim i [H]\n  from x @ [*] [n*H + i]\n"
       "  to res_out @ [*] [n*H + i]\n  rows n\n  let h [recv + res[n*H + i]]\n"
       "  store res_out [n*H + i] [h]\n"
       "  let v [h/sqrt(rowsum(h*h)/H + eps[0])*w[i]]\n";
  s += perToken ? "  let s [max(rowmax(abs(v))/448, eps[0])]\n  store qs [n] [s]\n"
                  "  store q [n*H + i] [v/s]\n"
                : "  store q [n*H + i] [v/scale[0]]\n";
  s += "end\n";
  Collective c;
  Binding b;
  RankBuffers data;
  std::string err;
  if (!setUp(s, t, R, N, H, 77 + N + H + R, c, b, data))
    return;
  const int es = dtypeSize(t);
  const int ix = c.bufferIndex("x"), ires = c.bufferIndex("res"), iw = c.bufferIndex("w"),
            ieps = c.bufferIndex("eps"), isc = c.bufferIndex("scale"),
            iq = c.bufferIndex("q"), iqs = c.bufferIndex("qs");
  CHECK(data[0][iq].size() == (size_t)N * H); // one byte an element
  for (int q = 0; q < R; ++q) {
    floatToElement(t, 1e-5f, data[q][ieps].data());
    if (isc >= 0) {
      CHECK(data[q][isc].size() == 4);
      const float sc = 0.25f + 0.5f * (float)q;
      std::memcpy(data[q][isc].data(), &sc, 4);
    }
  }
  RankBuffers got = data;
  if (!CHECK_MSG(referenceEvaluate(c, b, got, err), err))
    return;
  auto at = [&](int q, int bi, int64_t i) { return elementToFloat(t, data[q][bi].data() + i * es); };
  int64_t bad = 0;
  for (int q = 0; q < R; ++q)
    for (int n = 0; n < N; ++n) {
      std::vector<float> h(H), v(H);
      float ss = 0.0f;
      for (int i = 0; i < H; ++i) {
        const int64_t k = (int64_t)n * H + i;
        h[i] = recvAt(data, t, R, ix, k) + at(q, ires, k);
        ss += h[i] * h[i];
      }
      const float r = std::sqrt(ss / (float)H + at(q, ieps, 0));
      float mx = -INFINITY;
      for (int i = 0; i < H; ++i) {
        v[i] = h[i] / r * at(q, iw, i);
        mx = std::fabs(v[i]) > mx ? std::fabs(v[i]) : mx;
      }
      float sc;
      if (perToken) {
        sc = mx / 448.0f < at(q, ieps, 0) ? at(q, ieps, 0) : mx / 448.0f;
        float gs;
        std::memcpy(&gs, got[q][iqs].data() + n * 4, 4);
        bad += std::memcmp(&gs, &sc, 4) != 0;
      } else {
        std::memcpy(&sc, data[q][isc].data(), 4);
      }
      for (int i = 0; i < H; ++i) {
        uint8_t want[1];
        floatToElement(DType::F8E4M3, v[i] / sc, want);
        bad += got[q][iq][(size_t)n * H + i] != want[0];
      }
    }
  CHECK_MSG(bad == 0, std::string(perToken ? "per token " : "per tensor ") +
                          dtypeName(t) + " R=" + std::to_string(R) + " N=" +
                          std::to_string(N) + " H=" + std::to_string(H) +
                          ": the reference differs from the loops at " +
                          std::to_string(bad) + " elements");
}

// The rules at the statement: a few messages of checkEpilogue (the frontend
// tests cover each at its line and column).
void rules() {
  Collective c;
  std::string err;
  std::string text = descText(kRms);
  text.replace(text.find("eps[0]"), 6, "eps[0] % 2");
  CHECK(readDesc(text, c, err));
  std::vector<Diag> diags;
  CHECK(!checkStructure(c, diags));
  CHECK(!diags.empty() &&
        diags[0].message == "'%' is not defined on an epilogue's f32 values");
}
// Which input and output may share their start whatever the plan
// (epilogueLocalPair): the residual and its update, not the communicated
// input and the clause's destination, not a pair that a later statement
// reads, or reads at another index, or that a clause moves.
void localPairs() {
  auto pairs = [](const std::string &text) {
    Collective c;
    std::string err;
    if (!readDesc(text, c, err)) {
      CHECK_MSG(false, "readDesc: " + err);
      return uint64_t(0);
    }
    return epilogueLocalPairs(c);
  };
  // buffers: x 0, res 1, w 2, eps 3, y 4, res_out 5
  const uint64_t resPair = 1ull << (1 * 8 + 5);
  std::string rms = descText(kRms);
  CHECK_EQ(pairs(rms), resPair);
  CHECK_EQ(pairs(descText(kGemma)), resPair);
  CHECK_EQ(pairs(descText(kNoRes)), uint64_t(0));
  // A statement after the store reads res: its element may be stored over
  // already.
  std::string late = rms;
  late.replace(late.find("*w[i]"), 5, "*w[i] + res[n*H + i]");
  CHECK_EQ(pairs(late), uint64_t(0));
  // res read at another index (the next row's element).
  std::string other = rms;
  other.replace(other.find("recv + res[n*H + i]"), 19, "recv + res[n*H + i] + res[i]");
  CHECK_EQ(pairs(other), uint64_t(0));
  // res_out stored at another index than the clause's destination.
  std::string shifted = rms;
  shifted.replace(shifted.find("store res_out [n*H + i]"), 23, "store res_out [n*H + H - 1 - i]");
  CHECK_EQ(pairs(shifted), uint64_t(0));
  // The residual communicated: the clause reads res, not x.
  std::string moved = rms;
  moved.replace(moved.find("from x @"), 8, "from res @");
  CHECK_EQ(pairs(moved) & resPair, uint64_t(0));
}
} // namespace

int main() {
  rules();
  localPairs();
  for (bool perToken : {false, true})
    for (DType t : {DType::BF16, DType::F16, DType::F32})
      for (int R : {1, 8})
        ownTypes(perToken, t, R, 7, 1024);
  const DType types[] = {DType::F32, DType::F16, DType::BF16, DType::F8E4M3,
                         DType::F8E5M2};
  for (Variant v : {kRms, kGemma, kNoRes})
    for (DType t : types)
      for (int R : {1, 2, 8})
        for (int N : {1, 7})
          for (int H : {1024, 4096})
            runCase(v, t, R, N, H);
  // The larger token counts, on bf16 (the benchmark's type) and f32.
  for (DType t : {DType::BF16, DType::F32})
    for (int N : {128, 1000})
      runCase(kRms, t, 8, N, 1024);
  runCase(kRms, DType::BF16, 2, 128, 4096);
  return purlin_test::finish();
}
