// render_report RESULT.json REPORT.html: the page `ksched simulate --report` writes, for a result
// document read from a file (tests/browser/check_report.sh opens it in a real browser).
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/report.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: render_report RESULT.json REPORT.html\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "render_report: cannot read " << argv[1] << "\n";
    return 1;
  }
  nlohmann::json result = nlohmann::json::parse(in, nullptr, false);
  if (result.is_discarded()) {
    std::cerr << "render_report: " << argv[1] << " is not JSON\n";
    return 1;
  }
  std::ofstream out(argv[2], std::ios::binary);
  out << ksched::sim::renderReport(result);
  out.close();
  if (!out) {
    std::cerr << "render_report: cannot write " << argv[2] << "\n";
    return 1;
  }
  return 0;
}
