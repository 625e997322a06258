#include "cel/parser.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>
#include <utility>

#include <ksched/api/utf8.h>

#include "cel/value.h"

namespace ksched::cel {

namespace {

constexpr int kMaxRecursionDepth = 250;

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

bool isIdentStart(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentChar(char c) { return isIdentStart(c) || isDigit(c); }
int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool isReserved(std::string_view id) {
  static constexpr std::string_view kReserved[] = {
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};
  for (std::string_view r : kReserved) {
    if (id == r) return true;
  }
  return false;
}

class Parser {
 public:
  explicit Parser(std::string_view src) : src_(src) {}

  ParseResult run() {
    ParseResult r;
    next();
    ExprPtr e = parseExpr();
    if (!failed_ && tok_.kind != Tok::kEof) syntaxError(tok_.start, mismatched());
    if (failed_) {
      r.error = formatError(src_, errorPos_, errorMessage_);
      return r;
    }
    r.expr = std::move(e);
    return r;
  }

 private:
  // ---- errors ------------------------------------------------------------------------------

  ExprPtr fail(size_t pos, std::string message) {
    if (!failed_) {
      failed_ = true;
      errorPos_ = pos;
      errorMessage_ = std::move(message);
    }
    return nullptr;
  }
  ExprPtr syntaxError(size_t pos, std::string detail) {
    return fail(pos, "Syntax error: " + std::move(detail));
  }
  std::string mismatched() const {
    if (tok_.kind == Tok::kEof) return "mismatched input '<EOF>'";
    return "mismatched input '" + toValidUtf8(tok_.text) + "'";
  }

  // ---- lexer -------------------------------------------------------------------------------

  void skipSpace() {
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

  void next() {
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

  void punct(size_t n) {
    tok_.kind = Tok::kPunct;
    tok_.text = src_.substr(pos_, n);
    pos_ += n;
    tok_.end = pos_;
  }

  bool isOp(std::string_view op) const { return tok_.kind == Tok::kPunct && tok_.text == op; }

  void lexNumber() {
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

  void lexString(bool raw, bool bytes) {
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

  // ---- grammar -----------------------------------------------------------------------------

  struct DepthGuard {
    int& counter;
    int added = 0;
    DepthGuard(int& c) : counter(c) {}
    ~DepthGuard() { counter -= added; }
    bool add() {
      ++counter;
      ++added;
      return counter <= kMaxRecursionDepth;
    }
  };

  ExprPtr recursionError(size_t pos) {
    return fail(pos, "expression recursion limit exceeded: " + std::to_string(kMaxRecursionDepth));
  }

  static ExprPtr node(ExprKind kind, size_t pos) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = static_cast<uint32_t>(pos);
    return e;
  }

  static ExprPtr call(std::string name, size_t pos, std::vector<ExprPtr> args,
                      ExprPtr target = nullptr) {
    ExprPtr e = node(ExprKind::kCall, pos);
    e->name = std::move(name);
    e->args = std::move(args);
    e->operand = std::move(target);
    return e;
  }

  ExprPtr parseExpr() {
    DepthGuard g(exprDepth_);
    if (!g.add()) return recursionError(tok_.start);
    ExprPtr cond = parseOr();
    if (!cond) return nullptr;
    if (!isOp("?")) return cond;
    const size_t opPos = tok_.start;
    next();
    ExprPtr a = parseOr();
    if (!a) return nullptr;
    if (!isOp(":")) return syntaxError(tok_.start, mismatched() + " expecting ':'");
    next();
    ExprPtr b = parseExpr();
    if (!b) return nullptr;
    std::vector<ExprPtr> args;
    args.push_back(std::move(cond));
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    return call("_?_:_", opPos, std::move(args));
  }

  ExprPtr parseLogical(std::string_view op, std::string_view fn, bool isOr) {
    ExprPtr first = isOr ? parseLogical("&&", "_&&_", false) : parseRelation();
    if (!first || !isOp(op)) return first;
    const size_t opPos = tok_.start;
    std::vector<ExprPtr> terms;
    terms.push_back(std::move(first));
    while (isOp(op)) {
      next();
      ExprPtr t = isOr ? parseLogical("&&", "_&&_", false) : parseRelation();
      if (!t) return nullptr;
      terms.push_back(std::move(t));
    }
    return call(std::string(fn), opPos, std::move(terms));
  }
  ExprPtr parseOr() { return parseLogical("||", "_||_", true); }

  static const char* relationFunction(const Token& t) {
    if (t.kind == Tok::kIn) return "@in";
    if (t.kind != Tok::kPunct) return nullptr;
    if (t.text == "==") return "_==_";
    if (t.text == "!=") return "_!=_";
    if (t.text == "<") return "_<_";
    if (t.text == "<=") return "_<=_";
    if (t.text == ">") return "_>_";
    if (t.text == ">=") return "_>=_";
    return nullptr;
  }

  ExprPtr parseRelation() {
    DepthGuard g(relationDepth_);
    if (!g.add()) return recursionError(tok_.start);
    ExprPtr lhs = parseCalc(0);
    while (lhs) {
      const char* fn = relationFunction(tok_);
      if (fn == nullptr) break;
      if (!g.add()) return recursionError(tok_.start);
      const size_t opPos = tok_.start;
      next();
      ExprPtr rhs = parseCalc(0);
      if (!rhs) return nullptr;
      std::vector<ExprPtr> args;
      args.push_back(std::move(lhs));
      args.push_back(std::move(rhs));
      lhs = call(fn, opPos, std::move(args));
    }
    return lhs;
  }

  // level 0: + -, level 1: * / %
  ExprPtr parseCalc(int level) {
    DepthGuard g(calcDepth_);
    if (level == 0 && !g.add()) return recursionError(tok_.start);
    ExprPtr lhs = level == 0 ? parseCalc(1) : parseUnary();
    while (lhs && tok_.kind == Tok::kPunct) {
      const char* fn = nullptr;
      if (level == 0 && tok_.text == "+") fn = "_+_";
      if (level == 0 && tok_.text == "-") fn = "_-_";
      if (level == 1 && tok_.text == "*") fn = "_*_";
      if (level == 1 && tok_.text == "/") fn = "_/_";
      if (level == 1 && tok_.text == "%") fn = "_%_";
      if (fn == nullptr) break;
      if (!g.add()) return recursionError(tok_.start);
      const size_t opPos = tok_.start;
      next();
      ExprPtr rhs = level == 0 ? parseCalc(1) : parseUnary();
      if (!rhs) return nullptr;
      std::vector<ExprPtr> args;
      args.push_back(std::move(lhs));
      args.push_back(std::move(rhs));
      lhs = call(fn, opPos, std::move(args));
    }
    return lhs;
  }

  ExprPtr parseUnary() {
    if (isOp("!") || isOp("-")) {
      const std::string op(tok_.text);
      const size_t opPos = tok_.start;
      size_t count = 0;
      while (isOp(op)) {
        ++count;
        next();
      }
      // A single '-' directly before a number is part of the literal.
      if (op == "-" && count == 1 && (tok_.kind == Tok::kInt || tok_.kind == Tok::kDouble)) {
        ExprPtr lit = parseMember(true, opPos);
        return lit;
      }
      ExprPtr operand = parseMember(false, 0);
      if (!operand) return nullptr;
      if (count % 2 == 0) return operand;
      std::vector<ExprPtr> args;
      args.push_back(std::move(operand));
      return call(op == "!" ? "!_" : "-_", opPos, std::move(args));
    }
    return parseMember(false, 0);
  }

  std::vector<ExprPtr> parseArgs(bool* ok) {
    // At '('.
    std::vector<ExprPtr> args;
    next();
    *ok = false;
    if (isOp(")")) {
      next();
      *ok = true;
      return args;
    }
    while (true) {
      ExprPtr a = parseExpr();
      if (!a) return args;
      args.push_back(std::move(a));
      if (isOp(",")) {
        next();
        continue;
      }
      if (isOp(")")) {
        next();
        *ok = true;
        return args;
      }
      syntaxError(tok_.start, mismatched() + " expecting {')', ','}");
      return args;
    }
  }

  ExprPtr parseMember(bool negativeLiteral, size_t minusPos) {
    DepthGuard g(memberDepth_);
    if (!g.add()) return recursionError(tok_.start);
    ExprPtr e = parsePrimary(negativeLiteral, minusPos);
    while (e) {
      if (isOp(".")) {
        const size_t dotPos = tok_.start;
        next();
        if (isOp("?")) return fail(dotPos, "unsupported: optional field selection '.?'");
        if (tok_.kind != Tok::kIdent) {
          return syntaxError(tok_.start, mismatched() + " expecting IDENTIFIER");
        }
        std::string name(tok_.text);
        const size_t namePos = tok_.start;
        next();
        if (!g.add()) return recursionError(namePos);
        if (isOp("(")) {
          const size_t openPos = tok_.start;
          bool ok = false;
          std::vector<ExprPtr> args = parseArgs(&ok);
          if (!ok) return nullptr;
          e = memberCallOrMacro(std::move(e), std::move(name), openPos, std::move(args));
        } else {
          ExprPtr s = node(ExprKind::kSelect, dotPos);
          s->name = std::move(name);
          s->operand = std::move(e);
          e = std::move(s);
        }
      } else if (isOp("[")) {
        const size_t openPos = tok_.start;
        next();
        if (!g.add()) return recursionError(openPos);
        if (isOp("?")) return fail(openPos, "unsupported: optional index '[?'");
        ExprPtr idx = parseExpr();
        if (!idx) return nullptr;
        if (!isOp("]")) return syntaxError(tok_.start, mismatched() + " expecting ']'");
        next();
        std::vector<ExprPtr> args;
        args.push_back(std::move(e));
        args.push_back(std::move(idx));
        e = call("_[_]", openPos, std::move(args));
      } else if (isOp("{") && isQualifiedName(*e)) {
        return fail(tok_.start,
                    "undeclared reference to '" + qualifiedName(*e) + "' (in container '')");
      } else {
        break;
      }
    }
    return e;
  }

  static bool isQualifiedName(const Expr& e) {
    if (e.kind == ExprKind::kIdent) return true;
    return e.kind == ExprKind::kSelect && !e.testOnly && isQualifiedName(*e.operand);
  }
  static std::string qualifiedName(const Expr& e) {
    if (e.kind == ExprKind::kIdent) return e.name;
    return qualifiedName(*e.operand) + "." + e.name;
  }

  ExprPtr parsePrimary(bool negative, size_t minusPos) {
    const size_t start = negative ? minusPos : tok_.start;
    switch (tok_.kind) {
      case Tok::kInt: {
        ExprPtr e = node(ExprKind::kLiteral, start);
        e->literal = LiteralKind::kInt;
        std::string text(tok_.text);
        if (negative) text = "-" + text;
        if (!parseIntLiteral(text, &e->intValue)) return fail(start, "invalid int literal");
        next();
        return e;
      }
      case Tok::kUint: {
        ExprPtr e = node(ExprKind::kLiteral, start);
        e->literal = LiteralKind::kUint;
        std::string_view text = tok_.text.substr(0, tok_.text.size() - 1);
        int base = 10;
        if (text.size() > 2 && text[0] == '0' && text[1] == 'x') {
          text.remove_prefix(2);
          base = 16;
        }
        auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), e->uintValue, base);
        if (ec != std::errc() || p != text.data() + text.size()) {
          return fail(start, "invalid uint literal");
        }
        next();
        return e;
      }
      case Tok::kDouble: {
        ExprPtr e = node(ExprKind::kLiteral, start);
        e->literal = LiteralKind::kDouble;
        std::string text(tok_.text);
        if (negative) text = "-" + text;
        errno = 0;
        char* endp = nullptr;
        e->doubleValue = std::strtod(text.c_str(), &endp);
        if (errno == ERANGE && (e->doubleValue > 1 || e->doubleValue < -1)) {
          return fail(start, "invalid double literal");
        }
        next();
        return e;
      }
      case Tok::kString:
      case Tok::kBytes: {
        ExprPtr e = node(ExprKind::kLiteral, start);
        e->literal = tok_.kind == Tok::kString ? LiteralKind::kString : LiteralKind::kBytes;
        e->text = std::move(tok_.str);
        next();
        return e;
      }
      case Tok::kTrue:
      case Tok::kFalse: {
        ExprPtr e = node(ExprKind::kLiteral, start);
        e->literal = LiteralKind::kBool;
        e->boolValue = tok_.kind == Tok::kTrue;
        next();
        return e;
      }
      case Tok::kNull: {
        ExprPtr e = node(ExprKind::kLiteral, start);
        e->literal = LiteralKind::kNull;
        next();
        return e;
      }
      case Tok::kIdent:
        return parseIdentOrCall(false);
      case Tok::kPunct:
        break;
      default:
        return syntaxError(tok_.start, mismatched());
    }
    if (isOp(".")) {
      // A leading dot names an identifier in the root scope.
      next();
      if (tok_.kind != Tok::kIdent) {
        return syntaxError(tok_.start, mismatched() + " expecting IDENTIFIER");
      }
      return parseIdentOrCall(true);
    }
    if (isOp("(")) {
      next();
      ExprPtr e = parseExpr();
      if (!e) return nullptr;
      if (!isOp(")")) return syntaxError(tok_.start, mismatched() + " expecting ')'");
      next();
      return e;
    }
    if (isOp("[")) {
      ExprPtr list = node(ExprKind::kList, start);
      next();
      while (!isOp("]")) {
        if (isOp("?")) return fail(tok_.start, "unsupported: optional list element '?'");
        ExprPtr el = parseExpr();
        if (!el) return nullptr;
        list->args.push_back(std::move(el));
        if (isOp(",")) {
          next();
          continue;
        }
        if (!isOp("]")) return syntaxError(tok_.start, mismatched() + " expecting {']', ','}");
      }
      next();
      return list;
    }
    if (isOp("{")) {
      ExprPtr map = node(ExprKind::kMap, start);
      next();
      while (!isOp("}")) {
        if (isOp("?")) return fail(tok_.start, "unsupported: optional map entry '?'");
        ExprPtr k = parseExpr();
        if (!k) return nullptr;
        if (!isOp(":")) return syntaxError(tok_.start, mismatched() + " expecting ':'");
        next();
        ExprPtr v = parseExpr();
        if (!v) return nullptr;
        map->args.push_back(std::move(k));
        map->args.push_back(std::move(v));
        if (isOp(",")) {
          next();
          continue;
        }
        if (!isOp("}")) return syntaxError(tok_.start, mismatched() + " expecting {'}', ','}");
      }
      next();
      return map;
    }
    return syntaxError(tok_.start, mismatched());
  }

  static bool parseIntLiteral(const std::string& text, int64_t* out) {
    std::string_view t = text;
    bool neg = false;
    if (!t.empty() && t[0] == '-') {
      neg = true;
      t.remove_prefix(1);
    }
    int base = 10;
    if (t.size() > 2 && t[0] == '0' && t[1] == 'x') {
      t.remove_prefix(2);
      base = 16;
    }
    uint64_t mag = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), mag, base);
    if (ec != std::errc() || p != t.data() + t.size()) return false;
    if (neg) {
      if (mag > uint64_t(1) << 63) return false;
      *out = static_cast<int64_t>(0 - mag);
    } else {
      if (mag > uint64_t(INT64_MAX)) return false;
      *out = static_cast<int64_t>(mag);
    }
    return true;
  }

  ExprPtr parseIdentOrCall(bool leadingDot) {
    std::string name(tok_.text);
    const size_t pos = tok_.start;
    next();
    if (isReserved(name)) return fail(pos, "reserved identifier: " + name);
    if (isOp("(")) {
      const size_t openPos = tok_.start;
      bool ok = false;
      std::vector<ExprPtr> args = parseArgs(&ok);
      if (!ok) return nullptr;
      if (name == "has" && !leadingDot && args.size() == 1) {
        if (args[0]->kind != ExprKind::kSelect || args[0]->testOnly) {
          return fail(args[0]->pos, "invalid argument to has() macro");
        }
        args[0]->testOnly = true;
        args[0]->pos = static_cast<uint32_t>(openPos);
        return std::move(args[0]);
      }
      return call(name, openPos, std::move(args));
    }
    ExprPtr e = node(ExprKind::kIdent, pos);
    e->name = std::move(name);
    return e;
  }

  ExprPtr memberCallOrMacro(ExprPtr target, std::string name, size_t pos,
                            std::vector<ExprPtr> args) {
    const size_t n = args.size();
    auto macro = [&](MacroKind kind, const char* varError) -> ExprPtr {
      if (args[0]->kind != ExprKind::kIdent) return fail(args[0]->pos, varError);
      ExprPtr c = node(ExprKind::kComprehension, pos);
      c->macro = kind;
      c->name = args[0]->name;
      c->operand = std::move(target);
      for (size_t i = 1; i < n; ++i) c->args.push_back(std::move(args[i]));
      return c;
    };
    if (name == "all" && n == 2) return macro(MacroKind::kAll, "argument must be a simple name");
    if (name == "exists" && n == 2) {
      return macro(MacroKind::kExists, "argument must be a simple name");
    }
    if (name == "exists_one" && n == 2) {
      return macro(MacroKind::kExistsOne, "argument must be a simple name");
    }
    if (name == "map" && n == 2) return macro(MacroKind::kMap, "argument is not an identifier");
    if (name == "map" && n == 3) {
      return macro(MacroKind::kMapFilter, "argument is not an identifier");
    }
    if (name == "filter" && n == 2) {
      return macro(MacroKind::kFilter, "argument is not an identifier");
    }
    if (name == "bind" && n == 3 && target->kind == ExprKind::kIdent && target->name == "cel") {
      if (args[0]->kind != ExprKind::kIdent) {
        return fail(args[0]->pos, "cel.bind() variable names must be simple identifiers");
      }
      ExprPtr c = node(ExprKind::kComprehension, pos);
      c->macro = MacroKind::kBind;
      c->name = args[0]->name;
      c->args.push_back(std::move(args[1]));
      c->args.push_back(std::move(args[2]));
      return c;
    }
    if (((name == "all" || name == "exists" || name == "existsOne") && n == 3) ||
        (name == "existsOne" && n == 2) ||
        ((name == "transformList" || name == "transformMap" || name == "transformMapEntry") &&
         (n == 3 || n == 4))) {
      return fail(pos, "unsupported: two-variable comprehension '" + name + "'");
    }
    if (name == "sortBy" && n == 2) return fail(pos, "unsupported: macro 'sortBy'");
    if ((name == "optMap" || name == "optFlatMap") && n == 2) {
      return fail(pos, "unsupported: optional macro '" + name + "'");
    }
    return call(std::move(name), pos, std::move(args), std::move(target));
  }

  std::string_view src_;
  size_t pos_ = 0;
  Token tok_;
  bool failed_ = false;
  size_t errorPos_ = 0;
  std::string errorMessage_;
  int exprDepth_ = 0, relationDepth_ = 0, calcDepth_ = 0, memberDepth_ = 0;
};

}  // namespace

ParseResult parse(std::string_view text) { return Parser(text).run(); }

std::string formatError(std::string_view source, size_t pos, std::string_view message) {
  pos = std::min(pos, source.size());
  size_t lineStart = 0;
  size_t line = 1;
  for (size_t i = 0; i < pos; ++i) {
    if (source[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  }
  size_t lineEnd = source.find('\n', lineStart);
  if (lineEnd == std::string_view::npos) lineEnd = source.size();
  const size_t column = codePoints(toValidUtf8(source.substr(lineStart, pos - lineStart)));
  std::string out = "ERROR: <input>:" + std::to_string(line) + ":" + std::to_string(column + 1) +
                    ": " + std::string(message);
  std::string snippet = toValidUtf8(source.substr(lineStart, lineEnd - lineStart));
  for (char& c : snippet) {
    if (c == '\t') c = ' ';
  }
  if (snippet.size() > 16384) return out;
  out += "\n | " + snippet + "\n | ";
  // One dot per code point before the column (a wide dot for a multi-byte one), then the caret.
  size_t i = 0;
  auto width = [&](size_t at) -> size_t {
    const auto c = static_cast<unsigned char>(snippet[at]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    return std::min(len, snippet.size() - at);
  };
  for (size_t cp = 0; cp < column && i < snippet.size(); ++cp) {
    const size_t w = width(i);
    out += w > 1 ? "\uff0e" : ".";
    i += w;
  }
  out += (i < snippet.size() && width(i) > 1) ? "\uff3e" : "^";
  return out;
}

}  // namespace ksched::cel
