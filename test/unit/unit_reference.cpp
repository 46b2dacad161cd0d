// Unit tests of the reference evaluator (purlin/spec/Reference.h): every
// standard collective shape on hand-computed values, every element type and
// reduction op against the contract at the top of DType.h (integer
// wrap-around, avg truncation, f32 accumulation of narrow floats with one
// final rounding, ascending rank order), and output elements that no name
// writes keeping their poison.
#include "check.h"

#include "purlin/spec/Reference.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

using namespace purlin;

namespace {
const uint8_t kPoison = 0xAB;

Collective desc(const std::string &text) {
  Collective c;
  std::string err;
  if (!CHECK_MSG(readDesc(text, c, err), err))
    return c;
  std::vector<Diag> diags;
  CHECK_MSG(checkStructure(c, diags),
            diags.empty() ? "" : diags[0].message);
  return c;
}

// The standard collectives, as plain descriptions (as `purlinc --emit=desc`
// writes the examples).
const char *kAllReduce = R"(purlin-desc 1
collective all_reduce
param R ranks
param C count
param T type
param op redop
buffer in x T [C]
buffer out y T [C]
clause op
  dim i [C]
  from x @ [*] [i]
  to y @ [*] [i]
end
)";
const char *kAllGather = R"(purlin-desc 1
collective all_gather
param R ranks
param C count
param T type
buffer in x T [C]
buffer out y T [R*C]
clause copy
  dim r [R]
  dim i [C]
  from x @ [r] [i]
  to y @ [*] [r*C + i]
end
)";
const char *kReduceScatter = R"(purlin-desc 1
collective reduce_scatter
param R ranks
param C count
param T type
param op redop
buffer in x T [R*C]
buffer out y T [C]
clause op
  dim r [R]
  dim i [C]
  from x @ [*] [r*C + i]
  to y @ [r] [i]
end
)";
const char *kBroadcast = R"(purlin-desc 1
collective broadcast
param R ranks
param C count
param T type
param root root
buffer in x T [C]
buffer out y T [C]
clause copy
  dim i [C]
  from x @ [root] [i]
  to y @ [*] [i]
end
)";
const char *kReduce = R"(purlin-desc 1
collective reduce
param R ranks
param C count
param T type
param op redop
param root root
buffer in x T [C]
buffer out y T [C]
clause op
  dim i [C]
  from x @ [*] [i]
  to y @ [root] [i]
end
)";
const char *kAllToAll = R"(purlin-desc 1
collective all_to_all
param R ranks
param C count
param T type
buffer in x T [R*C]
buffer out y T [R*C]
clause copy
  dim s [R]
  dim d [R]
  dim i [C]
  from x @ [s] [d*C + i]
  to y @ [d] [s*C + i]
end
)";
const char *kGather = R"(purlin-desc 1
collective gather
param R ranks
param C count
param T type
param root root
buffer in x T [C]
buffer out y T [R*C]
clause copy
  dim r [R]
  dim i [C]
  from x @ [r] [i]
  to y @ [root] [r*C + i]
end
)";
const char *kScatter = R"(purlin-desc 1
collective scatter
param R ranks
param C count
param T type
param root root
buffer in x T [R*C]
buffer out y T [C]
clause copy
  dim r [R]
  dim i [C]
  from x @ [root] [r*C + i]
  to y @ [r] [i]
end
)";
const char *kAllToAllV = purlin_test::kAllToAllVDesc;

Binding bindList(const Collective &c, const std::string &list) {
  Binding b;
  std::string err;
  CHECK_MSG(parseBindingList(c, list, b, err), err);
  return b;
}

// Allocates every rank's buffers: inputs filled by in(rank, buffer, index),
// outputs poisoned. i32 elements.
RankBuffers makeI32(const Collective &c, const Binding &b,
                    const std::function<int32_t(int64_t, int, int64_t)> &in) {
  RankBuffers d;
  std::string err;
  CHECK_MSG(allocateBuffers(c, b, d, 1, kPoison, err), err);
  for (size_t r = 0; r < d.size(); ++r)
    for (size_t i = 0; i < c.buffers.size(); ++i) {
      if (c.buffers[i].role != BufferRole::In)
        continue;
      for (size_t e = 0; e < d[r][i].size() / 4; ++e) {
        int32_t v = in((int64_t)r, (int)i, (int64_t)e);
        std::memcpy(d[r][i].data() + 4 * e, &v, 4);
      }
    }
  return d;
}

bool isPoison(const uint8_t *p, int sz) {
  for (int k = 0; k < sz; ++k)
    if (p[k] != kPoison)
      return false;
  return true;
}

