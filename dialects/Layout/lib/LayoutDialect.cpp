// The layout dialect: registration, the ties between its enums and the
// spec's, and the pairing of element types with MLIR types.
#include "purlin/Dialect/Layout/LayoutOps.h"
#include "purlin/spec/Collective.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace purlin::layout;

#include "purlin/Dialect/Layout/LayoutDialect.cpp.inc"
#include "purlin/Dialect/Layout/LayoutEnums.cpp.inc"

// The ODS enums are the spec's, value for value: the conversions to and from
// purlin::Collective cast between them (a new kind, role or op fails here
// until both sides have it).
#define PURLIN_SAME(E, SPEC, ODS)                                              \
  static_assert((int)E::ODS == (int)::purlin::E::SPEC, "layout." #E " drifted")
PURLIN_SAME(ParamKind, Ranks, ranks);
PURLIN_SAME(ParamKind, Count, count);
PURLIN_SAME(ParamKind, Root, root);
PURLIN_SAME(ParamKind, Type, type);
PURLIN_SAME(ParamKind, Op, redop);
PURLIN_SAME(ParamKind, Table, table);
PURLIN_SAME(ParamKind, Group, group);
PURLIN_SAME(BufferRole, In, in);
PURLIN_SAME(BufferRole, Out, out);
PURLIN_SAME(RedOp, Copy, copy);
PURLIN_SAME(RedOp, Sum, sum);
PURLIN_SAME(RedOp, Prod, prod);
PURLIN_SAME(RedOp, Min, min);
PURLIN_SAME(RedOp, Max, max);
PURLIN_SAME(RedOp, Avg, avg);
#undef PURLIN_SAME
static_assert(::purlin::kNumRedOps == 6, "layout.RedOp: a new op is missing");

void LayoutDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "purlin/Dialect/Layout/Layout.cpp.inc"
      >();
  registerAttributes();
}

namespace purlin {
namespace layout {

Type elementType(MLIRContext *ctx, DType t) {
  Builder b(ctx);
  switch (t) {
  case DType::F32:
    return b.getF32Type();
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::F8E4M3:
    return b.getType<Float8E4M3FNType>();
  case DType::F8E5M2:
    return b.getType<Float8E5M2Type>();
  case DType::I8:
    return b.getIntegerType(8);
  case DType::U8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case DType::I32:
    return b.getIntegerType(32);
  case DType::I64:
    return b.getIntegerType(64);
  case DType::F64:
    return b.getF64Type();
  }
  return Type();
}

std::optional<DType> elementDType(Type t) {
  if (!t)
    return std::nullopt;
  for (int i = 0; i < kNumDTypes; ++i)
    if (elementType(t.getContext(), (DType)i) == t)
      return (DType)i;
  return std::nullopt;
}

} // namespace layout
} // namespace purlin
