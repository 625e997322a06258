// The tokens of CEL text, for the parser (parser.cc), with cel-go's lexical rules: string and
// bytes literals with the r/b prefixes, triple quotes and every escape; int, uint and double
// literals (hexadecimal too); comments. The first error, lexical or grammatical, is the one
// reported: the lexer keeps it for both, and after it every token is the end of input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cel/ast.h"

namespace ksched::cel {

enum class Tok : uint8_t {
  kEof,
  kIdent,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kTrue,
  kFalse,
  kNull,
  kIn,
  kPunct,
};

struct Token {
  Tok kind = Tok::kEof;
  size_t start = 0, end = 0;
  std::string_view text;  // the token's source text (punctuation: the operator)
  std::string str;        // decoded string/bytes literal
};

// A reserved word of the grammar: an error where an identifier is expected.
bool isReserved(std::string_view id);

class Lexer {
 protected:
  explicit Lexer(std::string_view src) : src_(src) {}

  // Records the first error (a later one is dropped); returns null for the caller to return.
  ExprPtr fail(size_t pos, std::string message);
  ExprPtr syntaxError(size_t pos, std::string detail);
  // "mismatched input '<the current token>'".
  [[nodiscard]] std::string mismatched() const;

  // Advances tok_ to the next token (the end of input once an error is recorded).
  void next();
  [[nodiscard]] bool isOp(std::string_view op) const {
    return tok_.kind == Tok::kPunct && tok_.text == op;
  }

  std::string_view src_;
  size_t pos_ = 0;
  Token tok_;
  bool failed_ = false;
  size_t errorPos_ = 0;
  std::string errorMessage_;

 private:
  void skipSpace();
  void punct(size_t n);
  void lexNumber();
  void lexString(bool raw, bool bytes);
};

}  // namespace ksched::cel