// Checks output buffer `buf` of every rank: want(rank, index, value) returns
// false for an element that must keep its poison and otherwise sets the
// expected value.
void expectI32(const Collective &c, const RankBuffers &d, const char *buf,
               const std::function<bool(int64_t, int64_t, int32_t &)> &want) {
  int bi = c.bufferIndex(buf);
  int bad = 0;
  for (size_t r = 0; r < d.size(); ++r)
    for (size_t e = 0; e < d[r][bi].size() / 4; ++e) {
      const uint8_t *p = d[r][bi].data() + 4 * e;
      int32_t v, got;
      std::memcpy(&got, p, 4);
      bool written = want((int64_t)r, (int64_t)e, v);
      bool ok = written ? got == v : isPoison(p, 4);
      if (!ok && bad++ < 5)
        std::printf("  %s: %s@%zu[%zu] = %d, want %s\n", c.name.c_str(), buf, r,
                    e, got, written ? std::to_string(v).c_str() : "poison");
    }
  CHECK_MSG(bad == 0, c.name + ": " + std::to_string(bad) + " wrong elements");
}

bool run(const Collective &c, const Binding &b, RankBuffers &d) {
  std::string err;
  return CHECK_MSG(referenceEvaluate(c, b, d, err), c.name + ": " + err);
}

int32_t xval(int64_t r, int, int64_t i) { return (int32_t)(100 * r + i + 1); }

