#pragma once

/// \file
/// Helpers shared by the collage tool's readers: reading files, parsing JSON with positioned
/// errors, JSON paths, checked field access, and one-line messages.

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "collage/support/result.hpp"
#include "collage/support/text.hpp"

namespace collage::cli {

using Json = nlohmann::json;
using collage::one_line;

/// `text` in single quotes, shortened when very long, for messages.
inline std::string quote_text(std::string_view text) {
  constexpr std::size_t kMax = 80;
  if (text.size() > kMax) return "'" + std::string(text.substr(0, kMax)) + "...'";
  return "'" + std::string(text) + "'";
}

/// The error "FILE: PLACE: PROBLEM" (PLACE may be empty).
inline Error located_error(const std::string& file, const std::string& place, const std::string& problem) {
  if (place.empty()) return Error{ErrorCode::parse, file + ": " + problem};
  return Error{ErrorCode::parse, file + ": " + place + ": " + problem};
}

/// The whole content of `path`, or an error naming it.
inline Result<std::string> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Error{ErrorCode::io, path + ": cannot open: " + std::strerror(errno)};
  std::string text;
  char buf[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Error{ErrorCode::io, path + ": cannot read: " + std::strerror(errno)};
  return text;
}

/// "line L, column C" of byte offset `byte` (1-based, as editors count) in `text`.
inline std::string text_position(std::string_view text, std::size_t byte) {
  if (byte > text.size()) byte = text.size();
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t k = 0; k < byte; ++k) {
    if (text[k] == '\n') {
      ++line;
      line_start = k + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(byte - line_start + 1);
}

/// The error for a JSON syntax error that nlohmann reported with message `what` at 1-based byte
/// `byte` (one past the offending character) of `text`: "FILE: line L, column C: malformed JSON: ...".
inline Error malformed_json(std::string_view text, const std::string& file, std::size_t byte, std::string what) {
  // `what` is "[json.exception.parse_error.N] parse error at line L, column C: WHAT".
  const std::size_t at = what.find("column ");
  if (at != std::string::npos) {
    const std::size_t colon = what.find(": ", at);
    if (colon != std::string::npos) what = what.substr(colon + 2);
  }
  return located_error(file, text_position(text, byte == 0 ? 0 : byte - 1), "malformed JSON: " + what);
}

/// Parses `text` as JSON; a malformed text gives "FILE: line L, column C: malformed JSON: ...".
inline Result<Json> parse_json(std::string_view text, const std::string& file) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return malformed_json(text, file, e.byte, e.what());
  } catch (const std::exception& e) {
    return located_error(file, "", std::string("malformed JSON: ") + e.what());
  }
}

/// A JSON pointer ("/nodes/3/inputs/1") built up as a reader descends.
class JsonPath {
 public:
  JsonPath() = default;
  JsonPath operator/(std::string_view key) const {
    JsonPath p = *this;
    p.text_ += '/';
    for (char ch : key) {
      if (ch == '~') {
        p.text_ += "~0";
      } else if (ch == '/') {
        p.text_ += "~1";
      } else {
        p.text_ += ch;
      }
    }
    return p;
  }
  JsonPath operator/(std::size_t index) const {
    JsonPath p = *this;
    p.text_ += '/';
    p.text_ += std::to_string(index);
    return p;
  }
  /// The pointer; "/" for the document itself.
  std::string str() const { return text_.empty() ? "/" : text_; }

 private:
  std::string text_;
};

/// "an object", "a string", ...: what a JSON value is, for messages.
inline const char* type_phrase(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::binary: return "binary data";
    case Json::value_t::discarded: return "nothing";
  }
  return "a value";
}

/// Reads the fields of one JSON document, producing "FILE: PATH: PROBLEM" errors. Each accessor
/// returns nullopt after recording the first error (later errors are ignored).
class JsonReader {
 public:
  explicit JsonReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  bool failed() const { return error_.has_value(); }
  /// The first error recorded.
  Error error() const { return error_ ? *error_ : Error{ErrorCode::internal, file_ + ": unknown error"}; }

  /// Records `error` as it is (the first error wins).
  void set_error(Error error) {
    if (!error_) error_ = std::move(error);
  }

  /// A path given as a JsonPath, or as a callable that builds one (so that hot loops build paths
  /// only for errors).
  template <class P>
  static JsonPath path_of(const P& p) {
    if constexpr (std::is_invocable_v<const P&>) {
      return p();
    } else {
      return p;
    }
  }

