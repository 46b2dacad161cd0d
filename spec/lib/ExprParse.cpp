// The parser of the expression grammar (ExprParse.h), and the token source
// of plain text that Expr::parse and the plain description use.
#include "purlin/spec/ExprParse.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace purlin {

const char *const kExprLiteralTooLarge =
    "integer literal too large (the limit is 2^40)";

bool isExprName(const std::string &s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum((unsigned char)c) || c == '_';
  });
}

namespace {
const std::string kTooDeep = "expression too deep (more than " +
                             std::to_string(kMaxExprDepth) + " levels)";

// Recursive descent. Each result carries the depth of its tree, kept at or
// below kMaxExprDepth so that every later walk of it stays shallow; `nest`
// bounds the parser's own recursion (parentheses and subscripts) before it
// descends.
class Parser {
public:
  explicit Parser(ExprTokens &in) : in(in) {}

  struct E {
    Expr e;
    int depth = 0;
  };

  bool expr(E &out) {
    struct Nest {
      int &n;
      ~Nest() { --n; }
    } guard{++nest};
    if (nest > kMaxExprDepth)
      return fail(in.here(), kTooDeep);
    if (!term(out))
      return false;
    for (;;) {
      ExprPos at = in.here();
      Expr::Kind k;
      if (in.accept(ExprPunct::Plus))
        k = Expr::Kind::Add;
      else if (in.accept(ExprPunct::Minus))
        k = Expr::Kind::Sub;
      else
        return true;
      E rhs;
      if (!term(rhs) || !combine(out, k, rhs, at))
        return false;
    }
  }

private:
  bool fail(ExprPos at, const std::string &msg) {
    in.error(at, msg);
    return false;
  }
  bool expect(ExprPunct p, const char *what) {
    if (in.accept(p))
      return true;
    in.expected(what);
    return false;
  }
  bool combine(E &lhs, Expr::Kind k, const E &rhs, ExprPos at) {
    int d = std::max(lhs.depth, rhs.depth) + 1;
    if (d > kMaxExprDepth)
      return fail(at, kTooDeep);
    lhs.e = Expr::binary(k, lhs.e, rhs.e);
    lhs.depth = d;
    return true;
  }

  bool term(E &out) {
    if (!unary(out))
      return false;
    for (;;) {
      ExprPos at = in.here();
      Expr::Kind k;
      if (in.accept(ExprPunct::Star))
        k = Expr::Kind::Mul;
      else if (in.accept(ExprPunct::Slash))
        k = Expr::Kind::Div;
      else if (in.accept(ExprPunct::Percent))
        k = Expr::Kind::Mod;
      else
        return true;
      E rhs;
      if (!unary(rhs) || !combine(out, k, rhs, at))
        return false;
    }
  }

  bool unary(E &out) {
    // A run of '-' is counted, not recursed into: "- - - x" nests once.
    ExprPos at = in.here();
    int n = 0;
    while (in.accept(ExprPunct::Minus))
      ++n;
    if (!primary(out))
      return false;
    if (n == 0)
      return true;
    if (out.depth + n > kMaxExprDepth)
      return fail(at, kTooDeep);
    for (int i = 0; i < n; ++i)
      out.e = Expr::neg(out.e);
    out.depth += n;
    return true;
  }

