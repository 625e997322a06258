// The grammar, by recursive descent with cel-go's precedence and limits, and the macros, over the
// lexer's tokens.
#include "cel/parser.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>
#include <utility>

#include "cel/lexer.h"
#include "cel/value.h"

namespace ksched::cel {

namespace {

constexpr int kMaxRecursionDepth = 250;

class Parser : Lexer {
 public:
  explicit Parser(std::string_view src) : Lexer(src) {}

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
