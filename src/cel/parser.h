// CEL text to an AST (ast.h), as cel-go's parser with the macros of the Kubernetes environment.
//
// Limits as cel-go's defaults: each grammar rule may nest at most 250 deep ("expression
// recursion limit exceeded: 250"), which also bounds the AST's depth and so the recursion of
// the checker and the evaluator. Even runs of `!` or `-` cancel out as in cel-go.
//
// Syntax upstream's environment accepts but this evaluator does not (optional field selection
// and optional entries, two-variable comprehensions and the other macros of the Kubernetes
// libraries) is an error "unsupported: <construct>".
#pragma once

#include <string>
#include <string_view>

#include "cel/ast.h"

namespace ksched::cel {

struct ParseResult {
  ExprPtr expr;       // null on error
  std::string error;  // "ERROR: <input>:1:3: Syntax error: ..." (cel-go's display format)
};

[[nodiscard]] ParseResult parse(std::string_view text);

// cel-go's display of an error at byte offset `pos` of `source`: the location (line and
// 1-based column in code points), the message, and the line with a caret under the column.
[[nodiscard]] std::string formatError(std::string_view source, size_t pos,
                                      std::string_view message);

}  // namespace ksched::cel
