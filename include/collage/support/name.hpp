#pragma once

/// \file
/// Name: an interned string, for the few names that are stamped on many objects (the target and
/// rule name of every candidate).

#include <cstddef>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_set>

namespace collage {

/// An immutable string kept once per process: a Name is a pointer to that copy, so copying one
/// costs a word and equal Names are usually the same pointer. Reads like a const std::string (it
/// converts to one implicitly) and compares with strings by text.
///
/// Every distinct text made into a Name stays in memory until the process ends, so Names are for
/// a bounded set of texts (targets, rule names), not for data.
class Name {
 public:
  /// The empty name.
  Name() : text_(&empty_text()) {}
  Name(std::string_view text) : text_(text.empty() ? &empty_text() : &intern(text)) {}  // NOLINT: implicit
  Name(const std::string& text) : Name(std::string_view(text)) {}                       // NOLINT: implicit
  Name(const char* text) : Name(std::string_view(text)) {}                              // NOLINT: implicit

  const std::string& str() const { return *text_; }
  operator const std::string&() const { return *text_; }  // NOLINT: implicit, Names read as strings
  operator std::string_view() const { return *text_; }     // NOLINT: implicit
  std::string_view view() const { return *text_; }
  const char* c_str() const { return text_->c_str(); }
  std::size_t size() const { return text_->size(); }
  bool empty() const { return text_->empty(); }

  /// Three-way comparison by text: negative, zero (equal) or positive.
  int compare(const Name& that) const { return text_ == that.text_ ? 0 : text_->compare(*that.text_); }
  std::size_t hash() const { return std::hash<std::string>{}(*text_); }

  // By text. The pointer test decides almost every comparison; the text one keeps it right when
  // two copies of the table exist (a program that links the library into two shared objects with
  // hidden symbols).
  friend bool operator==(const Name& a, const Name& b) { return a.text_ == b.text_ || *a.text_ == *b.text_; }
  friend bool operator!=(const Name& a, const Name& b) { return !(a == b); }
  friend bool operator<(const Name& a, const Name& b) { return a.compare(b) < 0; }
  friend bool operator==(const Name& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const Name& a, const std::string& b) { return *a.text_ == b; }
  friend bool operator==(const Name& a, const char* b) { return a.view() == b; }
  template <class Text>
  friend bool operator==(const Text& a, const Name& b) { return b == a; }
  template <class Text>
  friend bool operator!=(const Name& a, const Text& b) { return !(a == b); }
  template <class Text>
  friend bool operator!=(const Text& a, const Name& b) { return !(b == a); }

  friend std::string operator+(const Name& a, const Name& b) { return a + b.view(); }
  friend std::string operator+(const Name& a, std::string_view b) { return std::string(a.view()).append(b); }
  friend std::string operator+(const Name& a, const char* b) { return a + std::string_view(b); }
  friend std::string operator+(const Name& a, const std::string& b) { return a + std::string_view(b); }
  friend std::string operator+(std::string a, const Name& b) { return a.append(b.view()); }
  friend std::string operator+(const char* a, const Name& b) { return std::string(a).append(b.view()); }
  friend std::ostream& operator<<(std::ostream& os, const Name& n) { return os << *n.text_; }

 private:
  // The table and the empty text are never destroyed, so a Name stays readable in static
  // destructors too.
  static const std::string& empty_text() {
    static const std::string& empty = *new std::string();
    return empty;
  }
  /// The process's one copy of `text` (made on first use). Thread-safe.
  static const std::string& intern(std::string_view text) {
    static std::mutex& mutex = *new std::mutex();
    static std::unordered_set<std::string>& table = *new std::unordered_set<std::string>();  // elements never move
    const std::lock_guard<std::mutex> lock(mutex);
    return *table.emplace(text).first;
  }

  const std::string* text_;
};

}  // namespace collage

namespace std {
template <>
struct hash<collage::Name> {
  std::size_t operator()(const collage::Name& n) const noexcept { return n.hash(); }
};
}  // namespace std
