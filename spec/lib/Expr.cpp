#include "purlin/spec/Expr.h"

#include <cctype>
#include <stdexcept>

namespace purlin {

struct Expr::Node {
  Kind kind;
  int64_t value = 0;
  std::string name;
  std::vector<Expr> ops;
};

Expr Expr::constant(int64_t v) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Const;
  n->value = v;
  return Expr(n);
}
Expr Expr::var(const std::string &name) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Var;
  n->name = name;
  return Expr(n);
}
Expr Expr::table(const std::string &name, std::vector<Expr> index) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Table;
  n->name = name;
  n->ops = std::move(index);
  return Expr(n);
}
Expr Expr::binary(Kind k, Expr lhs, Expr rhs) {
  auto n = std::make_shared<Node>();
  n->kind = k;
  n->ops = {std::move(lhs), std::move(rhs)};
  return Expr(n);
}
Expr Expr::neg(Expr e) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Neg;
  n->ops = {std::move(e)};
  return Expr(n);
}

Expr Expr::call(const std::string &name, std::vector<Expr> args) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Call;
  n->name = name;
  n->ops = std::move(args);
  return Expr(n);
}

Expr::Kind Expr::kind() const { return node_->kind; }
int64_t Expr::constValue() const { return node_->value; }
const std::string &Expr::name() const { return node_->name; }
const std::vector<Expr> &Expr::operands() const { return node_->ops; }

int64_t floorDiv(int64_t a, int64_t b) {
  // a / -1 overflows (a trap on x86) for INT64_MIN: negate with wrap-around
  // instead. evaluate() and CompiledExpr::eval report that case as an error.
  if (b == -1)
    return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}
int64_t floorMod(int64_t a, int64_t b) {
  if (b == -1)
    return 0;
  return (int64_t)((uint64_t)a - (uint64_t)floorDiv(a, b) * (uint64_t)b);
}

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
// Printing
//===----------------------------------------------------------------------===//
namespace {
int precedence(Expr::Kind k) {
  switch (k) {
  case Expr::Kind::Add:
  case Expr::Kind::Sub:
    return 1;
  case Expr::Kind::Mul:
  case Expr::Kind::Div:
  case Expr::Kind::Mod:
    return 2;
  case Expr::Kind::Neg:
    return 3;
  default:
    return 4;
  }
}
const char *opText(Expr::Kind k, const char *modOp) {
  switch (k) {
  case Expr::Kind::Add:
    return " + ";
  case Expr::Kind::Sub:
    return " - ";
  case Expr::Kind::Mul:
    return "*";
  case Expr::Kind::Div:
    return "/";
  case Expr::Kind::Mod:
    return modOp;
  default:
    return "?";
  }
}

std::string print(const Expr &e,
                  const std::function<std::string(const std::string &)> *ident,
                  bool cxx, const char *modOp = "%") {
  switch (e.kind()) {
  case Expr::Kind::Const:
    return cxx ? "int64_t(" + std::to_string(e.constValue()) + ")"
               : std::to_string(e.constValue());
  case Expr::Kind::Var:
    return ident ? (*ident)(e.name()) : e.name();
  case Expr::Kind::Table: {
    std::string s = ident ? (*ident)(e.name()) : e.name();
    if (cxx) { // a call NAME(P, i, j): the lookup needs the parameters
      s += "(P";
      for (size_t i = 0; i < e.operands().size(); ++i)
        s += ", " + print(e.operands()[i], ident, cxx, modOp);
      return s + ")";
    }
    for (auto &o : e.operands())
      s += "[" + print(o, ident, cxx, modOp) + "]";
    return s;
  }
  case Expr::Kind::Call: { // C++: purlin_epi_NAME(args), Epilogue.h's functions
    std::string s = (cxx ? "purlin_epi_" : "") + e.name() + "(";
    for (size_t i = 0; i < e.operands().size(); ++i)
      s += (i ? ", " : "") + print(e.operands()[i], ident, cxx, modOp);
    return s + ")";
  }
  case Expr::Kind::Neg: {
    std::string inner = print(e.operands()[0], ident, cxx, modOp);
    // An inner '-' (a negation, a negative constant) gets parentheses too:
    // "--x" would be C++'s decrement operator in the generated code.
    if (precedence(e.operands()[0].kind()) < 3 || inner[0] == '-')
      inner = "(" + inner + ")";
    return "-" + inner;
  }
  default: {
    int p = precedence(e.kind());
    const Expr &l = e.operands()[0], &r = e.operands()[1];
    std::string ls = print(l, ident, cxx, modOp),
                rs = print(r, ident, cxx, modOp);
    if (precedence(l.kind()) < p)
      ls = "(" + ls + ")";
    // Right operands of -, /, % and * need parentheses at equal precedence.
    if (precedence(r.kind()) < p ||
        (precedence(r.kind()) == p && e.kind() != Expr::Kind::Add))
      rs = "(" + rs + ")";
    if (cxx && (e.kind() == Expr::Kind::Div || e.kind() == Expr::Kind::Mod))
      return std::string(e.kind() == Expr::Kind::Div ? "purlin_floordiv("
                                                     : "purlin_floormod(") +
             print(l, ident, cxx) + ", " + print(r, ident, cxx) + ")";
    return ls + opText(e.kind(), modOp) + rs;
  }
  }
}
} // namespace

