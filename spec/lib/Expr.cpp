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

} // namespace purlin
