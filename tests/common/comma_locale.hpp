#pragma once

// A scope in which both the C locale (setlocale) and the C++ global locale (std::locale::global)
// are a locale whose decimal point is ',' (de_DE, else fr_FR), for tests that output does not
// depend on the locale. Both are restored when the scope ends.

#include <clocale>
#include <locale>
#include <stdexcept>
#include <string>

namespace testing_ir {

class CommaLocale {
 public:
  CommaLocale() : saved_c_(std::setlocale(LC_ALL, nullptr)), saved_cpp_() {
    for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"}) {
      if (std::setlocale(LC_ALL, name) == nullptr) continue;
      try {
        std::locale::global(std::locale(name));
      } catch (const std::runtime_error&) {
        std::setlocale(LC_ALL, saved_c_.c_str());
        continue;
      }
      name_ = name;
      return;
    }
  }
  ~CommaLocale() {
    std::locale::global(saved_cpp_);
    std::setlocale(LC_ALL, saved_c_.c_str());
  }
  CommaLocale(const CommaLocale&) = delete;
  CommaLocale& operator=(const CommaLocale&) = delete;

  /// Whether a comma-decimal locale is in force (none may be installed).
  bool active() const { return !name_.empty(); }
  /// Why a test that needs one is skipped.
  static const char* missing() {
    return "no comma-decimal locale is installed (de_DE.UTF-8 or fr_FR.UTF-8; scripts/install-deps.sh makes one)";
  }

 private:
  std::string saved_c_;
  std::locale saved_cpp_;
  std::string name_;
};

}  // namespace testing_ir
