#include "purlin/Frontend/Lexer.h"
#include "purlin/spec/ExprParse.h"

#include <cctype>
#include <cstdio>

namespace purlin {

const char *tokenKindName(Token::Kind k) {
  switch (k) {
  case Token::Eof:
    return "end of file";
  case Token::Error:
    return "invalid text";
  case Token::Ident:
    return "identifier";
  case Token::Int:
    return "integer";
  case Token::LParen:
    return "'('";
  case Token::RParen:
    return "')'";
  case Token::LSquare:
    return "'['";
  case Token::RSquare:
    return "']'";
  case Token::LBrace:
    return "'{'";
  case Token::RBrace:
    return "'}'";
  case Token::Comma:
    return "','";
  case Token::Colon:
    return "':'";
  case Token::Semi:
    return "';'";
  case Token::At:
    return "'@'";
  case Token::Star:
    return "'*'";
  case Token::Plus:
    return "'+'";
  case Token::Minus:
    return "'-'";
  case Token::Slash:
    return "'/'";
  case Token::Percent:
    return "'%'";
  case Token::Arrow:
    return "'->'";
  case Token::LessEqual:
    return "'<='";
  case Token::Bar:
    return "'|'";
  case Token::Equal:
    return "'='";
  }
  return "token";
}

std::string describe(const Token &t) {
  if (t.kind == Token::Ident)
    return "identifier '" + t.text + "'";
  if (t.kind == Token::Int)
    return "integer " + t.text;
  return tokenKindName(t.kind);
}

void Lexer::advance() {
  if (pos_ >= text_.size())
    return;
  if (text_[pos_] == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

Token Lexer::next() {
  // Whitespace and '//' comments.
  for (;;) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
        c == '\v') {
      advance();
    } else if (c == '/' && peek(1) == '/') {
      while (pos_ < text_.size() && peek() != '\n')
        advance();
    } else {
      break;
    }
  }
  Token t;
  t.line = line_;
  t.col = col_;
  if (pos_ >= text_.size()) {
    t.kind = Token::Eof;
    return t;
  }
  unsigned char c = (unsigned char)peek();
  if (std::isalpha(c) || c == '_') {
    size_t b = pos_;
    while (std::isalnum((unsigned char)peek()) || peek() == '_')
      advance();
    t.kind = Token::Ident;
    t.text = text_.substr(b, pos_ - b);
    return t;
  }
  if (std::isdigit(c)) {
    size_t b = pos_;
    bool tooBig = false;
    int64_t v = 0;
    while (std::isdigit((unsigned char)peek())) {
      if (!tooBig) {
        v = v * 10 + (peek() - '0');
        if (v > kMaxExprLiteral)
          tooBig = true;
      }
      advance();
    }
    t.text = text_.substr(b, pos_ - b);
    if (std::isalpha((unsigned char)peek()) || peek() == '_') {
      t.kind = Token::Error;
      t.text = "a name cannot start with a digit";
      return t;
    }
    if (tooBig) {
      t.kind = Token::Error;
      t.text = kExprLiteralTooLarge; // the expression parser's words
      return t;
    }
    t.kind = Token::Int;
    t.value = v;
    return t;
  }
  auto one = [&](Token::Kind k) {
    advance();
    t.kind = k;
    t.text = tokenKindName(k);
    return t;
  };
  switch (c) {
  case '(':
    return one(Token::LParen);
  case ')':
    return one(Token::RParen);
  case '[':
    return one(Token::LSquare);
  case ']':
    return one(Token::RSquare);
  case '{':
    return one(Token::LBrace);
  case '}':
    return one(Token::RBrace);
  case ',':
    return one(Token::Comma);
  case ':':
    return one(Token::Colon);
  case ';':
    return one(Token::Semi);
  case '@':
    return one(Token::At);
  case '*':
    return one(Token::Star);
  case '+':
    return one(Token::Plus);
  case '/':
    return one(Token::Slash);
  case '%':
    return one(Token::Percent);
  case '|':
    return one(Token::Bar);
  case '=':
    return one(Token::Equal);
  case '-':
    if (peek(1) == '>') {
      advance();
      return one(Token::Arrow);
    }
    return one(Token::Minus);
  case '<':
    if (peek(1) == '=') {
      advance();
      return one(Token::LessEqual);
    }
    break;
  default:
    break;
  }
  // Anything else: report it, printable or not.
  char buf[32];
  if (std::isprint(c))
    std::snprintf(buf, sizeof buf, "'%c'", c);
  else
    std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
  advance();
  t.kind = Token::Error;
  t.text = std::string("unexpected character ") + buf;
  return t;
}

} // namespace purlin