  bool primary(E &out) {
    ExprPos at = in.here();
    int64_t v;
    if (in.acceptInt(v)) {
      if (v < 0 || v > kMaxExprLiteral)
        return fail(at, kExprLiteralTooLarge);
      out = E{Expr::constant(v), 1};
      return true;
    }
    std::string name;
    if (in.acceptIdent(name)) {
      if (!isExprName(name))
        return fail(at, "'" + name +
                            "' is not a name (a letter or '_', then "
                            "letters, digits or '_')");
      if (in.accept(ExprPunct::LParen)) { // a call: f(a, b)
        std::vector<Expr> args;
        int depth = 1;
        do {
          E a;
          if (!expr(a))
            return false;
          if (a.depth + 1 > kMaxExprDepth)
            return fail(at, kTooDeep);
          depth = std::max(depth, a.depth + 1);
          args.push_back(a.e);
        } while (in.accept(ExprPunct::Comma));
        if (!expect(ExprPunct::RParen, "')' after the arguments"))
          return false;
        out = E{Expr::call(name, std::move(args)), depth};
        return true;
      }
      std::vector<Expr> index;
      int depth = 1;
      for (;;) {
        ExprPos open = in.here();
        if (!in.accept(ExprPunct::LSquare))
          break;
        E i;
        if (!expr(i) ||
            !expect(ExprPunct::RSquare, "']' after the table subscript"))
          return false;
        if (i.depth + 1 > kMaxExprDepth)
          return fail(open, kTooDeep);
        depth = std::max(depth, i.depth + 1);
        index.push_back(i.e);
      }
      out = E{index.empty() ? Expr::var(name)
                            : Expr::table(name, std::move(index)),
              depth};
      return true;
    }
    if (in.accept(ExprPunct::LParen))
      return expr(out) && expect(ExprPunct::RParen, "')' to close '('");
    in.expected("an expression");
    return false;
  }

  ExprTokens &in;
  int nest = 0; // expr() calls in progress
};

//===----------------------------------------------------------------------===//
// Plain text: positions are 0-based columns.
//===----------------------------------------------------------------------===//
class TextTokens : public ExprTokens {
public:
  explicit TextTokens(const std::string &s) : s(s) {}

  bool accept(ExprPunct p) override {
    skip();
    if (pos < s.size() && s[pos] == punctChar(p)) {
      ++pos;
      return true;
    }
    return false;
  }
  bool acceptInt(int64_t &v) override {
    skip();
    if (pos >= s.size() || !std::isdigit((unsigned char)s[pos]))
      return false;
    v = 0;
    for (; pos < s.size() && std::isdigit((unsigned char)s[pos]); ++pos)
      v = v > (INT64_MAX - 9) / 10 ? INT64_MAX : v * 10 + (s[pos] - '0');
    return true;
  }
  bool acceptIdent(std::string &name) override {
    skip();
    if (pos >= s.size() || !isIdentStart(s[pos]))
      return false;
    size_t b = pos;
    while (pos < s.size() &&
           (std::isalnum((unsigned char)s[pos]) || s[pos] == '_'))
      ++pos;
    name = s.substr(b, pos - b);
    return true;
  }
  ExprPos here() override {
    skip();
    return ExprPos{(int64_t)pos, 0};
  }
  void expected(const std::string &what) override {
    skip();
    if (pos < s.size() && !startsToken(s[pos])) {
      error(here(), unexpected(s[pos]));
      return;
    }
    error(here(), "expected " + what + ", got " + describeNext());
  }
  void error(ExprPos at, const std::string &message) override {
    if (!failed) {
      failed = true;
      msg = message;
      col = (int)at.a;
    }
  }

  bool atEnd() {
    skip();
    return pos >= s.size();
  }

  bool failed = false;
  std::string msg;
  int col = -1;

private:
  static char punctChar(ExprPunct p) {
    static const char kChars[] = "+-*/%()[]{}|,";
    return kChars[(int)p];
  }
  static bool isIdentStart(char c) {
    return std::isalpha((unsigned char)c) || c == '_';
  }
  static bool startsToken(char c) {
    return isIdentStart(c) || std::isdigit((unsigned char)c) ||
           std::string("+-*/%()[]{}|").find(c) != std::string::npos;
  }
  static std::string unexpected(char c) {
    char buf[32];
    if (std::isprint((unsigned char)c))
      std::snprintf(buf, sizeof buf, "'%c'", c);
    else
      std::snprintf(buf, sizeof buf, "byte 0x%02x", (unsigned char)c);
    return std::string("unexpected character ") + buf;
  }
  std::string describeNext() {
    if (pos >= s.size())
      return "end of text";
    char c = s[pos];
    size_t e = pos;
    if (isIdentStart(c)) {
      while (e < s.size() && (std::isalnum((unsigned char)s[e]) || s[e] == '_'))
        ++e;
      return "identifier '" + s.substr(pos, e - pos) + "'";
    }
    if (std::isdigit((unsigned char)c)) {
      while (e < s.size() && std::isdigit((unsigned char)s[e]))
        ++e;
      return "integer " + s.substr(pos, e - pos);
    }
    return std::string("'") + c + "'";
  }
  void skip() {
    while (pos < s.size() && std::isspace((unsigned char)s[pos]))
      ++pos;
  }

