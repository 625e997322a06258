#include <ksched/status.h>

namespace ksched {

std::string_view codeName(Code c) noexcept {
  switch (c) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kWait:
      return "Wait";
    case Code::kSkip:
      return "Skip";
  }
  return "Unknown";
}

std::string Status::message() const {
  std::string out;
  for (const auto& r : reasons()) {
    if (!out.empty()) out += ", ";
    out += r;
  }
  return out;
}

}  // namespace ksched
