// tc-upgrade-node-tests: writes the opset-18 to 27 forms of the ONNX backend node tests (Debian's
// libonnx-testdata stops at opset 17) and the tests those opsets add, for tc-onnx-conformance.

#include <iostream>
#include <string>

#include "conformance/upgrade.hpp"

namespace {

int usage() {
  std::cerr << "usage: tc-upgrade-node-tests --data DIR --out OUT [--verbose]\n"
               "  DIR: the node tests (e.g. /usr/share/libonnx-testdata/data/node); writes OUT/<test>_opset<N>/\n"
               "  --verbose: also name every form not written and why\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data, out;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--data" && i + 1 < argc) data = argv[++i];
    else if (arg == "--out" && i + 1 < argc) out = argv[++i];
    else if (arg == "--verbose") verbose = true;
    else return usage();
  }
  if (data.empty() || out.empty()) return usage();
  collage::Result<tc::UpgradeReport> report = tc::upgrade_node_tests(data, out);
  if (!report.ok()) {
    std::cerr << "tc-upgrade-node-tests: " << report.error().message << "\n";
    return 1;
  }
  if (verbose) {
    for (const std::string& line : report->skipped) std::cout << "not written: " << line << "\n";
  }
  std::cout << "tc-upgrade-node-tests: " << report->written << " tests written to " << out << ", " << report->skipped.size()
            << " forms not written\n";
  return 0;
}
