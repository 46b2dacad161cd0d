// The parser of the expression grammar (Expr.h).
#include "purlin/spec/Expr.h"

#include <cctype>
#include <cstdint>

namespace purlin {

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//
namespace {
struct ExprParser {
  const std::string &s;
  size_t pos = 0;
  std::string error;
  int errorCol = -1;

  void skip() {
    while (pos < s.size() && std::isspace((unsigned char)s[pos]))
      ++pos;
  }
  bool fail(const std::string &msg) {
    if (error.empty()) {
      error = msg;
      errorCol = (int)pos;
    }
    return false;
  }
  bool eat(char c) {
    skip();
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool expr(Expr &out) {
    Expr lhs;
    if (!term(lhs))
      return false;
    for (;;) {
      Expr::Kind k;
      if (eat('+'))
        k = Expr::Kind::Add;
      else if (eat('-'))
        k = Expr::Kind::Sub;
      else
        break;
      Expr rhs;
      if (!term(rhs))
        return false;
      lhs = Expr::binary(k, lhs, rhs);
    }
    out = lhs;
    return true;
  }
  bool term(Expr &out) {
    Expr lhs;
    if (!unary(lhs))
      return false;
    for (;;) {
      Expr::Kind k;
      if (eat('*'))
        k = Expr::Kind::Mul;
      else if (eat('/'))
        k = Expr::Kind::Div;
      else if (eat('%'))
        k = Expr::Kind::Mod;
      else
        break;
      Expr rhs;
      if (!unary(rhs))
        return false;
      lhs = Expr::binary(k, lhs, rhs);
    }
    out = lhs;
    return true;
  }
  bool unary(Expr &out) {
    if (eat('-')) {
      Expr e;
      if (!unary(e))
        return false;
      out = Expr::neg(e);
      return true;
    }
    return primary(out);
  }
  bool primary(Expr &out) {
    skip();
    if (pos >= s.size())
      return fail("expected an expression");
    char c = s[pos];
    if (std::isdigit((unsigned char)c)) {
      int64_t v = 0;
      while (pos < s.size() && std::isdigit((unsigned char)s[pos])) {
        if (v > (INT64_MAX - 9) / 10)
          return fail("integer literal too large");
        v = v * 10 + (s[pos++] - '0');
      }
      out = Expr::constant(v);
      return true;
    }
    if (std::isalpha((unsigned char)c) || c == '_') {
      size_t b = pos;
      while (pos < s.size() &&
             (std::isalnum((unsigned char)s[pos]) || s[pos] == '_'))
        ++pos;
      std::string id = s.substr(b, pos - b);
      std::vector<Expr> idx;
      while (eat('[')) {
        Expr e;
        if (!expr(e))
          return false;
        if (!eat(']'))
          return fail("expected ']'");
        idx.push_back(e);
      }
      out = idx.empty() ? Expr::var(id) : Expr::table(id, idx);
      return true;
    }
    if (eat('(')) {
      if (!expr(out))
        return false;
      if (!eat(')'))
        return fail("expected ')'");
      return true;
    }
    return fail(std::string("unexpected character '") + c + "'");
  }
};
} // namespace

Expr Expr::parse(const std::string &text, std::string &error, int *errorCol) {
  ExprParser p{text};
  Expr e;
  bool ok = p.expr(e);
  if (ok) {
    p.skip();
    if (p.pos != text.size())
      ok = p.fail("unexpected text after the expression");
  }
  if (!ok) {
    error = p.error;
    if (errorCol)
      *errorCol = p.errorCol;
    return Expr();
  }
  return e;
}


} // namespace purlin
