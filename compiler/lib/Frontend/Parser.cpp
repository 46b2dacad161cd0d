#include "purlin/Frontend/Parser.h"

#include "purlin/Frontend/Lexer.h"

#include <algorithm>

namespace purlin {
namespace {

class Parser {
public:
  explicit Parser(const std::string &text) : lex_(text) { tok_ = lex_.next(); }

  bool file(Collective &c);
  Diag error;

private:
  // Token handling. Every failure records the first error and returns false;
  // callers return false at once, so the parse ends at the first error.
  SrcLoc here() const { return SrcLoc{tok_.line, tok_.col}; }
  void consume() {
    if (tok_.kind != Token::Eof && tok_.kind != Token::Error)
      tok_ = lex_.next();
  }
  bool fail(const std::string &msg) { return failAt(here(), msg); }
  bool failAt(SrcLoc loc, const std::string &msg) {
    if (!failed_) {
      failed_ = true;
      error = Diag{loc, msg};
    }
    return false;
  }
  bool expected(const std::string &what) {
    if (tok_.kind == Token::Error)
      return fail(tok_.text);
    return fail("expected " + what + ", got " + describe(tok_));
  }
  bool is(Token::Kind k) const { return tok_.kind == k; }
  bool isKeyword(const char *kw) const {
    return tok_.kind == Token::Ident && tok_.text == kw;
  }
  bool accept(Token::Kind k) {
    if (!is(k))
      return false;
    consume();
    return true;
  }
  bool expect(Token::Kind k, const char *context = nullptr) {
    if (accept(k))
      return true;
    return expected(std::string(tokenKindName(k)) +
                    (context ? std::string(" ") + context : ""));
  }
  bool expectKeyword(const char *kw, const char *context = nullptr) {
    if (isKeyword(kw)) {
      consume();
      return true;
    }
    return expected(std::string("'") + kw + "'" +
                    (context ? std::string(" ") + context : ""));
  }
  bool ident(std::string &out, SrcLoc *loc, const char *what) {
    if (!is(Token::Ident))
      return expected(what);
    if (loc)
      *loc = here();
    out = tok_.text;
    consume();
    return true;
  }

  // Grammar.
  bool param(Collective &c);
  bool item(Collective &c);
  bool buffer(Collective &c);
  bool clause(Collective &c);
  bool access(Access &a);
  bool op(Clause &cl);

  // Expressions: an Expr plus the depth of its tree, kept below
  // kMaxExprDepth so that recursive walks of it stay shallow.
  struct E {
    Expr e;
    int depth = 0;
  };
  bool expr(E &out);
  bool term(E &out);
  bool unary(E &out);
  bool primary(E &out);
  bool expr(Expr &out) {
    E e;
    if (!expr(e))
      return false;
    out = e.e;
    return true;
  }
  bool combine(E &lhs, Expr::Kind k, const E &rhs, SrcLoc at) {
    int d = std::max(lhs.depth, rhs.depth) + 1;
    if (d > kMaxExprDepth)
      return failAt(at, "expression too deep (more than " +
                            std::to_string(kMaxExprDepth) + " levels)");
    lhs.e = Expr::binary(k, lhs.e, rhs.e);
    lhs.depth = d;
    return true;
  }

