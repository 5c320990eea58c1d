#pragma once

/// \file
/// Pattern<G>: a small pattern language over dataflow graphs (op names, op kinds, wildcards,
/// constants, alternatives, user predicates, nested by argument position), its text form
/// (`relu(add(conv2d(*, const), *))`) and the enumeration of every match in a graph.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/graph/op_kind.hpp"
#include "collage/support/index_set.hpp"
#include "collage/support/index_span.hpp"
#include "collage/support/result.hpp"

namespace collage {

template <class G>
class Pattern;

namespace detail {

/// Which form a pattern node has.
enum class PatternTag : std::uint8_t { wildcard, constant, op, kind, alt, predicate };

/// One immutable pattern node; patterns share them.
template <class G>
struct PatternNode {
  PatternTag tag = PatternTag::wildcard;
  std::string name;                   ///< op name (op) or predicate name (predicate)
  OpKind kind = OpKind::opaque;       ///< for kind
  std::function<bool(const DataflowGraph<G>&, std::size_t)> predicate;  ///< for predicate
  std::vector<std::shared_ptr<const PatternNode>> args;  ///< argument patterns, or the alternatives of alt
  bool any_args = true;   ///< op / kind / predicate: the arguments are not constrained at all
  bool more_args = false;  ///< with !any_args: further arguments after `args` are allowed
  bool has_alternatives = false;  ///< this node or one below it is an alternative (`a | b`)
};

template <class G>
class PatternMatcher;
template <class G>
class PatternParser;

}  // namespace detail

/// A pattern over the nodes of a DataflowGraph<G>, matched at a root node and nested by argument
/// position: `relu(add(conv2d(*, const), *))`. A value type: copies share the immutable nodes.
/// A default-constructed pattern is the wildcard `*`.
template <class G>
class Pattern {
 public:
  /// A user test on one node of the graph (by post-DFS index).
  using NodePredicate = std::function<bool(const DataflowGraph<G>&, std::size_t)>;

  /// The wildcard `*`.
  Pattern() : Pattern(wildcard()) {}

  /// `*`: any node. Never inside a match.
  static Pattern wildcard() {
    static const std::shared_ptr<const Node> node = make_leaf(detail::PatternTag::wildcard);
    return Pattern(node);
  }

  /// `const`: a tensor constant (is_constant), or an inlinable node without inputs (a scalar
  /// constant). Never inside a match.
  static Pattern constant() {
    static const std::shared_ptr<const Node> node = make_leaf(detail::PatternTag::constant);
    return Pattern(node);
  }

  /// `relu`: a node whose op name is `name`, with any arguments.
  static Pattern op(std::string name) {
    Node node;
    node.tag = detail::PatternTag::op;
    node.name = std::move(name);
    return Pattern(seal(std::move(node)));
  }

  /// `add(*, *)`: a node named `name` whose arguments match `args` in argument order; exactly that
  /// many arguments, or with `more_args` (`concat(*, ...)`) at least that many.
  static Pattern op(std::string name, std::vector<Pattern> args, bool more_args = false) {
    Node node;
    node.tag = detail::PatternTag::op;
    node.name = std::move(name);
    set_args(node, std::move(args), more_args);
    return Pattern(seal(std::move(node)));
  }

  /// `kind:anchor`: a node whose op kind is `op_kind`, with any arguments.
  static Pattern kind(OpKind op_kind) {
    Node node;
    node.tag = detail::PatternTag::kind;
    node.kind = op_kind;
    return Pattern(seal(std::move(node)));
  }

  /// `kind:anchor(*, const)`: a node of kind `op_kind` whose arguments match `args` (see op).
  static Pattern kind(OpKind op_kind, std::vector<Pattern> args, bool more_args = false) {
    Node node;
    node.tag = detail::PatternTag::kind;
    node.kind = op_kind;
    set_args(node, std::move(args), more_args);
    return Pattern(seal(std::move(node)));
  }

