// tc-make-models: writes the model zoo as ONNX files.
//
//   tc-make-models DIR [--all] [--standins] [--seed N] [NAME...]
//
// Writes DIR/<name>.onnx for the small models (all models with --all, the stand-ins of the ONNX
// model zoo's architectures with --standins, or the NAMEs given).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <collage/support/numbers.hpp>

#include "models/model_zoo.hpp"
#include "models/zoo_standins.hpp"

namespace {

const char* const kUsage = "usage: tc-make-models DIR [--all] [--standins] [--seed N] [NAME...]\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string dir;
  bool all = false;
  bool standins = false;
  std::uint64_t seed = 1;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (args[k] == "--all") {
      all = true;
    } else if (args[k] == "--standins") {
      standins = true;
    } else if (args[k] == "--seed") {
      auto v = k + 1 < args.size() ? collage::parse_index(args[++k]) : std::nullopt;
      if (!v) return std::fprintf(stderr, "tc-make-models: --seed needs a non-negative integer\n"), 2;
      seed = *v;
    } else if (args[k] == "-h" || args[k] == "--help") {
      return std::printf("%s", kUsage), 0;
    } else if (args[k].rfind("-", 0) == 0) {
      return std::fprintf(stderr, "tc-make-models: unknown option '%s'\n%s", args[k].c_str(), kUsage), 2;
    } else if (dir.empty()) {
      dir = args[k];
    } else {
      names.push_back(args[k]);
    }
  }
  if (dir.empty()) return std::fprintf(stderr, "%s", kUsage), 2;
  if (standins) {
    for (const tc::ZooStandin& s : tc::zoo_standins()) names.push_back(s.name);
  } else if (names.empty()) {
    for (const tc::ZooModel& m : tc::zoo_models()) {
      if (all || m.small) names.push_back(m.name);
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const std::string& name : names) {
    collage::Result<std::string> bytes = tc::make_zoo_model(name, seed);
    if (!bytes.ok()) return std::fprintf(stderr, "tc-make-models: %s\n", bytes.error().message.c_str()), 1;
    const std::string path = dir + "/" + name + ".onnx";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    out.close();
    if (!out) return std::fprintf(stderr, "tc-make-models: %s: cannot write\n", path.c_str()), 1;
    std::printf("%s (%zu bytes)\n", path.c_str(), bytes->size());
  }
  return 0;
}