  Lexer lex_;
  Token tok_;
  bool failed_ = false;
  int nest_ = 0; // expr() calls in progress
};

bool Parser::file(Collective &c) {
  if (!expectKeyword("collective", "at the start of the file"))
    return false;
  if (!ident(c.name, &c.loc, "the collective's name"))
    return false;
  if (!expect(Token::LParen, "before the parameters"))
    return false;
  do {
    if (!param(c))
      return false;
  } while (accept(Token::Comma));
  if (!expect(Token::RParen, "after the parameters") ||
      !expect(Token::LBrace, "to open the body"))
    return false;
  while (!is(Token::RBrace)) {
    if (is(Token::Eof))
      return expected("'}' to close the collective");
    if (!item(c))
      return false;
  }
  consume();
  if (!is(Token::Eof))
    return expected("end of file after the collective");
  return true;
}

bool Parser::param(Collective &c) {
  Param p;
  if (!ident(p.name, &p.loc, "a parameter name") ||
      !expect(Token::Colon, "after the parameter name"))
    return false;
  if (!is(Token::Ident))
    return expected("a parameter kind (ranks, count, root, type, redop or "
                    "table)");
  const std::string kind = tok_.text;
  if (!parseParamKind(kind, p.kind))
    return expected("a parameter kind (ranks, count, root, type, redop or "
                    "table)");
  consume();
  if (p.kind == ParamKind::Table) {
    if (!is(Token::LSquare))
      return expected("'[' and the table's extent");
    while (accept(Token::LSquare)) {
      Expr e;
      if (!expr(e) || !expect(Token::RSquare, "after the table's extent"))
        return false;
      p.dims.push_back(e);
    }
    if (!expect(Token::LessEqual, "and the table's bound") || !expr(p.max))
      return false;
  }
  c.params.push_back(std::move(p));
  return true;
}

bool Parser::item(Collective &c) {
  if (isKeyword("in") || isKeyword("out"))
    return buffer(c);
  if (isKeyword("name"))
    return clause(c);
  return expected("'in', 'out' or 'name'");
}

bool Parser::buffer(Collective &c) {
  Buffer b;
  b.role = isKeyword("in") ? BufferRole::In : BufferRole::Out;
  consume();
  if (!ident(b.name, &b.loc, "a buffer name") ||
      !expect(Token::Colon, "after the buffer name") ||
      !ident(b.dtype, nullptr, "an element type") ||
      !expect(Token::LSquare, "before the buffer's size") || !expr(b.size) ||
      !expect(Token::RSquare, "after the buffer's size") ||
      !expect(Token::Semi, "after the buffer"))
    return false;
  c.buffers.push_back(std::move(b));
  return true;
}

bool Parser::clause(Collective &c) {
  Clause cl;
  cl.loc = here();
  consume(); // 'name'
  std::vector<SrcLoc> coordLocs;
  auto coord = [&]() {
    Dim d;
    SrcLoc loc;
    if (!ident(d.name, &loc, "a coordinate name"))
      return false;
    d.loc = loc;
    cl.dims.push_back(std::move(d));
    coordLocs.push_back(loc);
    return true;
  };
  if (accept(Token::LParen)) {
    do {
      if (!coord())
        return false;
    } while (accept(Token::Comma));
    if (!expect(Token::RParen, "after the coordinates"))
      return false;
  } else if (!coord()) {
    return false;
  }
  if (!expectKeyword("in", "after the coordinates"))
    return false;
  SrcLoc open = here();
  if (!expect(Token::LSquare, "before the extents"))
    return false;
  size_t n = 0;
  do {
    SrcLoc at = here();
    Expr e;
    if (!expr(e))
      return false;
    if (n < cl.dims.size()) {
      cl.dims[n].extent = e;
      cl.dims[n].loc = at; // extent problems are reported at the extent
    }
    ++n;
  } while (accept(Token::Comma));
  if (!expect(Token::RSquare, "after the extents"))
    return false;
  if (n != cl.dims.size())
    return failAt(open, std::to_string(cl.dims.size()) + " coordinate(s) but " +
                            std::to_string(n) + " extent(s)");
  if (!expect(Token::Colon, "after the extents") || !access(cl.from) ||
      !expect(Token::Arrow, "between the contributor and the destination") ||
      !access(cl.to) || !op(cl) || !expect(Token::Semi, "after the name clause"))
    return false;
  c.clauses.push_back(std::move(cl));
  return true;
}

bool Parser::access(Access &a) {
  if (!ident(a.buffer, &a.loc, "a buffer name") ||
      !expect(Token::At, "and a rank after the buffer name"))
    return false;
  a.rankLoc = here();
  if (accept(Token::Star)) {
    a.rank.every = true;
  } else if (is(Token::Ident)) {
    a.rank.rank = Expr::var(tok_.text);
    consume();
  } else if (is(Token::Int)) {
    a.rank.rank = Expr::constant(tok_.value);
    consume();
  } else if (accept(Token::LParen)) {
    if (!expr(a.rank.rank) ||
        !expect(Token::RParen, "after the rank expression"))
      return false;
  } else {
    return expected("a rank ('*', a name, an integer or '(' expr ')')");
  }
  if (!expect(Token::LSquare, "before the index"))
    return false;
  a.indexLoc = here();
  return expr(a.index) && expect(Token::RSquare, "after the index");
}

bool Parser::op(Clause &cl) {
  cl.opLoc = here();
  if (isKeyword("copy")) {
    consume();
    cl.op = RedOp::Copy;
    return true;
  }
  if (!isKeyword("reduce"))
    return expected("'copy' or 'reduce(op)'");
  consume();
  if (!expect(Token::LParen, "after 'reduce'"))
    return false;
  if (!is(Token::Ident))
    return expected("a reduction op (sum, prod, min, max, avg) or a redop "
                    "parameter");
  RedOp r;
  if (parseRedOp(tok_.text, r)) {
    if (r == RedOp::Copy)
      return fail("'copy' is not a reduction op; write 'copy' instead of "
                  "'reduce(copy)'");
    cl.op = r;
  } else {
    cl.op = RedOp::Sum; // unused: the parameter's value decides
    cl.opParam = tok_.text;
  }
  consume();
  return expect(Token::RParen, "after the reduction op");
}

bool Parser::expr(E &out) {
  // Parentheses and subscripts nest the recursion itself: bound it before
  // descending.
  struct Nest {
    int &n;
    ~Nest() { --n; }
  } nest{++nest_};
  if (nest_ > kMaxExprDepth)
    return fail("expression too deep (more than " +
                std::to_string(kMaxExprDepth) + " levels)");
  if (!term(out))
    return false;
  while (is(Token::Plus) || is(Token::Minus)) {
    Expr::Kind k = is(Token::Plus) ? Expr::Kind::Add : Expr::Kind::Sub;
    SrcLoc at = here();
    consume();
    E rhs;
    if (!term(rhs) || !combine(out, k, rhs, at))
      return false;
  }
  return true;
}

bool Parser::term(E &out) {
  if (!unary(out))
    return false;
  while (is(Token::Star) || is(Token::Slash) || is(Token::Percent)) {
    Expr::Kind k = is(Token::Star)    ? Expr::Kind::Mul
                   : is(Token::Slash) ? Expr::Kind::Div
                                      : Expr::Kind::Mod;
    SrcLoc at = here();
    consume();
    E rhs;
    if (!unary(rhs) || !combine(out, k, rhs, at))
      return false;
  }
  return true;
}

bool Parser::unary(E &out) {
  if (!is(Token::Minus))
    return primary(out);
  // Iterate over a run of '-' so that "- - - x" recurses once.
  SrcLoc at = here();
  int n = 0;
  while (accept(Token::Minus))
    ++n;
  if (!primary(out))
    return false;
  if (out.depth + n > kMaxExprDepth)
    return failAt(at, "expression too deep (more than " +
                          std::to_string(kMaxExprDepth) + " levels)");
  for (int i = 0; i < n; ++i)
    out.e = Expr::neg(out.e);
  out.depth += n;
  return true;
}

bool Parser::primary(E &out) {
  if (is(Token::Int)) {
    out = E{Expr::constant(tok_.value), 1};
    consume();
    return true;
  }
  if (is(Token::Ident)) {
    std::string name = tok_.text;
    consume();
    if (!is(Token::LSquare)) {
      out = E{Expr::var(name), 1};
      return true;
    }
    std::vector<Expr> index;
    int depth = 1;
    while (is(Token::LSquare)) {
      SrcLoc at = here();
      consume();
      E i;
      if (!expr(i) || !expect(Token::RSquare, "after the table subscript"))
        return false;
      if (i.depth + 1 > kMaxExprDepth)
        return failAt(at, "expression too deep");
      depth = std::max(depth, i.depth + 1);
      index.push_back(i.e);
    }
    out = E{Expr::table(name, std::move(index)), depth};
    return true;
  }
  if (is(Token::LParen)) {
    consume();
    return expr(out) && expect(Token::RParen, "to close '('");
  }
  return expected("an expression");
}

} // namespace

bool parsePurlin(const std::string &text, Collective &out, Diag &error) {
  out = Collective();
  Parser p(text);
  if (p.file(out))
    return true;
  error = p.error;
  return false;
}

} // namespace purlin
