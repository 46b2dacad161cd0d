// purlin-epilogue-test: the collectives with an epilogue that are linked in
// (examples/all_reduce_rmsnorm*.purlin) on R virtual ranks of one GPU,
// checked against the reference evaluator on the host (Reference.h) with
// random inputs and poisoned outputs, out of place and in place (each
// output at the address of the input of its position: y at x, res_out at
// res), and with only the epilogue's own pairs in place (res_out at res:
// spec/Epilogue.h, epilogueLocalPairs), which must take the plan the call
// takes out of place (the runtime counts no overlap). The contract (docs/language.md, "Epilogues"):
//  - an output whose value needs no row reduction and no product (the new
//    residual h = recv + res): bit for bit;
//  - the others: within one unit in the last place of T for f16, bf16 and
//    f8 (adjacent encodings), 2^-16 relative for f32: the row reduction's
//    order (a tree over the lane's threads) and nvcc's contraction of a
//    multiply and an add into an FMA move the last bits of the f32 value
//    before its one rounding.
// Last line: "N passed, N failed".
//
//   purlin-epilogue-test [--ranks R] [--dtypes bf16,f16,...] [--tokens 1,7,...]
//                        [--hidden 1024,...] [--only NAME]
#include "GeneratedRegistry.h"
#include "GpuCheck.h"
#include "purlin/purlin.h"
#include "purlin/spec/Collective.h"
#include "purlin/spec/Epilogue.h"
#include "purlin/spec/Reference.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace purlin;

namespace {
int gPassed = 0, gFailed = 0;

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ','))
    if (!x.empty())
      v.push_back(x);
  return v;
}

// Whether a value depends on a row reduction or a product (through lets).
bool inexact(const Expr &e, const Epilogue &ep) {
  if (e.kind() == Expr::Kind::Call || e.kind() == Expr::Kind::Mul ||
      e.kind() == Expr::Kind::Div)
    return true;
  if (e.kind() == Expr::Kind::Var)
    for (auto &st : ep.stmts)
      if (st.let == e.name())
        return inexact(st.value, ep);
  for (auto &o : e.operands())
    if (e.kind() != Expr::Kind::Table && inexact(o, ep))
      return true;
  return false;
}

// Within one encoding of the output's type (same sign), or 2^-16 relative
// for f32.
bool close(DType t, const uint8_t *got, const uint8_t *want) {
  const int es = dtypeSize(t);
  if (std::memcmp(got, want, es) == 0)
    return true;
  const float g = elementToFloat(t, got), w = elementToFloat(t, want);
  if (std::isnan(g) || std::isnan(w))
    return std::isnan(g) && std::isnan(w);
  if (t == DType::F32)
    return std::fabs(g - w) <= std::ldexp(std::fabs(w), -16);
  if ((g < 0) != (w < 0) && g != 0 && w != 0)
    return false;
  uint32_t a = 0, b = 0;
  std::memcpy(&a, got, es);
  std::memcpy(&b, want, es);
  const uint32_t mag = es == 2 ? 0x7fffu : 0x7fu;
  const int64_t d = (int64_t)(a & mag) - (int64_t)(b & mag);
  return d >= -1 && d <= 1;
}

struct Options {
  int R = 8;
  std::vector<std::string> dtypes = {"bf16", "f16", "f32", "f8e4m3", "f8e5m2"};
  std::vector<int64_t> tokens = {1, 7, 128, 1000, 4096};
  std::vector<int64_t> hidden = {1024, 4096, 8192};
  std::string only;
};

/// Where the outputs are: their own buffers, each at the input of its
/// position, or only the epilogue's own pairs at their inputs.
enum Where { kApart, kInPlace, kOwnPairs };

