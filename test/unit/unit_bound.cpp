// Unit tests of purlin/runtime/BoundValues.h: the values a collective was
// compiled with (parameters bound at compile time, a concrete element type)
// and the status and message of a launch that differs from each; and of
// spec's table capacity (maxRanksForTables). Both the host runner and the
// CUDA runtime check launches with these.
#include "check.h"

#include "purlin/runtime/BoundValues.h"
#include "purlin/spec/Params.h"

using namespace purlin;
using purlin::rt::BoundValues;

namespace {
Collective desc(const std::string &text) {
  Collective c;
  std::string err;
  CHECK_MSG(readDesc(text, c, err), err);
  return c;
}
bool has(const std::string &s, const std::string &sub) {
  return s.find(sub) != std::string::npos;
}

// reduce, as `purlinc examples/reduce.purlin --ranks 4 --root 3 --dtype
// i32 --op max --emit=desc` writes it (C left free).
const char *kReduceBound = R"(purlin-desc 1
collective reduce
param R ranks = 4
param C count
param T type = i32
param op redop = max
param root root = 3
buffer in x T [C]
buffer out y T [C]
clause op
  dim i [C]
  from x @ [*] [i]
  to y @ [root] [i]
end
)";

// The issue's example: an i32 reduce(max) to a root, the type concrete in
// the source and the op fixed, nothing bound.
const char *kConcrete = R"(purlin-desc 1
collective rmax
param R ranks
param C count
param root root
buffer in x i32 [C]
buffer out y i32 [C]
clause max
  dim i [C]
  from x @ [*] [i]
  to y @ [root] [i]
end
)";

void boundParams() {
  purlin_test::Context ctx("bound parameters");
  Collective c = desc(kReduceBound);
  BoundValues bv;
  std::string err, msg;
  CHECK_MSG(bv.init(c, err), err);
  CHECK_EQ(bv.ranks(), 4);
  CHECK_EQ(bv.dtype(), (int)DType::I32);
  CHECK_EQ(bv.op(), (int)RedOp::Max);
  CHECK_EQ(bv.scalar("root"), (int64_t)3);
  CHECK_EQ(bv.scalar("C"), (int64_t)-1);
  CHECK_EQ(bv.checkRanks(4, msg), PURLIN_SUCCESS);
  CHECK_EQ(bv.checkRanks(8, msg), PURLIN_ERR_BAD_RANK_COUNT);
  CHECK_MSG(has(msg, "compiled for 4 ranks (R bound at compile time), not 8"),
            msg);
  CHECK_EQ(bv.checkType((int)DType::I32, msg), PURLIN_SUCCESS);
  CHECK_EQ(bv.checkType((int)DType::F32, msg), PURLIN_ERR_UNSUPPORTED_TYPE);
  CHECK_MSG(has(msg, "compiled for i32 (T bound at compile time), not f32"),
            msg);
  CHECK_EQ(bv.checkOp((int)RedOp::Max, msg), PURLIN_SUCCESS);
  CHECK_EQ(bv.checkOp((int)RedOp::Sum, msg), PURLIN_ERR_UNSUPPORTED_OP);
  CHECK_MSG(has(msg, "compiled for max (op bound at compile time), not sum"),
            msg);
  CHECK_EQ(bv.checkScalar("root", 3, msg), PURLIN_SUCCESS);
  CHECK_EQ(bv.checkScalar("C", 12345, msg), PURLIN_SUCCESS); // free
  CHECK_EQ(bv.checkScalar("root", 0, msg), PURLIN_ERR_PARAM_RANGE);
  CHECK_MSG(
      has(msg, "'root' was bound at compile time to 3; the launch passes 0"),
      msg);
  // A whole binding, as the host runner checks it.
  Binding b;
  b.scalars = {{"R", 4}, {"C", 7}, {"root", 3}};
  b.dtype = DType::I32;
  b.redop = RedOp::Max;
  CHECK_EQ(bv.check(c, b, msg), PURLIN_SUCCESS);
  Binding wrong = b;
  wrong.dtype = DType::F32; // the runner's old default
  CHECK_EQ(bv.check(c, wrong, msg), PURLIN_ERR_UNSUPPORTED_TYPE);
  wrong = b;
  wrong.scalars["R"] = 8;
  CHECK_EQ(bv.check(c, wrong, msg), PURLIN_ERR_BAD_RANK_COUNT);
  wrong = b;
  wrong.redop = RedOp::Sum;
  CHECK_EQ(bv.check(c, wrong, msg), PURLIN_ERR_UNSUPPORTED_OP);
  wrong = b;
  wrong.scalars["root"] = 0;
  CHECK_EQ(bv.check(c, wrong, msg), PURLIN_ERR_PARAM_RANGE);
  Binding partial = b; // bound values left out are no mismatch
  partial.scalars.erase("R");
  partial.scalars.erase("root");
  CHECK_EQ(bv.check(c, partial, msg), PURLIN_SUCCESS);
}

