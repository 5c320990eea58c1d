#pragma once

// The guide programs' check(): a failed check prints "check failed: ..." (the tests' failure
// pattern) and is counted in `failures`, which decides the program's exit status.

#include <cstdio>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "check failed: %s\n", what);
    ++failures;
  }
}

}  // namespace
