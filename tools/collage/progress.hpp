#pragma once

/// \file
/// The collage tool's progress line: the library's ProgressReporter on a terminal's stderr, shown
/// only once work has run longer than a second.

#include <cstdio>

#include "collage/support/progress.hpp"

namespace collage::cli {

/// "collage: PHASE [#####.....] DONE/TOTAL  ELAPSED s" (a spinner for a phase without steps),
/// redrawn every 100 ms once a second has passed and erased when stopped; nothing unless
/// `enabled`. The phase starts as "reading".
class ProgressBar : public ProgressReporter {
 public:
  ProgressBar(bool enabled, std::FILE* out) : ProgressReporter(options(enabled, out)) { update("reading", 0, 0); }

 private:
  static ProgressOptions options(bool enabled, std::FILE* out) {
    ProgressOptions o;
    o.out = enabled ? out : nullptr;
    o.terminal = true;
    o.prefix = "collage: ";
    o.delay_s = 1.0;
    o.redraw_ms = 100;
    o.erase_on_stop = true;
    return o;
  }
};

}  // namespace collage::cli
