// cel-spec's conformance tests (tests/simple/testdata, converted by
// tests/unit/cel/conformance/convert.py into the JSON tables beside it): every expression is
// compiled (type-checked unless the test says disable_check) in an environment declaring the
// test's variables, evaluated with its bindings, and its value compared with the expected one
// (same type and value; doubles NaN-aware) or its error with the expectation of one.
//
// Files converted: basic, bindings_ext, comparisons, conversions, fields, fp_math, integer_math,
// lists, logic, macros, parse, plumbing, string, string_ext. Skipped, whole (each JSON file's
// "skipped_sections" says why): basic/functions (type values), comparisons/eq_wrapper
// (protobuf wrappers), conversions/type and conversions/identity (type values, timestamps,
// durations), string_ext format, format_errors, quote (not in the subset), reverse (strings
// extension version 3, the Kubernetes environment has version 2), value_errors and type_errors
// (other extension versions). Skipped, test by test (the test's "skip"): anything with type
// values or protobuf messages, timestamps, durations, optional types, containers, escaped
// identifiers. Files not converted: dynamic, enums, proto2, proto3, proto2_ext, wrappers,
// namespace, type_deduction (protobuf messages and type values), timestamps, optionals,
// unknowns, macros2 (two-variable comprehensions), block_ext, encoders_ext, math_ext,
// network_ext (libraries the Kubernetes environment does not have or this subset leaves out).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cel/env.h"
#include "tests/support/source_dir.h"