void concreteType() {
  purlin_test::Context ctx("concrete type");
  Collective c = desc(kConcrete);
  BoundValues bv;
  std::string err, msg;
  CHECK_MSG(bv.init(c, err), err);
  CHECK_EQ(bv.ranks(), -1);
  CHECK_EQ(bv.dtype(), (int)DType::I32);
  CHECK_EQ(bv.op(), -1); // a fixed op, not a parameter
  CHECK_EQ(bv.checkRanks(16, msg), PURLIN_SUCCESS);
  CHECK_EQ(bv.checkType((int)DType::F32, msg), PURLIN_ERR_UNSUPPORTED_TYPE);
  CHECK_MSG(has(msg, "compiled for i32 (buffer 'x' is i32[C]), not f32"), msg);
  CHECK_EQ(bv.checkType(99, msg), PURLIN_ERR_UNSUPPORTED_TYPE);
  Binding b;
  b.scalars = {{"R", 2}, {"C", 7}, {"root", 1}};
  b.dtype = DType::I32;
  b.redop = RedOp::Prod; // no op parameter: ignored
  CHECK_EQ(bv.check(c, b, msg), PURLIN_SUCCESS);
}

void freeCollective() {
  purlin_test::Context ctx("nothing bound");
  Collective c = desc(R"(purlin-desc 1
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
)");
  BoundValues bv;
  std::string err, msg;
  CHECK_MSG(bv.init(c, err), err);
  CHECK_EQ(bv.ranks(), -1);
  CHECK_EQ(bv.dtype(), -1);
  CHECK_EQ(bv.op(), -1);
  for (int t = 0; t < kNumDTypes; ++t)
    CHECK_EQ(bv.checkType(t, msg), PURLIN_SUCCESS);
  CHECK_EQ(bv.checkOp((int)RedOp::Avg, msg), PURLIN_SUCCESS);
  CHECK_EQ(bv.checkRanks(32, msg), PURLIN_SUCCESS);
}

void tableCapacity() {
  purlin_test::Context ctx("table capacity");
  Collective v = desc(purlin_test::kAllToAllVDesc);
  std::string why;
  CHECK_EQ(maxRanksForTables(v, why), 9); // 9*9 = 81 <= 96 < 100
  CHECK_MSG(has(why, "table cnt[R][R] has R*R entries"), why);
  Binding b;
  b.scalars = {{"R", 16}, {"M", 4}};
  std::string err;
  CHECK_EQ(tableEntries(v, b, err), (int64_t)256);
  Collective r = desc(kConcrete);
  CHECK_EQ(maxRanksForTables(r, why), exec::kMaxRanks); // no tables
}
} // namespace

int main() {
  boundParams();
  concreteType();
  freeCollective();
  tableCapacity();
  return purlin_test::finish();
}
