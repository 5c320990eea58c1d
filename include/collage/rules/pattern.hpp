#pragma once

/// \file
/// Pattern<G>: a small pattern language over dataflow graphs (op names, op kinds, wildcards,
/// constants, alternatives, user predicates, nested by argument position), as an immutable tree
/// that prints in its text form (`relu(add(conv2d(*, const), *))`). pattern_parser.hpp reads the
/// text form, pattern_matcher.hpp finds the matches in a graph.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collage/graph/dataflow_graph.hpp"
#include "collage/graph/op_kind.hpp"

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

}  // namespace collage
