// Integer expressions of a collective's layouts: extents, rank selectors and
// index maps. MLIR-free: the compiler, the runtime and the reference evaluator
// share this one definition.
//
// Grammar (the `.purlin` language, the plain description and the layout
// dialect use the same; its one parser is ExprParse.h):
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := '-' unary | primary
//   primary := INT | IDENT ('[' expr ']')* | IDENT '(' expr (',' expr)* ')'
//            | '(' expr ')'
// An IDENT is a name-space coordinate or a scalar parameter; with subscripts it
// is a lookup in a table parameter. '/' and '%' are floor division and modulo.
// A call `f(a, b)` is a function of an epilogue's value expressions
// (Collective.h, Epilogue: sqrt, rowsum, ...); it is not an integer
// expression, so evaluating one is an error and it is neither affine nor
// quasi-affine.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace purlin {

class Expr {
public:
  enum class Kind { Const, Var, Table, Add, Sub, Mul, Div, Mod, Neg, Call };

  Expr() = default; // the null expression; isNull() is true
  static Expr constant(int64_t v);
  static Expr var(const std::string &name);
  static Expr table(const std::string &name, std::vector<Expr> index);
  static Expr binary(Kind k, Expr lhs, Expr rhs);
  static Expr neg(Expr e);
  static Expr call(const std::string &name, std::vector<Expr> args);

  /// Parses `text` (ExprParse.h's parser over plain text); on failure
  /// returns a null Expr and sets `error` (and the 0-based column of the
  /// offending character in `errorCol`).
  static Expr parse(const std::string &text, std::string &error,
                    int *errorCol = nullptr);

  bool isNull() const { return !node_; }
  Kind kind() const;
  int64_t constValue() const;          // Kind::Const
  const std::string &name() const;     // Kind::Var, Kind::Table, Kind::Call
  const std::vector<Expr> &operands() const; // children (Table: the index;
                                             // Call: the arguments)

  /// Canonical text, parenthesised only where precedence needs it. The floor
  /// modulo prints as `modOp` ("%"; the layout dialect's syntax has no '%'
  /// token and passes " mod ").
  std::string str(const char *modOp = "%") const;
  /// C++ text; `ident` maps a variable or table name to the C++ that reads it
  /// (a table lookup prints as IDENT(P, i, j): a function of the parameters
  /// `P` in scope); '/' and '%' print as purlin_floordiv / purlin_floormod.
  std::string cxx(const std::function<std::string(const std::string &)> &ident) const;

  /// Every variable and table name the expression mentions (not the
  /// function of a call).
  void names(std::vector<std::string> &out) const;
  bool mentions(const std::string &name) const;
  /// True when the expression is affine in `vars` with coefficients that do
  /// not depend on them (so it equals e(0) + sum_j coeff_j * v_j).
  bool isLinearIn(const std::vector<std::string> &vars) const;
  /// True when the expression is quasi-affine in `vars`: sums, products
  /// with a factor free of them, floor division and modulo by divisors free
  /// of them, and table lookups (with any subscripts).
  bool isQuasiAffineIn(const std::vector<std::string> &vars) const;

  /// Replaces variable `name` with `value` everywhere.
  Expr substitute(const std::string &name, const Expr &value) const;

  /// Structural equality and a hash to match it (the layout dialect keys
  /// its expression attributes on them). Null expressions are equal.
  bool operator==(const Expr &o) const;
  bool operator!=(const Expr &o) const { return !(*this == o); }
  size_t hash() const;

  struct Node;

private:
  explicit Expr(std::shared_ptr<const Node> n) : node_(std::move(n)) {}
  std::shared_ptr<const Node> node_;
};

/// Where to read variables and tables while evaluating. A table is a
/// row-major array with the given extents; a lookup outside it is an error.
struct EvalEnv {
  std::function<bool(const std::string &, int64_t &)> var;
  std::function<bool(const std::string &, const std::vector<int64_t> &,
                     int64_t &)>
      table;
};

/// Evaluates `e`; returns false and sets `error` on an unknown name, a table
/// index out of range, a division by zero or an int64 overflow (INT64_MIN / -1
/// included).
bool evaluate(const Expr &e, const EvalEnv &env, int64_t &out,
              std::string &error);

/// A compiled form of an expression: variables are slots of an int64 array
/// and tables are resolved once, so evaluating is a short loop. Used by the
/// reference evaluator and the host target on every name.
class CompiledExpr {
public:
  struct Table {
    std::vector<int64_t> extents;
    const int64_t *data = nullptr;
  };
  CompiledExpr() = default;
  /// `slot(name)` gives a variable's slot or -1; `table(name)` a table or null.
  static bool compile(const Expr &e,
                      const std::function<int(const std::string &)> &slot,
                      const std::function<const Table *(const std::string &)> &table,
                      CompiledExpr &out, std::string &error);
  /// Evaluates with `slots`; returns false on division by zero, an int64
  /// overflow or a table index out of range.
  bool eval(const int64_t *slots, int64_t &out) const;

private:
  struct Op {
    enum Code : uint8_t { Push, Load, Look, Add, Sub, Mul, Div, Mod, Neg } code;
    int64_t arg = 0;         // Push: constant; Load: slot; Look: index count
    const Table *tab = nullptr;
  };
  std::vector<Op> ops_;
};

/// Floor division and modulo (b != 0). floorDiv(INT64_MIN, -1) wraps to
/// INT64_MIN rather than trapping.
int64_t floorDiv(int64_t a, int64_t b);
int64_t floorMod(int64_t a, int64_t b);

} // namespace purlin