  /// `a | b`: any of the alternatives. Nested alternatives are flattened and a single alternative
  /// is returned as is; no alternatives at all matches nothing (and prints as `()`, which does not
  /// parse).
  static Pattern alt(std::vector<Pattern> alternatives) {
    Node node;
    node.tag = detail::PatternTag::alt;
    for (Pattern& a : alternatives) {
      if (a.node_->tag == detail::PatternTag::alt) {
        node.args.insert(node.args.end(), a.node_->args.begin(), a.node_->args.end());
      } else {
        node.args.push_back(std::move(a.node_));
      }
    }
    if (node.args.size() == 1) return Pattern(node.args.front());
    return Pattern(seal(std::move(node)));
  }

  /// `?name`: a node for which `pred` holds, with any arguments. An empty `pred` matches nothing.
  /// `name` is what the text form prints; it should be an identifier.
  static Pattern predicate(std::string name, NodePredicate pred) {
    Node node;
    node.tag = detail::PatternTag::predicate;
    node.name = std::move(name);
    node.predicate = std::move(pred);
    return Pattern(seal(std::move(node)));
  }

  /// `?name(*, ...)`: a node for which `pred` holds whose arguments match `args` (see op).
  static Pattern predicate(std::string name, NodePredicate pred, std::vector<Pattern> args,
                           bool more_args = false) {
    Node node;
    node.tag = detail::PatternTag::predicate;
    node.name = std::move(name);
    node.predicate = std::move(pred);
    set_args(node, std::move(args), more_args);
    return Pattern(seal(std::move(node)));
  }

  /// The canonical text form, e.g. `relu(add(*, const) | abs(*))`: no redundant parentheses, `, `
  /// between arguments, ` | ` between alternatives. parse_pattern of it (with the predicates it
  /// names) gives a pattern with the same text, as long as op and predicate names are identifiers.
  std::string to_string() const {
    std::string out;
    print(*node_, out);
    return out;
  }

 private:
  using Node = detail::PatternNode<G>;
  friend class detail::PatternMatcher<G>;
  friend class detail::PatternParser<G>;

  explicit Pattern(std::shared_ptr<const Node> node) : node_(std::move(node)) {}

  static std::shared_ptr<const Node> make_leaf(detail::PatternTag tag) {
    Node node;
    node.tag = tag;
    return seal(std::move(node));
  }

  /// The finished, immutable node (every node is made through here, so has_alternatives is right).
  static std::shared_ptr<const Node> seal(Node node) {
    node.has_alternatives = node.tag == detail::PatternTag::alt ||
                            std::any_of(node.args.begin(), node.args.end(),
                                        [](const std::shared_ptr<const Node>& a) { return a->has_alternatives; });
    return std::make_shared<const Node>(std::move(node));
  }

  static void set_args(Node& node, std::vector<Pattern> args, bool more_args) {
    // `f(...)` constrains nothing: the same as a bare `f`.
    if (args.empty() && more_args) return;
    node.any_args = false;
    node.more_args = more_args;
    node.args.reserve(args.size());
    for (Pattern& a : args) node.args.push_back(std::move(a.node_));
  }

  static void print(const Node& node, std::string& out) {
    switch (node.tag) {
      case detail::PatternTag::wildcard:
        out += '*';
        return;
      case detail::PatternTag::constant:
        out += "const";
        return;
      case detail::PatternTag::op:
        out += node.name;
        break;
      case detail::PatternTag::kind:
        out += "kind:";
        out += collage::to_string(node.kind);
        break;
      case detail::PatternTag::predicate:
        out += '?';
        out += node.name;
        break;
      case detail::PatternTag::alt:
        if (node.args.empty()) {
          out += "()";
          return;
        }
        // Alternatives are never alts themselves (flattened), and `|` binds loosest, so no
        // parentheses are needed anywhere: an argument position takes a whole pattern.
        for (std::size_t k = 0; k < node.args.size(); ++k) {
          if (k != 0) out += " | ";
          print(*node.args[k], out);
        }
        return;
    }
    if (node.any_args) return;
    out += '(';
    for (std::size_t k = 0; k < node.args.size(); ++k) {
      if (k != 0) out += ", ";
      print(*node.args[k], out);
    }
    if (node.more_args) out += node.args.empty() ? "..." : ", ...";
    out += ')';
  }

