// Checks that docs/guide.md quotes the guide's programs exactly: every ```cpp block must begin with
// a line "// examples/guide/<file>" and the rest of the block must appear verbatim in that file.
// Usage: collage_guide_check_snippets GUIDE_MD EXAMPLES_GUIDE_DIR
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace {

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  out = text.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return std::fprintf(stderr, "usage: %s GUIDE_MD EXAMPLES_GUIDE_DIR\n", argv[0]), 2;
  std::string guide;
  if (!read_file(argv[1], guide)) return std::fprintf(stderr, "check failed: cannot read %s\n", argv[1]), 1;
  const std::string dir = argv[2];
  const std::string open = "```cpp\n", close = "\n```", prefix = "// examples/guide/";

  int failures = 0;
  int snippets = 0;
  std::map<std::string, std::string> sources;
  for (std::size_t at = guide.find(open); at != std::string::npos; at = guide.find(open, at)) {
    const std::size_t begin = at + open.size();
    const std::size_t end = guide.find(close, begin);
    if (end == std::string::npos) {
      std::fprintf(stderr, "check failed: a ```cpp block is not closed\n");
      return 1;
    }
    const std::string block = guide.substr(begin, end - begin);
    at = end + close.size();
    const std::size_t first_line_end = block.find('\n');
    const std::string first_line = block.substr(0, first_line_end);
    if (first_line.compare(0, prefix.size(), prefix) != 0 || first_line_end == std::string::npos) {
      std::fprintf(stderr, "check failed: a ```cpp block does not begin with \"%s<file>\": %s\n", prefix.c_str(),
                   first_line.c_str());
      ++failures;
      continue;
    }
    const std::string file = first_line.substr(prefix.size());
    if (sources.count(file) == 0 && !read_file(dir + "/" + file, sources[file])) {
      std::fprintf(stderr, "check failed: cannot read %s/%s\n", dir.c_str(), file.c_str());
      ++failures;
      continue;
    }
    const std::string quoted = block.substr(first_line_end + 1);
    if (sources[file].find(quoted) == std::string::npos) {
      std::fprintf(stderr, "check failed: a snippet differs from %s:\n%s\n", file.c_str(), quoted.c_str());
      ++failures;
    }
    ++snippets;
  }
  if (snippets == 0) {
    std::fprintf(stderr, "check failed: no snippets found\n");
    ++failures;
  }
  if (failures != 0) return 1;
  std::printf("guide snippets: all checks passed (%d snippets from %zu files)\n", snippets, sources.size());
  return 0;
}
