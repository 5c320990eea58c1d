#pragma once

/// \file
/// Text helpers shared by the library's reports and the tool's messages.

#include <cstdio>
#include <string>
#include <string_view>

namespace collage {

/// `text` with control characters escaped ("\\n", "\\x01"), so that a label or a message stays on
/// one line.
inline std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace collage