//===----------------------------------------------------------------------===//
// Shapes, on i32 with distinct values: x@r[i] = 100 r + i + 1
//===----------------------------------------------------------------------===//
void testShapes() {
  { // all_reduce: y@q[i] = sum_r x@r[i]
    Collective c = desc(kAllReduce);
    Binding b = bindList(c, "R=3,C=4,T=i32,op=sum");
    RankBuffers d = makeI32(c, b, xval);
    run(c, b, d);
    expectI32(c, d, "y", [](int64_t, int64_t i, int32_t &v) {
      v = (int32_t)(1 + 101 + 201 + 3 * i);
      return true;
    });
  }
  { // all_gather: y@q[r*C + i] = x@r[i]
    Collective c = desc(kAllGather);
    Binding b = bindList(c, "R=3,C=2,T=i32");
    RankBuffers d = makeI32(c, b, xval);
    run(c, b, d);
    expectI32(c, d, "y", [](int64_t, int64_t e, int32_t &v) {
      v = xval(e / 2, 0, e % 2);
      return true;
    });
  }
  { // reduce_scatter: y@r[i] = sum_p x@p[r*C + i]
    Collective c = desc(kReduceScatter);
    Binding b = bindList(c, "R=3,C=2,T=i32,op=sum");
    RankBuffers d = makeI32(c, b, xval);
    run(c, b, d);
    expectI32(c, d, "y", [](int64_t r, int64_t i, int32_t &v) {
      v = 0;
      for (int p = 0; p < 3; ++p)
        v += xval(p, 0, r * 2 + i);
      return true;
    });
  }
  for (int root : {0, 1, 3}) { // broadcast: y@q[i] = x@root[i]
    Collective c = desc(kBroadcast);
    Binding b = bindList(c, "R=4,C=3,T=i32,root=" + std::to_string(root));
    RankBuffers d = makeI32(c, b, xval);
    run(c, b, d);
    expectI32(c, d, "y", [&](int64_t, int64_t i, int32_t &v) {
      v = xval(root, 0, i);
      return true;
    });
  }
  for (int root : {0, 2}) { // reduce: y@root[i] = sum; others keep poison
    Collective c = desc(kReduce);
    Binding b = bindList(c, "R=3,C=5,T=i32,op=max,root=" + std::to_string(root));
    RankBuffers d = makeI32(c, b, [](int64_t r, int, int64_t i) {
      return (int32_t)((r == i % 3) ? 1000 + i : -(int32_t)r);
    });
    run(c, b, d);
    expectI32(c, d, "y", [&](int64_t r, int64_t i, int32_t &v) {
      v = (int32_t)(1000 + i);
      return r == root;
    });
  }
  { // all_to_all: y@d[s*C + i] = x@s[d*C + i]
    Collective c = desc(kAllToAll);
    Binding b = bindList(c, "R=3,C=2,T=i32");
    RankBuffers d = makeI32(c, b, xval);
    run(c, b, d);
    expectI32(c, d, "y", [](int64_t dst, int64_t e, int32_t &v) {
      int64_t s = e / 2, i = e % 2;
      v = xval(s, 0, dst * 2 + i);
      return true;
    });
  }
  for (int root : {0, 2}) { // gather: y@root[r*C + i] = x@r[i]
    Collective c = desc(kGather);
    Binding b = bindList(c, "R=3,C=2,T=i32,root=" + std::to_string(root));
    RankBuffers d = makeI32(c, b, xval);
    run(c, b, d);
    expectI32(c, d, "y", [&](int64_t q, int64_t e, int32_t &v) {
      v = xval(e / 2, 0, e % 2);
      return q == root;
    });
  }
  for (int root : {0, 2}) { // scatter: y@r[i] = x@root[r*C + i]
    Collective c = desc(kScatter);
    Binding b = bindList(c, "R=3,C=2,T=i32,root=" + std::to_string(root));
    RankBuffers d = makeI32(c, b, xval);
    run(c, b, d);
    expectI32(c, d, "y", [&](int64_t r, int64_t i, int32_t &v) {
      v = xval(root, 0, r * 2 + i);
      return true;
    });
  }
  { // all_to_all_v: y@d[s*M + i] = x@s[d*M + i] for i < cnt[s][d]
    Collective c = desc(kAllToAllV);
    const int64_t cnt[3][3] = {{0, 3, 1}, {2, 0, 3}, {1, 1, 0}};
    Binding b = bindList(c, "R=3,M=3,T=i32,cnt=0:3:1:2:0:3:1:1:0");
    std::vector<Diag> diags;
    CHECK(checkBinding(c, b, diags));
    RankBuffers d = makeI32(c, b, xval);
    run(c, b, d);
    expectI32(c, d, "y", [&](int64_t dst, int64_t e, int32_t &v) {
      int64_t s = e / 3, i = e % 3;
      v = xval(s, 0, dst * 3 + i);
      return i < cnt[s][dst];
    });
  }
  { // count 0: nothing is written, outputs keep their poison
    Collective c = desc(kAllGather);
    Binding b = bindList(c, "R=2,C=0,T=i32");
    RankBuffers d = makeI32(c, b, xval);
    run(c, b, d);
    CHECK(d[0][1].empty() && d[1][1].empty());
  }
  { // R = 1: all_reduce is a copy for every op
    Collective c = desc(kAllReduce);
    for (const char *op : {"sum", "prod", "min", "max", "avg"}) {
      Binding b = bindList(c, std::string("R=1,C=3,T=i32,op=") + op);
      RankBuffers d = makeI32(c, b, xval);
      run(c, b, d);
      expectI32(c, d, "y", [](int64_t, int64_t i, int32_t &v) {
        v = xval(0, 0, i);
        return true;
      });
    }
  }
  { // a partial layout: only the odd elements among the first 2*C of y
    // are named; every other element keeps its poison.
    Collective c = desc(R"(purlin-desc 1
collective odd
param R ranks
param C count
buffer in x i32 [C]
buffer out y i32 [2*C + 3]
clause copy
  dim r [R]
  dim i [C]
  from x @ [r] [i]
  to y @ [r] [2*i + 1]
end
)");
    Binding b = bindList(c, "R=3,C=4");
    RankBuffers d = makeI32(c, b, xval);
    run(c, b, d);
    expectI32(c, d, "y", [](int64_t q, int64_t e, int32_t &v) {
      v = xval(q, 0, e / 2);
      return e % 2 == 1 && e < 8;
    });
  }
  { // two clauses into one output, and the input untouched
    Collective c = desc(R"(purlin-desc 1
collective two
param R ranks
param C count
buffer in x i32 [C]
buffer out y i32 [C + 1]
clause sum
  dim i [C]
  from x @ [*] [i]
  to y @ [0] [i + 1]
end
clause copy
  dim r [R]
  from x @ [r] [0]
  to y @ [r] [0]
end
)");
    Binding b = bindList(c, "R=2,C=3");
    RankBuffers d = makeI32(c, b, xval);
    RankBuffers before = d;
    run(c, b, d);
    CHECK(d[0][0] == before[0][0] && d[1][0] == before[1][0]);
    expectI32(c, d, "y", [](int64_t q, int64_t e, int32_t &v) {
      if (e == 0) {
        v = xval(q, 0, 0);
        return true;
      }
      v = xval(0, 0, e - 1) + xval(1, 0, e - 1);
      return q == 0;
    });
  }
  { // errors: wrong buffer counts or sizes, unbound parameters
    Collective c = desc(kAllGather);
    Binding b = bindList(c, "R=2,C=2,T=i32");
    RankBuffers d = makeI32(c, b, xval);
    std::string err;
    RankBuffers few(d.begin(), d.begin() + 1);
    CHECK(!referenceEvaluate(c, b, few, err) && !err.empty());
    d[1][1].pop_back();
    err.clear();
    CHECK(!referenceEvaluate(c, b, d, err) && !err.empty());
    Binding nob = bindList(c, "R=2,T=i32");
    err.clear();
    CHECK(!referenceEvaluate(c, nob, d, err) &&
          err.find("'C'") != std::string::npos);
  }
}

