#pragma once

/// \file
/// parse_pattern: reads a Pattern from its text form, e.g. `relu(add(conv2d(*, const), *) | abs)`,
/// with errors that name the column and what was expected.

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/graph/op_kind.hpp"
#include "collage/rules/pattern.hpp"
#include "collage/support/result.hpp"

namespace collage {

/// Named predicates available to the text form (`?name`).
template <class G>
using PredicateTable = std::map<std::string, typename Pattern<G>::NodePredicate, std::less<>>;

namespace detail {

/// Recursive-descent parser for the text form (recursion follows the text's nesting, bounded).
template <class G>
class PatternParser {
 public:
  PatternParser(std::string_view text, const PredicateTable<G>& predicates)
      : text_(text), predicates_(predicates) {}

  Result<Pattern<G>> parse() {
    skip_space();
    Pattern<G> result;
    if (!parse_alternatives(result, 0, "a pattern")) return Error{ErrorCode::parse, error_};
    skip_space();
    if (!at_end()) {
      fail(pos_, "expected end of input");
      return Error{ErrorCode::parse, error_};
    }
    return result;
  }

 private:
  using Node = PatternNode<G>;
  /// Deeper nesting than this is reported rather than risking the stack.
  static constexpr std::size_t kMaxDepth = 256;

  // pattern := term ('|' term)*
  bool parse_alternatives(Pattern<G>& out, std::size_t depth, const char* expected) {
    std::vector<Pattern<G>> alternatives(1);
    if (!parse_term(alternatives.back(), depth, expected)) return false;
    while (true) {
      skip_space();
      if (peek() != '|') break;
      ++pos_;
      alternatives.emplace_back();
      if (!parse_term(alternatives.back(), depth, "a pattern")) return false;
    }
    out = alternatives.size() == 1 ? std::move(alternatives.front()) : Pattern<G>::alt(std::move(alternatives));
    return true;
  }

  // term := '(' pattern ')' | atom [ '(' [ args ] ')' ]
  bool parse_term(Pattern<G>& out, std::size_t depth, const char* expected) {
    skip_space();
    if (depth >= kMaxDepth) return fail(pos_, "patterns nest at most " + std::to_string(kMaxDepth) + " levels deep");
    const std::size_t start = pos_;
    const char c = peek();
    if (c == '(') {
      ++pos_;
      if (!parse_alternatives(out, depth + 1, "a pattern")) return false;
      skip_space();
      if (peek() != ')') return fail(pos_, "expected ')'");
      ++pos_;
      return true;
    }
    if (c == '*' || (is_ident_start(c) && read_ident_at(pos_) == "const")) {
      const std::string_view atom = c == '*' ? std::string_view("*") : std::string_view("const");
      pos_ += atom.size();
      out = c == '*' ? Pattern<G>::wildcard() : Pattern<G>::constant();
      skip_space();
      if (peek() == '(') return fail(pos_, "'" + std::string(atom) + "' takes no argument list");
      return true;
    }
    Node node;
    if (c == '?') {
      ++pos_;
      skip_space();
      const std::size_t name_pos = pos_;
      const std::string_view name = read_ident_at(pos_);
      if (name.empty()) return fail(pos_, "expected a predicate name after '?'");
      pos_ += name.size();
      auto it = predicates_.find(name);
      if (it == predicates_.end()) {
        return fail(name_pos, "unknown predicate '" + std::string(name) + "' " + known_predicates());
      }
      node.tag = PatternTag::predicate;
      node.name = std::string(name);
      node.predicate = it->second;
    } else if (is_ident_start(c)) {
      const std::string_view ident = read_ident_at(pos_);
      pos_ += ident.size();
      if (ident == "kind" && peek() == ':') {
        ++pos_;
        skip_space();
        const std::size_t kind_pos = pos_;
        const std::string_view kind_name = read_ident_at(pos_);
        if (kind_name.empty()) return fail(pos_, "expected an op kind after 'kind:' (" + kind_names() + ")");
        pos_ += kind_name.size();
        std::optional<OpKind> kind = parse_op_kind(kind_name);
        if (!kind) return fail(kind_pos, "unknown op kind '" + std::string(kind_name) + "': expected " + kind_names());
        node.tag = PatternTag::kind;
        node.kind = *kind;
      } else {
        node.tag = PatternTag::op;
        node.name = std::string(ident);
      }
    } else {
      pos_ = start;
      return fail(pos_, std::string("expected ") + expected);
    }
    skip_space();
    if (peek() == '(' && !parse_args(node, depth)) return false;
    out = Pattern<G>(Pattern<G>::seal(std::move(node)));
    return true;
  }