/// Returns the plan the call ran ("" where it failed before that).
std::string runCase(const std::string &name, const Collective &d, purlinColl_t h,
                    DType t, int R, int64_t N, int64_t H, Where where) {
  const bool inplace = where != kApart;
  const uint64_t own = epilogueLocalPairs(d);
  const int nb = (int)d.buffers.size();
  Binding b;
  b.dtype = t;
  // Each buffer's element type: T, or an epilogue's own (an f8 output).
  std::vector<DType> bt(nb);
  std::vector<int> bes(nb);
  for (int i = 0; i < nb; ++i)
    bes[i] = dtypeSize(bt[i] = bufferDType(d, b, i));
  b.scalars = {{d.ranksParam()->name, R}, {"N", N}, {"H", H}};
  RankBuffers data;
  std::string err;
  const uint8_t kPoison = 0xAB;
  if (!allocateBuffers(d, b, data, 7 + N * 31 + H + (int)t, kPoison, err)) {
    ++gFailed;
    std::printf("FAIL %s: %s\n", name.c_str(), err.c_str());
    return "";
  }
  const int ieps = d.bufferIndex("eps");
  for (int r = 0; r < R && ieps >= 0; ++r)
    floatToElement(t, 1e-5f, data[r][ieps].data());
  // Device buffers: inputs copied, outputs poisoned (in place: the input's).
  std::vector<void *> dev(R * nb, nullptr), allocs;
  std::vector<int> ins, outs;
  for (int i = 0; i < nb; ++i)
    (d.buffers[i].role == BufferRole::In ? ins : outs).push_back(i);
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < nb; ++i) {
      if (inplace && d.buffers[i].role == BufferRole::Out)
        continue;
      void *p;
      CUDA_OK(cudaMalloc(&p, std::max<size_t>(data[r][i].size(), 16)));
      CUDA_OK(cudaMemcpy(p, data[r][i].data(), data[r][i].size(), cudaMemcpyHostToDevice));
      dev[r * nb + i] = p;
      allocs.push_back(p);
    }
  if (inplace) // output k at input k, where their sizes agree
    for (int r = 0; r < R; ++r)
      for (size_t k = 0; k < outs.size(); ++k) {
        const int o = outs[k];
        int in = k < ins.size() ? ins[k] : -1;
        if (where == kOwnPairs) { // at the input of its own pair, if any
          in = -1;
          for (int i : ins)
            if (i < 8 && o < 8 && (own >> (i * 8 + o) & 1))
              in = i;
        }
        if (in < 0 || data[r][in].size() != data[r][o].size()) {
          void *p;
          CUDA_OK(cudaMalloc(&p, std::max<size_t>(data[r][o].size(), 16)));
          allocs.push_back(p);
          dev[r * nb + o] = p;
          CUDA_OK(cudaMemset(p, kPoison, data[r][o].size()));
        } else {
          dev[r * nb + o] = dev[r * nb + in];
        }
      }
  else
    for (int r = 0; r < R; ++r)
      for (int o : outs)
        CUDA_OK(cudaMemset(dev[r * nb + o], kPoison, data[r][o].size()));
  std::vector<int64_t> scalars(purlinCollScalarCount(h));
  for (int i = 0; i < (int)scalars.size(); ++i)
    scalars[i] = b.scalars[purlinCollScalarName(h, i)];
  purlinArgs a{};
  a.dtype = (int)t;
  a.op = (int)RedOp::Sum;
  a.scalars = scalars.data();
  a.nscalars = (int)scalars.size();
  a.buffers = dev.data();
  char what[160];
  std::snprintf(what, sizeof what, "%s %s R=%d tokens=%lld hidden=%lld %s",
                name.c_str(), dtypeName(t), R, (long long)N, (long long)H,
                where == kOwnPairs ? "own pairs in place"
                : inplace          ? "in place"
                                   : "out of place");
  purlinStatus st = purlinLaunch(h, &a);
  std::string plan;
  if (st != PURLIN_SUCCESS) {
    ++gFailed;
    std::printf("FAIL %s: purlinLaunch: %s\n", what, purlinGetLastError());
  } else {
    plan = purlinCollLastPlan(h);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<std::vector<std::vector<uint8_t>>> got(R, std::vector<std::vector<uint8_t>>(nb));
    for (int r = 0; r < R; ++r)
      for (int o : outs) {
        got[r][o].resize(data[r][o].size());
        CUDA_OK(cudaMemcpy(got[r][o].data(), dev[r * nb + o], got[r][o].size(),
                           cudaMemcpyDeviceToHost));
      }
    // Rows are independent: a large case is checked on its first and last
    // kSample rows, each slice as a collective of its own N.
    const int64_t kSample = 128;
    std::vector<std::pair<int64_t, int64_t>> slices; // (first row, rows)
    if (N <= 2 * kSample)
      slices.push_back({0, N});
    else
      slices = {{0, kSample}, {N - kSample, kSample}};
    int64_t bad = 0, first = -1;
    std::string firstBuf;
    bool refOk = true;
    for (auto [row0, rows] : slices) {
      Binding bs = b;
      bs.scalars["N"] = rows;
      RankBuffers part(R, std::vector<std::vector<uint8_t>>(nb));
      std::vector<int64_t> perRow(nb, 0); // elements per row of a sliced buffer
      for (int i = 0; i < nb; ++i) {
        int64_t full = 0, sub = 0;
        bufferElems(d, b, i, full, err);
        bufferElems(d, bs, i, sub, err);
        perRow[i] = full != sub && N ? full / N : 0;
        for (int r = 0; r < R; ++r) {
          const uint8_t *src = data[r][i].data() + row0 * perRow[i] * bes[i];
          part[r][i].assign(src, src + sub * bes[i]);
        }
      }
      if (!referenceEvaluate(d, bs, part, err)) {
        refOk = false;
        break;
      }
      for (int r = 0; r < R; ++r)
        for (int o : outs) {
          bool exact = false;
          for (auto &cl : d.clauses)
            for (auto &st : cl.epilogue.stmts)
              if (st.let.empty() && st.buffer == d.buffers[o].name)
                exact = !inexact(st.value, cl.epilogue);
          const int es = bes[o];
          const uint8_t *gbase = got[r][o].data() + row0 * perRow[o] * es;
          for (size_t k = 0; k * es < part[r][o].size(); ++k) {
            const uint8_t *g = gbase + k * es, *w = part[r][o].data() + k * es;
            const bool ok = exact ? std::memcmp(g, w, es) == 0 : close(bt[o], g, w);
            if (!ok && bad++ == 0) {
              first = row0 * perRow[o] + (int64_t)k;
              firstBuf = d.buffers[o].name + "@" + std::to_string(r);
            }
          }
        }
    }
    if (!refOk) {
      ++gFailed;
      std::printf("FAIL %s: reference: %s\n", what, err.c_str());
    } else if (bad) {
      ++gFailed;
      std::printf("FAIL %s [%s]: %lld elements beyond the contract, first %s[%lld]\n",
                  what, purlinCollLastPlan(h), (long long)bad, firstBuf.c_str(),
                  (long long)first);
    } else {
      ++gPassed;
      std::printf("ok   %s [%s]%s\n", what, purlinCollLastPlan(h),
                  slices.size() > 1 ? " (first and last 128 rows)" : "");
    }
  }
  for (void *p : allocs)
    cudaFree(p);
  return plan;
}
} // namespace

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--ranks")
      o.R = std::atoi(v.c_str());
    else if (k == "--dtypes")
      o.dtypes = split(v);
    else if (k == "--tokens" || k == "--hidden") {
      auto &dst = k == "--tokens" ? o.tokens : o.hidden;
      dst.clear();
      for (auto &x : split(v))
        dst.push_back(std::atoll(x.c_str()));
    } else if (k == "--only")
      o.only = v;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("SKIPPED: no CUDA GPU\n");
    return 0;
  }
  int n = 0;
  const rt::GeneratedCollective *gc = rt::generatedCollectives(&n);
  std::vector<int> devs(o.R, 0);
  purlinComm_t comm;
  if (purlinCommCreate(&comm, o.R, devs.data()) != PURLIN_SUCCESS) {
    std::printf("FATAL: purlinCommCreate: %s\n", purlinGetLastError());
    return 1;
  }
  int64_t maxN = 0, maxH = 0;
  for (int64_t x : o.tokens)
    maxN = std::max(maxN, x);
  for (int64_t x : o.hidden)
    maxH = std::max(maxH, x);
  int tested = 0;
  for (int i = 0; i < n; ++i) {
    Collective d;
    std::string err;
    const purlin_collective_info *info = gc[i].info();
    if (!readDesc(info->desc, d, err))
      continue;
    bool epi = false;
    for (auto &cl : d.clauses)
      epi |= !cl.epilogue.empty();
    if (!epi || (!o.only.empty() && o.only != gc[i].name))
      continue;
    ++tested;
    purlinColl_t h;
    const std::string mp = "N=" + std::to_string(maxN) + ",H=" + std::to_string(maxH);
    if (purlinCollCreate(&h, comm, info, mp.c_str()) != PURLIN_SUCCESS) {
      ++gFailed;
      std::printf("FAIL %s: purlinCollCreate: %s\n", gc[i].name, purlinGetLastError());
      continue;
    }
    std::vector<int> types;
    for (auto &s : o.dtypes) {
      DType t;
      if (parseDType(s, t))
        types.push_back((int)t);
    }
    const int sum = (int)RedOp::Sum;
    if (purlinCollPrepare(h, types.data(), (int)types.size(), &sum, 1) != PURLIN_SUCCESS) {
      ++gFailed;
      std::printf("FAIL %s: purlinCollPrepare: %s\n", gc[i].name, purlinGetLastError());
    }
    for (int t : types)
      for (int64_t N : o.tokens)
        for (int64_t H : o.hidden)
        {
          const std::string apart = runCase(gc[i].name, d, h, (DType)t, o.R, N, H, kApart);
          runCase(gc[i].name, d, h, (DType)t, o.R, N, H, kInPlace);
          if (!epilogueLocalPairs(d))
            continue;
          const std::string own = runCase(gc[i].name, d, h, (DType)t, o.R, N, H, kOwnPairs);
          if (!own.empty() && own != apart) {
            ++gFailed;
            std::printf("FAIL %s %s tokens=%lld hidden=%lld: with its own pairs in place "
                        "it took %s, out of place %s\n",
                        gc[i].name, dtypeName((DType)t), (long long)N, (long long)H,
                        own.c_str(), apart.c_str());
          }
        }
    purlinCollDestroy(h);
  }
  purlinCommDestroy(comm);
  if (!tested) {
    std::printf("FAIL: no collective with an epilogue is linked in\n");
    ++gFailed;
  }
  std::printf("%d passed, %d failed\n", gPassed, gFailed);
  return gFailed ? 1 : 0;
}