//===----------------------------------------------------------------------===//
// Element types and ops, on all_reduce
//===----------------------------------------------------------------------===//
// Encodes a double exactly representable in `t`.
std::vector<uint8_t> enc(DType t, double v) {
  std::vector<uint8_t> o(dtypeSize(t));
  auto put = [&](const void *p) { std::memcpy(o.data(), p, o.size()); };
  switch (t) {
  case DType::F32: {
    float f = (float)v;
    put(&f);
    break;
  }
  case DType::F64:
    put(&v);
    break;
  case DType::F16: {
    uint16_t h = floatToHalf((float)v);
    put(&h);
    break;
  }
  case DType::BF16: {
    uint16_t h = floatToBf16((float)v);
    put(&h);
    break;
  }
  case DType::F8E4M3:
    o[0] = floatToE4m3((float)v);
    break;
  case DType::F8E5M2:
    o[0] = floatToE5m2((float)v);
    break;
  case DType::I8: {
    int8_t x = (int8_t)(int64_t)v;
    put(&x);
    break;
  }
  case DType::U8: {
    uint8_t x = (uint8_t)(int64_t)v;
    put(&x);
    break;
  }
  case DType::I32: {
    int32_t x = (int32_t)(int64_t)v;
    put(&x);
    break;
  }
  case DType::I64: {
    int64_t x = (int64_t)v;
    put(&x);
    break;
  }
  }
  return o;
}
template <class T> std::vector<uint8_t> raw(T v) {
  std::vector<uint8_t> o(sizeof(T));
  std::memcpy(o.data(), &v, sizeof(T));
  return o;
}
std::string hex(const std::vector<uint8_t> &v) {
  static const char *d = "0123456789abcdef";
  std::string s = "0x";
  for (size_t k = v.size(); k-- > 0;)
    s += std::string(1, d[v[k] >> 4]) + d[v[k] & 15];
  return s;
}

// Runs all_reduce over R = ins.size() ranks with one element each, plus
// reduce (root R-1), and checks that every rank's y holds `want`.
void reduceCase(DType t, RedOp op, const std::vector<std::vector<uint8_t>> &ins,
                const std::vector<uint8_t> &want, const std::string &what) {
  purlin_test::Context ctx(std::string(dtypeName(t)) + " " + redOpName(op) +
                           ": " + what);
  for (const char *text : {kAllReduce, kReduce, kReduceScatter}) {
    Collective c = desc(text);
    Binding b = bindList(c, "R=" + std::to_string(ins.size()) + ",C=1,T=" +
                            dtypeName(t) + ",op=" + redOpName(op) +
                            (c.param("root") ? ",root=" + std::to_string(ins.size() - 1) : ""));
    RankBuffers d;
    std::string err;
    CHECK_MSG(allocateBuffers(c, b, d, 7, kPoison, err), err);
    int sz = dtypeSize(t);
    // reduce_scatter: rank r's y is element r of the reduction; put the
    // case in every block.
    for (size_t r = 0; r < ins.size(); ++r)
      for (size_t e = 0; e < d[r][0].size() / sz; ++e)
        std::memcpy(d[r][0].data() + e * sz, ins[r].data(), sz);
    if (!run(c, b, d))
      continue;
    for (size_t r = 0; r < ins.size(); ++r) {
      bool named = c.name != "reduce" || r + 1 == ins.size();
      std::vector<uint8_t> got(d[r][1].begin(), d[r][1].begin() + sz);
      if (named)
        CHECK_MSG(got == want, c.name + " rank " + std::to_string(r) + ": got " +
                                  hex(got) + ", want " + hex(want));
      else
        CHECK_MSG(isPoison(got.data(), sz), c.name + ": rank " +
                                               std::to_string(r) +
                                               " lost its poison");
    }
  }
}

