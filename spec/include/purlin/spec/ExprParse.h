// The one parser of the expression grammar (Expr.h), over any source of
// tokens: the spec's own text (Expr::parse, the plain description), the
// `.purlin` lexer (compiler/lib/Frontend) and MLIR's assembly parser (the
// layout dialect's custom syntax). The grammar, the depth limit, the range of
// integer literals, the rule for names and the messages live here once; a
// token source only says what the next token is and where it lies, so every
// client reports problems at its own positions (a column, a line and column,
// an MLIR location).
#pragma once

#include "purlin/spec/Collective.h"
#include "purlin/spec/Expr.h"

#include <cstdint>
#include <string>

namespace purlin {

/// The deepest expression the parser builds (nesting of parentheses and
/// operator chains alike), which bounds the recursion of every walk of an
/// Expr.
constexpr int kMaxExprDepth = 128;

/// The largest integer literal: big enough for any layout, small enough that
/// a few products of literals cannot overflow int64.
constexpr int64_t kMaxExprLiteral = int64_t(1) << 40;
/// The message for a literal above kMaxExprLiteral (a lexer that checks
/// literals itself reports the same words).
extern const char *const kExprLiteralTooLarge;

/// The punctuation of the grammar. `%` is the floor modulo; a source may
/// spell it otherwise (MLIR's custom syntax spells it `mod`). Braces and the
/// bar write rank sets.
enum class ExprPunct {
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  LParen,
  RParen,
  LSquare,
  RSquare,
  LBrace,
  RBrace,
  Bar,
  Comma // between a call's arguments
};

/// A position in a token source, opaque to the parser (a column; a line and
/// a column; a pointer into MLIR's buffer).
struct ExprPos {
  int64_t a = 0, b = 0;
};

/// Where tokens come from. Every `accept*` consumes the next token only when
/// it is of the asked kind.
class ExprTokens {
public:
  virtual ~ExprTokens() = default;
  virtual bool accept(ExprPunct p) = 0;
  /// An integer literal (non-negative; a source may saturate a value beyond
  /// int64 at INT64_MAX: the parser rejects it anyway).
  virtual bool acceptInt(int64_t &value) = 0;
  /// A word; the parser checks it against the rule for names.
  virtual bool acceptIdent(std::string &name) = 0;
  /// The position of the next token.
  virtual ExprPos here() = 0;
  /// Reports, at the next token, that `what` was expected (a source that
  /// can describe the token appends ", got ..."; one whose next token is a
  /// lexical error reports that error instead).
  virtual void expected(const std::string &what) = 0;
  /// Reports `message` at `at`.
  virtual void error(ExprPos at, const std::string &message) = 0;
};

/// Parses one expression from `in` (the grammar of Expr.h): stops before the
/// first token that cannot continue it. On failure, has reported the first
/// problem through `in` and returns false.
bool parseExpr(ExprTokens &in, Expr &out);

/// Parses a rank selector (Collective.h RankSel):
///   rank := '*' | '{' expr '|' IDENT 'in' '[' expr ']' '}' | one
///   one  := expr                               (`whole`: the layout
///                                               dialect, the description)
///         | IDENT | INT | '(' expr ')'          (the `.purlin` syntax, where
///                                               '[' after the rank starts
///                                               the index)
/// The set `{e | v in [E]}` is the ranks e for v = 0 .. E-1.
bool parseRankSel(ExprTokens &in, RankSel &out, bool whole);

/// A rank selector from plain text (the description's `[RANK]`); on
/// failure returns false and sets `error` (and the 0-based column).
bool parseRankSelText(const std::string &text, RankSel &out,
                      std::string &error, int *errorCol = nullptr);

/// Whether `s` is a name of the language: [A-Za-z_][A-Za-z0-9_]*.
bool isExprName(const std::string &s);

} // namespace purlin
