#include "cel/cel.h"

#include <exception>

#include "cel/env.h"
#include "cel/parser.h"

namespace ksched::cel {

Compiled compileExpression(std::string_view text, const CompileOptions& options) {
  Compiled out;
  try {
    if (options.maxLength > 0 && text.size() > options.maxLength) {
      out.error = "expression is too long: may not be more than " +
                  std::to_string(options.maxLength) + " bytes";
      return out;
    }
    ParseResult parsed = parse(text);
    if (!parsed.expr) {
      out.error = std::move(parsed.error);
      return out;
    }
    static const CheckEnv kEmpty;
    const CheckEnv& env = options.env != nullptr ? *options.env : kEmpty;
    if (options.check) {
      CheckResult checked = check(*parsed.expr, text, env);
      if (!checked.type) {
        out.error = std::move(checked.error);
        return out;
      }
      out.type = checked.type;
    } else {
      out.type = types::dyn();
    }
    std::vector<std::string> globals;
    globals.reserve(env.variables.size());
    for (const auto& [name, type] : env.variables) globals.push_back(name);
    std::string error;
    out.plan = Plan::build(*parsed.expr, text, globals, &error);
    if (!out.plan) out.error = std::move(error);
  } catch (const std::exception& e) {
    out.plan.reset();
    out.error = std::string("internal error: ") + e.what();
  }
  return out;
}

Value evaluatePlan(const Plan& plan, const Value* globals, Arena& arena, int64_t costLimit,
                   int64_t* cost) {
  EvalContext c{arena};
  c.globals = globals;
  c.limit = costLimit;
  Value v = plan.evaluate(c);
  if (cost != nullptr) *cost = c.cost;
  return v;
}

namespace {

constexpr std::string_view kDeviceType = "kubernetes.DRADevice";
constexpr size_t kMaxCacheEntries = 4096;

// Upstream's device type (compile.go): attributes are of the unknown type ("any"; with
// DRAListTypeAttributes "dyn", so that a list attribute can be iterated), capacity values are
// quantities; allowMultipleAllocations is in the stored-expressions environment.
CheckEnv makeDeviceEnv(const Features& features) {
  CheckEnv e;
  const TypePtr attribute = features.listTypeAttributes ? types::dyn() : types::any();
  {
    e.variables.emplace_back("device", types::object(std::string(kDeviceType)));
    e.structFields[std::string(kDeviceType)] = {
        {"driver", types::string()},
        {"allowMultipleAllocations", types::boolean()},
        {"attributes", types::map(types::string(), types::map(types::string(), attribute))},
        {"capacity",
         types::map(types::string(),
                    types::map(types::string(), types::object(std::string(types::kQuantity))))},
    };
    e.homogeneousLiterals = true;
    e.crossTypeNumericComparisons = true;
    e.draIncludes = features.listTypeAttributes;
  }
  return e;
}

const CheckEnv& deviceEnv(const Features& features) {
  static const CheckEnv base = makeDeviceEnv({});
  static const CheckEnv lists = makeDeviceEnv({.listTypeAttributes = true});
  return features.listTypeAttributes ? lists : base;
}

// cel-go's ConvertToNative(bool) refusal for a non-bool result.
std::string notBool(const Value& v) {
  std::string why;
  switch (v.kind) {
    case Kind::kInt:
      why = "unsupported type conversion from 'int' to bool";
      break;
    case Kind::kUint:
      why = "unsupported type conversion from 'uint' to bool";
      break;
    case Kind::kDouble:
      why = "type conversion error from Double to 'bool'";
      break;
    case Kind::kString:
      why = "unsupported native conversion from string to 'bool'";
      break;
    case Kind::kBytes:
      why = "type conversion error from Bytes to 'bool'";
      break;
    case Kind::kNull:
      why = "type conversion error from 'null_type' to 'bool'";
      break;
    case Kind::kList:
      why = "type conversion error from list to 'bool'";
      break;
    case Kind::kSemver:
      why = "type conversion error from 'Semver' to 'bool'";
      break;
    case Kind::kQuantity:
      why = "type conversion error from 'Quantity' to 'bool'";
      break;
    default:
      why = "type conversion error from map to 'bool'";
      break;
  }
  return "CEL result of type " + std::string(typeName(v)) +
         " could not be converted to bool: " + why;
}

class DeviceProgram final : public Program {
 public:
  explicit DeviceProgram(std::unique_ptr<Plan> plan) : plan_(std::move(plan)) {}

  EvalResult evaluate(const DeviceView& device, int64_t costLimit) const override {
    EvalResult r;
    try {
      if (device.attributes == nullptr || device.capacity == nullptr) {
        r.error = "device without attributes or capacity";
        return r;
      }
      if (std::string err = checkAttributes(device); !err.empty()) {
        r.error = std::move(err);
        return r;
      }
      // Most evaluations create nothing; what they do create fits here.
      alignas(std::max_align_t) char buffer[2048];
      Arena arena(buffer, sizeof buffer);
      const Value deviceValue = Value::view(Kind::kDevice);
      EvalContext c{arena};
      c.device = &device;
      c.globals = &deviceValue;
      c.limit = costLimit;
      const Value v = plan_->evaluate(c);
      r.cost = c.cost;
      if (v.isError()) {
        r.error = std::string(v.sv());
      } else if (v.kind != Kind::kBool) {
        r.error = notBool(v);
      } else {
        r.value = v.b;
      }
    } catch (const std::exception& e) {
      r.value = false;
      r.error = std::string("evaluation failed: ") + e.what();
    }
    return r;
  }

 private:
  std::unique_ptr<Plan> plan_;
};

}  // namespace

CompileResult compile(std::string_view expression, Features features) {
  CompileResult result;
  try {
    if (expression.size() > kSelectorMaxLength) {
      // The apiserver's validation of the field (field.TooLong).
      result.error =
          "Too long: may not be more than " + std::to_string(kSelectorMaxLength) + " bytes";
      return result;
    }
    CompileOptions options;
    options.env = &deviceEnv(features);
    Compiled c = compileExpression(expression, options);
    if (!c.plan) {
      result.error = "compilation failed: " + c.error;
      return result;
    }
    // The unknown type is the attribute's: "any", or "dyn" with DRAListTypeAttributes.
    const TypeKind unknown = features.listTypeAttributes ? TypeKind::kDyn : TypeKind::kAny;
    if (c.type->kind != TypeKind::kBool && c.type->kind != unknown) {
      result.error = "must evaluate to bool or the unknown type, not " + typeString(*c.type);
      return result;
    }
    result.program = std::make_shared<DeviceProgram>(std::move(c.plan));
  } catch (const std::exception& e) {
    result.program.reset();
    result.error = std::string("compilation failed: internal error: ") + e.what();
  }
  return result;
}

CompileResult Cache::get(std::string_view expression) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(std::string(expression));
    if (it != entries_.end()) return it->second;
  }
  // Compiled outside the lock; two threads may compile the same text, and the first one kept
  // wins (both results are the same).
  CompileResult compiled = compile(expression, features_);
  std::lock_guard<std::mutex> lock(mu_);
  // Selectors come from objects users write: bound the memory they can pin.
  if (entries_.size() >= kMaxCacheEntries) entries_.clear();
  return entries_.emplace(std::string(expression), std::move(compiled)).first->second;
}

}  // namespace ksched::cel