void testTypesAndOps() {
  const RedOp ops[] = {RedOp::Sum, RedOp::Prod, RedOp::Min, RedOp::Max,
                       RedOp::Avg};
  // Values exact in every float type (even f8e5m2: 2, -1, 5, 6, -10): every
  // op on every float type. Expected in op order.
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16,
                  DType::F8E4M3, DType::F8E5M2, DType::I8, DType::I32,
                  DType::I64}) {
    const double want[] = {6, -10, -1, 5, 2};
    for (int k = 0; k < 5; ++k)
      reduceCase(t, ops[k], {enc(t, 2), enc(t, -1), enc(t, 5)},
                 enc(t, want[k]), "2, -1, 5");
  }
  // u8: 2, 7, 5: avg 14/3 truncates to 4.
  {
    const double want[] = {14, 70, 2, 7, 4};
    for (int k = 0; k < 5; ++k)
      reduceCase(DType::U8, ops[k], {raw<uint8_t>(2), raw<uint8_t>(7), raw<uint8_t>(5)},
                 raw<uint8_t>((uint8_t)want[k]), "2, 7, 5");
  }

  // Integers wrap around; avg sums in int64 and truncates toward zero.
  reduceCase(DType::I8, RedOp::Sum, {raw<int8_t>(100), raw<int8_t>(100)},
             raw<int8_t>(-56), "100 + 100 wraps");
  reduceCase(DType::I8, RedOp::Prod, {raw<int8_t>(16), raw<int8_t>(-8)},
             raw<int8_t>(-128), "16 * -8");
  reduceCase(DType::I8, RedOp::Prod, {raw<int8_t>(16), raw<int8_t>(16)},
             raw<int8_t>(0), "16 * 16 wraps to 0");
  reduceCase(DType::I8, RedOp::Avg,
             {raw<int8_t>(100), raw<int8_t>(100), raw<int8_t>(101)},
             raw<int8_t>(100), "avg sums wider than i8");
  reduceCase(DType::I8, RedOp::Avg, {raw<int8_t>(-1), raw<int8_t>(-2)},
             raw<int8_t>(-1), "avg -3/2 truncates toward zero");
  reduceCase(DType::I8, RedOp::Avg,
             {raw<int8_t>(-128), raw<int8_t>(-128), raw<int8_t>(-127)},
             raw<int8_t>(-127), "avg -383/3");
  reduceCase(DType::I8, RedOp::Min, {raw<int8_t>(127), raw<int8_t>(-128)},
             raw<int8_t>(-128), "signed min");
  reduceCase(DType::I8, RedOp::Max, {raw<int8_t>(-1), raw<int8_t>(-128)},
             raw<int8_t>(-1), "signed max");
  reduceCase(DType::U8, RedOp::Sum, {raw<uint8_t>(200), raw<uint8_t>(100)},
             raw<uint8_t>(44), "200 + 100 wraps");
  reduceCase(DType::U8, RedOp::Avg, {raw<uint8_t>(255), raw<uint8_t>(255)},
             raw<uint8_t>(255), "avg of 255, 255");
  reduceCase(DType::U8, RedOp::Max, {raw<uint8_t>(128), raw<uint8_t>(127)},
             raw<uint8_t>(128), "unsigned max");
  reduceCase(DType::U8, RedOp::Min, {raw<uint8_t>(255), raw<uint8_t>(1)},
             raw<uint8_t>(1), "unsigned min");
  reduceCase(DType::U8, RedOp::Prod, {raw<uint8_t>(16), raw<uint8_t>(17)},
             raw<uint8_t>(16), "16 * 17 = 272 wraps");
  const int32_t i32max = std::numeric_limits<int32_t>::max();
  const int32_t i32min = std::numeric_limits<int32_t>::min();
  reduceCase(DType::I32, RedOp::Sum, {raw<int32_t>(i32max), raw<int32_t>(1)},
             raw<int32_t>(i32min), "INT32_MAX + 1 wraps");
  reduceCase(DType::I32, RedOp::Prod, {raw<int32_t>(65536), raw<int32_t>(65536)},
             raw<int32_t>(0), "2^16 * 2^16 wraps");
  reduceCase(DType::I32, RedOp::Prod,
             {raw<int32_t>(-3), raw<int32_t>(i32max), raw<int32_t>(3)},
             raw<int32_t>((int32_t)(uint32_t)((uint64_t)-9 * (uint64_t)i32max)),
             "-3 * INT32_MAX * 3 wraps");
  reduceCase(DType::I32, RedOp::Avg,
             {raw<int32_t>(i32max), raw<int32_t>(i32max), raw<int32_t>(i32max)},
             raw<int32_t>(i32max), "avg of INT32_MAX does not wrap");
  reduceCase(DType::I32, RedOp::Avg, {raw<int32_t>(-7), raw<int32_t>(0)},
             raw<int32_t>(-3), "avg -7/2 truncates toward zero");
  reduceCase(DType::I32, RedOp::Avg,
             {raw<int32_t>(i32min), raw<int32_t>(i32min), raw<int32_t>(1),
              raw<int32_t>(2)},
             raw<int32_t>((int32_t)((2 * (int64_t)i32min + 3) / 4)),
             "avg of INT32_MINs");
  const int64_t i64max = std::numeric_limits<int64_t>::max();
  const int64_t i64min = std::numeric_limits<int64_t>::min();
  reduceCase(DType::I64, RedOp::Sum, {raw<int64_t>(i64max), raw<int64_t>(2)},
             raw<int64_t>(i64min + 1), "INT64_MAX + 2 wraps");
  reduceCase(DType::I64, RedOp::Prod,
             {raw<int64_t>(int64_t(1) << 32), raw<int64_t>(int64_t(1) << 32)},
             raw<int64_t>(0), "2^32 * 2^32 wraps");
  reduceCase(DType::I64, RedOp::Min, {raw<int64_t>(i64max), raw<int64_t>(i64min)},
             raw<int64_t>(i64min), "i64 min");
  reduceCase(DType::I64, RedOp::Avg, {raw<int64_t>(-9), raw<int64_t>(4)},
             raw<int64_t>(-2), "avg -5/2 truncates toward zero");
  // i64 avg sums in int64: the sum wraps (the contract's int64 accumulator).
  reduceCase(DType::I64, RedOp::Avg, {raw<int64_t>(i64max), raw<int64_t>(1)},
             raw<int64_t>(i64min / 2), "avg sum wraps in int64");

  // Reduction order is ascending rank: f32 (1e8 + 1) - 1e8 = 0, while any
  // order adding 1 last gives 1.
  reduceCase(DType::F32, RedOp::Sum,
             {raw<float>(1e8f), raw<float>(1.0f), raw<float>(-1e8f)},
             raw<float>(0.0f), "((1e8 + 1) + -1e8)");
  reduceCase(DType::F32, RedOp::Sum,
             {raw<float>(1e8f), raw<float>(-1e8f), raw<float>(1.0f)},
             raw<float>(1.0f), "((1e8 + -1e8) + 1)");
  reduceCase(DType::F32, RedOp::Sum,
             {raw<float>(1.0f), raw<float>(1e8f), raw<float>(-1e8f)},
             raw<float>(0.0f), "((1 + 1e8) + -1e8)");
  reduceCase(DType::F64, RedOp::Sum,
             {raw<double>(1e17), raw<double>(1.0), raw<double>(-1e17)},
             raw<double>(0.0), "f64 ((1e17 + 1) + -1e17)");
  reduceCase(DType::F64, RedOp::Sum,
             {raw<double>(1e17), raw<double>(-1e17), raw<double>(1.0)},
             raw<double>(1.0), "f64 ((1e17 + -1e17) + 1)");
  // f32 prod in order: (3e38 * 10) * 0.1 = inf, (3e38 * 0.1) * 10 = 3e38.
  reduceCase(DType::F32, RedOp::Prod,
             {raw<float>(3e38f), raw<float>(10.0f), raw<float>(0.1f)},
             raw<float>(INFINITY), "(3e38 * 10) * 0.1 overflows");
  // min/max in order: min(a, b) = b < a ? b : a keeps the first of equals,
  // so the sign of zero tells the order.
  reduceCase(DType::F32, RedOp::Min, {raw<float>(0.0f), raw<float>(-0.0f)},
             raw<float>(0.0f), "min(+0, -0) keeps +0");
  reduceCase(DType::F32, RedOp::Min, {raw<float>(-0.0f), raw<float>(0.0f)},
             raw<float>(-0.0f), "min(-0, +0) keeps -0");
  reduceCase(DType::F32, RedOp::Max, {raw<float>(-0.0f), raw<float>(0.0f)},
             raw<float>(-0.0f), "max(-0, +0) keeps -0");
  reduceCase(DType::F16, RedOp::Max, {raw<uint16_t>(0x8000), raw<uint16_t>(0)},
             raw<uint16_t>(0x8000), "f16 max(-0, +0) keeps -0");
  // avg is a true division of the f32 (f64) sum.
  reduceCase(DType::F32, RedOp::Avg,
             {raw<float>(1.0f), raw<float>(1.0f), raw<float>(2.0f)},
             raw<float>(4.0f / 3.0f), "f32 avg 4/3");
  reduceCase(DType::F64, RedOp::Avg,
             {raw<double>(1.0), raw<double>(1.0), raw<double>(2.0)},
             raw<double>(4.0 / 3.0), "f64 avg 4/3");
  // f16 avg: (1 + 1 + 2) / 3 in f32, rounded once: 0x3d55.
  reduceCase(DType::F16, RedOp::Avg,
             {raw<uint16_t>(0x3c00), raw<uint16_t>(0x3c00), raw<uint16_t>(0x4000)},
             raw<uint16_t>(0x3d55), "f16 avg 4/3");

  // Narrow floats accumulate in f32 and round once. Step-wise rounding in
  // the type would lose both 1s (each sum is a tie that rounds to even).
  reduceCase(DType::F16, RedOp::Sum,
             {raw<uint16_t>(0x6800), raw<uint16_t>(0x3c00), raw<uint16_t>(0x3c00)},
             raw<uint16_t>(0x6801), "f16 2048 + 1 + 1 = 2050");
  reduceCase(DType::BF16, RedOp::Sum,
             {raw<uint16_t>(0x4380), raw<uint16_t>(0x3f80), raw<uint16_t>(0x3f80)},
             raw<uint16_t>(0x4381), "bf16 256 + 1 + 1 = 258");
  reduceCase(DType::F8E4M3, RedOp::Sum,
             {raw<uint8_t>(0x58), raw<uint8_t>(0x38), raw<uint8_t>(0x38)},
             raw<uint8_t>(0x59), "e4m3 16 + 1 + 1 = 18");
  reduceCase(DType::F8E5M2, RedOp::Sum,
             {raw<uint8_t>(0x48), raw<uint8_t>(0x3c), raw<uint8_t>(0x3c)},
             raw<uint8_t>(0x49), "e5m2 8 + 1 + 1 = 10");
  // ... and the final rounding is to nearest even: 2048 + 1 = 2049 is a tie.
  reduceCase(DType::F16, RedOp::Sum,
             {raw<uint16_t>(0x6800), raw<uint16_t>(0x3c00)},
             raw<uint16_t>(0x6800), "f16 2048 + 1 ties to even");
  reduceCase(DType::F16, RedOp::Sum,
             {raw<uint16_t>(0x6801), raw<uint16_t>(0x3c00)},
             raw<uint16_t>(0x6802), "f16 2050 + 1 ties to even (up)");
  // f32 accumulation keeps intermediate values beyond the type's range.
  reduceCase(DType::F16, RedOp::Sum,
             {raw<uint16_t>(0x7bff), raw<uint16_t>(0x7bff), raw<uint16_t>(0xfbff)},
             raw<uint16_t>(0x7bff), "f16 65504 + 65504 - 65504 (no inf)");
  reduceCase(DType::F8E4M3, RedOp::Prod,
             {raw<uint8_t>(0x7e), raw<uint8_t>(0x7e), raw<uint8_t>(0x01)},
             raw<uint8_t>(0x7c), "e4m3 448 * 448 * 2^-9 = 392 (rounds to 384)");
  // Overflow: f16 and bf16 round to infinity, f8 saturates to max finite.
  reduceCase(DType::F16, RedOp::Sum, {raw<uint16_t>(0x7bff), raw<uint16_t>(0x7bff)},
             raw<uint16_t>(0x7c00), "f16 65504 + 65504 = inf");
  reduceCase(DType::F16, RedOp::Prod, {raw<uint16_t>(0xfbff), raw<uint16_t>(0x7bff)},
             raw<uint16_t>(0xfc00), "f16 -65504 * 65504 = -inf");
  reduceCase(DType::BF16, RedOp::Sum, {raw<uint16_t>(0x7f7f), raw<uint16_t>(0x7f7f)},
             raw<uint16_t>(0x7f80), "bf16 max + max = inf");
  reduceCase(DType::F8E4M3, RedOp::Sum, {raw<uint8_t>(0x7e), raw<uint8_t>(0x7e)},
             raw<uint8_t>(0x7e), "e4m3 448 + 448 saturates");
  reduceCase(DType::F8E4M3, RedOp::Sum, {raw<uint8_t>(0xfe), raw<uint8_t>(0xfe)},
             raw<uint8_t>(0xfe), "e4m3 -448 - 448 saturates");
  reduceCase(DType::F8E5M2, RedOp::Sum, {raw<uint8_t>(0x7b), raw<uint8_t>(0x7b)},
             raw<uint8_t>(0x7b), "e5m2 57344 + 57344 saturates");
  reduceCase(DType::F8E5M2, RedOp::Prod, {raw<uint8_t>(0xfb), raw<uint8_t>(0x7b)},
             raw<uint8_t>(0xfb), "e5m2 -57344 * 57344 saturates");
  // Subnormals: e4m3 2^-9 + 2^-9 = 2^-8 (0x02); f16 2^-24 / 2 ties to 0.
  reduceCase(DType::F8E4M3, RedOp::Sum, {raw<uint8_t>(0x01), raw<uint8_t>(0x01)},
             raw<uint8_t>(0x02), "e4m3 subnormal sum");
  reduceCase(DType::F16, RedOp::Avg, {raw<uint16_t>(0x0001), raw<uint16_t>(0x0000)},
             raw<uint16_t>(0x0000), "f16 avg 2^-25 ties to 0");
  reduceCase(DType::F16, RedOp::Avg, {raw<uint16_t>(0x0003), raw<uint16_t>(0x0000)},
             raw<uint16_t>(0x0002), "f16 avg 1.5 * 2^-24 ties to even 2");
  reduceCase(DType::BF16, RedOp::Avg,
             {raw<uint16_t>(0x3f80), raw<uint16_t>(0x3f81), raw<uint16_t>(0x3f81)},
             raw<uint16_t>(floatToBf16((1.0f + 2 * (1.0f + 1.0f / 128)) / 3.0f)),
             "bf16 avg rounds once");
}

