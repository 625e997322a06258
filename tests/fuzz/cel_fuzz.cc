// CEL device selectors (resource.k8s.io DeviceSelector.cel.expression), as the DRA allocator
// compiles and evaluates them: cel::compile (a compile error is a clean rejection: the program
// is null and the error says why) and Program::evaluate against devices with attributes of
// every kind (scalars and lists), under the default cost limit and a small one, with and
// without DRAListTypeAttributes. Nothing may throw, a result is a
// bool or an error, and the cost never passes the limit by more than one step's worth.
//
// The same text is also compiled without the type checker (as cel-spec's disable_check tests
// are) and evaluated with variables of every type, so the evaluator's dynamic paths see what
// the checker would have refused.
#include <string>

#include "cel/cel.h"
#include "cel/env.h"
#include "cel/value.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;

namespace {

struct Devices {
  api::DeviceAttributes attributes;
  api::DeviceCapacities capacity;
  api::DeviceAttributes badVersion;

  Devices() {
    attributes["model"] = api::DeviceAttribute{std::string("a100")};
    attributes["index"] = api::DeviceAttribute{int64_t{3}};
    attributes["mig"] = api::DeviceAttribute{true};
    attributes["driverVersion"] = api::DeviceAttribute{api::DeviceAttribute::Version{"1.2.3-rc.1"}};
    attributes["other.example.com/zone"] = api::DeviceAttribute{std::string("z\xc3\xa9")};
    attributes["dra.example.com/model"] = api::DeviceAttribute{std::string("h100")};
    // The list forms (DRAListTypeAttributes).
    using A = api::DeviceAttribute;
    attributes["numaNode"] = A{A::Ints{0, 1}};
    attributes["smt"] = A{A::Bools{true, false}};
    attributes["roots"] = A{A::Strings{"pci0000:00", "pci0000:01"}};
    attributes["firmware"] = A{A::Versions{A::Version{"1.2.0"}, A::Version{"2.0.0-rc.1"}}};
    capacity["memory"] = api::DeviceCapacity{api::Quantity::parse("40Gi"), std::nullopt};
    capacity["other.example.com/slices"] =
        api::DeviceCapacity{api::Quantity::parse("1500m"), std::nullopt};
    badVersion["v"] = api::DeviceAttribute{api::DeviceAttribute::Version{"01.0"}};
  }
};

void checkResult(const cel::EvalResult& r, int64_t limit) {
  fuzz::check(r.ok() || !r.value, "an error with a true value");
  // Errors end up in events and pod conditions, serialized as JSON.
  fuzz::check(cel::validUtf8(r.error), "an evaluation error that is not UTF-8");
  // The last step may go past the limit (a call's cost is known once it ran), but not by more
  // than a string operation on attribute-sized inputs can cost.
  fuzz::check(r.cost <= limit + 100000, "cost far past the limit");
}

void evaluateUnchecked(std::string_view text) {
  cel::CheckEnv env;
  env.variables = {{"i", cel::types::integer()}, {"s", cel::types::string()},
                   {"l", cel::types::dyn()},     {"m", cel::types::dyn()},
                   {"d", cel::types::dbl()},     {"b", cel::types::bytes()}};
  cel::CompileOptions options;
  options.env = &env;
  options.check = false;
  cel::Compiled c = cel::compileExpression(text, options);
  fuzz::check(c.plan != nullptr || !c.error.empty(), "no program and no error");
  if (!c.plan) return;
  cel::Arena arena;
  cel::Value items[3] = {cel::Value::integer(1), cel::Value::str("x"), cel::Value::dbl(0.5)};
  cel::ListData list{items, 3};
  cel::Value keys[2] = {cel::Value::str("a"), cel::Value::integer(2)};
  cel::MapData map{keys, items, 2};
  const cel::Value globals[] = {cel::Value::integer(-7),   cel::Value::str("h\xc3\xa9llo"),
                                cel::Value::ofList(&list), cel::Value::ofMap(&map),
                                cel::Value::dbl(-0.0),     cel::Value::bytes("\xff\x00")};
  int64_t cost = 0;
  const cel::Value v = cel::evaluatePlan(*c.plan, globals, arena, 100000, &cost);
  if (v.isError()) fuzz::check(cel::validUtf8(v.sv()), "an error that is not UTF-8");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Devices devices;
  const std::string_view text = fuzz::asText(data, size);
  // Without and with DRAListTypeAttributes (includes(), attributes of type dyn).
  for (const bool lists : {false, true}) {
    const cel::CompileResult compiled = cel::compile(text, {.listTypeAttributes = lists});
    fuzz::check((compiled.program == nullptr) != compiled.error.empty(),
                "a program with an error, or neither");
    fuzz::check(cel::validUtf8(compiled.error), "a compile error that is not UTF-8");
    if (!compiled.program) continue;
    const cel::DeviceView device{"dra.example.com", &devices.attributes, &devices.capacity, true};
    checkResult(compiled.program->evaluate(device), cel::kSelectorMaxCost);
    checkResult(compiled.program->evaluate(device, 50), 50);
    const api::DeviceCapacities none;
    const cel::DeviceView other{"", &devices.badVersion, &none, false};
    const cel::EvalResult bad = compiled.program->evaluate(other);
    fuzz::check(!bad.ok(), "an invalid version attribute did not fail the evaluation");
  }
  evaluateUnchecked(text);
  return 0;
}
