#include "cel/lexer.h"

#include <algorithm>
#include <string>
#include <utility>

#include <ksched/api/utf8.h>

#include "cel/value.h"

namespace ksched::cel {

namespace {

bool isIdentStart(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool isReserved(std::string_view id) {
  static constexpr std::string_view kReserved[] = {
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};
  for (std::string_view r : kReserved) {
    if (id == r) return true;
  }
  return false;
}

ExprPtr Lexer::fail(size_t pos, std::string message) {
  if (!failed_) {
    failed_ = true;
    errorPos_ = pos;
    errorMessage_ = std::move(message);
  }
  return nullptr;
}

ExprPtr Lexer::syntaxError(size_t pos, std::string detail) {
  return fail(pos, "Syntax error: " + std::move(detail));
}

std::string Lexer::mismatched() const {
  if (tok_.kind == Tok::kEof) return "mismatched input '<EOF>'";
  return "mismatched input '" + toValidUtf8(tok_.text) + "'";
}

void Lexer::skipSpace() {
  while (pos_ < src_.size()) {
    const char c = src_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
      while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
    } else {
      return;
    }
  }
}

void Lexer::next() {
  if (failed_) {
    tok_.kind = Tok::kEof;
    return;
  }
  skipSpace();
  tok_ = Token{};
  tok_.start = pos_;
  if (pos_ >= src_.size()) {
    tok_.kind = Tok::kEof;
    tok_.end = pos_;
    return;
  }
  const char c = src_[pos_];
  if (isIdentStart(c)) {
    size_t e = pos_;
    while (e < src_.size() && isIdentChar(src_[e])) ++e;
    std::string_view id = src_.substr(pos_, e - pos_);
    // String prefixes: r, b, and both in either order and case.
    if (e < src_.size() && (src_[e] == '"' || src_[e] == '\'') && id.size() <= 2) {
      bool raw = false, bytes = false, ok = true;
      for (char p : id) {
        if ((p == 'r' || p == 'R') && !raw) {
          raw = true;
        } else if ((p == 'b' || p == 'B') && !bytes) {
          bytes = true;
        } else {
          ok = false;
        }
      }
      if (ok) {
        pos_ = e;
        lexString(raw, bytes);
        return;
      }
    }
    pos_ = e;
    tok_.end = e;
    tok_.text = id;
    if (id == "true") {
      tok_.kind = Tok::kTrue;
    } else if (id == "false") {
      tok_.kind = Tok::kFalse;
    } else if (id == "null") {
      tok_.kind = Tok::kNull;
    } else if (id == "in") {
      tok_.kind = Tok::kIn;
    } else {
      tok_.kind = Tok::kIdent;
    }
    return;
  }
  if (isDigit(c) || (c == '.' && pos_ + 1 < src_.size() && isDigit(src_[pos_ + 1]))) {
    lexNumber();
    return;
  }
  if (c == '"' || c == '\'') {
    lexString(false, false);
    return;
  }
  static constexpr std::string_view kTwo[] = {"==", "!=", "<=", ">=", "&&", "||"};
  for (std::string_view op : kTwo) {
    if (src_.substr(pos_, 2) == op) {
      punct(2);
      return;
    }
  }
  static constexpr std::string_view kOne = "<>!?:+-*/%.,[](){}";
  if (kOne.find(c) != std::string_view::npos) {
    punct(1);
    return;
  }
  size_t len = 1;
  const auto uc = static_cast<unsigned char>(c);
  if (uc >= 0x80) len = (uc >> 5) == 6 ? 2 : (uc >> 4) == 14 ? 3 : (uc >> 3) == 30 ? 4 : 1;
  len = std::min(len, src_.size() - pos_);
  std::string bad = toValidUtf8(src_.substr(pos_, len));
  syntaxError(pos_, "token recognition error at: '" + bad + "'");
  tok_.kind = Tok::kEof;
}

void Lexer::punct(size_t n) {
  tok_.kind = Tok::kPunct;
  tok_.text = src_.substr(pos_, n);
  pos_ += n;
  tok_.end = pos_;
}

void Lexer::lexNumber() {
  const size_t start = pos_;
  size_t e = pos_;
  auto digits = [&] {
    while (e < src_.size() && isDigit(src_[e])) ++e;
  };
  auto exponent = [&]() -> bool {
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
      size_t k = e + 1;
      if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
      if (k < src_.size() && isDigit(src_[k])) {
        e = k;
        digits();
        return true;
      }
    }
    return false;
  };
  tok_.start = start;
  if (src_[e] == '0' && e + 2 < src_.size() && src_[e + 1] == 'x' && hexValue(src_[e + 2]) >= 0) {
    e += 2;
    while (e < src_.size() && hexValue(src_[e]) >= 0) ++e;
    tok_.kind = Tok::kInt;
    if (e < src_.size() && (src_[e] == 'u' || src_[e] == 'U')) {
      ++e;
      tok_.kind = Tok::kUint;
    }
  } else if (src_[e] == '.') {
    ++e;
    digits();
    exponent();
    tok_.kind = Tok::kDouble;
  } else {
    digits();
    bool isFloat = false;
    if (e + 1 < src_.size() && src_[e] == '.' && isDigit(src_[e + 1])) {
      ++e;
      digits();
      exponent();
      isFloat = true;
    } else if (exponent()) {
      isFloat = true;
    }
    tok_.kind = isFloat ? Tok::kDouble : Tok::kInt;
    if (!isFloat && e < src_.size() && (src_[e] == 'u' || src_[e] == 'U')) {
      ++e;
      tok_.kind = Tok::kUint;
    }
  }
  pos_ = e;
  tok_.end = e;
  tok_.text = src_.substr(start, e - start);
}

void Lexer::lexString(bool raw, bool bytes) {
  const size_t start = tok_.start;
  const char q = src_[pos_];
  const bool triple = src_.substr(pos_, 3) == std::string(3, q);
  size_t i = pos_ + (triple ? 3 : 1);
  std::string out;
  auto recognitionError = [&](size_t at) {
    const size_t endAt = std::min(at + 1, src_.size());
    const std::string text = toValidUtf8(src_.substr(start, endAt - start));
    syntaxError(start, "token recognition error at: '" + text + "'");
    tok_.kind = Tok::kEof;
  };
  while (true) {
    if (i >= src_.size()) {
      recognitionError(src_.size() - 1);
      return;
    }
    const char c = src_[i];
    if (triple) {
      if (src_.substr(i, 3) == std::string(3, q)) {
        i += 3;
        break;
      }
    } else {
      if (c == q) {
        ++i;
        break;
      }
      if (c == '\n' || c == '\r') {
        recognitionError(i);
        return;
      }
    }
    if (c != '\\' || raw) {
      out += c;
      ++i;
      continue;
    }
    // Escape sequence.
    if (i + 1 >= src_.size()) {
      recognitionError(i);
      return;
    }
    const char x = src_[i + 1];
    switch (x) {
      case 'a':
        out += '\a';
        i += 2;
        continue;
      case 'b':
        out += '\b';
        i += 2;
        continue;
      case 'f':
        out += '\f';
        i += 2;
        continue;
      case 'n':
        out += '\n';
        i += 2;
        continue;
      case 'r':
        out += '\r';
        i += 2;
        continue;
      case 't':
        out += '\t';
        i += 2;
        continue;
      case 'v':
        out += '\v';
        i += 2;
        continue;
      case '\\':
      case '\'':
      case '"':
      case '`':
      case '?':
        out += x;
        i += 2;
        continue;
      default:
        break;
    }
    uint32_t value = 0;
    size_t len = 0;
    bool codePoint = !bytes;
    if (x >= '0' && x <= '3') {
      len = 3;
      for (size_t k = 0; k < 3; ++k) {
        const size_t at = i + 1 + k;
        if (at >= src_.size() || src_[at] < '0' || src_[at] > '7') {
          recognitionError(at);
          return;
        }
        value = value * 8 + static_cast<uint32_t>(src_[at] - '0');
      }
      i += 1 + len;
    } else if (x == 'x' || x == 'X' || x == 'u' || x == 'U') {
      len = (x == 'x' || x == 'X') ? 2 : (x == 'u' ? 4 : 8);
      if (bytes && (x == 'u' || x == 'U')) {
        recognitionError(i + 1);
        return;
      }
      for (size_t k = 0; k < len; ++k) {
        const size_t at = i + 2 + k;
        const int h = at < src_.size() ? hexValue(src_[at]) : -1;
        if (h < 0) {
          recognitionError(at);
          return;
        }
        value = value * 16 + static_cast<uint32_t>(h);
      }
      i += 2 + len;
      if ((x == 'u' || x == 'U') && (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF))) {
        fail(start, "invalid unicode code point");
        tok_.kind = Tok::kEof;
        return;
      }
    } else {
      recognitionError(i + 1);
      return;
    }
    if (codePoint) {
      api::appendUtf8(out, static_cast<char32_t>(value));
    } else {
      out += static_cast<char>(value);
    }
  }
  pos_ = i;
  tok_.end = i;
  tok_.text = src_.substr(start, i - start);
  tok_.kind = bytes ? Tok::kBytes : Tok::kString;
  if (!bytes && !validUtf8(out)) {
    fail(start, "invalid UTF-8 in string literal");
    tok_.kind = Tok::kEof;
    return;
  }
  tok_.str = std::move(out);
}

}  // namespace ksched::cel