// The element reducer itself, over many random vectors: an independent
// restatement of the contract (f32/f64 accumulators, one rounding, ascending
// order) must agree bit for bit.
void testReduceElementRandom() {
  uint64_t s = 12345;
  auto rnd = [&]() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return s >> 17;
  };
  int bad = 0, cases = 0;
  for (int t = 0; t < kNumDTypes; ++t)
    for (int o = 1; o < kNumRedOps; ++o)
      for (int rep = 0; rep < 300; ++rep) {
        DType dt = (DType)t;
        RedOp op = (RedOp)o;
        int n = 1 + (int)(rnd() % 8), sz = dtypeSize(dt);
        std::vector<uint8_t> buf(n * sz);
        for (auto &x : buf)
          x = (uint8_t)rnd();
        std::vector<const uint8_t *> srcs;
        for (int k = 0; k < n; ++k)
          srcs.push_back(buf.data() + k * sz);
        uint8_t got[8], want[8];
        reduceElement(dt, op, srcs.data(), n, got);
        auto fold = [&](auto load, auto acc0) {
          auto acc = acc0;
          acc = load(srcs[0]);
          for (int k = 1; k < n; ++k) {
            auto v = load(srcs[k]);
            switch (op) {
            case RedOp::Sum:
            case RedOp::Avg:
              acc = acc + v;
              break;
            case RedOp::Prod:
              acc = acc * v;
              break;
            case RedOp::Min:
              acc = v < acc ? v : acc;
              break;
            default:
              acc = acc < v ? v : acc;
            }
          }
          if (op == RedOp::Avg)
            acc = acc / n;
          return acc;
        };
        auto ld16 = [](const uint8_t *p) {
          uint16_t v;
          std::memcpy(&v, p, 2);
          return v;
        };
        switch (dt) {
        case DType::F32: {
          float r = fold([](const uint8_t *p) { float v; std::memcpy(&v, p, 4); return v; }, 0.0f);
          std::memcpy(want, &r, 4);
          break;
        }
        case DType::F64: {
          double r = fold([](const uint8_t *p) { double v; std::memcpy(&v, p, 8); return v; }, 0.0);
          std::memcpy(want, &r, 8);
          break;
        }
        case DType::F16: {
          uint16_t r = floatToHalf(fold([&](const uint8_t *p) { return halfToFloat(ld16(p)); }, 0.0f));
          std::memcpy(want, &r, 2);
          break;
        }
        case DType::BF16: {
          uint16_t r = floatToBf16(fold([&](const uint8_t *p) { return bf16ToFloat(ld16(p)); }, 0.0f));
          std::memcpy(want, &r, 2);
          break;
        }
        case DType::F8E4M3:
          want[0] = floatToE4m3(fold([](const uint8_t *p) { return e4m3ToFloat(*p); }, 0.0f));
          break;
        case DType::F8E5M2:
          want[0] = floatToE5m2(fold([](const uint8_t *p) { return e5m2ToFloat(*p); }, 0.0f));
          break;
        default: {
          // Integers: wrap-around in the type's width; avg in int64.
          auto ldi = [&](const uint8_t *p) -> int64_t {
            switch (dt) {
            case DType::I8: return (int8_t)*p;
            case DType::U8: return *p;
            case DType::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
            default: { int64_t v; std::memcpy(&v, p, 8); return v; }
            }
          };
          uint64_t acc = (uint64_t)ldi(srcs[0]);
          int64_t sacc = ldi(srcs[0]);
          for (int k = 1; k < n; ++k) {
            int64_t v = ldi(srcs[k]);
            if (op == RedOp::Sum || op == RedOp::Avg)
              acc += (uint64_t)v;
            else if (op == RedOp::Prod)
              acc *= (uint64_t)v;
            else if (op == RedOp::Min)
              sacc = v < sacc ? v : sacc;
            else
              sacc = sacc < v ? v : sacc;
          }
          uint64_t r = (op == RedOp::Min || op == RedOp::Max) ? (uint64_t)sacc
                       : op == RedOp::Avg ? (uint64_t)((int64_t)acc / n)
                                          : acc;
          std::memcpy(want, &r, sz); // little-endian: the low bytes
        }
        }
        ++cases;
        bool same = std::memcmp(got, want, sz) == 0;
        // NaN payloads from NaN inputs may differ only if both are NaN; the
        // contract computes them the same way, so demand bits anyway.
        if (!same && bad++ < 5)
          std::printf("  reduceElement %s %s n=%d: got %s want %s\n",
                      dtypeName(dt), redOpName(op), n,
                      hex(std::vector<uint8_t>(got, got + sz)).c_str(),
                      hex(std::vector<uint8_t>(want, want + sz)).c_str());
      }
  CHECK_MSG(bad == 0, std::to_string(bad) + " of " + std::to_string(cases) +
                          " random reductions differ");
  // Copy takes the one contribution as is (a NaN's bits too).
  uint8_t nanBits[4] = {0x01, 0x00, 0xc0, 0xff}, out[4];
  const uint8_t *src[] = {nanBits};
  reduceElement(DType::F32, RedOp::Copy, src, 1, out);
  CHECK(std::memcmp(out, nanBits, 4) == 0);
}