  // '(' [ args ] ')' with args := '...' | pattern (',' pattern)* [',' '...']
  bool parse_args(Node& node, std::size_t depth) {
    ++pos_;  // '('
    node.any_args = false;
    skip_space();
    if (peek() == ')') {
      ++pos_;
      return true;
    }
    const char* expected = "a pattern, '...' or ')'";
    while (true) {
      skip_space();
      if (text_.compare(pos_, 3, "...") == 0) {
        pos_ += 3;
        skip_space();
        if (peek() != ')') return fail(pos_, "expected ')' ('...' must be the last argument)");
        ++pos_;
        if (node.args.empty()) node.any_args = true;  // `f(...)` is a bare `f`
        else node.more_args = true;
        return true;
      }
      Pattern<G> arg;
      if (!parse_alternatives(arg, depth + 1, expected)) return false;
      node.args.push_back(std::move(arg.node_));
      skip_space();
      if (peek() == ')') {
        ++pos_;
        return true;
      }
      if (peek() != ',') return fail(pos_, "expected ',' or ')'");
      ++pos_;
      expected = "a pattern or '...'";
    }
  }

  std::string known_predicates() const {
    if (predicates_.empty()) return "(no predicates are defined)";
    std::string out = "(known: ";
    bool first = true;
    for (const auto& entry : predicates_) {
      if (!first) out += ", ";
      first = false;
      out += entry.first;
    }
    return out + ")";
  }

  static std::string kind_names() {
    std::string out = "one of ";
    for (int k = 0; k <= static_cast<int>(OpKind::opaque); ++k) {
      if (k != 0) out += ", ";
      out += collage::to_string(static_cast<OpKind>(k));
    }
    return out;
  }

  static bool is_ident_start(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  }
  static bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9') || c == '.'; }

  /// The identifier starting at `at` (empty when none starts there).
  std::string_view read_ident_at(std::size_t at) const {
    if (at >= text_.size() || !is_ident_start(text_[at])) return {};
    std::size_t end = at + 1;
    while (end < text_.size() && is_ident_char(text_[end])) ++end;
    return text_.substr(at, end - at);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  void skip_space() {
    while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool fail(std::size_t column, const std::string& what) {
    error_ = "pattern '" + std::string(text_) + "' at column " + std::to_string(column) + ": " + what;
    return false;
  }

  std::string_view text_;
  const PredicateTable<G>& predicates_;
  std::size_t pos_ = 0;
  std::string error_;
};

}  // namespace detail

/// Parses the text form:
///
///     pattern := term ('|' term)*
///     term    := '(' pattern ')' | atom [ '(' [ args ] ')' ]
///     args    := '...' | pattern (',' pattern)* [',' '...']
///     atom    := '*' | 'const' | 'kind:' KIND | '?' IDENT | IDENT
///     IDENT   := [A-Za-z_][A-Za-z0-9_.]*
///
/// `|` binds loosest; a bare name takes any arguments, `f()` exactly none. `?name` looks the
/// predicate up in `predicates`. Errors name the 0-based column and what was expected, e.g.
/// "pattern 'relu(add(*' at column 10: expected ',' or ')'".
template <class G>
Result<Pattern<G>> parse_pattern(std::string_view text, const PredicateTable<G>& predicates = {}) {
  return detail::PatternParser<G>(text, predicates).parse();
}

}  // namespace collage