std::string Expr::str(const char *modOp) const {
  if (!node_)
    return "<null>";
  return print(*this, nullptr, false, modOp);
}
std::string Expr::cxx(
    const std::function<std::string(const std::string &)> &ident) const {
  return print(*this, &ident, true);
}

void Expr::names(std::vector<std::string> &out) const {
  if (!node_)
    return;
  if (kind() == Kind::Var || kind() == Kind::Table)
    out.push_back(name());
  for (auto &o : operands())
    o.names(out);
}
bool Expr::mentions(const std::string &n) const {
  std::vector<std::string> all;
  names(all);
  for (auto &a : all)
    if (a == n)
      return true;
  return false;
}

namespace {
bool mentionsAny(const Expr &e, const std::vector<std::string> &vars) {
  for (auto &v : vars)
    if (e.mentions(v))
      return true;
  return false;
}
} // namespace

bool Expr::isLinearIn(const std::vector<std::string> &vars) const {
  auto dependsOn = [&](const Expr &e) { return mentionsAny(e, vars); };
  switch (kind()) {
  case Kind::Const:
  case Kind::Var:
    return true;
  case Kind::Table:
    for (auto &o : operands())
      if (dependsOn(o))
        return false;
    return true;
  case Kind::Neg:
    return operands()[0].isLinearIn(vars);
  case Kind::Add:
  case Kind::Sub:
    return operands()[0].isLinearIn(vars) && operands()[1].isLinearIn(vars);
  case Kind::Mul: {
    bool l = dependsOn(operands()[0]), r = dependsOn(operands()[1]);
    if (l && r)
      return false;
    return operands()[0].isLinearIn(vars) && operands()[1].isLinearIn(vars);
  }
  case Kind::Div:
  case Kind::Mod:
    return !dependsOn(*this);
  case Kind::Call:
    return false;
  }
  return false;
}

bool Expr::isQuasiAffineIn(const std::vector<std::string> &vars) const {
  auto dependsOn = [&](const Expr &e) { return mentionsAny(e, vars); };
  switch (kind()) {
  case Kind::Const:
  case Kind::Var:
  case Kind::Table: // a lookup is an atom, whatever its subscripts
    return true;
  case Kind::Neg:
    return operands()[0].isQuasiAffineIn(vars);
  case Kind::Add:
  case Kind::Sub:
    return operands()[0].isQuasiAffineIn(vars) &&
           operands()[1].isQuasiAffineIn(vars);
  case Kind::Mul:
    if (dependsOn(operands()[0]) && dependsOn(operands()[1]))
      return false;
    return operands()[0].isQuasiAffineIn(vars) &&
           operands()[1].isQuasiAffineIn(vars);
  case Kind::Div:
  case Kind::Mod:
    return !dependsOn(operands()[1]) && operands()[0].isQuasiAffineIn(vars);
  case Kind::Call:
    return false;
  }
  return false;
}

Expr Expr::substitute(const std::string &n, const Expr &value) const {
  switch (kind()) {
  case Kind::Const:
    return *this;
  case Kind::Var:
    return name() == n ? value : *this;
  case Kind::Table: {
    std::vector<Expr> idx;
    for (auto &o : operands())
      idx.push_back(o.substitute(n, value));
    return table(name(), idx);
  }
  case Kind::Neg:
    return neg(operands()[0].substitute(n, value));
  case Kind::Call: {
    std::vector<Expr> args;
    for (auto &o : operands())
      args.push_back(o.substitute(n, value));
    return call(name(), args);
  }
  default:
    return binary(kind(), operands()[0].substitute(n, value),
                  operands()[1].substitute(n, value));
  }
}

bool Expr::operator==(const Expr &o) const {
  if (node_ == o.node_)
    return true;
  if (!node_ || !o.node_ || kind() != o.kind())
    return false;
  switch (kind()) {
  case Kind::Const:
    return constValue() == o.constValue();
  case Kind::Var:
    return name() == o.name();
  case Kind::Table:
  case Kind::Call:
    if (name() != o.name())
      return false;
    break;
  default:
    break;
  }
  return operands() == o.operands();
}

size_t Expr::hash() const {
  if (!node_)
    return 0;
  size_t h = (size_t)kind() * 0x9e3779b97f4a7c15ull;
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  if (kind() == Kind::Const)
    mix(std::hash<int64_t>()(constValue()));
  if (kind() == Kind::Var || kind() == Kind::Table || kind() == Kind::Call)
    mix(std::hash<std::string>()(name()));
  for (auto &o : operands())
    mix(o.hash());
  return h;
}

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