namespace ksched::cel {
namespace {

using nlohmann::json;

std::filesystem::path dataDir() {
  return ksched::testing::repoRoot() / "tests/unit/cel/conformance";
}

TypePtr toType(const json& t) {
  if (t.is_string()) {
    const std::string s = t.get<std::string>();
    if (s == "bool") return types::boolean();
    if (s == "int") return types::integer();
    if (s == "uint") return types::uinteger();
    if (s == "double") return types::dbl();
    if (s == "string") return types::string();
    if (s == "bytes") return types::bytes();
    if (s == "null") return types::null();
    return types::dyn();
  }
  if (t.contains("list")) return types::list(toType(t["list"]));
  return types::map(toType(t["map"][0]), toType(t["map"][1]));
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return out;
}

double toDouble(const std::string& s) {
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  if (s == "nan" || s == "-nan") return NAN;
  return std::stod(s);
}

Value toValue(const json& v, Arena& arena) {
  if (v.contains("null")) return Value::null();
  if (v.contains("bool")) return Value::boolean(v["bool"].get<bool>());
  if (v.contains("int")) return Value::integer(std::stoll(v["int"].get<std::string>()));
  if (v.contains("uint")) return Value::uinteger(std::stoull(v["uint"].get<std::string>()));
  if (v.contains("double")) return Value::dbl(toDouble(v["double"].get<std::string>()));
  if (v.contains("string")) return Value::str(arena.copy(v["string"].get<std::string>()));
  if (v.contains("bytes")) return Value::bytes(arena.copy(unhex(v["bytes"].get<std::string>())));
  if (v.contains("list")) {
    const json& items = v["list"];
    Value* data = arena.allocArray<Value>(items.size());
    for (size_t i = 0; i < items.size(); ++i) data[i] = toValue(items[i], arena);
    return Value::ofList(arena.make<ListData>(ListData{data, items.size()}));
  }
  const json& entries = v["map"];
  Value* keys = arena.allocArray<Value>(entries.size());
  Value* values = arena.allocArray<Value>(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    keys[i] = toValue(entries[i][0], arena);
    values[i] = toValue(entries[i][1], arena);
  }
  return Value::ofMap(arena.make<MapData>(MapData{keys, values, entries.size()}));
}

// Same type and same value; NaN equals NaN.
bool identical(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::kNull:
      return true;
    case Kind::kBool:
      return a.b == b.b;
    case Kind::kInt:
      return a.i == b.i;
    case Kind::kUint:
      return a.u == b.u;
    case Kind::kDouble:
      return (std::isnan(a.d) && std::isnan(b.d)) || a.d == b.d;
    case Kind::kString:
    case Kind::kBytes:
      return a.sv() == b.sv();
    case Kind::kList:
      if (a.list->size != b.list->size) return false;
      for (size_t i = 0; i < a.list->size; ++i) {
        if (!identical(a.list->items[i], b.list->items[i])) return false;
      }
      return true;
    case Kind::kMap:
      if (a.map->size != b.map->size) return false;
      for (size_t i = 0; i < a.map->size; ++i) {
        bool found = false;
        for (size_t j = 0; j < b.map->size && !found; ++j) {
          found = identical(a.map->keys[i], b.map->keys[j]) &&
                  identical(a.map->values[i], b.map->values[j]);
        }
        if (!found) return false;
      }
      return true;
    default:
      return false;
  }
}

std::string show(const Value& v) {
  switch (v.kind) {
    case Kind::kString:
      return "\"" + std::string(v.sv()) + "\"";
    case Kind::kBytes:
      return "b\"" + std::string(v.sv()) + "\"";
    case Kind::kError:
      return "error(" + std::string(v.sv()) + ")";
    case Kind::kUint:
      return std::to_string(v.u) + "u";
    case Kind::kList: {
      std::string s = "[";
      for (size_t i = 0; i < v.list->size; ++i) s += (i ? ", " : "") + show(v.list->items[i]);
      return s + "]";
    }
    case Kind::kMap: {
      std::string s = "{";
      for (size_t i = 0; i < v.map->size; ++i) {
        s += (i ? ", " : "") + show(v.map->keys[i]) + ": " + show(v.map->values[i]);
      }
      return s + "}";
    }
    default:
      return formatKey(v);
  }
}

struct Totals {
  int ran = 0;
  int skipped = 0;
  std::vector<std::string> failures;
};

void runTest(const std::string& where, const json& t, Totals& totals) {
  if (t.contains("skip")) {
    ++totals.skipped;
    return;
  }
  ++totals.ran;
  CheckEnv env;
  env.crossTypeNumericComparisons = true;
  if (t.contains("decls")) {
    for (const auto& [name, type] : t["decls"].items())
      env.variables.emplace_back(name, toType(type));
  }
  if (t.contains("bindings")) {
    for (const auto& [name, value] : t["bindings"].items()) {
      bool declared = false;
      for (const auto& v : env.variables) declared = declared || v.first == name;
      if (!declared) env.variables.emplace_back(name, types::dyn());
    }
  }
  const std::string expr = t["expr"].get<std::string>();
  const std::string label = where + "/" + t["name"].get<std::string>() + ": " + expr;
  CompileOptions options;
  options.env = &env;
  options.check = t["check"].get<bool>();
  Compiled compiled = compileExpression(expr, options);
  const bool wantError = t.contains("error");
  if (!compiled.plan) {
    totals.failures.push_back(label + "\n    compile error: " + compiled.error);
    return;
  }
  Arena arena;
  std::vector<Value> globals;
  for (const auto& [name, type] : env.variables) {
    globals.push_back(t.contains("bindings") && t["bindings"].contains(name)
                          ? toValue(t["bindings"][name], arena)
                          : Value::error("unbound variable"));
  }
  int64_t cost = 0;
  const Value got = evaluatePlan(*compiled.plan, globals.data(), arena, INT64_MAX, &cost);
  if (wantError) {
    if (!got.isError()) {
      totals.failures.push_back(label + "\n    want error " + t["error"].dump() + ", got " +
                                show(got));
    }
    return;
  }
  const Value want = toValue(t["value"], arena);
  if (!identical(got, want)) {
    totals.failures.push_back(label + "\n    want " + show(want) + ", got " + show(got));
  }
}

TEST(CelConformanceTest, SimpleTestFiles) {
  Totals totals;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dataDir())) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    std::ifstream in(entry.path());
    const json doc = json::parse(in);
    for (const json& section : doc["sections"]) {
      const std::string where =
          doc["file"].get<std::string>() + "/" + section["name"].get<std::string>();
      for (const json& t : section["tests"]) runTest(where, t, totals);
    }
  }
  EXPECT_EQ(files, 14);
  // A missing or truncated table must not pass quietly.
  EXPECT_GT(totals.ran, 900);
  std::string report;
  for (const std::string& f : totals.failures) report += f + "\n";
  EXPECT_TRUE(totals.failures.empty()) << totals.failures.size() << " of " << totals.ran
                                       << " failed (" << totals.skipped << " skipped):\n"
                                       << report;
}

}  // namespace
}  // namespace ksched::cel
