// The lexer of the `.purlin` language: turns source text into tokens with
// 1-based line and column. Never fails hard: a character that starts no token
// becomes an Error token whose text says why, and the end of the input is an
// Eof token that the lexer keeps returning.
#pragma once

#include <cstdint>
#include <string>

namespace purlin {

struct Token {
  enum Kind {
    Eof,
    Error,
    Ident,
    Int,
    LParen,
    RParen,
    LSquare,
    RSquare,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Semi,
    At,
    Star,
    Plus,
    Minus,
    Slash,
    Percent,
    Arrow,     // ->
    LessEqual, // <=
    Bar,       // |
    Equal,     // = (an epilogue's assignment)
  };
  Kind kind = Eof;
  std::string text; // the spelling; for Error, the message
  int64_t value = 0; // Int
  int line = 1, col = 1;
};

/// A readable name of a token kind, for messages ("identifier", "';'").
const char *tokenKindName(Token::Kind k);
/// How a token reads in a message: "identifier 'x'", "'['", "end of file".
std::string describe(const Token &t);

class Lexer {
public:
  explicit Lexer(const std::string &text) : text_(text) {}
  Token next();


private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void advance();

  const std::string &text_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

} // namespace purlin