  const std::string &s;
  size_t pos = 0;
};
} // namespace

bool parseExpr(ExprTokens &in, Expr &out) {
  Parser p(in);
  Parser::E e;
  if (!p.expr(e))
    return false;
  out = e.e;
  return true;
}

bool parseRankSel(ExprTokens &in, RankSel &out, bool whole) {
  out = RankSel();
  if (in.accept(ExprPunct::Star)) {
    out.every = true;
    return true;
  }
  if (in.accept(ExprPunct::LBrace)) {
    if (!parseExpr(in, out.rank))
      return false;
    if (!in.accept(ExprPunct::Bar)) {
      in.expected("'|' and the set's variable");
      return false;
    }
    ExprPos at = in.here();
    std::string kw;
    if (!in.acceptIdent(out.var)) {
      in.expected("the set's variable after '|'");
      return false;
    }
    if (!isExprName(out.var)) {
      in.error(at, "'" + out.var + "' is not a name");
      return false;
    }
    at = in.here();
    if (!in.acceptIdent(kw) || kw != "in") {
      in.error(at, "expected 'in' after the set's variable '" + out.var + "'");
      return false;
    }
    if (!in.accept(ExprPunct::LSquare)) {
      in.expected("'[' before the set's extent");
      return false;
    }
    if (!parseExpr(in, out.extent))
      return false;
    if (!in.accept(ExprPunct::RSquare)) {
      in.expected("']' after the set's extent");
      return false;
    }
    if (!in.accept(ExprPunct::RBrace)) {
      in.expected("'}' to close the rank set");
      return false;
    }
    return true;
  }
  if (whole)
    return parseExpr(in, out.rank);
  ExprPos at = in.here();
  int64_t v;
  std::string name;
  if (in.acceptInt(v)) {
    if (v < 0 || v > kMaxExprLiteral) {
      in.error(at, kExprLiteralTooLarge);
      return false;
    }
    out.rank = Expr::constant(v);
    return true;
  }
  if (in.acceptIdent(name)) {
    if (!isExprName(name)) {
      in.error(at, "'" + name + "' is not a name");
      return false;
    }
    out.rank = Expr::var(name);
    return true;
  }
  if (in.accept(ExprPunct::LParen)) {
    if (!parseExpr(in, out.rank))
      return false;
    if (!in.accept(ExprPunct::RParen)) {
      in.expected("')' after the rank expression");
      return false;
    }
    return true;
  }
  in.expected("a rank ('*', a name, an integer, '(' expr ')' or a set "
              "'{' expr '|' name 'in' '[' expr ']' '}')");
  return false;
}

bool parseRankSelText(const std::string &text, RankSel &out,
                      std::string &error, int *errorCol) {
  TextTokens in(text);
  if (parseRankSel(in, out, true) && !in.atEnd())
    in.expected("the end of the rank");
  if (in.failed) {
    error = in.msg;
    if (errorCol)
      *errorCol = in.col;
    return false;
  }
  return true;
}

Expr Expr::parse(const std::string &text, std::string &error, int *errorCol) {
  TextTokens in(text);
  Expr e;
  if (parseExpr(in, e) && !in.atEnd())
    in.expected("the end of the expression");
  if (in.failed) {
    error = in.msg;
    if (errorCol)
      *errorCol = in.col;
    return Expr();
  }
  return e;
}

} // namespace purlin