  /// Records `problem` at `path` (the first error wins); returns false for chaining.
  template <class P>
  bool fail(const P& path, const std::string& problem) {
    if (!error_) error_ = located_error(file_, path_of(path).str(), problem);
    return false;
  }

  /// `j` must be an object whose keys are all in `allowed`.
  template <class P>
  bool expect_object(const Json& j, const P& path, std::initializer_list<std::string_view> allowed = {}) {
    if (!j.is_object()) return fail(path, std::string("expected an object, found ") + type_phrase(j));
    if (allowed.size() == 0) return true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool known = false;
      for (std::string_view a : allowed) known = known || it.key() == a;
      if (!known) {
        std::string list;
        for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        return fail(path_of(path) / it.key(), "unknown key " + quote_text(one_line(it.key())) + " (expected one of: " + list + ")");
      }
    }
    return true;
  }

  /// The member `key` of object `j`, or nullptr (an error when `required`).
  template <class P>
  const Json* member(const Json& j, std::string_view key, const P& path, bool required) {
    auto it = j.find(key);
    if (it == j.end()) {
      if (required) fail(path_of(path) / key, "missing");
      return nullptr;
    }
    return &*it;
  }

  template <class P>
  std::optional<std::string> string(const Json& j, const P& path) {
    if (!j.is_string()) {
      fail(path, std::string("expected a string, found ") + type_phrase(j));
      return std::nullopt;
    }
    return j.get_ref<const std::string&>();
  }

  template <class P>
  std::optional<bool> boolean(const Json& j, const P& path) {
    if (!j.is_boolean()) {
      fail(path, std::string("expected true or false, found ") + type_phrase(j));
      return std::nullopt;
    }
    return j.get<bool>();
  }

  /// A non-negative integer.
  template <class P>
  std::optional<std::size_t> size(const Json& j, const P& path) {
    if (j.is_number_unsigned()) return static_cast<std::size_t>(j.get<std::uint64_t>());
    if (j.is_number_integer() && j.get<std::int64_t>() >= 0) return static_cast<std::size_t>(j.get<std::int64_t>());
    fail(path, std::string("expected a non-negative integer, found ") + describe(j));
    return std::nullopt;
  }

  /// A finite number (integer or not).
  template <class P>
  std::optional<double> number(const Json& j, const P& path) {
    if (!j.is_number()) {
      fail(path, std::string("expected a number, found ") + type_phrase(j));
      return std::nullopt;
    }
    const double v = j.get<double>();
    if (!std::isfinite(v)) {
      fail(path, "expected a finite number");
      return std::nullopt;
    }
    return v;
  }

  /// A finite number >= 0; "negative cost" otherwise.
  template <class P>
  std::optional<double> cost(const Json& j, const P& path) {
    std::optional<double> v = number(j, path);
    if (v && *v < 0) {
      fail(path, "negative cost " + j.dump() + " (costs must be >= 0)");
      return std::nullopt;
    }
    return v;
  }

  /// Checks the "format" member of document `doc`.
  bool expect_format(const Json& doc, std::string_view format) {
    if (!expect_object(doc, JsonPath())) return false;
    const Json* f = member(doc, "format", JsonPath(), false);
    if (f == nullptr) return fail(JsonPath() / "format", "missing; expected \"" + std::string(format) + "\"");
    if (!f->is_string() || f->get_ref<const std::string&>() != format) {
      return fail(JsonPath() / "format",
                  "wrong format tag " + one_line(short_dump(*f)) + "; expected \"" + std::string(format) + "\"");
    }
    return true;
  }

  /// A short JSON rendering of a scalar, or the type of a container.
  static std::string short_dump(const Json& j) {
    if (j.is_structured()) return type_phrase(j);
    std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (text.size() > 80) text = text.substr(0, 77) + "...";
    return text;
  }
  static std::string describe(const Json& j) {
    if (j.is_structured()) return type_phrase(j);
    return std::string(type_phrase(j)) + " " + short_dump(j);
  }

 private:
  std::string file_;
  std::optional<Error> error_;
};

/// Whether `j` nests containers more than `limit` levels deep (checked without recursion).
inline bool nests_deeper_than(const Json& j, std::size_t limit) {
  std::vector<std::pair<const Json*, std::size_t>> stack{{&j, 0}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) continue;
    if (depth >= limit) return true;
    for (const Json& child : *node) stack.emplace_back(&child, depth + 1);
  }
  return false;
}

}  // namespace collage::cli
