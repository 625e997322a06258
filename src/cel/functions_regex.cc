// Regular expressions: `matches` (standard library), `find` and `findAll` (the Kubernetes regex
// library), RE2 with Go's syntax.
#include <re2/re2.h>

#include <memory>
#include <string>
#include <vector>

#include "cel/functions_internal.h"

namespace ksched::cel {

std::unique_ptr<re2::RE2> compilePattern(std::string_view pattern, std::string* error) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_unique<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    *error = "error parsing regexp: " + re->error();
    return nullptr;
  }
  return re;
}

namespace builtin {

Value regexCall(Fn fn, const Value* args, size_t n, const re2::RE2* pre, EvalContext& c) {
  std::unique_ptr<re2::RE2> owned;
  const re2::RE2* re = pre;
  if (re == nullptr) {
    std::string error;
    owned = compilePattern(args[1].sv(), &error);
    if (!owned) return c.error(error);
    re = owned.get();
  }
  const std::string_view text = args[0].sv();
  const re2::StringPiece input(text.data(), text.size());
  if (fn == Fn::kMatches) {
    return Value::boolean(re2::RE2::PartialMatch(input, *re));
  }
  re2::StringPiece m;
  if (fn == Fn::kFind) {
    if (!re->Match(input, 0, input.size(), re2::RE2::UNANCHORED, &m, 1)) return Value::str("");
    return Value::str(std::string_view(m.data(), m.size()));
  }
  // findAll: successive non-overlapping matches; an empty match right after the previous
  // match is skipped (Go's FindAllString).
  int64_t limit = -1;
  if (n == 3) limit = args[2].i;
  std::vector<Value> out;
  size_t pos = 0;
  size_t prevEnd = std::string_view::npos;
  while (pos <= text.size() && (limit < 0 || static_cast<int64_t>(out.size()) < limit)) {
    if (!re->Match(input, pos, input.size(), re2::RE2::UNANCHORED, &m, 1)) break;
    const size_t start = static_cast<size_t>(m.data() - text.data());
    const size_t end = start + m.size();
    if (!(m.empty() && start == prevEnd))
      out.push_back(Value::str(std::string_view(m.data(), m.size())));
    prevEnd = end;
    if (end > pos) {
      pos = end;
    } else {
      if (pos >= text.size()) break;
      pos += runeLength(text, pos);
    }
  }
  return makeList(c, out);
}

}  // namespace builtin

}  // namespace ksched::cel