  std::shared_ptr<const Node> node_;
};

/// Named predicates available to the text form (`?name`).
template <class G>
using PredicateTable = std::map<std::string, typename Pattern<G>::NodePredicate, std::less<>>;

/// One match: the node the pattern's top matched, and the inside set (the matched op nodes).
struct PatternMatch {
  std::size_t root = 0;
  IndexSet inside;

  /// Same root and same inside set.
  friend bool operator==(const PatternMatch& a, const PatternMatch& b) {
    return a.root == b.root && a.inside == b.inside;
  }
  friend bool operator!=(const PatternMatch& a, const PatternMatch& b) { return !(a == b); }
  /// By root, then by inside set (IndexSet's order).
  friend bool operator<(const PatternMatch& a, const PatternMatch& b) {
    if (a.root != b.root) return a.root < b.root;
    return a.inside < b.inside;
  }
  /// Prints as `3:{1..3}`.
  friend std::ostream& operator<<(std::ostream& os, const PatternMatch& m) {
    return os << m.root << ':' << m.inside;
  }
};

namespace detail {

/// Enumerates the matches of pattern nodes at graph nodes. Recursion follows the pattern (small),
/// never the graph: matching at one root visits at most (pattern size) graph nodes per way the
/// alternatives combine.
template <class G>
class PatternMatcher {
 public:
  /// A partial inside set: sorted, without repeats.
  using Inside = std::vector<std::size_t>;

  explicit PatternMatcher(const DataflowGraph<G>& graph) : graph_(graph) {}

  /// Every distinct inside set with which `pattern` matches at node i (sorted, unique; an empty
  /// result means no match, `{{}}` a match that puts nothing inside).
  std::vector<Inside> match(const Pattern<G>& pattern, std::size_t i) const {
    if (pattern.node_->has_alternatives) return match(*pattern.node_, i);
    Inside inside;
    if (!match_one(*pattern.node_, i, inside)) return {};
    std::sort(inside.begin(), inside.end());
    inside.erase(std::unique(inside.begin(), inside.end()), inside.end());
    return {std::move(inside)};
  }

 private:
  /// Whether a pattern without alternatives (which matches in one way at most) matches at node i;
  /// appends the match's inside nodes to `inside` (in any order, maybe repeated).
  bool match_one(const PatternNode<G>& p, std::size_t i, Inside& inside) const {
    if (!head_matches(p, i)) return false;
    if (p.tag == PatternTag::wildcard || p.tag == PatternTag::constant) return true;
    if (!p.any_args) {
      const IndexSpan inputs = graph_.inputs(i);
      if (!arity_ok(p, inputs)) return false;
      for (std::size_t k = 0; k < p.args.size(); ++k) {
        if (!match_one(*p.args[k], inputs[k], inside)) return false;
      }
    }
    if (!graph_.is_inlinable(i)) inside.push_back(i);
    return true;
  }

  /// Whether node i passes the test of p itself, arguments aside: its op name, kind or
  /// predicate; for `const`, being a constant; always for `*`. (Not for alternatives.)
  bool head_matches(const PatternNode<G>& p, std::size_t i) const {
    switch (p.tag) {
      case PatternTag::wildcard: return true;
      case PatternTag::constant: return graph_.is_constant(i) || (graph_.is_inlinable(i) && graph_.inputs(i).empty());
      case PatternTag::op: return graph_.op_name(i) == p.name;
      case PatternTag::kind: return graph_.kind(i) == p.kind;
      case PatternTag::predicate: return p.predicate && p.predicate(graph_, i);
      case PatternTag::alt: break;
    }
    return false;
  }

  /// Whether a node with `inputs` has the arguments p asks for (exactly, or at least with `...`).
  static bool arity_ok(const PatternNode<G>& p, IndexSpan inputs) {
    return p.more_args ? inputs.size() >= p.args.size() : inputs.size() == p.args.size();
  }

  std::vector<Inside> match(const PatternNode<G>& p, std::size_t i) const {
    if (p.tag == PatternTag::alt) {
      std::vector<Inside> all;
      for (const auto& a : p.args) {
        std::vector<Inside> some = match(*a, i);
        all.insert(all.end(), std::make_move_iterator(some.begin()), std::make_move_iterator(some.end()));
      }
      canonicalize(all);
      return all;
    }
    if (!head_matches(p, i)) return {};
    if (p.tag == PatternTag::wildcard || p.tag == PatternTag::constant) return {Inside{}};
    return match_args(p, i);
  }

