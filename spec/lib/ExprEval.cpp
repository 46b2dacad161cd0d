// Evaluating expressions (spec/include/purlin/spec/Expr.h): the tree
// walk (evaluate) and the compiled form (CompiledExpr), both with checked
// 64-bit arithmetic and floor division.
#include "purlin/spec/Expr.h"

#include <cstdint>

namespace purlin {

namespace {
// One arithmetic step of an expression; false on overflow or division by
// zero (the result of neither is a value of the collective).
inline bool arith(Expr::Kind k, int64_t a, int64_t b, int64_t &out) {
  switch (k) {
  case Expr::Kind::Add:
    return !__builtin_add_overflow(a, b, &out);
  case Expr::Kind::Sub:
    return !__builtin_sub_overflow(a, b, &out);
  case Expr::Kind::Mul:
    return !__builtin_mul_overflow(a, b, &out);
  case Expr::Kind::Div:
  case Expr::Kind::Mod:
    if (b == 0 || (b == -1 && a == INT64_MIN))
      return false;
    out = k == Expr::Kind::Div ? floorDiv(a, b) : floorMod(a, b);
    return true;
  case Expr::Kind::Neg:
    return !__builtin_sub_overflow((int64_t)0, a, &out);
  default:
    return false;
  }
}
} // namespace

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//
bool evaluate(const Expr &e, const EvalEnv &env, int64_t &out,
              std::string &error) {
  switch (e.kind()) {
  case Expr::Kind::Const:
    out = e.constValue();
    return true;
  case Expr::Kind::Var:
    if (!env.var || !env.var(e.name(), out)) {
      error = "unknown name '" + e.name() + "'";
      return false;
    }
    return true;
  case Expr::Kind::Table: {
    std::vector<int64_t> idx;
    for (auto &o : e.operands()) {
      int64_t v;
      if (!evaluate(o, env, v, error))
        return false;
      idx.push_back(v);
    }
    if (!env.table || !env.table(e.name(), idx, out)) {
      error = "table lookup '" + e.str() + "' is unknown or out of range";
      return false;
    }
    return true;
  }
  case Expr::Kind::Call:
    error = "'" + e.str() + "' is not an integer expression";
    return false;
  case Expr::Kind::Neg: {
    int64_t a;
    if (!evaluate(e.operands()[0], env, a, error))
      return false;
    if (!arith(Expr::Kind::Neg, a, 0, out)) {
      error = "integer overflow in '" + e.str() + "'";
      return false;
    }
    return true;
  }
  default: {
    int64_t a, b;
    if (!evaluate(e.operands()[0], env, a, error) ||
        !evaluate(e.operands()[1], env, b, error))
      return false;
    if ((e.kind() == Expr::Kind::Div || e.kind() == Expr::Kind::Mod) &&
        b == 0) {
      error = "division by zero in '" + e.str() + "'";
      return false;
    }
    if (!arith(e.kind(), a, b, out)) {
      error = "integer overflow in '" + e.str() + "'";
      return false;
    }
    return true;
  }
  }
  return false;
}

bool CompiledExpr::compile(
    const Expr &e, const std::function<int(const std::string &)> &slot,
    const std::function<const Table *(const std::string &)> &table,
    CompiledExpr &out, std::string &error) {
  std::function<bool(const Expr &)> emit = [&](const Expr &x) -> bool {
    Op op{};
    switch (x.kind()) {
    case Expr::Kind::Const:
      op.code = Op::Push;
      op.arg = x.constValue();
      break;
    case Expr::Kind::Var: {
      int s = slot(x.name());
      if (s < 0) {
        error = "unknown name '" + x.name() + "'";
        return false;
      }
      op.code = Op::Load;
      op.arg = s;
      break;
    }
    case Expr::Kind::Table: {
      const Table *t = table(x.name());
      if (!t || t->extents.size() != x.operands().size()) {
        error = "unknown table or wrong number of subscripts in '" + x.str() +
                "'";
        return false;
      }
      for (auto &o : x.operands())
        if (!emit(o))
          return false;
      op.code = Op::Look;
      op.arg = (int64_t)x.operands().size();
      op.tab = t;
      break;
    }
    case Expr::Kind::Call:
      error = "'" + x.str() + "' is not an integer expression";
      return false;
    case Expr::Kind::Neg:
      if (!emit(x.operands()[0]))
        return false;
      op.code = Op::Neg;
      break;
    default:
      if (!emit(x.operands()[0]) || !emit(x.operands()[1]))
        return false;
      op.code = x.kind() == Expr::Kind::Add   ? Op::Add
                : x.kind() == Expr::Kind::Sub ? Op::Sub
                : x.kind() == Expr::Kind::Mul ? Op::Mul
                : x.kind() == Expr::Kind::Div ? Op::Div
                                              : Op::Mod;
    }
    out.ops_.push_back(op);
    return true;
  };
  out.ops_.clear();
  return emit(e);
}

bool CompiledExpr::eval(const int64_t *slots, int64_t &out) const {
  int64_t st[64];
  int sp = 0;
  for (const Op &op : ops_) {
    if (sp >= 62)
      return false;
    switch (op.code) {
    case Op::Push:
      st[sp++] = op.arg;
      break;
    case Op::Load:
      st[sp++] = slots[op.arg];
      break;
    case Op::Look: {
      int n = (int)op.arg;
      int64_t lin = 0;
      for (int i = 0; i < n; ++i) {
        int64_t v = st[sp - n + i];
        if (v < 0 || v >= op.tab->extents[i])
          return false;
        lin = lin * op.tab->extents[i] + v;
      }
      sp -= n;
      st[sp++] = op.tab->data[lin];
      break;
    }
    case Op::Neg:
      if (!arith(Expr::Kind::Neg, st[sp - 1], 0, st[sp - 1]))
        return false;
      break;
    default: {
      int64_t b = st[--sp], a = st[--sp];
      Expr::Kind k = op.code == Op::Add   ? Expr::Kind::Add
                     : op.code == Op::Sub ? Expr::Kind::Sub
                     : op.code == Op::Mul ? Expr::Kind::Mul
                     : op.code == Op::Div ? Expr::Kind::Div
                                          : Expr::Kind::Mod;
      if (!arith(k, a, b, st[sp++]))
        return false;
    }
    }
  }
  if (sp != 1)
    return false;
  out = st[0];
  return true;
}

} // namespace purlin
