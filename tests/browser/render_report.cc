// render_report [--advise] DOCUMENT.json REPORT.html: the page `ksched simulate --report` writes
// for a result document read from a file, or with --advise the page `ksched advise --report`
// writes for a plan (`ksched advise -o json`). tests/browser/check_report.sh and
// check_advise_report.sh open it in a real browser.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "advise/report.h"
#include "sim/report.h"

int main(int argc, char** argv) {
  const bool advise = argc == 4 && std::string(argv[1]) == "--advise";
  if (argc != 3 && !advise) {
    std::cerr << "usage: render_report [--advise] DOCUMENT.json REPORT.html\n";
    return 2;
  }
  const char* input = argv[argc - 2];
  const char* output = argv[argc - 1];
  std::ifstream in(input);
  if (!in) {
    std::cerr << "render_report: cannot read " << input << "\n";
    return 1;
  }
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded()) {
    std::cerr << "render_report: " << input << " is not JSON\n";
    return 1;
  }
  std::ofstream out(output, std::ios::binary);
  out << (advise ? ksched::advise::renderReport(doc) : ksched::sim::renderReport(doc));
  out.close();
  if (!out) {
    std::cerr << "render_report: cannot write " << output << "\n";
    return 1;
  }
  return 0;
}