  /// The matches of an op / kind / predicate node whose head already matched node i: the
  /// cartesian product over argument positions, plus i itself unless it is inlinable.
  std::vector<Inside> match_args(const PatternNode<G>& p, std::size_t i) const {
    std::vector<Inside> result{Inside{}};
    if (!p.any_args) {
      const IndexSpan inputs = graph_.inputs(i);
      if (!arity_ok(p, inputs)) return {};
      std::vector<std::vector<Inside>> per_arg;
      per_arg.reserve(p.args.size());
      for (std::size_t k = 0; k < p.args.size(); ++k) {
        per_arg.push_back(match(*p.args[k], inputs[k]));
        if (per_arg.back().empty()) return {};
      }
      for (const std::vector<Inside>& options : per_arg) result = product(result, options);
    }
    if (!graph_.is_inlinable(i)) {
      // Every node of an argument's match is an input (transitively) of i, so has a smaller
      // post-DFS index: appending keeps each set sorted.
      // A common suffix can reorder sets where one was a prefix of another ({1} < {1,3} but
      // {1,3,4} < {1,4}): sort again.
      for (Inside& inside : result) inside.push_back(i);
      if (result.size() > 1) canonicalize(result);
    }
    return result;
  }

  /// Every union of one set from `a` and one from `b`, sorted and unique.
  static std::vector<Inside> product(const std::vector<Inside>& a, const std::vector<Inside>& b) {
    if (b.size() == 1 && b.front().empty()) return a;
    std::vector<Inside> result;
    result.reserve(a.size() * b.size());
    for (const Inside& x : a) {
      for (const Inside& y : b) {
        Inside u;
        u.reserve(x.size() + y.size());
        std::set_union(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(u));
        result.push_back(std::move(u));
      }
    }
    canonicalize(result);
    return result;
  }

  static void canonicalize(std::vector<Inside>& sets) {
    std::sort(sets.begin(), sets.end());
    sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
  }

  const DataflowGraph<G>& graph_;
};

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

namespace detail {

/// Appends the matches of `pattern` rooted at `root` with a non-empty inside set, ascending.
template <class G>
void append_matches(const DataflowGraph<G>& graph, const PatternMatcher<G>& matcher, const Pattern<G>& pattern,
                    std::size_t root, std::vector<PatternMatch>& out) {
  // The matcher's sets are sorted index vectors in lexicographic order, which is IndexSet's order.
  for (const std::vector<std::size_t>& inside : matcher.match(pattern, root)) {
    if (inside.empty()) continue;
    PatternMatch m{root, graph.empty_set()};
    for (std::size_t i : inside) m.inside.add(i);
    out.push_back(std::move(m));
  }
}

}  // namespace detail

/// The matches of `pattern` rooted at node `root`: every distinct inside set, ascending, without
/// the empty one (see match_all).
template <class G>
std::vector<PatternMatch> match_at(const DataflowGraph<G>& graph, const Pattern<G>& pattern, std::size_t root) {
  std::vector<PatternMatch> result;
  detail::append_matches(graph, detail::PatternMatcher<G>(graph), pattern, root, result);
  return result;
}

/// Every match of `pattern` in `graph`, overlapping ones included: for each node (ascending
/// index) every distinct way the pattern matches rooted there. A match's inside set holds the
/// nodes matched by op / kind / predicate patterns except inlinable nodes; nodes matched by `*`
/// or `const` are not inside. Sorted by (root, inside), without duplicates; matches with an empty
/// inside set are dropped.
template <class G>
std::vector<PatternMatch> match_all(const DataflowGraph<G>& graph, const Pattern<G>& pattern) {
  std::vector<PatternMatch> result;
  const detail::PatternMatcher<G> matcher(graph);
  for (std::size_t root = 0; root < graph.size(); ++root) detail::append_matches(graph, matcher, pattern, root, result);
  return result;
}

}  // namespace collage
