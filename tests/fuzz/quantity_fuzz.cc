// resource.Quantity from text ("500m", "2Gi", "1e3"), as objects, plugin args and the
// configuration carry it: Quantity::parse (QuantityError for malformed text, which object
// decoding reports as the DecodeError it is) and from_json of a JSON value. A parsed amount is
// used as the scheduler uses one (sums, differences, value(), milliValue()), must print in a
// form that parses back to the same amount, and is written out as the apiserver does.
#include <ksched/api/quantity.h>

#include "tests/fuzz/fuzz_util.h"

using namespace ksched;

namespace {

void use(const api::Quantity& q) {
  const std::string text = q.toString();
  fuzz::check(api::Quantity::parse(text) == q, "toString() does not parse back to the amount");
  fuzz::dump(nlohmann::json(q));
  (void)q.value();
  (void)q.milliValue();
  api::Quantity sum = q + q;
  sum -= -q;
  (void)(sum <=> q);
  (void)sum.toString();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz::asText(data, size);
  std::optional<api::Quantity> q = api::Quantity::tryParse(text);
  try {
    const api::Quantity p = api::Quantity::parse(text);
    fuzz::check(q && *q == p, "parse() and tryParse() disagree");
    use(p);
  } catch (const api::QuantityError&) {
    fuzz::check(!q, "parse() throws what tryParse() accepts");
  }
  // A JSON number or string, as a field of an object.
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return 0;
  try {
    use(j.get<api::Quantity>());
  } catch (const api::DecodeError&) {
  }
  return 0;
}