// allocateBuffers: sizes from the binding, inputs filled reproducibly,
// outputs poisoned.
void testAllocate() {
  Collective c = desc(kAllToAllV);
  Binding b = bindList(c, "R=2,M=5,T=f16,cnt=1:2:3:4");
  RankBuffers d, e;
  std::string err;
  CHECK_MSG(allocateBuffers(c, b, d, 3, 0x5A, err), err);
  CHECK_MSG(allocateBuffers(c, b, e, 3, 0x5A, err), err);
  CHECK_EQ(d.size(), (size_t)2);
  CHECK_EQ(d[1][0].size(), (size_t)20);
  CHECK(isPoison(d[1][1].data(), 0) && d[1][1] == std::vector<uint8_t>(20, 0x5A));
  CHECK(d == e);
  CHECK(d[0][0] != d[1][0]);
  RankBuffers f;
  CHECK(allocateBuffers(c, b, f, 4, 0x5A, err) && f[0][0] != d[0][0]);
  Binding neg = bindList(c, "R=2,M=-1,T=f16,cnt=1:2:3:4");
  err.clear();
  CHECK(!allocateBuffers(c, neg, f, 4, 0x5A, err) && !err.empty());
}
} // namespace

int main() {
  testShapes();
  testTypesAndOps();
  testReduceElementRandom();
  testAllocate();
  return purlin_test::finish();
}
