// Unit tests of purlin/spec/Expr.h: parsing and printing (canonical text,
// round trips of random trees, errors with their columns), floor division
// and modulo of negative numbers, overflow guards, linearity, substitution,
// names, the C++ printer, and CompiledExpr against evaluate().
#include "check.h"

#include "purlin/spec/Expr.h"
#include "purlin/spec/ExprParse.h"

#include <climits>
#include <map>
#include <random>

using namespace purlin;

namespace {
Expr P(const std::string &s) {
  std::string err;
  Expr e = Expr::parse(s, err);
  CHECK_MSG(!e.isNull(), "parse '" + s + "': " + err);
  return e;
}

struct Env {
  std::map<std::string, int64_t> vars;
  // Table t: 3 x 4, u: 5 (row-major)
  std::vector<int64_t> t, u;
  EvalEnv env() const {
    EvalEnv e;
    e.var = [this](const std::string &n, int64_t &v) {
      auto it = vars.find(n);
      if (it == vars.end())
        return false;
      v = it->second;
      return true;
    };
    e.table = [this](const std::string &n, const std::vector<int64_t> &idx,
                     int64_t &v) {
      if (n == "t" && idx.size() == 2 && idx[0] >= 0 && idx[0] < 3 &&
          idx[1] >= 0 && idx[1] < 4) {
        v = t[idx[0] * 4 + idx[1]];
        return true;
      }
      if (n == "u" && idx.size() == 1 && idx[0] >= 0 && idx[0] < 5) {
        v = u[idx[0]];
        return true;
      }
      return false;
    };
    return e;
  }
};

bool eval(const Expr &e, const Env &env, int64_t &v) {
  std::string err;
  return evaluate(e, env.env(), v, err);
}
int64_t ev(const std::string &s, const Env &env = Env()) {
  int64_t v = -777777;
  std::string err;
  CHECK_MSG(evaluate(P(s), env.env(), v, err), s + ": " + err);
  return v;
}

void testParsePrint() {
  // Canonical text: spaces around + and -, none around * / %, parentheses
  // only where precedence needs them.
  const char *cases[][2] = {
      {"a+b*c", "a + b*c"},
      {"(a+b)*c", "(a + b)*c"},
      {"a-(b-c)", "a - (b - c)"},
      {"(a-b)-c", "a - b - c"},
      {"a/(b*c)", "a/(b*c)"},
      {"a/b*c", "a/b*c"},
      {"a*(b/c)", "a*(b/c)"},
      {"a%b%c", "a%b%c"},
      {"a%(b%c)", "a%(b%c)"},
      {"-(a+b)", "-(a + b)"},
      {"-a*b", "-a*b"},
      {"a*-b", "a*-b"},
      {"a - -b", "a - -b"},
      {"  r * C +i ", "r*C + i"},
      {"cnt[s][d]", "cnt[s][d]"},
      {"cnt[s+1][ (d) ]*M", "cnt[s + 1][d]*M"},
      {"((((7))))", "7"},
      {"x_1 + _y", "x_1 + _y"},
      {"row*(COLS*R) + r*COLS + col", "row*(COLS*R) + r*COLS + col"},
  };
  for (auto &c : cases) {
    Expr e = P(c[0]);
    CHECK_EQ(e.str(), std::string(c[1]));
    CHECK_EQ(P(e.str()).str(), std::string(c[1]));
  }
  // Kinds and accessors.
  Expr e = P("cnt[s][d]*M + 3");
  CHECK(e.kind() == Expr::Kind::Add);
  CHECK(e.operands()[1].kind() == Expr::Kind::Const &&
        e.operands()[1].constValue() == 3);
  const Expr &tab = e.operands()[0].operands()[0];
  CHECK(tab.kind() == Expr::Kind::Table && tab.name() == "cnt" &&
        tab.operands().size() == 2);
  std::vector<std::string> names;
  e.names(names);
  CHECK((names == std::vector<std::string>{"cnt", "s", "d", "M"}));
  CHECK(e.mentions("d") && !e.mentions("R"));
  CHECK(Expr().isNull() && Expr().str() == "<null>");
  CHECK_EQ(Expr::constant(-5).str(), std::string("-5"));
  CHECK_EQ(ev(Expr::constant(-5).str()), -5);

  // Errors, at the column of the offending character.
  const struct {
    const char *text;
    int col;
  } errs[] = {{"", 0},        {"a +", 3},     {"a + * b", 4}, {"(a + b", 6},
              {"t[1", 3},     {"a b", 2},     {"3 $ 4", 2},   {")", 0},
              {"99999999999999999999", 0},   {"a[]", 2},     {"1 +\t", 4}};
  for (auto &x : errs) {
    std::string err;
    int col = -1;
    Expr bad = Expr::parse(x.text, err, &col);
    CHECK_MSG(bad.isNull() && !err.empty(), std::string("'") + x.text + "'");
    CHECK_MSG(col == x.col, std::string("'") + x.text + "': column " +
                                std::to_string(col) + ", want " +
                                std::to_string(x.col));
  }
}

void testFloorDivMod() {
  const int64_t cases[][4] = {
      // a, b, floor(a/b), a mod b
      {7, 2, 3, 1},     {-7, 2, -4, 1},   {7, -2, -4, -1}, {-7, -2, 3, -1},
      {-8, 2, -4, 0},   {8, -2, -4, 0},   {0, 5, 0, 0},    {0, -5, 0, 0},
      {-1, 5, -1, 4},   {1, -5, -1, -4},  {5, 1, 5, 0},    {-5, -1, 5, 0},
      {INT64_MIN, 2, INT64_MIN / 2, 0},   {INT64_MIN, 3, -3074457345618258603, 1},
      {INT64_MAX, -1, -INT64_MAX, 0},     {INT64_MIN, INT64_MAX, -2, INT64_MAX - 1},
      {INT64_MAX, INT64_MIN, -1, -1},
  };
  for (auto &c : cases) {
    purlin_test::Context ctx(std::to_string(c[0]) + " / " + std::to_string(c[1]));
    CHECK_EQ(floorDiv(c[0], c[1]), c[2]);
    CHECK_EQ(floorMod(c[0], c[1]), c[3]);
  }
  // The identity a = b * floorDiv(a, b) + floorMod(a, b), with the modulo
  // taking the sign of b, on a grid.
  int bad = 0;
  for (int64_t a = -40; a <= 40; ++a)
    for (int64_t b = -9; b <= 9; ++b) {
      if (!b)
        continue;
      int64_t q = floorDiv(a, b), m = floorMod(a, b);
      bool ok = b * q + m == a && (b > 0 ? (m >= 0 && m < b) : (m <= 0 && m > b));
      bad += !ok;
    }
  CHECK_EQ(bad, 0);
  // Through the parser: '/' and '%' are floor division and modulo.
  CHECK_EQ(ev("-7/2"), -4);
  CHECK_EQ(ev("-7%2"), 1);
  CHECK_EQ(ev("7%-2"), -1);
  CHECK_EQ(ev("(0-7)/(0-2)"), 3);
  CHECK_EQ(ev("-(7/2)"), -3);
}

// Division by zero and int64 overflow are errors, never undefined behaviour
// (INT64_MIN / -1 traps on x86).
void testOverflow() {
  Env env;
  env.vars = {{"m", INT64_MIN}, {"M", INT64_MAX}, {"z", 0}, {"n", -1}};
  const char *bad[] = {"m/n",   "m%n + m/n", "-m",   "m - 1", "M + 1",
                       "M*2",   "m*n",       "1/z",  "1%z",   "-(m)/(0-1)",
                       "m/(z - 1)"};
  for (const char *s : bad) {
    int64_t v;
    std::string err;
    CHECK_MSG(!evaluate(P(s), env.env(), v, err) && !err.empty(), s);
  }
  std::string err;
  int64_t v;
  CHECK(!evaluate(P("1/z"), env.env(), v, err) &&
        err.find("division by zero") != std::string::npos);
  CHECK(!evaluate(P("m/n"), env.env(), v, err) &&
        err.find("overflow") != std::string::npos);
  // Fine near the edges.
  CHECK(evaluate(P("m/1"), env.env(), v, err) && v == INT64_MIN);
  CHECK(evaluate(P("m%(0-3)"), env.env(), v, err) && v == -2);
  CHECK(evaluate(P("M*n"), env.env(), v, err) && v == -INT64_MAX);
  CHECK(evaluate(P("m + M"), env.env(), v, err) && v == -1);
  // CompiledExpr alike.
  auto slot = [](const std::string &n) {
    return n == "m" ? 0 : n == "M" ? 1 : n == "z" ? 2 : n == "n" ? 3 : -1;
  };
  auto noTable = [](const std::string &) -> const CompiledExpr::Table * {
    return nullptr;
  };
  const int64_t slots[] = {INT64_MIN, INT64_MAX, 0, -1};
  for (const char *s : bad) {
    CompiledExpr ce;
    CHECK_MSG(CompiledExpr::compile(P(s), slot, noTable, ce, err), err);
    CHECK_MSG(!ce.eval(slots, v), s);
  }
  CompiledExpr ce;
  CHECK(CompiledExpr::compile(P("m%(0-3) - M*n"), slot, noTable, ce, err) &&
        ce.eval(slots, v) && v == INT64_MAX - 2);
}

void testLinear() {
  std::vector<std::string> ri = {"r", "i"};
  const char *lin[] = {"r*C + i",  "i",          "C",         "3*r - 2*i + R",
                       "-(r + i)", "(R/2)*r",    "cnt[s][d]*i", "R%3 + i*(C*R)",
                       "i*C*R",    "(r + 1)*C"};
  const char *non[] = {"r*i",    "i/2",        "i%R",     "cnt[r][0]",
                       "(r*C)/C", "-(r*(i + 1))", "t[i]*2", "i*i"};
  for (const char *s : lin)
    CHECK_MSG(P(s).isLinearIn(ri), s);
  for (const char *s : non)
    CHECK_MSG(!P(s).isLinearIn(ri), s);
  CHECK(P("r*i").isLinearIn({"r"}));
  CHECK(P("x*y").isLinearIn({}));
}

void testSubstitute() {
  Expr e = P("r*C + cnt[r][d] - r");
  Expr s = e.substitute("r", P("a + 1"));
  CHECK_EQ(s.str(), std::string("(a + 1)*C + cnt[a + 1][d] - (a + 1)"));
  Env env;
  env.vars = {{"a", 2}, {"C", 10}, {"x", 3}};
  CHECK_EQ(ev(P("x*C - x").substitute("x", P("a + 1")).str(), env), 27);
  CHECK_EQ(e.substitute("q", P("7")).str(), e.str());
}

void testCxx() {
  auto id = [](const std::string &n) { return "P." + n; };
  CHECK_EQ(P("r*C + i").cxx(id), std::string("P.r*P.C + P.i"));
  CHECK_EQ(P("a/b").cxx(id), std::string("purlin_floordiv(P.a, P.b)"));
  CHECK_EQ(P("(a + 1)%b").cxx(id), std::string("purlin_floormod(P.a + int64_t(1), P.b)"));
  CHECK_EQ(P("cnt[s][d]").cxx(id), std::string("P.cnt(P, P.s, P.d)"));
  // Nested negation must not print as C++'s decrement operator.
  for (const char *s : {"--x", "- -x", "-(-x)", "a - --x", "---x"}) {
    std::string c = P(s).cxx(id), t = P(s).str();
    CHECK_MSG(c.find("--") == std::string::npos, std::string(s) + " -> " + c);
    CHECK_MSG(t.find("--") == std::string::npos, std::string(s) + " -> " + t);
    Env env;
    env.vars = {{"x", 5}, {"a", 1}};
    int64_t v1, v2;
    CHECK(eval(P(s), env, v1) && eval(P(t), env, v2) && v1 == v2);
  }
  CHECK_EQ(Expr::neg(Expr::constant(-3)).str().find("--"), std::string::npos);
}

// Random trees: print, parse, print again gives the same text and the same
// value; CompiledExpr agrees with evaluate().
Expr randomExpr(std::mt19937 &rng, int depth) {
  const char *vars[] = {"a", "b", "c", "R"};
  int k = depth <= 0 ? (int)(rng() % 3) : (int)(rng() % 10);
  switch (k) {
  case 0:
    return Expr::constant((int64_t)(rng() % 20));
  case 1:
    return Expr::var(vars[rng() % 4]);
  case 2:
    if (rng() % 2)
      return Expr::table("u", {randomExpr(rng, depth - 2)});
    return Expr::table("t", {randomExpr(rng, depth - 2), randomExpr(rng, depth - 2)});
  case 3:
    return Expr::neg(randomExpr(rng, depth - 1));
  default: {
    Expr::Kind ks[] = {Expr::Kind::Add, Expr::Kind::Sub, Expr::Kind::Mul,
                       Expr::Kind::Div, Expr::Kind::Mod, Expr::Kind::Add};
    return Expr::binary(ks[rng() % 6], randomExpr(rng, depth - 1),
                        randomExpr(rng, depth - 1));
  }
  }
}

void testRandomTrees() {
  std::mt19937 rng(99);
  int textBad = 0, valueBad = 0, compiledBad = 0, evaluated = 0;
  CompiledExpr::Table tt{{3, 4}, nullptr}, tu{{5}, nullptr};
  for (int n = 0; n < 3000; ++n) {
    Expr e = randomExpr(rng, 5);
    std::string text = e.str(), err;
    Expr back = Expr::parse(text, err);
    if (back.isNull() || back.str() != text) {
      if (textBad++ < 5)
        std::printf("  round trip of '%s': %s\n", text.c_str(),
                    back.isNull() ? err.c_str() : back.str().c_str());
      continue;
    }
    for (int k = 0; k < 4; ++k) {
      Env env;
      env.vars = {{"a", (int64_t)(rng() % 11) - 5}, {"b", (int64_t)(rng() % 7)},
                  {"c", -(int64_t)(rng() % 9)}, {"R", 1 + (int64_t)(rng() % 8)}};
      for (int i = 0; i < 12; ++i)
        env.t.push_back((int64_t)(rng() % 9) - 4);
      for (int i = 0; i < 5; ++i)
        env.u.push_back((int64_t)(rng() % 5));
      int64_t v1 = 0, v2 = 0;
      bool ok1 = eval(e, env, v1), ok2 = eval(back, env, v2);
      if (ok1 != ok2 || (ok1 && v1 != v2)) {
        if (valueBad++ < 5)
          std::printf("  value of '%s' changes in its round trip\n", text.c_str());
      }
      evaluated += ok1;
      // CompiledExpr: slots a, b, c, R.
      tt.data = env.t.data();
      tu.data = env.u.data();
      CompiledExpr ce;
      auto slot = [](const std::string &nm) {
        return nm == "a" ? 0 : nm == "b" ? 1 : nm == "c" ? 2 : nm == "R" ? 3 : -1;
      };
      auto table = [&](const std::string &nm) -> const CompiledExpr::Table * {
        return nm == "t" ? &tt : nm == "u" ? &tu : nullptr;
      };
      int64_t slots[] = {env.vars["a"], env.vars["b"], env.vars["c"], env.vars["R"]};
      int64_t v3 = 0;
      bool okc = CompiledExpr::compile(e, slot, table, ce, err);
      bool ok3 = okc && ce.eval(slots, v3);
      if (!okc || ok3 != ok1 || (ok1 && v3 != v1)) {
        if (compiledBad++ < 5)
          std::printf("  CompiledExpr of '%s': %s %lld, evaluate %s %lld\n",
                      text.c_str(), ok3 ? "ok" : "fails", (long long)v3,
                      ok1 ? "ok" : "fails", (long long)v1);
      }
    }
  }
  CHECK_EQ(textBad, 0);
  CHECK_EQ(valueBad, 0);
  CHECK_EQ(compiledBad, 0);
  CHECK(evaluated > 3000); // most random trees evaluate
  // Compile errors: unknown names and wrong subscripts.
  CompiledExpr ce;
  std::string err;
  auto slot = [](const std::string &n) { return n == "a" ? 0 : -1; };
  auto table = [&](const std::string &n) -> const CompiledExpr::Table * {
    return n == "u" ? &tu : nullptr;
  };
  CHECK(!CompiledExpr::compile(P("a + q"), slot, table, ce, err) &&
        err.find("'q'") != std::string::npos);
  CHECK(!CompiledExpr::compile(P("u[1][2]"), slot, table, ce, err));
  CHECK(!CompiledExpr::compile(P("w[1]"), slot, table, ce, err));
  // Table lookups out of range fail.
  int64_t uv[5] = {1, 2, 3, 4, 5}, v;
  tu.data = uv;
  int64_t s[] = {5};
  CHECK(CompiledExpr::compile(P("u[a]"), slot, table, ce, err) && !ce.eval(s, v));
  s[0] = -1;
  CHECK(!ce.eval(s, v));
  s[0] = 4;
  CHECK(ce.eval(s, v) && v == 5);
  // Unknown names and out-of-range tables in evaluate().
  Env env;
  env.u = {1, 2, 3, 4, 5};
  CHECK(!eval(P("zz"), env, v) && !eval(P("u[5]"), env, v) &&
        !eval(P("u[-1]"), env, v) && eval(P("u[4]"), env, v) && v == 5);
  // A deep expression (the compiled stack is bounded) fails rather than
  // overflowing.
  Expr deep = Expr::constant(1);
  for (int i = 0; i < 100; ++i)
    deep = Expr::binary(Expr::Kind::Add, Expr::constant(1), deep);
  CHECK(CompiledExpr::compile(deep, slot, table, ce, err));
  bool okDeep = ce.eval(s, v);
  CHECK(!okDeep || v == 101);
}
// The one parser's messages and limits (ExprParse.h), as every client
// (the plain description, the .purlin frontend, the layout dialect) gets
// them; and the structural equality and hash the layout dialect keys its
// expression attributes on.
void testParserRules() {
  const struct {
    const char *text, *message;
    int col;
  } cases[] = {
      {"(a + b", "expected ')' to close '(', got end of text", 6},
      {"t[1 + 2)", "expected ']' after the table subscript, got ')'", 7},
      {"a + ]", "expected an expression, got ']'", 4},
      {"a b", "expected the end of the expression, got identifier 'b'", 2},
      {"1 $", "unexpected character '$'", 2},
      {"1099511627777", "integer literal too large (the limit is 2^40)", 0},
  };
  for (auto &c : cases) {
    std::string err;
    int col = -1;
    CHECK_MSG(Expr::parse(c.text, err, &col).isNull(), c.text);
    CHECK_EQ(err, std::string(c.message));
    CHECK_EQ(col, c.col);
  }
  CHECK_EQ(P("1099511627776").constValue(), kMaxExprLiteral);
  // Depth: nesting and operator chains alike, at kMaxExprDepth.
  std::string ok = std::string(kMaxExprDepth - 1, '(') + "1" +
                   std::string(kMaxExprDepth - 1, ')');
  std::string err;
  CHECK(!Expr::parse(ok, err).isNull());
  std::string deep = "(" + ok + ")" + ")";
  deep = "(" + deep;
  CHECK(Expr::parse(deep, err).isNull() &&
        err == "expression too deep (more than 128 levels)");
  std::string chain = "1";
  for (int i = 0; i < kMaxExprDepth; ++i)
    chain += "+1";
  CHECK(Expr::parse(chain, err).isNull() &&
        err == "expression too deep (more than 128 levels)");
  // Names.
  CHECK(isExprName("x_1") && isExprName("_") && !isExprName("1x") &&
        !isExprName("a.b") && !isExprName(""));
  // Printing for MLIR's syntax: the floor modulo as a word.
  CHECK_EQ(P("a % b + c%(d*2)").str(" mod "),
           std::string("a mod b + c mod (d*2)"));
  // Equality is structural; equal trees hash alike.
  CHECK(P("a*(b + 1)") == P("a * (b+1)"));
  CHECK(P("a*(b + 1)") != P("a*(b + 2)") && P("t[1]") != P("u[1]") &&
        P("a - b") != P("a + b") && P("-1") != P("1") && Expr() != P("1"));
  CHECK(Expr() == Expr());
  CHECK_EQ(P("cnt[s][d]*M").hash(), P("cnt[s][d] * M").hash());
}
} // namespace

int main() {
  testParsePrint();
  testParserRules();
  testFloorDivMod();
  testOverflow();
  testLinear();
  testSubstitute();
  testCxx();
  testRandomTrees();
  return purlin_test::finish();
}
