#pragma once

/// \file
/// Errors as values: Error (a code and a one-line message), Result<T> and Status, so the library
/// serves builds without exceptions.

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace collage {

/// What kind of failure an Error is: callers branch on this, never on the message text.
enum class ErrorCode : std::uint8_t {
  invalid_argument,  ///< an option or argument out of its domain (beam width 0, a negative penalty)
  cycle,             ///< the dataflow graph (or a partitioning's quotient) has a cycle
  too_large,         ///< beyond a hard limit of the library (node count)
  uncovered,         ///< some node needs a kernel and no usable candidate covers it
  search_gave_up,    ///< a searcher hit its work limit before finishing
  no_solution,       ///< the search space holds no complete partitioning
  parse,             ///< malformed text (pattern, trace, database record, JSON)
  io,                ///< a file could not be read, written or replaced
  oracle,            ///< a cost oracle failed (threw, returned an error or a malformed answer)
  wrong_graph,       ///< a result, trace or report used with a graph other than the one it was made over
  internal,          ///< a broken invariant of the library itself (a bug; please report it)
};

/// "invalid_argument", "cycle", ...: the code's name as written in reports.
constexpr std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::cycle: return "cycle";
    case ErrorCode::too_large: return "too_large";
    case ErrorCode::uncovered: return "uncovered";
    case ErrorCode::search_gave_up: return "search_gave_up";
    case ErrorCode::no_solution: return "no_solution";
    case ErrorCode::parse: return "parse";
    case ErrorCode::io: return "io";
    case ErrorCode::oracle: return "oracle";
    case ErrorCode::wrong_graph: return "wrong_graph";
    case ErrorCode::internal: return "internal";
  }
  return "internal";
}

/// A failure: what kind it is and one line naming the problem (e.g. "node 'relu_3' is on a cycle").
struct Error {
  ErrorCode code = ErrorCode::internal;
  std::string message;
};

/// Either a value or an Error. Accessing the wrong alternative is a programming error (asserted).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return *std::get_if<0>(&state_);
  }
  const T& value() const& {
    assert(ok());
    return *std::get_if<0>(&state_);
  }
  T&& value() && {
    assert(ok());
    return std::move(*std::get_if<0>(&state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return *std::get_if<1>(&state_);
  }

 private:
  std::variant<T, Error> state_;
};

/// Success or an Error, for operations with no value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT: implicit by design
  static Status success() { return Status(); }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  /// The failure; only meaningful when !ok().
  const Error& error() const { return error_; }
  /// The failure's code; only meaningful when !ok().
  ErrorCode code() const { return error_.code; }
  /// The failure's message; empty on success.
  const std::string& message() const { return error_.message; }

 private:
  Error error_;
  bool failed_ = false;
};

}  // namespace collage
