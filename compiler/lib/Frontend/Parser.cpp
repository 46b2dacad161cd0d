#include "purlin/Frontend/Parser.h"

#include "purlin/Frontend/Lexer.h"
#include "purlin/spec/ExprParse.h"

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
  bool epilogue(Clause &cl);

  // Expressions: the spec's one parser of the grammar (ExprParse.h), over
  // this parser's tokens; its messages and positions come back as Diags at
  // the token.
  bool expr(Expr &out);
  friend class Tokens;

  Lexer lex_;
  Token tok_;
  bool failed_ = false;
};

/// The parser's token stream as ExprParse.h sees it: positions are
/// (line, column); `expected` and lexical errors read as in the rest of the
/// grammar.
class Tokens : public ExprTokens {
public:
  explicit Tokens(Parser &p) : p(p) {}
  bool accept(ExprPunct k) override {
    static const Token::Kind kKinds[] = {
        Token::Plus,    Token::Minus,   Token::Star,   Token::Slash,
        Token::Percent, Token::LParen,  Token::RParen, Token::LSquare,
        Token::RSquare, Token::LBrace, Token::RBrace, Token::Bar,
        Token::Comma};
    return p.accept(kKinds[(int)k]);
  }
  bool acceptInt(int64_t &v) override {
    if (!p.is(Token::Int))
      return false;
    v = p.tok_.value;
    p.consume();
    return true;
  }
  bool acceptIdent(std::string &name) override {
    if (!p.is(Token::Ident))
      return false;
    name = p.tok_.text;
    p.consume();
    return true;
  }
  ExprPos here() override { return ExprPos{p.tok_.line, p.tok_.col}; }
  void expected(const std::string &what) override { p.expected(what); }
  void error(ExprPos at, const std::string &message) override {
    p.failAt(SrcLoc{(int)at.a, (int)at.b}, message);
  }

private:
  Parser &p;
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
    return expected("a parameter kind (ranks, count, root, type, redop, "
                    "table or group)");
  const std::string kind = tok_.text;
  if (!parseParamKind(kind, p.kind))
    return expected("a parameter kind (ranks, count, root, type, redop, "
                    "table or group)");
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
      !access(cl.to) || !op(cl))
    return false;
  if (isKeyword("rows")) {
    if (!epilogue(cl))
      return false;
  } else if (!expect(Token::Semi, "after the name clause")) {
    return false;
  }
  c.clauses.push_back(std::move(cl));
  return true;
}

bool Parser::access(Access &a) {
  if (!ident(a.buffer, &a.loc, "a buffer name") ||
      !expect(Token::At, "and a rank after the buffer name"))
    return false;
  a.rankLoc = here();
  // The spec's parser of rank selectors (`*`, a name, an integer, '(' expr
  // ')' or a set '{' expr '|' name 'in' '[' expr ']' '}').
  Tokens in(*this);
  if (!parseRankSel(in, a.rank, false))
    return false;
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

// epilogue := 'rows' coords '{' stmt* '}'
// stmt     := 'let' IDENT '=' expr ';' | IDENT '[' expr ']' '=' expr ';'
bool Parser::epilogue(Clause &cl) {
  Epilogue &e = cl.epilogue;
  e.loc = here();
  consume(); // 'rows'
  auto row = [&]() {
    std::string n;
    if (!ident(n, nullptr, "a row coordinate"))
      return false;
    e.rows.push_back(n);
    return true;
  };
  if (accept(Token::LParen)) {
    do {
      if (!row())
        return false;
    } while (accept(Token::Comma));
    if (!expect(Token::RParen, "after the row coordinates"))
      return false;
  } else if (!row()) {
    return false;
  }
  if (!expect(Token::LBrace, "before the epilogue"))
    return false;
  while (!accept(Token::RBrace)) {
    EpiStmt st;
    st.loc = here();
    if (isKeyword("let")) {
      consume();
      if (!ident(st.let, &st.loc, "a name after 'let'"))
        return false;
    } else {
      if (!is(Token::Ident))
        return expected("'let', a store 'BUF[INDEX] = ...' or '}'");
      if (!ident(st.buffer, &st.loc, "a buffer name") ||
          !expect(Token::LSquare, "before the index of the store") ||
          !expr(st.index) || !expect(Token::RSquare, "after the index"))
        return false;
    }
    if (!expect(Token::Equal, st.let.empty() ? "after the store's place"
                                             : "after the let's name"))
      return false;
    st.valueLoc = here();
    if (!expr(st.value) || !expect(Token::Semi, "after the statement"))
      return false;
    e.stmts.push_back(std::move(st));
  }
  return true;
}

bool Parser::expr(Expr &out) {
  Tokens in(*this);
  return parseExpr(in, out);
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
